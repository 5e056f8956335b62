"""Triage on the line forms users' logs have beyond today's dev-cluster runs: torch elastic's captures, one folder
per torch version (tests/data/logs/elastic/torch-*/, made by its capture.py), its agent's lines in the logging
styles of older torch versions (written from its source: elastic/older-forms/README.md), srun's folded task lists,
the local-rank prefixes of ``--tee``, glued lines, pasted logs, NCCL timeouts on several ranks and node failures."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from ntui.core.loglines import parse_prefix
from ntui.core.logs.joblogs import files_verdict
from ntui.core.logs.rankdetector import scan_lines
from ntui.core.logs.triage import triage
from tests.conftest import REPO

ELASTIC = REPO / "tests" / "data" / "logs" / "elastic"
#: One folder of captures per torch version (elastic/capture.py run with that version's interpreter).
TORCH = sorted(ELASTIC.glob("torch-*"))
assert TORCH, "the torch elastic captures are there"
_versions = pytest.mark.parametrize("torch_dir", TORCH, ids=[p.name for p in TORCH])


def _verdict(torch_dir: Path, name: str) -> str:
    verdict, _ = files_verdict([torch_dir / name])
    return verdict.line


@pytest.mark.parametrize(("case", "said"), [
    ("record-raise.out", "rank 1 on localhost failed first: ValueError: rank 1 fails on purpose"),
    ("plain-raise.out", "rank 1 on localhost failed first: ValueError: rank 1 fails on purpose"),
    ("record-import.out", "rank 1 on localhost could not import a_module_this_environment_lacks first (not in the "
                          "job's Python: activate its environment before submitting, or in setup:): "
                          "ModuleNotFoundError: No module named"),
    ("kill-tee.out", "rank 1 on localhost was killed by SIGKILL (local rank 1; likely the out-of-memory killer) "
                     "first"),
    ("segv-tee.out", "rank 1 on localhost was killed by SIGSEGV (local rank 1; a crash in native code) first"),
    ("abort-tee.out", "rank 1 on localhost was killed by SIGABRT (local rank 1; an abort: a C++ exception, NCCL or "
                      "CUDA) first"),
    ("hang-tee.out", "rank 0 on localhost timed out after 8 s waiting for a peer in a collective (gloo recv) first: "),
    ("rdzv-timeout.out", "the job gave up waiting for the rendezvous (not every node's launcher joined) first: "),
])
@_versions
def test_torchrun_captures_name_the_rank_and_its_error(case: str, said: str, torch_dir: Path) -> None:
    said = UNPROVEN.get((torch_dir.name, case), said)
    assert _verdict(torch_dir, case).startswith(said)


def test_a_rendezvous_port_in_use_is_said_as_such_not_as_an_unreachable_store() -> None:
    """The store's own listen() failed (EADDRINUSE: something on the first node held the port); captured with the
    torch installed here only (the other versions' venvs are not on this machine: capture.py makes it with each)."""
    verdict = _verdict(ELASTIC / "torch-2.13.0", "port-in-use.out")
    assert verdict.startswith("the job could not open the store: its port (MASTER_PORT) is in use on the first node "
                              "first: torch.distributed.DistNetworkError: The server socket has failed to listen"), \
        verdict
    assert "could not reach" not in verdict


#: Where a version's log does not prove the rank. torch 2.0 and 2.2's plain-raise: no ``@record``, no ``--tee``;
#: both workers exit 1 in the same second and its "Root Cause" names rank 0 (the first it polled, the one that lost
#: its peer; 2.4 and later pick the failure that came first); the exception is in the log, its rank is not: said
#: without one, and neither rank is a consequence.
UNPROVEN = {(version, "plain-raise.out"): "the job failed first: ValueError: rank 1 fails on purpose (traceback"
            for version in ("torch-2.0.1", "torch-2.2.2")}


@_versions
def test_a_hang_names_the_rank_that_waited_and_never_blames_the_one_it_waited_for(torch_dir: Path) -> None:
    """Rank 1 never enters the barrier; rank 0's gloo collective times out, then the agent stops rank 1. The wait
    is said as a wait; rank 1 (where the log names it, stopped by its agent) is where to look, not a consequence."""
    verdict, _ = files_verdict([torch_dir / "hang-tee.out"])
    assert verdict.root is not None and verdict.root.kind == "dist_timeout" and verdict.root.rank == 0
    assert "as a consequence" not in verdict.line, verdict.line
    named = any(f.rank == 1 for f in scan_lines((torch_dir / "hang-tee.out").read_text().splitlines()))
    # the verdict's rank is the one rank 0 waited for when the log names it (the straggler), else the waiter's
    assert verdict.rank == (1 if named else 0), verdict
    tail = "rank 1 never reported: it likely stopped first" if named else \
        "the rank it waited for reported no error in this log"
    assert verdict.line.endswith(f" · {tail}"), verdict.line


@_versions
def test_the_root_causes_traceback_holds_the_real_error_when_the_workers_output_is_elsewhere(torch_dir: Path) -> None:
    """``--redirects 3``: the workers' output went to files; torch elastic's root cause entry (``@record``) is all the
    log has: its ``traceback :`` ends in the worker's exception, which is the finding (not "exited with exitcode 1")."""
    lines = (torch_dir / "record-raise-redirects.out").read_text().splitlines()
    assert not any(ln.startswith(("[rank1]", "[default1]")) for ln in lines)
    found = [f for f in scan_lines(lines) if f.rank == 1 and f.kind != "child_failed"]
    assert [(f.kind, f.first_line, f.local_rank) for f in found] == [
        ("traceback", "ValueError: rank 1 fails on purpose", 1)]
    assert found[0].from_traceback and found[0].excerpt[-1].strip() == "ValueError: rank 1 fails on purpose"
    # the agent's own line names local rank 1; torchrun's banner said max_nodes 1, so that is rank 1 too
    agent = [f for f in scan_lines(lines) if f.kind == "child_failed" and "local_rank: 1" in f.first_line]
    assert agent and all((f.rank, f.local_rank) == (1, 1) for f in agent)


def test_the_agents_failed_line_in_every_logging_style_gives_the_local_rank_and_the_exit() -> None:
    folder = ELASTIC / "older-forms"
    lines = (folder / "agent-lines.txt").read_text().splitlines()
    expected = json.loads((folder / "case.json").read_text())["lines"]
    found = {f.line_no: f for f in scan_lines(lines, year=2024)}
    assert sorted(found) == sorted(int(n) for n in expected)  # the SIGTERM notices are no finding
    for n, want in expected.items():
        f = found[int(n)]
        assert (f.rank, f.local_rank, f.signal) == (None, want["local_rank"], want.get("signal")), n
        assert f.kind == ("rank_signal" if want["exitcode"] < 0 else "child_failed"), n
    assert found[4].time_source == found[6].time_source == "line"  # the 2.1 and glog styles carry their time


def test_a_local_rank_alone_is_said_as_such() -> None:
    line = (ELASTIC / "older-forms" / "agent-lines.txt").read_text().splitlines()[1]
    summary = triage(scan_lines([line]))
    assert summary.summary().startswith("local rank 3 on an unnamed node was killed by SIGKILL (likely the "
                                        "out-of-memory killer) first"), \
        summary.summary()


@_versions
def test_a_global_rank_from_the_summary_wins_over_the_agents_local_one(torch_dir: Path) -> None:
    """The agent's line comes first in the log (it names a local rank: the killed one, or under torch 2.0 the peer it
    polled first), the summary's root cause (global rank 1) after it."""
    lines = (torch_dir / "kill-tee.out").read_text().splitlines()
    found = scan_lines(lines)
    # the agent's line names a local rank; the banner's max_nodes 1 makes it that global rank
    assert any(f.rank == f.local_rank is not None and f.kind in ("rank_signal", "child_failed") and
               "local_rank:" in f.first_line for f in found)
    first = triage(found).first
    assert first is not None and (first.rank, first.local_rank, first.signal) == (1, 1, "SIGKILL")


@pytest.mark.parametrize(("line", "rank", "local", "host", "rest"), [
    ("[default3]:Traceback (most recent call last):", None, 3, None, "Traceback (most recent call last):"),
    ("[trainer12]:x", None, 12, None, "x"),  # torchrun --role trainer
    ("[nid002:1]:RuntimeError: boom", None, 1, "nid002", "RuntimeError: boom"),
    ("[default1]:[rank5]: RuntimeError: boom", 5, 1, None, "RuntimeError: boom"),
    (" 7: srun -l's label", 7, None, None, "srun -l's label"),
])
def test_prefixes_give_global_and_local_ranks(line: str, rank: int | None, local: int | None, host: str | None,
                                              rest: str) -> None:
    prefix, text = parse_prefix(line)
    assert (prefix.rank, prefix.local_rank, prefix.host, text) == (rank, local, host, rest)


def test_interleaved_tracebacks_of_two_local_ranks_stay_apart() -> None:
    """--tee without torch's [rankN]: (older torch): two workers' tracebacks interleave line by line."""
    a = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "ValueError: from zero"]
    b = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "KeyError: 'from one'"]
    lines = [f"[default{i}]:{ln}" for pair in zip(a, b, strict=True) for i, ln in enumerate(pair)]
    found = scan_lines(lines)
    assert sorted((f.local_rank, f.first_line) for f in found) == [(0, "ValueError: from zero"),
                                                                   (1, "KeyError: 'from one'")]


