"""ntui.core.logs.triage over real torch/gloo output (tests/data/logs, see its README) and Slurm lines."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.logs.finding import LogFailure
from ntui.core.logs.lineforms import parse_line_time, split_prefix
from ntui.core.logs.rankdetector import RankDetector, scan_lines
from ntui.core.logs.triage import triage

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
T0 = datetime(2024, 5, 1, 12, 0, 0).timestamp()


def lines(name: str) -> list[str]:
    return (LOGS / name).read_text(encoding="utf-8").splitlines()


def kinds(findings: list[LogFailure]) -> list[str]:
    return [f.kind for f in findings]


# ------------------------------------------------------------------------------------------- real torch logs


def test_real_rank_files_rank1_raised_rank0_saw_peer_close() -> None:
    r1 = scan_lines(lines("torchrun-gloo-rank-1.out"), rank=1, node="nid002", time=T0 + 1.0)
    assert kinds(r1) == ["traceback"]
    assert r1[0].first_line == "RuntimeError: boom: loss is NaN at step 3"
    assert r1[0].line_no == 13 and r1[0].start_line_no == 5
    assert r1[0].excerpt[0] == "Traceback (most recent call last):"
    r0 = scan_lines(lines("torchrun-gloo-rank-0.out"), rank=0, node="nid001", time=T0 + 0.5)
    assert kinds(r0) == ["peer_failure"]
    # rank 0's file was modified 0.5 s *earlier*, yet its error only says "Connection closed by peer"
    s = triage({0: r0, 1: r1})
    assert s.rank == 1 and s.node == "nid002"
    assert (
        s.summary() == "rank 1 on nid002 failed first: RuntimeError: boom: loss is NaN at step 3 (traceback, line 13)"
    )
    assert s.failed_ranks == (0, 1)


def test_time_decides_outside_the_window() -> None:
    r1 = scan_lines(lines("torchrun-gloo-rank-1.out"), rank=1, time=T0 + 100)
    r0 = scan_lines(lines("torchrun-gloo-rank-0.out"), rank=0, time=T0)
    assert triage({0: r0, 1: r1}, window_s=10).rank == 0
    assert triage({0: r0, 1: r1}, window_s=200).rank == 1


def test_real_torchrun_agent_log_with_child_failed_summary() -> None:
    found = scan_lines(lines("torchrun-gloo-agent.out"), time=T0)
    assert kinds(found) == ["traceback", "peer_failure", "child_failed", "signal", "child_failed"]
    tb, peer, agent, sig, child = found
    assert (tb.rank, tb.line_no) == (1, 21)  # from the [rank1]: prefix
    assert peer.rank == 0
    # the agent's own "failed (exitcode: 1) local_rank: 1" line: a local rank on this node, no global one
    assert (agent.rank, agent.local_rank, agent.line_no) == (None, 1, 37)
    assert (sig.rank, sig.node) == (0, "localhost")
    assert (child.rank, child.node, child.time_source) == (1, "localhost", "line")
    assert "root cause" in child.first_line and "exitcode 1" in child.first_line
    s = triage(found)
    assert s.rank == 1 and s.node == "localhost"
    assert s.first is not None and s.first.first_line == "RuntimeError: boom: loss is NaN at step 3"
    assert s.summary().endswith("(traceback, line 21)")


def test_real_gloo_store_timeouts() -> None:
    master = scan_lines(lines("gloo-store-timeout-master.out"), rank=0, time=T0)
    assert kinds(master) == ["dist_timeout"]
    assert master[0].first_line.startswith("torch.distributed.DistStoreError: Timed out after 6 seconds")
    client = scan_lines(lines("gloo-store-timeout-client.out"), rank=1, time=T0, year=2026)
    # the error-level c10d line (with its own timestamp) and the final exception; the "[W ...] retrying"
    # warning and the C++ "Exception raised from" frames are not findings
    assert kinds(client) == ["dist_timeout", "dist_timeout"]
    assert client[0].time_source == "line" and not client[0].from_traceback
    assert client[1].first_line.startswith("torch.distributed.DistNetworkError: The client socket has timed out")
    s = triage({1: client})
    assert s.first is not None and s.first.from_traceback  # the traceback's line is the telling one


def test_real_rendezvous_timeout_without_message() -> None:
    found = scan_lines(lines("torchrun-rdzv-timeout.out"))
    assert kinds(found) == ["dist_timeout"]
    assert found[0].first_line == "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"
    assert triage(found).summary() == (
        "the job gave up waiting for the rendezvous (not every node's launcher joined) first: "
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError (dist_timeout, line 41)"
    )


# ------------------------------------------------------------------------------ synthetic (real formats)


def test_cuda_oom() -> None:
    found = scan_lines(lines("synthetic-cuda-oom-rank-3.out"), node="nid004")
    assert kinds(found) == ["oom"]
    f = found[0]
    assert f.rank == 3 and f.node == "nid004" and f.line_no == 16
    assert f.first_line.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB")
    assert scan_lines(["RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"])[0].kind == "oom"


def test_nccl_watchdog_is_reported_once_with_its_timestamp() -> None:
    found = scan_lines(lines("synthetic-nccl-watchdog-rank-1.out"), year=2024)
    # the watchdog's lines once; then its std::terminate (SIGABRT), which is how the watchdog ends the process
    assert kinds(found) == ["nccl_timeout", "signal"]
    f = found[0]
    assert f.rank == 1 and f.line_no == 3 and f.time_source == "line"
    assert f.time == pytest.approx(datetime(2024, 5, 1, 12, 10, 11, 61727).timestamp(), abs=1e-3)
    assert "Watchdog caught collective operation timeout" in f.first_line
    assert (found[1].signal, found[1].line_no) == ("SIGABRT", 14)
    s = triage(found)  # the abort after the watchdog is its consequence, not a cause of its own
    assert s.first is not None and s.first.kind == "nccl_timeout" and s.per_rank[1].kind == "nccl_timeout"


def test_slurm_labelled_batch_log() -> None:
    found = scan_lines(lines("synthetic-slurm-batch.out"), time=T0 + 60)
    assert kinds(found) == ["traceback", "srun_exit", "cancelled", "signal", "signal"]
    tb, srun, cancel, sig_range, sig3 = found
    assert (tb.rank, tb.first_line, tb.line_no) == (2, "RuntimeError: boom", 12)
    assert (srun.rank, srun.node) == (2, "nid002")
    assert (cancel.node, cancel.rank, cancel.time_source) == ("nid001", None, "line")
    assert cancel.time == datetime(2024, 5, 1, 12, 0, 45).timestamp()
    assert (sig_range.rank, sig_range.alike, sig_range.node) == (0, (1,), "nid001")  # "tasks 0-1": both alike
    assert (sig3.rank, sig3.node) == (3, "nid002")
    s = triage(found)
    # the node comes from srun's line for the same rank
    assert s.summary() == "rank 2 on nid002 failed first: RuntimeError: boom (traceback, line 12)"


def test_time_limit() -> None:
    found = scan_lines(lines("synthetic-time-limit.out"))
    assert kinds(found) == ["time_limit"]  # the STEP line repeats the JOB line: reported once
    s = triage(found)
    assert s.rank is None and s.node == "nid001"
    assert s.summary().startswith("the job on nid001 failed first: slurmstepd: error: *** JOB 4243 ON nid001")
    assert s.summary().endswith("DUE TO TIME LIMIT *** (time_limit, line 3)")


# ------------------------------------------------------------------------------------- killed by a signal


@pytest.mark.parametrize(("what", "kind", "sig"), [
    ("Aborted", "rank_signal", "SIGABRT"),
    ("Aborted (core dumped)", "rank_signal", "SIGABRT"),
    ("Segmentation fault", "rank_signal", "SIGSEGV"),
    ("Segmentation fault (core dumped)", "rank_signal", "SIGSEGV"),
    ("Killed", "rank_signal", "SIGKILL"),
    ("Bus error", "rank_signal", "SIGBUS"),
    ("Terminated", "signal", "SIGTERM"),  # srun / the launcher stopping the task after another failed
    ("Exited with exit code 1", "srun_exit", None),
])
def test_srun_task_signal_lines(what: str, kind: str, sig: str | None) -> None:
    line = f"srun: error: nid002: task 3: {what}"
    found = scan_lines([line])
    assert [(f.kind, f.rank, f.node, f.signal) for f in found] == [(kind, 3, "nid002", sig)]
    det = RankDetector(task_is_rank=False)  # torchrun / accelerate: task 3 is node 3's launcher
    det.feed(line)
    assert [(f.rank, f.task) for f in det.findings] == [(None, 3)]


def test_a_launcher_killed_by_a_signal_is_named_as_the_launcher() -> None:
    det = RankDetector(task_is_rank=False)
    det.feed("srun: error: nid002: task 1: Killed")
    s = triage(det.findings)
    assert s.summary() == ("the launcher on nid002 (srun task 1) was killed by SIGKILL (likely the out-of-memory "
                           "killer) first: "
                           "srun: error: nid002: task 1: Killed (rank_signal, line 1)")


@pytest.mark.parametrize(("line", "sig", "from_tb"), [
    ("Fatal Python error: Aborted", "SIGABRT", True),
    ("Fatal Python error: Segmentation fault", "SIGSEGV", True),
    ("Fatal Python error: Bus error", "SIGBUS", True),
    ("terminate called after throwing an instance of 'c10::Error'", "SIGABRT", False),
    ("terminate called without an active exception", "SIGABRT", False),
    ("*** SIGSEGV (@0x0) received by PID 4242 (TID 0x7f00) from PID 0; stack trace: ***", "SIGSEGV", False),
    ("*** SIGABRT received at time=1700000000 on cpu 3 ***", "SIGABRT", False),
])
def test_the_ranks_own_last_words(line: str, sig: str, from_tb: bool) -> None:
    found = scan_lines(["step 1", line], rank=3, node="nid002")
    assert [(f.kind, f.rank, f.signal, f.line_no, f.from_traceback) for f in found] == [
        ("rank_signal", 3, sig, 2, from_tb)]


@pytest.mark.parametrize("line", [
    "Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
    "Fatal Python error: Cannot recover from stack overflow.",
    "*** SIGTERM received at time=1700000000 on cpu 3 ***",
    "the job was terminated called off",
])
def test_not_a_death_by_a_fault_signal(line: str) -> None:
    assert [f for f in scan_lines([line], rank=0) if f.kind == "rank_signal"] == []


def _summary(entries: str) -> list[str]:
    return ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 40, "bash FAILED",
            "-" * 40, *entries.strip("\n").splitlines(), "=" * 40]


def test_torch_elastic_summary_with_signals() -> None:
    found = scan_lines(_summary("""
