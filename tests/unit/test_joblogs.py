"""A job's rank logs as a whole: rank -> node from the headers, and who failed first."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ntui.cli import logs as cli_logs
from ntui.core.jobfiles.lognames import LogPaths, node_of
from ntui.core.logs.joblogs import job_logs, triage_job
from tests.support.waits import WAIT_BOUND_S

TRACEBACK = """Traceback (most recent call last):
  File "/opt/train.py", line 41, in <module>
    main()
  File "/opt/train.py", line 37, in main
    raise RuntimeError("loss is nan at step 120")
RuntimeError: loss is nan at step 120
"""


def make_job(tmp: Path, failing: int = 2) -> LogPaths:
    paths = LogPaths(str(tmp), "train")
    Path(paths.batch("42")).write_text("W1130 torchrun starting\n")
    for rank in range(4):
        node = "nid001" if rank < 2 else "nid002"
        body = f"ntui: rank {rank} on {node}\nstep 1 loss 2.3\n"
        if rank == failing:
            body += TRACEBACK
        p = Path(paths.rank("42", rank))
        p.write_text(body)
        os.utime(p, (1_000_000 + rank, 1_000_000 + rank))
    return paths


def test_files_and_nodes(tmp_path: Path) -> None:
    paths = make_job(tmp_path)
    logs = job_logs(paths, "42")
    assert sorted(logs.ranks) == [0, 1, 2, 3]
    assert node_of(Path(logs.ranks[3])) == "nid002"
    assert sorted(job_logs(paths, "42", world_size=6).ranks) == list(range(6))


def test_triage_names_failing_rank_and_node(tmp_path: Path) -> None:
    summary = triage_job(make_job(tmp_path, failing=2), "42")
    assert summary.rank == 2 and summary.node == "nid002"
    assert "RuntimeError: loss is nan at step 120" in summary.summary()
    assert summary.summary().startswith("rank 2 on nid002 failed first")


def test_clean_job_has_no_finding(tmp_path: Path) -> None:
    summary = triage_job(make_job(tmp_path, failing=-1), "42")
    assert summary.first is None and summary.summary() == "no failure found"


def test_logs_triage_follow_prints_each_new_verdict(tmp_path: Path) -> None:
    """``ntui logs JOB --triage --follow``: the core watcher as a stream; Ctrl-C ends it (exit 1: a failure)."""
    import signal
    import subprocess
    import sys

    paths = make_job(tmp_path, failing=-1)
    code = (
        "import sys; from ntui.cli.logs import print_triage; from ntui.core.jobfiles.lognames import LogPaths\n"
        f"sys.exit(print_triage(LogPaths({str(tmp_path)!r}, 'train'), '42', 4, launcher='srun', follow=True))\n"
    )
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first.rstrip().endswith("no failure found (5 logs read)"), first
        with open(paths.rank("42", 3), "a") as fh:
            fh.write(TRACEBACK)
        second = proc.stdout.readline()
        assert "rank 3 on nid002 failed first: RuntimeError: loss is nan at step 120" in second, second
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(timeout=WAIT_BOUND_S) == 1
        except subprocess.TimeoutExpired:  # say where it hangs: faulthandler prints every thread on SIGABRT
            proc.send_signal(signal.SIGABRT)
            pytest.fail(f"still running {WAIT_BOUND_S:g} s after Ctrl-C:\n{proc.communicate(timeout=10)[1]}")
    finally:
        proc.kill()
        proc.communicate()


class FakeTime:
    """Stands in for ``ntui.cli.logs.time``: ``sleep`` advances a fake clock at once (no real waiting) and
    runs ``on_sleep`` (the test's hook: write a log line, end the job)."""

    def __init__(self, on_sleep: Callable[[float], None] | None = None) -> None:
        self.now = 1000.0
        self.sleeps = 0
        self.on_sleep = on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        assert self.sleeps < 10_000, "--follow never stopped"
        if self.on_sleep is not None:
            self.on_sleep(self.now)

    @staticmethod
    def strftime(fmt: str) -> str:
        return "12:00:00"


def test_logs_triage_follow_stops_once_the_job_is_over_and_its_logs_are_drained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--triage --follow`` followed an ended job until Ctrl-C. Now it ends as ``logs --follow`` does
    (Slurm says the job is over, and a pass over every file finds nothing new), the final verdict last, exit 1
    for a failure. The traceback written just before the end is in a rank file the polite scheduler had backed
    off from: the drain still reads it."""

    paths = make_job(tmp_path, failing=-1)
    asked: list[float] = []

    def job_over() -> str | None:
        asked.append(clock.now)
        if len(asked) < 3:
            return None
        with open(paths.rank("42", 3), "a") as fh:  # the last words, as Slurm reports the job over
            fh.write(TRACEBACK)
        return "FAILED"

    clock = FakeTime()
    monkeypatch.setattr(cli_logs, "time", clock)
    code = cli_logs.print_triage(paths, "42", 4, launcher="srun", follow=True, job_over=job_over)
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "12:00:00 no failure found (5 logs read)"
    assert "rank 3 on nid002 failed first: RuntimeError: loss is nan at step 120" in lines[-1], out
    assert err.strip() == "ntui: job ended (FAILED); its logs are drained"
    assert len(asked) == 3  # asked until it said over, then never again
    assert all(b - a >= cli_logs.JOB_CHECK_S for a, b in zip(asked, asked[1:], strict=False))  # throttled


def test_logs_triage_follow_of_a_clean_job_ends_with_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    paths = make_job(tmp_path, failing=-1)

    def grow(now: float) -> None:  # the job keeps writing while it runs: the end waits for a quiet pass
        if now < 1010:
            with open(paths.rank("42", 0), "a") as fh:
                fh.write(f"step {now} loss 1.0\n")

    monkeypatch.setattr(cli_logs, "time", FakeTime(grow))
    code = cli_logs.print_triage(paths, "42", 4, launcher="srun", follow=True, job_over=lambda: "COMPLETED")
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == ["12:00:00 no failure found (5 logs read)"]  # the final verdict is the last line
    assert "job ended (COMPLETED); its logs are drained" in err


def test_logs_triage_follow_asks_slurm_whether_the_job_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ntui logs JOB --triage --follow`` through the CLI: the same "job is over" rule as ``logs --follow``
    (squeue no longer lists it; no accounting, so scontrol's final state), with canned Slurm answers."""
    from ntui import cli
    from ntui.core.records.history import History
    from tests.support.fakes import FakeRunner, result

    data = Path(__file__).resolve().parent.parent / "data" / "slurm"
    make_job(tmp_path, failing=2)
    h = History()
    h.record_intent(token="t", preset="local-srun", preset_path=None, overrides=[], job_name="train",
                    launcher="srun", nodes=2, world_size=4, log_dir=str(tmp_path), log_stem="train",
                    script="#!/bin/bash\n")
    h.record_submitted("t", "42", None, None)
    h.close()
    fake = FakeRunner({
        "squeue": result(stdout=""),  # no longer in the queue
        "sacct": result(returncode=1, stderr=(data / "sacct_no_accounting.stderr").read_text()),
        ("scontrol", "show", "job"): result(stdout=(data / "scontrol_show_job_failed.stdout").read_text()),
    })
    monkeypatch.setattr(cli_logs, "cli_runner", lambda: fake)
    monkeypatch.setattr(cli_logs, "time", FakeTime())
    assert cli.run(["logs", "42", "--triage", "--follow"]) == 1
    out, err = capsys.readouterr()
    assert "rank 2 on nid002 failed first: RuntimeError: loss is nan at step 120" in out.splitlines()[-1]
    assert "job ended (FAILED); its logs are drained" in err
    assert [c.argv[0] for c in fake.history][:1] == ["squeue"]


def test_logs_triage_follow_holds_each_log_open_instead_of_reopening_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like the app's log pane, the CLI's watcher holds a descriptor per file: following a job for a while
    opens each file about once and then only reads (on Lustre every open is a metadata-server RPC)."""

    paths = make_job(tmp_path, failing=-1)
    made: list[cli_logs.JobLogWatcher] = []

    class Spy(cli_logs.JobLogWatcher):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    asked: list[float] = []

    def job_over() -> str | None:
        asked.append(clock.now)
        return "COMPLETED" if len(asked) >= 6 else None

    clock = FakeTime()
    monkeypatch.setattr(cli_logs, "time", clock)
    monkeypatch.setattr(cli_logs, "JobLogWatcher", Spy)
    cli_logs.print_triage(paths, "42", 4, launcher="srun", follow=True, job_over=job_over)
    capsys.readouterr()
    (watcher,) = made
    opens, _stats = watcher.ops()
    files = 5  # the batch log and 4 rank files
    assert opens <= 2 * files, opens  # opened once (plus the rank header), not once per poll
    assert watcher.reads() > 4 * files  # and read many times meanwhile