def test_srun_folded_task_list_names_the_ranks_alike(tmp_path: Path) -> None:
    """srun folds tasks that ended the same way into one line (``tasks 2-7,9``: Slurm's ``_print_task_exit``
    prints a hostlist of them), here as the srun launcher's ranks."""
    log = tmp_path / "job.out"
    log.write_text("srun: error: nid003: tasks 2-7,9: Exited with exit code 1\n")
    found = scan_lines(log.read_text().splitlines())
    assert [(f.kind, f.rank, f.alike, f.node) for f in found] == [("srun_exit", 2, (3, 4, 5, 6, 7, 9), "nid003")]
    assert triage(found).summary().startswith("ranks 2-7,9 on nid003 failed first, alike:")


# ---------------------------------------------------------------- glued lines and pasted logs

LOGS = REPO / "tests" / "data" / "logs"


def _tqdm_bar() -> str:
    """A real tqdm bar as a terminal-less job writes it: carriage returns, no newline at the end."""
    import io

    from tqdm import tqdm

    out = io.StringIO()
    for _ in tqdm(range(5), file=out, ncols=60, mininterval=0, ascii=True):
        pass
    return out.getvalue().rstrip("\n")


def test_an_srun_line_glued_onto_a_progress_bar_is_read() -> None:
    """The real signal-kill-srun batch log, its first line (srun's ``task 2: Killed``) written right after a tqdm bar
    that ended without a newline."""
    lines = (LOGS / "signal-kill-srun" / "local-srun-138.out").read_text().splitlines()
    glued = [_tqdm_bar() + lines[0], *lines[1:]]
    assert "\r" in glued[0] and not glued[0].startswith("srun:")
    found = scan_lines(glued)
    first = triage(found).first
    assert first is not None and (first.kind, first.rank, first.signal, first.line_no) == ("rank_signal", 2,
                                                                                          "SIGKILL", 1)