Failures:
[1]:
  time      : 2026-12-01_10:18:36
  host      : nid002
  rank      : 2 (local_rank: 0)
  exitcode  : -15 (pid: 17575)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 17575
------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-01_10:18:36
  host      : nid002
  rank      : 3 (local_rank: 1)
  exitcode  : -6 (pid: 17578)  (SIGABRT)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 17578
"""))
    assert [(f.kind, f.rank, f.local_rank, f.node, f.signal) for f in found] == [
        ("signal", 2, 0, "nid002", "SIGTERM"), ("rank_signal", 3, 1, "nid002", "SIGABRT")]
    assert found[1].first_line == "exitcode -6 (SIGABRT) in torch elastic's root cause"
    assert found[0].first_line == "exitcode -15 (SIGTERM) in torch elastic's failures"
    assert triage(found).summary() == ("rank 3 on nid002 was killed by SIGABRT (local rank 1; an abort: a C++ "
                                       "exception, NCCL or CUDA) first: "
                                       "exitcode -6 (SIGABRT) in torch elastic's root cause (rank_signal, line 15)")


def test_a_signal_after_a_peer_went_away_is_a_consequence() -> None:
    """NCCL's watchdog (or gloo after a peer closed) ends the rank with SIGABRT: torch elastic's root cause then
    names an abort that only followed; the rank that really died first wins."""
    agent = scan_lines(_summary("""
