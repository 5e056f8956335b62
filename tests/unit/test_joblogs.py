"""A job's rank logs as a whole: rank -> node from the headers, and who failed first."""

from __future__ import annotations

import os
from pathlib import Path

from ntui.core.joblogs import job_logs, node_of, triage_job
from ntui.core.render import LogPaths

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
        "import sys; from ntui.cli_logs import print_triage; from ntui.core.lognames import LogPaths\n"
        f"sys.exit(print_triage(LogPaths({str(tmp_path)!r}, 'train'), '42', 4, launcher='srun', follow=True))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first.rstrip().endswith("no failure found (5 logs read)"), first
        with open(paths.rank("42", 3), "a") as fh:
            fh.write(TRACEBACK)
        second = proc.stdout.readline()
        assert "rank 3 on nid002 failed first: RuntimeError: loss is nan at step 120" in second, second
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 1
    finally:
        proc.kill()
