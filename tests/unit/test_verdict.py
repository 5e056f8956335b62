"""The job verdict (``ntui.core.logs.verdict`` through ``joblogs.job_verdict``) over logs of REAL dev-cluster runs.

Each ``tests/data/logs/<case>/`` holds the batch log and the rank logs of one real job (captured by
``tests/cluster/capture_triage_logs.py``; ``case.json`` says what was done), plus Slurm's own final word
(``scontrol.txt``, ``sacct.txt`` where accounting ran). OOM kills and preemption cannot happen on the dev
cluster (no cgroup task plugin, no preemption): those tests use lines in Slurm 22.05's formats, inline.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.logs.finding import LogFailure
from ntui.core.logs.joblogs import job_verdict, triage_job
from ntui.core.logs.rankdetector import RankDetector, scan_lines
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


#: The torch version matrix (``scripts/torch-matrix cluster``): the same jobs run with other torch and accelerate
#: releases (``tests/data/logs/torch-<version>/``; each ``case.json`` says which).
TORCH_MATRIX = tuple(f"{p.name}/" for p in sorted(DATA.glob("torch-*")) if p.is_dir())
LAUNCHERS = ("srun", "torchrun", "accelerate")
FAIL_CASES = [f"{version}fail-{launcher}" for version in ("", *TORCH_MATRIX) for launcher in LAUNCHERS
              if (DATA / f"{version}fail-{launcher}").is_dir()]


def test_the_torch_matrix_is_there() -> None:
    """Every version of the matrix has every case it was captured with (a version whose jobs could not run would
    otherwise drop out of the tests silently)."""
    assert len(TORCH_MATRIX) >= 4, TORCH_MATRIX
    for version in TORCH_MATRIX:
        for how in ("fail", "signal-kill", "signal-segv", "signal-abort"):
            for launcher in LAUNCHERS:
                meta = json.loads((DATA / f"{version}{how}-{launcher}" / "case.json").read_text())
                assert meta["torch"]["torch"] == version.removeprefix("torch-").rstrip("/")


@pytest.mark.parametrize("name", FAIL_CASES)
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


@pytest.mark.parametrize("name", FAIL_CASES)
def test_the_other_ranks_are_consequences(name: str) -> None:
    c = case(name)
    v = verdict(c)
    others = sorted(set(range(4)) - {v.rank})
    assert sorted(f.rank for f in v.consequences) == others  # gloo "Connection closed by peer", SIGTERM ...
    assert all(f.tier >= 1 for f in v.consequences)
    assert "as a consequence" in v.line


#: the likely cause said after the signal's name
LIKELY = {"SIGABRT": "an abort: a C++ exception, NCCL or CUDA", "SIGSEGV": "a crash in native code",
          "SIGKILL": "likely the out-of-memory killer"}
SIGNAL_CASES = [f"{version}signal-{how}-{launcher}" for version in ("", "slurm-26.05/", *TORCH_MATRIX)
                for how in ("abort", "segv", "kill") for launcher in LAUNCHERS
                if (DATA / f"{version}signal-{how}-{launcher}").is_dir()]


def _header_node(c: Case, rank: int) -> str:
    return Path(c.paths.rank(c.job_id, rank)).read_text().split("\n", 1)[0].split(" on ")[1]


def _local_rank(c: Case, rank: int) -> int:
    check = next(x for x in Path(c.paths.rank(c.job_id, rank)).read_text().splitlines() if x.startswith("NTUI_CHECK "))
    return int(json.loads(check.split(" ", 1)[1])["local_rank"])


@pytest.mark.parametrize("name", SIGNAL_CASES)
def test_rank_killed_by_a_signal_is_named_by_global_rank_node_and_signal(name: str) -> None:
    """Before: a peer's "Connection reset by peer" (rank 0/1/2), or the agent's RendezvousConnectionError
    ("the job failed first"), was named the cause; torch elastic's root cause and srun's "Aborted" were not."""
    c = case(name)
    rank, sig = int(c.meta["failing_rank"]), str(c.meta["signal"])  # type: ignore[call-overload]
    node = _header_node(c, rank)  # where c10d (torchrun, accelerate) or srun put that rank
    v = verdict(c)
    assert (v.kind, v.rank, v.node) == ("rank_error", rank, node)
    assert v.root is not None and (v.root.kind, v.root.signal) == ("rank_signal", sig)
    local = "" if c.launcher == "srun" else f"local rank {_local_rank(c, rank)}; "
    assert v.line.startswith(f"rank {rank} on {node} was killed by {sig} ({local}{LIKELY[sig]}) first: "), v.line
    assert "the launcher on" not in v.line and "failed first" not in v.line
    assert v.signal == sig and v.as_dict()["signal"] == sig and v.as_dict()["rank"] == rank


@pytest.mark.parametrize("name", SIGNAL_CASES)
def test_the_others_are_consequences_of_the_signal(name: str) -> None:
    c = case(name)
    v = verdict(c)
    assert sorted(f.rank for f in v.consequences) == sorted(set(range(4)) - {v.rank})
    assert all(f.tier >= 1 for f in v.consequences)  # peers closed, agents' store errors, SIGTERM'd workers
    assert v.line.endswith(" as a consequence")


@pytest.mark.parametrize("name", SIGNAL_CASES)
def test_signal_verdict_with_slurms_final_word(name: str) -> None:
    """sacct says FAILED with the exit code of srun's own stop (15:0, 143:0 = SIGTERM): the rank's signal
    stays the verdict and no SIGTERM is named."""
    c = case(name)
    assert c.sacct is not None and c.sacct.state == "FAILED"
    code = (DATA / name / "sacct.txt").read_text().split("|")[2]
    v = verdict(c, slurm=SlurmFinal(c.sacct.state, c.sacct.reason, c.sacct.nodes, code))
    assert v.source == "slurm" and v.line == verdict(c).line and "SIGTERM" not in v.line


@pytest.mark.parametrize(("name", "before"), [
    ("signal-abort-torchrun", "the launcher on nid002 (srun task 1) failed first: srun: error: nid002: task 1: "
                              "Exited with exit code 1 (srun_exit, line 41) · then ranks 2, 3 as a consequence"),
    ("signal-abort-accelerate", "rank 1 on localhost failed first: ChildFailedError: rank 1 (local_rank: 1) on "
                                "localhost exited with exitcode 1 (pid: 19009) (child_failed, line 66) · then ranks "
                                "0, 2, 3 as a consequence"),
])
def test_the_batch_log_alone_names_the_signal(tmp_path: Path, name: str, before: str) -> None:
    """The issue's case: the other ranks' logs say nothing (they were not in a collective), so only the batch
    log speaks. ``before`` is what the verdict said then (the wrong launcher, or a consequence on "localhost")."""
    c = case(name)
    for src in sorted((DATA / name).glob("*.out")):
        dest = tmp_path / src.name
        text = src.read_text()
        dest.write_text(text if "-rank-" not in src.name else "\n".join(text.splitlines()[:3]) + "\n")
        os.utime(dest, (src.stat().st_mtime, src.stat().st_mtime))
    v = job_verdict(LogPaths(str(tmp_path), c.paths.stem), c.job_id, c.world_size, c.launcher)
    assert v.line != before
    assert (v.rank, v.node, v.signal) == (3, _header_node(c, 3), "SIGABRT")
    assert v.line.startswith(f"rank 3 on nid002 was killed by SIGABRT (local rank 1; {LIKELY['SIGABRT']}) first: "
                             "exitcode -6 (SIGABRT) in torch elastic's root cause")


@pytest.mark.parametrize("name", [c for c in SIGNAL_CASES if "-segv-" in c])
def test_faulthandler_line_is_the_root(name: str) -> None:
    """With faulthandler on, the rank's own "Fatal Python error: Segmentation fault" is the telling line."""
    c = case(name)
    v = verdict(c)
    assert v.root is not None and v.root.first_line == "Fatal Python error: Segmentation fault"
    lines = Path(c.paths.rank(c.job_id, int(c.meta["failing_rank"]))).read_text().splitlines()  # type: ignore[call-overload]
    # header, init, (torch 2.9's gloo: "[Gloo] Rank 1 is connected to 3 peer ranks"), NTUI_CHECK, "kills itself"
    at = lines.index("Fatal Python error: Segmentation fault") + 1
    assert at in (5, 6) and v.root.line_no == at