Root Cause (first observed failure):
[0]:
  time      : 2024-05-01_12:00:09
  host      : nid001
  rank      : 0 (local_rank: 0)
  exitcode  : -6 (pid: 1)  (SIGABRT)
"""))
    r0 = scan_lines(["[E501 12:00:08.0 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation "
                     "timeout: WorkNCCL(SeqNum=7) ran for 600000 milliseconds before timing out."], rank=0, year=2024)
    r1 = scan_lines(["Fatal Python error: Segmentation fault"], rank=1, time=T0 + 5)
    s = triage([*agent, *r0, *r1])
    assert s.per_rank[0].kind == "nccl_timeout"  # rank 0's abort is its watchdog's
    assert (s.rank, s.first.kind if s.first else None) == (1, "rank_signal")


def test_the_rank_header_names_the_node_over_torch_elastics_host() -> None:
    """On one machine (the dev cluster) torch elastic says host: localhost; the rank's header says nid002."""
    found = scan_lines(_summary("""
Root Cause (first observed failure):
[0]:
  host      : localhost
  rank      : 3 (local_rank: 1)
  exitcode  : -11 (pid: 1)  (SIGSEGV)
"""))
    assert triage(found).node == "localhost"
    s = triage(found, nodes_by_rank={3: "nid002"})
    assert (s.rank, s.node) == (3, "nid002")