def test_two_messages_merged_on_one_line_are_both_read() -> None:
    """The real torchrun rank 3 log: its error line and libstdc++'s ``terminate called`` written on one line."""
    lines = (LOGS / "fail-torchrun" / "local-torchrun-2-rank-3.out").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("terminate called"))
    merged = [*lines[:at - 1], lines[at - 1] + lines[at], *lines[at + 1:]]
    apart, together = scan_lines(lines, rank=3), scan_lines(merged, rank=3)
    assert [(f.kind, f.first_line) for f in together] == [(f.kind, f.first_line) for f in apart]
    assert any(f.signal == "SIGABRT" for f in together)


@pytest.mark.parametrize("paste", ["quoted", "numbered", "indented"])
def test_a_log_pasted_by_hand_is_read_as_the_original(paste: str, tmp_path: Path) -> None:
    """The real fail-srun logs as they come back from a bug report: quoted, numbered or indented."""
    originals = sorted((LOGS / "fail-srun").glob("*.out"))
    pasted = []
    for path in originals:
        lines = path.read_text().splitlines()
        if paste == "quoted":
            lines = [f"> {ln}" for ln in lines]
        elif paste == "numbered":
            lines = [f"{n:>4} | {ln}" for n, ln in enumerate(lines, 1)]
        else:
            lines = [f"    {ln}" for ln in lines]
        target = tmp_path / path.name
        target.write_text("\n".join(lines) + "\n")
        pasted.append(target)
    original, _ = files_verdict(originals)
    again, _ = files_verdict(pasted)
    assert again.line == original.line and original.rank == 2