def test_signal_summary_of_torch_elastic() -> None:
    """Without faulthandler the rank's log just stops: torch elastic's root cause names the rank (the agent on
    the other node reports its own ranks' exit 1; srun's task 1 is nid002's agent, not rank 1)."""
    c = case("signal-abort-torchrun")
    v = verdict(c)
    assert v.root is not None and v.root.first_line == "exitcode -6 (SIGABRT) in torch elastic's root cause"
    assert v.root.local_rank == 1 and v.root.task is None
    assert triage_job(c.paths, c.job_id, c.world_size, launcher="torchrun").rank == 3


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
    def scan(name: str, rank: int) -> list[LogFailure]:
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


def test_slurm_exit_code_signal_when_the_logs_say_nothing(tmp_path: Path) -> None:
    paths = _batch(tmp_path, "", {0: "ntui: rank 0 on nid001\nstep 1\n"})
    v = job_verdict(paths, "9", 1, "srun", slurm=SlurmFinal("FAILED", "NonZeroExitCode", exit_code="0:6"))
    assert v.kind == "rank_error" and v.source == "slurm"
    assert v.line == "killed by SIGABRT (Slurm's exit code 0:6); no log says which rank"
    shell = job_verdict(paths, "9", 1, "srun", slurm=SlurmFinal("FAILED", exit_code="139:0"))  # 128 + SIGSEGV
    assert shell.line.startswith("killed by SIGSEGV (Slurm's exit code 139:0)")
    stopped = job_verdict(paths, "9", 1, "srun", slurm=SlurmFinal("FAILED", exit_code="143:0"))  # SIGTERM
    assert stopped.kind == "none"


