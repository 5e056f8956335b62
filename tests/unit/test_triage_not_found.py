"""The commonest first-day failure, named: the job's command was not there. Every line fed here is printed by the
real program, run now: bash's ``exec`` and command-not-found (127), ``Permission denied`` (126), and python given a
script that does not exist (2). Under srun the shell's line names no node; srun's own ``Exited with exit code 127``
lines do (the two-node case with srun's lines is tests/cluster/test_e2e.py, on the real cluster)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.logs.rankdetector import scan_lines
from ntui.core.logs.triage import triage
from tests.support.waits import WAIT_BOUND_S


def _stderr(argv: list[str], tmp_path: Path) -> tuple[int, list[str]]:
    res = subprocess.run(argv, capture_output=True, text=True, timeout=WAIT_BOUND_S, cwd=tmp_path,
                         env={"PATH": str(tmp_path / "empty"), "LANG": "C"})
    return res.returncode, res.stderr.splitlines()


def test_exec_of_a_launcher_missing_from_path(tmp_path: Path) -> None:
    # what ntui's launch line does on each node: bash -c 'exec "$0" "$@"' torchrun ...
    rc, lines = _stderr(["/bin/bash", "-c", 'exec "$0" "$@"', "torchrun", "--nnodes=2"], tmp_path)
    assert rc == 127 and lines
    summary = triage(scan_lines(lines))
    assert summary.first is not None and summary.first.kind == "not_found"
    assert summary.summary().startswith("torchrun was not found (exit 127: not on the PATH the job inherits")


@pytest.mark.parametrize("script", ["torchrun --standalone train.py", "accelerate launch train.py"])
def test_command_not_found_in_a_script(script: str, tmp_path: Path) -> None:
    rc, lines = _stderr(["/bin/bash", "-c", script], tmp_path)
    assert rc == 127
    first = triage(scan_lines(lines)).first
    assert first is not None and first.kind == "not_found"
    assert triage(scan_lines(lines)).summary().startswith(f"{script.split()[0]} was not found")


def test_a_program_that_is_not_executable(tmp_path: Path) -> None:
    prog = tmp_path / "train.sh"
    prog.write_text("#!/bin/sh\necho hi\n")
    prog.chmod(0o644)
    rc, lines = _stderr(["/bin/bash", "-c", 'exec "$0"', str(prog)], tmp_path)
    assert rc == 126
    text = triage(scan_lines(lines)).summary()
    assert text.startswith(f"{prog} is not executable (exit 126"), text


def test_python_given_a_script_that_does_not_exist(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(tmp_path / "trian.py")], capture_output=True, text=True,
                         timeout=WAIT_BOUND_S)
    assert res.returncode == 2
    text = triage(scan_lines(res.stderr.splitlines())).summary()
    assert "could not open the program file" in text and "trian.py" in text, text


def test_the_nodes_come_from_sruns_exit_lines(tmp_path: Path) -> None:
    _, lines = _stderr(["/bin/bash", "-c", 'exec "$0"', "torchrun"], tmp_path)
    # srun's own lines (the form srun 22.05-26.05 prints; real ones in tests/data/slurm and the cluster test)
    srun = [f"srun: error: {node}: task {task}: Exited with exit code 127" for task, node in
            ((0, "nid001"), (1, "nid002"))]
    text = triage(scan_lines([*lines, *lines, *srun])).summary()
    assert text.startswith("torchrun was not found on nid001, nid002 (exit 127"), text


def test_ordinary_lines_that_say_not_found_are_not_failures() -> None:
    lines = ["Checkpoint not found, starting from scratch", "INFO: key 'lr' not found in config: using 1e-4",
             "FileNotFoundError handled: cache not found"]
    assert scan_lines(lines) == []
