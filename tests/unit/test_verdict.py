"""The job verdict (``ntui.core.logs.verdict`` through ``joblogs.job_verdict``) over logs of REAL dev-cluster runs.

Each ``tests/data/logs/<case>/`` holds the batch log and the rank logs of one real job (captured by
``tests/cluster/capture_triage_logs.py``; ``case.json`` says what was done), plus Slurm's own final word
(``scontrol.txt``, ``sacct.txt`` where accounting ran). OOM kills and preemption cannot happen on the dev
cluster (no cgroup task plugin, no preemption): those tests use lines in Slurm 22.05's formats, inline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.logs.joblogs import job_verdict, triage_job
from ntui.core.logs.triage import Finding, RankDetector, scan_lines
from ntui.core.logs.verdict import SlurmFinal, decide
from tests.support.logcases import restore_mtimes

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"


@dataclass(frozen=True)
class Case:
    paths: LogPaths
    job_id: str
    world_size: int
    launcher: str
    meta: dict[str, object]
    sacct: SlurmFinal | None


def case(name: str) -> Case:
    d = DATA / name
    meta = restore_mtimes(d)
    sacct = None
    if (d / "sacct.txt").exists():
        fields = (d / "sacct.txt").read_text().splitlines()[0].split("|")
        sacct = SlurmFinal(state=fields[1], reason=fields[3] or None, nodes=fields[4] or None)
    return Case(LogPaths(str(d), str(meta["preset"])), str(meta["job_id"]), int(meta["world_size"]),
                str(meta["launcher"]), meta, sacct)


def verdict(c: Case, **kw: object):  # type: ignore[no-untyped-def]
    return job_verdict(c.paths, c.job_id, c.world_size, c.launcher, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["fail-srun", "fail-torchrun", "fail-accelerate"])
def test_failing_rank_is_named_by_global_rank_and_node(name: str) -> None:
    c = case(name)
    rank = int(c.meta["failing_rank"])  # type: ignore[call-overload]
    rank_file = Path(c.paths.rank(c.job_id, rank)).read_text()
    node = rank_file.split("\n", 1)[0].split(" on ")[1]  # the header: where c10d put that rank
    v = verdict(c)
    assert v.kind == "rank_error"
    assert (v.rank, v.node) == (rank, node)
    assert v.line.startswith(f"rank {rank} on {node} failed first: RuntimeError: ntui check: rank {rank} fails")
    assert v.as_dict()["kind"] == "rank_error" and v.as_dict()["rank"] == rank


@pytest.mark.parametrize("name", ["fail-srun", "fail-torchrun", "fail-accelerate"])
def test_the_other_ranks_are_consequences(name: str) -> None:
    c = case(name)
    v = verdict(c)
    others = sorted(set(range(4)) - {v.rank})
    assert sorted(f.rank for f in v.consequences) == others  # gloo "Connection closed by peer", SIGTERM ...
    assert all(f.tier >= 1 for f in v.consequences)
    assert "as a consequence" in v.line


@pytest.mark.parametrize("name", ["fail-torchrun", "fail-accelerate", "cancel-torchrun", "node-fail"])
def test_srun_task_is_the_nodes_launcher_not_a_rank(name: str) -> None:
    """srun's 'task 1' with torchrun/accelerate is node 1's launcher: never reported as global rank 1."""
    c = case(name)
    batch = Path(c.paths.batch(c.job_id)).read_text().splitlines()
    as_launcher = [f for f in scan_lines(batch) if f.kind == "srun_exit"]
    assert as_launcher, "the real batch log has srun task exits"
    det = RankDetector(task_is_rank=False)
    det.feed_many(batch, first_line_no=1)
    exits = [f for f in det.findings if f.kind == "srun_exit"]
    assert exits and all(f.rank is None and f.task is not None and f.node for f in exits)
    only_launchers = decide(exits, launcher=c.launcher)
    assert only_launchers.rank is None
    assert "the launcher on nid00" in only_launchers.line and "(srun task " in only_launchers.line


def test_old_api_keeps_working_and_takes_the_launcher() -> None:
    c = case("fail-torchrun")
    summary = triage_job(c.paths, c.job_id, c.world_size)  # the old signature
    assert summary.rank == 3
    with_launcher = triage_job(c.paths, c.job_id, c.world_size, launcher="torchrun")
    assert with_launcher.rank == 3 and with_launcher.node == "nid002"
    assert all(f.rank is None for f in with_launcher.per_rank.values() if f.kind == "srun_exit")


@pytest.mark.parametrize("name", ["cancel-srun", "cancel-torchrun"])
def test_cancel_is_stated_first(name: str) -> None:
    """Before: 'rank 1 on nid002 failed first: srun: error: nid002: task 1: Exited with exit code 1'."""
    c = case(name)
    batch = Path(c.paths.batch(c.job_id)).read_text()
    at = batch.split(f"*** JOB {c.job_id} ON nid001 CANCELLED AT ")[1].split()[0]
    v = verdict(c)
    assert v.kind == "cancelled" and v.source == "log"
    assert v.when == at and v.node == "nid001"
    assert v.line.startswith(f"cancelled at {at}")
    assert v.rank is None and v.cause is None  # the ranks' SIGTERM noise is no cause


def test_cancel_names_who_from_slurm() -> None:
    c = case("cancel-srun")
    assert c.sacct is not None and c.sacct.state.startswith("CANCELLED by ")  # real sacct (accounting on)
    v = verdict(c, slurm=c.sacct)
    assert v.kind == "cancelled" and v.source == "slurm"
    assert v.who == "root"  # uid 0: the capture ran as root
    assert v.line.startswith("cancelled by root at ")


def test_time_limit() -> None:
    c = case("timeout-srun")
    v = verdict(c)
    assert v.kind == "timeout" and v.when is not None
    assert v.line.startswith(f"time limit reached at {v.when}")
    assert verdict(c, slurm=SlurmFinal("TIMEOUT")).source == "slurm"


def test_node_failure_names_the_failed_node() -> None:
    c = case("node-fail")
    v = verdict(c)
    assert v.kind == "node_fail"
    assert v.node == "nid002"  # srun's 'Node failure on nid002'; slurmstepd names the batch host nid001
    assert v.line.startswith("node failure on nid002 at ")
    assert c.sacct is not None and c.sacct.state == "NODE_FAIL"
    assert verdict(c, slurm=c.sacct).source == "slurm"


def test_slurm_state_wins_over_step_cancels() -> None:
    """FAILED: the STEP cancels in the logs are srun's/torchrun's, not Slurm's verdict."""
    c = case("fail-torchrun")
    v = verdict(c, slurm=SlurmFinal("FAILED", "NonZeroExitCode"))
    assert v.kind == "rank_error" and v.rank == 3 and v.source == "slurm"