def test_slurm_exit_code_signal_joins_a_rank_error(tmp_path: Path) -> None:
    tb = 'ntui: rank 0 on nid001\nTraceback (most recent call last):\n  File "t.py", line 1\nValueError: x\n'
    paths = _batch(tmp_path, "", {0: tb})
    v = job_verdict(paths, "9", 1, "srun", slurm=SlurmFinal("FAILED", exit_code="0:11"))
    assert v.line.startswith("rank 0 on nid001 failed first: ValueError: x")
    assert v.line.endswith(" · Slurm's exit code 0:11: SIGSEGV")


def test_oom_kill_names_the_rank_the_killer_took(tmp_path: Path) -> None:
    """The cgroup's OOM kill is the verdict; torch elastic's SIGKILL says which rank it took."""
    batch = (DATA / "signal-kill-torchrun" / "local-torchrun-139.out").read_text()
    paths = _batch(tmp_path, batch + "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your "
                   "processes may have been killed by the cgroup out-of-memory handler.\n",
                   {2: "ntui: rank 2 on nid001\nstep 1\n"})
    v = job_verdict(paths, "9", None, "torchrun")
    assert v.kind == "oom" and (v.rank, v.node) == (2, "nid001")
    assert v.line == ("killed by the out-of-memory killer (cgroup memory limit) · rank 2 on nid001 was killed by "
                      "SIGKILL (local rank 0): exitcode -9 (SIGKILL) in torch elastic's root cause")