def test_srun_labels_are_not_taken_for_a_pastes_line_numbers() -> None:
    from ntui.core.logs.paste import unpaster

    lines = (LOGS / "synthetic-slurm-batch.out").read_text().splitlines()
    assert sum(ln[:3].strip().rstrip(":").isdigit() for ln in lines) > len(lines) // 2  # srun -l's labels
    assert unpaster(lines) is None


# ---------------------------------------------------------------- NCCL timeouts on several ranks

def _watchdog(rank: int, seq: int) -> list[str]:
    """The NCCL watchdog's lines of one rank (GPU-only: synthetic-nccl-watchdog-rank-1.out is written from
    ProcessGroupNCCL's source, rank 1 at SeqNum 78), as another rank stuck at another collective prints them."""
    lines = (LOGS / "synthetic-nccl-watchdog-rank-1.out").read_text().splitlines()
    return [ln.replace("[rank1]", f"[rank{rank}]").replace("Rank 1]", f"Rank {rank}]")
            .replace("SeqNum=78", f"SeqNum={seq}").replace("sequence id: 78", f"sequence id: {seq}") for ln in lines]


def _timeouts(seqs: dict[int, int], world: int) -> str:
    found = [f for rank, seq in seqs.items() for f in scan_lines(_watchdog(rank, seq), rank=rank, year=2024)]
    return triage(found, ranks=range(world)).summary()


def test_the_rank_whose_watchdog_waited_at_an_earlier_collective_stopped_first() -> None:
    said = _timeouts({0: 78, 1: 77, 2: 78, 3: 78}, world=4)
    assert said.startswith("rank 1 timed out in NCCL collective 77 (ALLREDUCE) first: [E501"), said
    assert said.endswith("it stopped at collective 77 (ALLREDUCE); the others waited at 78: rank 1 is where to look")


def test_all_at_the_same_collective_the_rank_that_never_reported_is_named() -> None:
    said = _timeouts({0: 78, 1: 78, 3: 78}, world=4)
    assert said.endswith("ranks 0-1,3 all timed out at collective 78 (ALLREDUCE); rank 2 never reported: it likely "
                         "stopped first"), said


def test_all_at_the_same_collective_and_every_rank_reported_says_the_log_cannot_tell() -> None:
    said = _timeouts({0: 78, 1: 78}, world=2)
    assert said.endswith("the rank that stopped first is not in this log"), said


def _one_log(lines: list[str]) -> str:
    """A combined log (one file, no rank prefixes: the ranks only in NCCL's own ``[Rank N]``), as users paste."""
    from ntui.core.logs.verdict import decide

    found = scan_lines(lines, year=2024)
    return f"{decide(found).rank}|{triage(found).summary()}"


def _unprefixed(rank: int, seq: int | None, op: str = "ALLREDUCE") -> str:
    work = f"SeqNum={seq}, OpType={op}" if seq is not None else f"OpType={op}"  # torch before 1.13: no SeqNum
    return (f"[E ProcessGroupNCCL.cpp:587] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL({work}, Timeout(ms)=1800000) ran for 180{rank}123 milliseconds before timing out.")


@pytest.mark.parametrize("seq", [4411, None], ids=["seqnum", "no-seqnum"])
def test_one_combined_log_names_the_rank_below_the_others_that_never_timed_out(seq: int | None) -> None:
    said = _one_log([_unprefixed(r, seq) for r in (3, 1, 2)])
    rank, line = said.split("|", 1)
    assert rank == "0", said  # ranks 1-3 each said their own timeout; rank 0 (every job has one) said nothing
    assert line.endswith("rank 0 never reported: it likely stopped first"), said
    assert ("at collective 4411 (ALLREDUCE)" if seq else "in an ALLREDUCE") in line, said


