"""``ntui triage FILE...`` over logs of jobs it did not submit: the real captures of tests/data/logs (the dev cluster's
runs), read as a downloaded ``.out`` would be, one combined log or one file per rank."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.logs.joblogs import guess_launcher
from tests.conftest import REPO

LOGS = REPO / "tests" / "data" / "logs"


def _ntui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", "triage", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO)


def _batch(case: str) -> Path:
    return next(p for p in sorted((LOGS / case).glob("*.out")) if "-rank-" not in p.name)


def _ranks(case: str) -> list[Path]:
    return sorted((LOGS / case).glob("*-rank-*.out"))


def test_per_rank_files_name_the_rank_that_raised_and_exit_1() -> None:
    res = _ntui(*map(str, _ranks("fail-srun")))
    assert res.returncode == 1, res.stderr
    assert res.stdout.startswith("rank 2 on nid002 failed first: RuntimeError: ntui check: rank 2 fails on purpose")


def test_one_combined_log_names_the_rank_killed_by_a_signal() -> None:
    res = _ntui(str(_batch("signal-kill-srun")))
    assert res.returncode == 1
    assert res.stdout.startswith("rank 2 on nid002 was killed by SIGKILL (likely the out-of-memory killer) first: "
                                 "srun: error: nid002: task 2: Killed")


def test_json_gives_the_fields_and_how_each_file_was_read() -> None:
    files = [_batch("fail-srun"), *_ranks("fail-srun")]
    res = _ntui("--json", *map(str, files))
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert (out["kind"], out["rank"], out["node"], out["failed"]) == ("rank_error", 2, "nid002", True)
    assert [f["read_as"] for f in out["files"]] == ["combined", "rank 0", "rank 1", "rank 2", "rank 3"]


def test_a_log_without_a_failure_exits_0(tmp_path: Path) -> None:
    # a rank that trained and ended well: a real rank log up to its all-reduce's check ("ok": true)
    lines = _ranks("fail-srun")[0].read_text().splitlines()
    upto = next(i for i, ln in enumerate(lines) if ln.startswith("NTUI_CHECK "))
    clean = tmp_path / "train.out"
    clean.write_text("\n".join(lines[:upto + 1]) + "\n")
    res = _ntui(str(clean))
    assert (res.returncode, res.stdout.strip()) == (0, "no failure found (1 log read)"), res.stdout


@pytest.mark.parametrize("bad", ["missing.out", "."])
def test_a_missing_file_or_a_directory_is_named_and_exits_2(bad: str, tmp_path: Path) -> None:
    path = tmp_path / bad
    res = _ntui(str(path))
    assert res.returncode == 2 and str(path) in res.stderr and not res.stdout


@pytest.mark.parametrize(("case", "launcher"), [("fail-srun", None), ("fail-torchrun", "torchrun"),
                                                ("fail-accelerate", "accelerate")])
def test_the_launcher_is_read_off_the_batch_log(case: str, launcher: str | None) -> None:
    assert guess_launcher([_batch(case)]) == launcher


def test_under_torchrun_an_srun_task_is_a_nodes_launcher_not_a_rank(tmp_path: Path) -> None:
    """srun's exit lines of the real torchrun job, alone (no elastic line to guess the launcher from): ``task 1`` is
    rank 1 as srun launched it, and nid002's torchrun when the user says ``--launcher torchrun``."""
    log = tmp_path / "job.out"
    log.write_text("".join(ln + "\n" for ln in _batch("fail-torchrun").read_text().splitlines()
                           if ln.startswith("srun: error:")))
    assert guess_launcher([log]) is None
    as_srun = _ntui(str(log))
    as_torchrun = _ntui("--launcher", "torchrun", str(log))
    assert as_srun.stdout.startswith("rank 1 on nid002 failed first"), as_srun.stdout
    assert as_torchrun.stdout.startswith("the launcher on nid002 (srun task 1) failed first"), as_torchrun.stdout


# ---------------------------------------------------------------- standard input, pipes, the terminal's width


def _piped(*args: str, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ntui", "triage", *args], input=data, capture_output=True,
                          timeout=60, cwd=REPO)


@pytest.mark.parametrize("how", ["-", "/dev/stdin"])
def test_a_log_piped_in_gets_the_verdict_the_file_gets(how: str) -> None:
    path = _batch("signal-kill-srun")
    from_file = _ntui(str(path))
    piped = _piped(how, data=path.read_bytes())
    assert from_file.returncode == piped.returncode == 1, piped.stderr
    assert piped.stdout.decode() == from_file.stdout and "SIGKILL" in from_file.stdout


def test_a_pipe_beside_files_and_its_json_say_what_each_was() -> None:
    ranks = _ranks("fail-srun")
    res = _piped(str(ranks[0]), "-", "--json", data=ranks[2].read_bytes())
    got = json.loads(res.stdout)
    # a stream has no file name to say its rank: it is read as a combined log
    assert [(f["path"], f["read_as"]) for f in got["files"]] == [(str(ranks[0]), "rank 0"), ("-", "combined")], got
    assert got["failed"] and got["kind"] == "rank_error", got


def test_standard_input_is_read_once_and_an_empty_one_is_no_failure() -> None:
    assert _piped("-", "-", data=b"x\n").returncode == 2
    empty = _piped("-", data=b"")
    assert empty.returncode == 0 and empty.stdout.decode().startswith("no failure found (1 log read)"), empty


def test_on_a_terminal_the_verdict_wraps_to_its_width(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from ntui.cli import triage as cli

    line = "rank 2 on nid002 failed first: " + "word " * 40
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(cli.shutil, "get_terminal_size", lambda: os.terminal_size((60, 24)))
    wrapped = cli._wrapped(line)
    assert len(wrapped.splitlines()) > 3 and max(map(len, wrapped.splitlines())) <= 60, wrapped
    assert " ".join(wrapped.split()) == " ".join(line.split())  # nothing lost, only wrapped
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert cli._wrapped(line) == line  # into a pipe: one line, for scripts