def test_agent_rendezvous_errors_are_store_failures_not_tracebacks() -> None:
    """After a rank died, the agents' rendezvous shutdown fails: a consequence (tier 1), not the cause."""
    found = scan_lines([
        "Traceback (most recent call last):",
        '  File "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1, in _close',
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
        "failed. See inner exception for details.",
    ])
    assert [f.kind for f in found] == ["dist_timeout"]


# ------------------------------------------------------------------------------------------ detector logic


def test_incremental_feed_reports_at_the_exception_line() -> None:
    det = RankDetector(rank=5)
    feed = [
        "step 1",
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "    main()",
    ]
    for line in feed:
        assert det.feed(line) == []
    out = det.feed("KeyError: 'lr'")
    assert len(out) == 1 and out[0].first_line == "KeyError: 'lr'" and out[0].line_no == 5
    assert det.findings == out


def test_interleaved_tracebacks_of_two_ranks_in_one_log() -> None:
    log = [
        "0: Traceback (most recent call last):",
        "1: Traceback (most recent call last):",
        '0:   File "a.py", line 1, in f',
        '1:   File "b.py", line 2, in g',
        "1: ValueError: from one",
        "0: OSError: from zero",
    ]
    found = scan_lines(log, time=T0)
    assert [(f.rank, f.first_line) for f in found] == [(1, "ValueError: from one"), (0, "OSError: from zero")]
    assert triage(found).rank == 1  # same time: arrival order decides


def test_chained_exceptions_give_the_cause_first() -> None:
    log = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "ZeroDivisionError: division by zero",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in g',
        "RuntimeError: step failed",
    ]
    found = scan_lines(log, rank=0, time=T0)
    assert [f.first_line for f in found] == ["ZeroDivisionError: division by zero", "RuntimeError: step failed"]
    assert triage(found).first == found[0]


def test_noise_inside_and_outside_tracebacks() -> None:
    log = [
        "nid001:1234:1234 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
        "NCCL version 2.21.5+cuda12.4",
        "[W501 12:00:00.000000000 TCPStore.cpp:340] [c10d] TCP client failed to connect - retrying",
        "I0501 12:00:00.000000 1 ProcessGroupNCCL.cpp:900] ProcessGroupNCCL initialization options",
        "Traceback (most recent call last):",
        '  File "t.py", line 9, in f',
        '    raise RuntimeError("CUDA out of memory? no: NCCL error in user code")',
        "RuntimeError: plain",
    ]
    found = scan_lines(log)
    assert [(f.kind, f.first_line) for f in found] == [("traceback", "RuntimeError: plain")]


def test_incomplete_traceback_is_reported_on_flush() -> None:
    det = RankDetector(rank=0)
    det.feed_many(["Traceback (most recent call last):", '  File "x.py", line 1, in f'], first_line_no=10)
    assert det.findings == []
    out = det.flush()
    assert len(out) == 1 and out[0].first_line.endswith("(incomplete)") and out[0].line_no == 10


def test_reset_forgets_state() -> None:
    det = RankDetector(rank=0)
    det.feed("Traceback (most recent call last):")
    det.feed('  File "x.py", line 1, in f')
    det.reset()
    assert det.feed("ValueError: x") == []  # no open traceback any more
    assert det.findings == []