def test_one_combined_log_with_every_rank_timed_out_says_it_cannot_tell() -> None:
    said = _one_log([_unprefixed(r, 90) for r in (2, 0, 1)])
    assert "never reported" not in said, said
    assert said.endswith("the rank that stopped first is not in this log"), said


def test_the_one_rank_in_another_operation_at_the_same_collective_diverged() -> None:
    lines = [_unprefixed(2, 3017), _unprefixed(1, 3017), _unprefixed(3, 3017), _unprefixed(0, 3017, "BARRIER")]
    rank, line = _one_log(lines).split("|", 1)
    assert rank == "0", line
    assert line.startswith("rank 0 timed out in NCCL collective 3017 (BARRIER) first"), line
    assert line.endswith("it was in collective 3017 (BARRIER) while ranks 1-3 waited in collective 3017 "
                         "(ALLREDUCE): the ranks' collectives diverged, rank 0 is where to look"), line


#: a pasted torchrun agent's report of a dead worker (torch 2.x's logger form), with no rank prefixes: only the
#: worker's local rank is said
_AGENT_KILLED = [
    "W1203 09:14:02.118000 4410 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4521 closing "
    "signal SIGTERM",
    "E1203 09:14:02.905000 4410 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
    "local_rank: 3 (pid: 4524) of binary: /opt/venv/bin/python",
]


@pytest.mark.parametrize(("banner", "rank"), [
    (None, 3),
    ("  nnodes           : 2", None),
    ("  max_nodes        : 1:4", None),
    ("[INFO] group_rank=1, group_world_size=2", None),
    ("  nnodes           : 1", 3),
], ids=["nothing-said", "two-nodes", "elastic-range", "node-rank-1", "one-node"])
def test_a_local_rank_is_the_rank_only_when_nothing_says_there_were_several_nodes(
        tmp_path: Path, banner: str | None, rank: int | None) -> None:
    log = tmp_path / "pasted.log"
    log.write_text("\n".join(([banner] if banner else []) + _AGENT_KILLED) + "\n")
    verdict, _ = files_verdict([log])
    assert verdict.rank == rank, verdict.line
    if rank is None:
        assert verdict.line.startswith("local rank 3 on an unnamed node was killed by SIGKILL"), verdict.line
    elif banner is None:  # assumed, and said
        assert verdict.line.startswith("rank 3 (the log names no other node) was killed by SIGKILL"), verdict.line


def test_a_frame_line_a_terminal_wrapped_does_not_end_the_traceback(tmp_path: Path) -> None:
    log = tmp_path / "wrapped.log"
    log.write_text("\n".join([
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", '
        "line 1160, in next_rende",
        "zvous",  # the rest of the frame's line, wrapped at the terminal's width
        "    self._op_executor.run(join_op, deadline, self._get_deadline)",
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
    ]) + "\n")
    verdict, _ = files_verdict([log])
    assert "gave up waiting for the rendezvous" in verdict.line and ": zvous" not in verdict.line, verdict.line


@pytest.mark.parametrize(("inner", "outer", "named"), [
    ("RuntimeError: Broken pipe", "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The "
     "connection to the C10d store has failed.", "RendezvousConnectionError"),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
     "RuntimeError: the training step failed", "OutOfMemoryError"),
    ("KeyError: 'input_ids'", "ValueError: could not collate the batch", "KeyError"),
], ids=["store-over-its-socket", "oom-inside-a-wrapper", "plain-inner"])
def test_a_chained_traceback_is_one_failure_and_its_cause_is_named(tmp_path: Path, inner: str, outer: str,
                                                                    named: str) -> None:
    frame = ['  File "/home/u/train.py", line 12, in step', "    run()"]
    log = tmp_path / "chained.log"
    log.write_text("\n".join(["Traceback (most recent call last):", *frame, inner, "",
                              "The above exception was the direct cause of the following exception:", "",
                              "Traceback (most recent call last):", *frame, outer]) + "\n")
    verdict, _ = files_verdict([log])
    assert named in verdict.line and "consequence" not in verdict.line, verdict.line


_BARRIER = ("RuntimeError: Timed out initializing process group in store based barrier on rank: {rank}, for key: "
            "store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:30:00)")