def _abort_with_the_other_agent_first(tmp_path: Path, *, faulthandler: bool) -> Case:
    """The torchrun abort job as a loaded machine once wrote it (a full run's 22.05 lane): nid001's agent ended first,
    its traceback's exception line came after srun's word on its task, and srun stopped nid002's agent before that
    one printed torch elastic's summary. Rank 3's own log stops (faulthandler off) or says its signal (on)."""
    c = case("signal-abort-torchrun")
    for src in sorted((DATA / "signal-abort-torchrun").glob("*.out")):
        (tmp_path / src.name).write_text(src.read_text())
    batch = tmp_path / Path(c.paths.batch(c.job_id)).name
    lines = batch.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "Received 15 death signal" in line)
    agent = lines[start:]
    exc = next(i for i, line in enumerate(agent) if "SignalException: Process" in line)
    srun = next(i for i, line in enumerate(agent) if "task 0: Exited with exit code 1" in line)
    agent[exc], agent[srun] = agent[srun], agent[exc]  # srun's line before the traceback's last
    batch.write_text("\n".join([*agent, "srun: error: nid002: task 1: Terminated"]) + "\n")
    if faulthandler:  # the form Python's faulthandler gives os.abort(), in this job's rank log
        rank3 = tmp_path / Path(c.paths.rank(c.job_id, 3)).name
        rank3.write_text(rank3.read_text() + "Fatal Python error: Aborted\n\nCurrent thread 0x00007f3a5c1d2740 (most "
                         "recent call first):\n  File \"/work/main/examples/ddp_check.py\", line 32 in fail\n")
    return Case(LogPaths(str(tmp_path), c.paths.stem), c.job_id, c.world_size, c.launcher, c.meta, c.sacct)


def test_srun_s_line_inside_a_traceback_is_never_its_exception(tmp_path: Path) -> None:
    """srun's "task 0: Exited with exit code 1" between a traceback's frames and its exception line is srun's word
    on the task (a finding of its own), not the traceback's error: the verdict was "the job failed first: srun:
    error: nid001: task 0: ... (traceback, line 29)"."""
    c = _abort_with_the_other_agent_first(tmp_path, faulthandler=False)
    found = scan_lines(Path(c.paths.batch(c.job_id)).read_text().splitlines())
    srun = [f for f in found if f.first_line == "srun: error: nid001: task 0: Exited with exit code 1"]
    assert [f.kind for f in srun] == ["srun_exit"], found
    assert any(f.kind == "signal" and f.first_line.endswith("got signal: 15") for f in found), found
    assert "(traceback, line" not in verdict(c).line


def test_a_lost_peer_names_the_rank_that_never_reported(tmp_path: Path) -> None:
    """Ranks 0-2 only lost a peer; rank 3's log stops without a word: it is where to look."""
    v = verdict(_abort_with_the_other_agent_first(tmp_path, faulthandler=False))
    assert v.root is not None and v.root.kind == "peer_failure"
    assert "· rank 3 never reported: it likely stopped first" in v.line
    assert v.rank == 3


def test_the_rank_s_own_faulthandler_line_names_the_signal_when_no_launcher_could(tmp_path: Path) -> None:
    v = verdict(_abort_with_the_other_agent_first(tmp_path, faulthandler=True))
    assert (v.rank, v.node, v.signal) == (3, "nid002", "SIGABRT"), v.line
    assert v.line.startswith("rank 3 on nid002 was killed by SIGABRT ("), v.line


def test_after_srun_s_line_only_an_exception_closes_the_traceback() -> None:
    """A task cut mid-traceback: srun's word on it, then another line of the log ("ntui: ..." of a requeued run's
    script) that has the shape of ``Name: text`` but is no exception; the traceback is reported cut, not closed by it.
    An exception's line after srun's still closes it."""
    head = ["Traceback (most recent call last):", '  File "t.py", line 3, in <module>', "    x()",
            "srun: error: nid001: task 0: Killed"]
    cut = scan_lines([*head, "ntui: port 15003 is in use on nid001; MASTER_PORT=15004 (R4)"])
    assert [f.first_line for f in cut if f.kind == "traceback"] == ["Traceback (most recent call last): (incomplete)"]
    closed = scan_lines([*head, "ValueError: boom"])
    assert [f.first_line for f in closed if f.kind == "traceback"] == ["ValueError: boom"]