def test_prefixes() -> None:
    assert split_prefix("[default1]:[rank1]: Traceback") == (1, "Traceback")
    assert split_prefix(" 3: hello") == (3, "hello")
    assert split_prefix("[default0]:text") == (None, "text")
    assert split_prefix("[r12] x") == (12, "x")
    assert split_prefix("[rank7]:[E501 12:00:00.1 x]") == (7, "[E501 12:00:00.1 x]")
    assert split_prefix("12:00:01 not a label") == (None, "12:00:01 not a label")


def test_parse_line_time() -> None:
    assert parse_line_time("E1130 04:22:32.736000 4572 x", year=2026) == pytest.approx(
        datetime(2026, 11, 30, 4, 22, 32, 736000).timestamp()
    )
    assert parse_line_time("[2024-05-01 12:00:05,881] INFO") == pytest.approx(T0 + 5.881)
    assert parse_line_time("time : 2024-05-01_12:00:07") == T0 + 7
    assert parse_line_time("[E810 03:04:11.5 ProcessGroupNCCL.cpp:683]", year=2025) == pytest.approx(
        datetime(2025, 8, 10, 3, 4, 11, 500000).timestamp()
    )
    assert parse_line_time("no time here") is None
    assert parse_line_time("E1399 99:99:99.0 bad date") is None


def test_rankless_report_loses_to_a_rank_finding_and_nodes_are_filled() -> None:
    cancel = scan_lines(["slurmstepd: error: *** JOB 9 ON nid003 CANCELLED AT 2024-05-01T12:00:00 ***"])
    rank = scan_lines(
        ["Traceback (most recent call last):", '  File "x", line 1', "SystemExit: 3"], rank=4, time=T0 + 1
    )
    s = triage([*cancel, *rank], nodes_by_rank={4: "nid009"})
    assert s.rank == 4 and s.node == "nid009"


def test_empty() -> None:
    s = triage({})
    assert s.first is None and s.summary() == "no failure found" and s.total == 0


def test_long_log_scans_with_bounded_state() -> None:
    det = RankDetector(rank=0)
    for i in range(50_000):
        det.feed(f"[2024-05-01 12:00:00,000] INFO step {i} loss 0.1")
    det.feed("Traceback (most recent call last):")
    for i in range(5_000):  # a pathological traceback: the excerpt stays bounded
        det.feed(f'  File "f{i}.py", line {i}, in f')
    out = det.feed("RuntimeError: deep")
    assert len(out) == 1 and len(out[0].excerpt) <= 41 and out[0].line_no == 55_002


@given(st.lists(st.text(max_size=80), max_size=60))
def test_detector_never_raises(text_lines: list[str]) -> None:
    det = RankDetector()
    for line in text_lines:
        det.feed(line)
    det.flush()
    triage(det.findings).summary()


def test_every_finding_kind_is_written_once_and_has_its_tier() -> None:
    from ntui.core.logs import detectors as d
    from ntui.core.logs import finding as t

    assert len(set(t.KINDS)) == len(t.KINDS) == 16
    assert set(t.TIERS) == set(t.KINDS) and all(t.tier_of(k) in (0, 1, 2, 3) for k in t.KINDS)
    # the detector table gives only those kinds, each row named once
    assert all(set(row.kinds) <= set(t.KINDS) for row in (*d.DETECTORS, d.LAST_ERROR))
    assert len({row.name for row in d.DETECTORS}) == len(d.DETECTORS)


_LOST_PEER = ["0: Traceback (most recent call last):", '0:   File "t.py", line 3, in <module>', "0:     dist.barrier()",
              "0: RuntimeError: [../gloo/transport/tcp/pair.cc:537] Read error [127.0.0.1]:13722: Connection reset by "
              "peer", "srun: error: nid001: task 0: Exited with exit code 1", "srun: error: nid002: task 1: Terminated"]


def test_a_lost_peer_names_a_rank_that_said_nothing_never_one_srun_stopped() -> None:
    """srun's "task 1: Terminated" is its kill of a rank still alive after rank 0 exited: not the peer rank 0 lost.
    Rank 2, in a job of three, said nothing at all: it is."""
    found = scan_lines(_LOST_PEER)
    two = triage(found, ranks=(0, 1))
    assert two.first is not None and two.first.kind == "peer_failure"
    assert (two.silent, two.note) == ((), "")
    three = triage(found, ranks=(0, 1, 2))
    assert three.silent == (2,) and three.note == "rank 2 never reported: it likely stopped first"