def test_a_log_appended_over_a_requeue_names_the_later_runs_error_not_the_earlier_end(tmp_path: Path) -> None:
    log = tmp_path / "appended.log"
    log.write_text("\n".join([
        "2026-11-20 08:00:01 | INFO | step 4100 loss 2.31",
        "slurmstepd: error: *** JOB 771204 ON nid003 CANCELLED AT 2026-11-20T08:10:00 DUE TO PREEMPTION ***",
        "2026-11-20 08:41:10 | INFO | starting again from step 4000",
        "submitit ERROR (2026-11-20 09:11:12,210) - Submitted job triggered an exception",
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 40, in setup',
        "    dist.init_process_group('nccl')",
        _BARRIER.format(rank=2),
    ]) + "\n")
    verdict, _ = files_verdict([log])
    assert verdict.kind == "rank_error" and verdict.rank == 2, verdict.line
    assert "store based barrier" in verdict.line, verdict.line
    assert verdict.line.endswith("the job ran again after an earlier end: preempted at 2026-11-20T08:10:00: Slurm "
                                 "ended the job for a higher-priority one"), verdict.line


def test_the_process_mp_spawn_reports_is_the_cause_not_its_wrapper(tmp_path: Path) -> None:
    frame = ['  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 90, in join',
             "    raise ProcessRaisedException(msg, error_index, failed_process.pid)"]
    log = tmp_path / "spawn.log"
    log.write_text("\n".join([
        "Traceback (most recent call last):", *frame, "torch.multiprocessing.spawn.ProcessRaisedException: ", "",
        "-- Process 3 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 61, in worker',
        "    dist.init_process_group('nccl', rank=rank, world_size=4)",
        _BARRIER.format(rank=3),
    ]) + "\n")
    verdict, _ = files_verdict([log])
    assert verdict.rank == 3 and "store based barrier" in verdict.line, verdict.line
    assert not verdict.line.startswith("the job failed first: torch.multiprocessing"), verdict.line


def test_a_nodes_launcher_banner_gives_its_hosts_first_rank(tmp_path: Path) -> None:
    """The DeepSpeed launcher under pdsh: each host's lines prefixed ``host: ``, its banner saying the node's rank and
    processes; a worker its launcher reports dead by local rank is that host's first rank plus the local rank."""
    cmd = "['/opt/venv/bin/python', '-u', 'train.py', '--local_rank={local}', '--deepspeed', 'ds.json'] exits with " \
          "return code = -9"
    log = tmp_path / "pdsh.log"
    log.write_text("\n".join([
        "gpu-c01: [2026-11-02 08:00:01,100] [INFO] [launch.py:151:main] nnodes=2, num_local_procs=4, node_rank=0",
        "gpu-c02: [2026-11-02 08:00:01,200] [INFO] [launch.py:151:main] nnodes=2, num_local_procs=4, node_rank=1",
        "gpu-c02: [2026-11-02 08:09:10,500] [ERROR] [launch.py:321:sigkill_handler] " + cmd.format(local=1),
        "gpu-c01: [2026-11-02 08:09:12,900] [ERROR] [launch.py:321:sigkill_handler] " + cmd.format(local=0),
    ]) + "\n")
    verdict, _ = files_verdict([log])
    assert (verdict.rank, verdict.node) == (5, "gpu-c02"), verdict.line


# ---------------------------------------------------------------- node failures

NODE_FAIL = LOGS / "node-fail"


def test_slurmstepds_node_failure_line_names_the_host_it_ran_on_not_the_failed_node(tmp_path: Path) -> None:
    """The real node-fail batch log without srun's ``Node failure on nid002``: slurmstepd on nid001 reported the
    failure; the verdict does not call nid001 the failed node."""
    batch = next(p for p in NODE_FAIL.glob("*.out") if "-rank-" not in p.name)
    log = tmp_path / batch.name
    log.write_text("".join(ln + "\n" for ln in batch.read_text().splitlines() if "Node failure on" not in ln))
    verdict, _ = files_verdict([log])
    assert verdict.kind == "node_fail" and verdict.node is None
    assert verdict.line.startswith("node failure at 2026-11-30T09:32:10: Slurm ended the job (the log names no failed "
                                   "node: slurmstepd on nid001 reported it)"), verdict.line
    full, _ = files_verdict([batch])
    assert full.line.startswith("node failure on nid002 at 2026-11-30T09:32:10")