def test_clean_logs_have_no_verdict(tmp_path: Path) -> None:
    paths = LogPaths(str(tmp_path), "ok")
    Path(paths.batch("7")).write_text("all good\n")
    Path(paths.rank("7", 0)).write_text("ntui: rank 0 on nid001\nstep 1\n")
    v = job_verdict(paths, "7", 1, "srun")
    assert v.kind == "none" and v.line == "no failure found" and not v.failed


# ---------------------------------------------------------------------------------- Slurm's formats, inline

def _batch(tmp: Path, text: str, ranks: dict[int, str] | None = None) -> LogPaths:
    paths = LogPaths(str(tmp), "j")
    Path(paths.batch("9")).write_text(text)
    for r, body in (ranks or {}).items():
        Path(paths.rank("9", r)).write_text(body)
    return paths


def test_oom_kill_by_cgroup(tmp_path: Path) -> None:
    paths = _batch(tmp_path, (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=9.0. Some of the step tasks have been OOM Killed.\n"
        "srun: error: nid002: task 3: Out Of Memory\n"
    ))
    v = job_verdict(paths, "9", None, "srun")
    assert v.kind == "oom" and "out-of-memory killer" in v.line
    assert job_verdict(paths, "9", None, "srun", slurm=SlurmFinal("OUT_OF_MEMORY")).kind == "oom"


def test_preemption(tmp_path: Path) -> None:
    paths = _batch(tmp_path, "slurmstepd: error: *** JOB 9 ON nid001 CANCELLED AT 2026-01-02T03:04:05"
                             " DUE TO PREEMPTION ***\n")
    v = job_verdict(paths, "9", None, "srun")
    assert (v.kind, v.when) == ("preempted", "2026-01-02T03:04:05")
    assert v.line.startswith("preempted at 2026-01-02T03:04:05")


def test_rank_error_before_a_cancel_is_named_after_it(tmp_path: Path) -> None:
    tb = "ntui: rank 1 on nid002\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n" \
         "RuntimeError: hung after this\n"
    paths = _batch(tmp_path, "slurmstepd: error: *** JOB 9 ON nid001 CANCELLED AT 2026-01-02T03:10:00 ***\n",
                   {1: tb})
    died = datetime(2026, 1, 2, 3, 0, 0).timestamp()  # the rank's last write, 10 minutes before the cancel
    os.utime(paths.rank("9", 1), (died, died))
    v = job_verdict(paths, "9", None, "srun")
    assert v.kind == "cancelled" and v.cause is not None and v.cause.rank == 1
    assert "before that rank 1 on nid002: " in v.line and v.rank == 1


def test_nccl_watchdog_after_a_root_error_is_a_consequence() -> None:
    def scan(name: str, rank: int) -> list[Finding]:
        return scan_lines((DATA / name).read_text().splitlines(), rank=rank, node=f"nid00{rank}", year=2024)

    oom, watchdog = scan("synthetic-cuda-oom-rank-3.out", 3), scan("synthetic-nccl-watchdog-rank-1.out", 1)
    v = decide({3: oom, 1: watchdog})
    assert v.kind == "rank_error" and v.rank == 3 and v.root is not None and v.root.kind == "oom"
    assert [f.rank for f in v.consequences] == [1] and v.consequences[0].kind == "nccl_timeout"


def test_slurm_kind_without_a_matching_log_line_keeps_no_stale_time() -> None:
    """Slurm says TIMEOUT but the logs only show a cancel (e.g. the line was cut): Slurm's kind, no cancel time."""
    c = case("cancel-srun")
    v = verdict(c, slurm=SlurmFinal("TIMEOUT"))
    assert v.kind == "timeout" and v.when is None and v.line.startswith("time limit reached: ")
