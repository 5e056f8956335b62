"""A preset's ``progress:`` pattern (refused with its line when bad, carried by the script, read back by every
reader of the job's progress) and a run's restarts marked by ntui's rank header when its steps go on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.jobfiles.lognames import rank_header
from ntui.core.jobs.progress import ProgressBook
from ntui.core.progress.board import ProgressBoard
from ntui.core.progress.preset import pattern_of_script, script_line
from ntui.core.progress.read import read_progress
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.squeue import QueueJob
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "progress"
LONGRUN_WORDS = "step 12/185 loss 0.6250"  # examples/longrun_train.py's line


def _spec(*sets: str):  # type: ignore[no-untyped-def]
    return validate(load_preset("local-longrun", sets))


def test_the_shipped_long_run_preset_carries_its_pattern_to_the_script() -> None:
    spec, problems = _spec()
    assert spec is not None and not [p for p in problems if p.is_error]
    script = render(spec)
    pattern = pattern_of_script(script)
    assert pattern is not None
    point = pattern.parse(LONGRUN_WORDS)
    assert point is not None and (point.step, point.total, point.metrics) == (12, 185, {"loss": 0.625})
    # a comment among the lines Slurm reads as directives' neighbours: never a directive, never a command
    line = next(x for x in script.splitlines() if x.startswith("# ntui progress pattern: "))
    assert script.index(line) < script.index("set -euo pipefail")


@pytest.mark.parametrize(("value", "said"), [
    ("'^step (\\d+'", "not a regular expression"),
    ("'^step (\\d+)'", "it names no step"),
    ("[1, 2]", "expected a string"),
])
def test_a_bad_pattern_is_refused_with_its_file_line_and_field(tmp_path: Path, value: str, said: str) -> None:
    preset = tmp_path / "mine.yaml"
    preset.write_text(f"name: mine\nextends: {REPO / 'presets' / 'local-srun.yaml'}\nprogress:\n  pattern: {value}\n")
    res = subprocess.run([sys.executable, "-m", "ntui", "check", str(preset)], capture_output=True, text=True,
                         cwd=REPO, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"{preset}:4: progress.pattern: {said}" in res.stdout + res.stderr


def test_a_script_without_the_line_or_with_a_broken_one_has_no_pattern() -> None:
    assert pattern_of_script("#!/bin/bash\nset -euo pipefail\n") is None
    assert pattern_of_script(script_line("(?P<step>\\d+") + "\n") is None  # edited by hand into nonsense
    assert pattern_of_script("# ntui progress pattern: not json\n") is None
    quoted = script_line('say "step" (?P<step>\\d+)\t$')
    back = pattern_of_script(f"#!/bin/bash\n{quoted}\n")
    assert back is not None and back.regex.pattern == 'say "step" (?P<step>\\d+)\t$'


def test_the_queue_rows_progress_tick_reads_with_the_jobs_pattern(tmp_path: Path) -> None:
    spec, _ = _spec(f"logs.dir={tmp_path}")
    assert spec is not None
    log = tmp_path / "local-longrun-42-rank-0.out"
    log.write_text(f"{rank_header(0, 'nid001')}\nfresh start (restart 0)\n" +
                   "".join(f"step {n}/185 loss {1 / (1 + n / 20):.4f}\n" for n in range(1, 31)))
    entry = HistoryEntry(token="t", job_id="42", cluster=None, preset="local-longrun", preset_path=None,  # noqa: S106
                         overrides=(), job_name="x", launcher="torchrun", nodes=2, world_size=4,
                         log_dir=str(tmp_path), log_stem="local-longrun", script=render(spec), script_path=None,
                         created_at=0.0, submitted_at=0.0, status="submitted")
    book = ProgressBook()
    request = book.request({"42": QueueJob("42", "42", state="RUNNING")}, {"42": entry})
    assert request is not None and "42" in request.patterns
    views = ProgressBook.fetch(ProgressBoard(), request)
    assert (views["42"].step, views["42"].total, views["42"].metrics["loss"]) == (30, 185, pytest.approx(0.4))


def test_the_rank_header_again_starts_a_new_segment_where_the_steps_go_on(tmp_path: Path) -> None:
    """A requeued run's rank-0 log: the real tqdm run's first half, ntui's header of the next allocation, the rest
    (resumed from its checkpoint: the steps go on, they do not go back)."""
    pieces = (DATA / "tqdm-4.70.1" / "tqdm-loop.out").read_bytes().decode().split("\r")  # (read_text: \r -> \n)
    half = len(pieces) // 2
    log = tmp_path / "x-7-rank-0.out"
    log.write_text(rank_header(0, "nid001") + "\n" + "\r".join(pieces[:half]) + "\n" + rank_header(0, "nid002") +
                   "\n" + "\r".join(pieces[half:]))
    series = read_progress(log)
    assert len(series.restarts) == 1 and series.step == 80
    segments = [s.segment for s in series.samples]
    assert segments == sorted(segments) and segments[0] == 0 and segments[-1] == 1
    steps = [s.step for s in series.samples]
    assert steps == sorted(steps)  # one series on: no step went back
    followed = ProgressBoard().poll({"7": str(log)})["7"]  # the view's reader says the same
    assert len(followed.restarts) == 1 and followed.step == 80


def test_ntui_progress_takes_the_pattern_of_a_job_it_submitted(tmp_path: Path) -> None:
    """The CLI reads an ntui job's log with its preset's pattern (no --pattern), a job the controller forgot
    included (its log says how far it went)."""
    spec, _ = _spec(f"logs.dir={tmp_path}")
    assert spec is not None
    from ntui.core.records.history import History

    state = tmp_path / "state"
    h = History(state / "ntui", cluster=None)
    h.record_intent(token="t1", preset="local-longrun", preset_path=None, overrides=[],  # noqa: S106
                    job_name="x", launcher="torchrun", nodes=2, world_size=4, log_dir=str(tmp_path),
                    log_stem="local-longrun", script=render(spec), created_at=0.0)
    h.record_submitted("t1", "4242", None, None, when=0.0)
    h.close()
    (tmp_path / "local-longrun-4242-rank-0.out").write_text(
        rank_header(0, "nid001") + "\n" + "".join(f"step {n}/185 loss 0.5\n" for n in range(1, 186)))
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    scontrol = fake_bin / "scontrol"  # the controller has forgotten the job: Slurm's own words for it
    scontrol.write_text("#!/bin/sh\necho 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1\n")
    scontrol.chmod(0o755)
    env = {"PATH": f"{fake_bin}:/usr/bin:/bin", "XDG_STATE_HOME": str(state), "HOME": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "ntui", "progress", "4242", "--json"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout)
    assert (got["step"], got["total"], got["words"]) == (185, 185, "step 185 of 185: done")