def test_a_ranks_error_on_the_node_that_failed_is_a_symptom_of_it(tmp_path: Path) -> None:
    """The real node-fail job, its rank on nid002 ending in CUDA's "unknown error" (GPU-only: the text of
    c10's CUDA error check, ``CUDA error: unknown error``, written by hand) just before srun's node failure."""
    ranks = sorted(NODE_FAIL.glob("*-rank-*.out"))
    on_failed = next(p for p in ranks if "on nid002" in p.read_text().splitlines()[0])
    copies = []
    for path in [*ranks, next(p for p in NODE_FAIL.glob("*.out") if "-rank-" not in p.name)]:
        text = path.read_text()
        if path == on_failed:
            text += ('Traceback (most recent call last):\n  File "/work/main/examples/ddp_check.py", line 57, in main\n'
                     "    dist.barrier()\nRuntimeError: CUDA error: unknown error\n")
        (tmp_path / path.name).write_text(text)
        copies.append(tmp_path / path.name)
    for path in copies:  # written a second before slurmstepd's "CANCELLED AT 09:32:10" (as the ranks were)
        stamp = datetime(2026, 11, 30, 9, 32, 9).timestamp()
        os.utime(path, (stamp, stamp))
    verdict, _ = files_verdict(copies)
    assert verdict.kind == "node_fail" and verdict.line.startswith("node failure on nid002"), verdict.line
    assert "on nid002 as it failed: rank 0 on nid002: RuntimeError: CUDA error: unknown error" in verdict.line, \
        verdict.line
    assert "before that" not in verdict.line


@_versions
@pytest.mark.parametrize("case", ["plain-raise.out", "record-raise.out"])
def test_a_copied_log_with_a_new_modification_time_gives_the_same_verdict(torch_dir: Path, case: str,
                                                                           tmp_path: Path) -> None:
    """Lines without a time of their own count as written at the file's modification time, which a download or a
    copy (a clean clone: seen in a full run) makes later; the root cause's own timestamp must not then win over the
    worker's traceback printed before it."""
    copy = tmp_path / case
    copy.write_bytes((torch_dir / case).read_bytes())
    for later in (0.0, 86_400.0 * 30):
        stamp = (torch_dir / case).stat().st_mtime + later
        os.utime(copy, (stamp, stamp))
        verdict, _ = files_verdict([copy])
        said = UNPROVEN.get((torch_dir.name, case), "rank 1 on localhost failed first: ValueError: rank 1 fails on "
                                                    "purpose")
        assert verdict.line.startswith(said), (later, verdict.line)


def test_a_rank_file_read_late_still_names_the_ranks_own_error() -> None:
    """Live, the lines without a time of their own get the time they were polled; the launcher's root cause entry
    its own. The real torchrun failure (rank 3 raises, then its process aborts at exit: torch elastic says exitcode
    -6) with rank 3's file polled 30 s after the root cause's time (a loaded machine, seen in a full run): the
    verdict is the RuntimeError, the abort its consequence."""
    from ntui.core.logs.rankdetector import RankDetector

    case = LOGS / "fail-torchrun"
    root_cause_at = datetime(2026, 11, 30, 9, 28, 56).timestamp()
    per_file = {}
    batch = RankDetector(None, None, task_is_rank=False)
    batch.feed_many(next(p for p in case.glob("*.out") if "-rank-" not in p.name).read_text().splitlines(),
                    first_line_no=1, time=root_cause_at + 1)
    per_file["batch"] = batch.findings
    for rank in range(4):
        det = RankDetector(rank, None, task_is_rank=False)
        det.feed_many((case / f"local-torchrun-2-rank-{rank}.out").read_text().splitlines(), first_line_no=1,
                      time=root_cause_at + 30)
        det.flush()
        per_file[str(rank)] = det.findings
    first = triage(per_file).first
    assert first is not None and (first.rank, first.first_line) == (3, "RuntimeError: ntui check: rank 3 fails on "
                                                                        "purpose"), first
