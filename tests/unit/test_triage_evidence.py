"""Triage's evidence rules for the forms users' failure logs take (each written here in that form, with our own
words, hosts and numbers): which of several ranks failing alike the launcher names first, a consequence that only
says a process died, a CUDA error on a line of its own, horovodrun's tag, Rich's boxed traceback, a launcher's word
on its node's first global rank."""

from __future__ import annotations

import pytest

from ntui.core import loglines
from ntui.core.loglines import parse_prefix, read_line
from ntui.core.logs.rankdetector import scan_lines
from ntui.core.logs.triage import triage
from ntui.core.logs.verdict import decide


def _dup(rank: int) -> list[str]:
    return [f"[1,{rank}]<stdout>:box-q4:{5100 + rank}:{5200 + rank} [0] init.cc:497 NCCL WARN Duplicate GPU detected :"
            f" rank {rank} and rank 0 both on CUDA device 3000"]


def test_of_ranks_failing_alike_the_one_open_mpi_names_first_leads() -> None:
    box = ["-" * 40, "mpirun detected that one or more processes exited with non-zero status, thus causing",
           "the job to be terminated. The first process to do so was:", "", "  Process name: [[7310,1],2]",
           "  Exit code:    1", "-" * 40]
    first = triage(scan_lines(_dup(3) + _dup(2) + _dup(1) + box)).first
    assert first is not None and first.kind == "nccl" and first.rank == 2, first
    assert set(first.alike) == {1, 3} and "rank 2 and rank 0" in first.first_line, first


def test_of_ranks_failing_alike_torch_elastics_root_cause_leads() -> None:
    tb = ["[rank{r}]:Traceback (most recent call last):", '[rank{r}]:  File "a.py", line 4, in main',
          "[rank{r}]:    dist.barrier()", "[rank{r}]:RuntimeError: Detected mismatch between collectives on ranks. "
          "Rank {r} is running collective: BARRIER"]
    root = ["Root Cause (first observed failure):", "[0]:", "  time      : 2025-01-02_10:00:00", "  host      : ws-7",
            "  rank      : 0 (local_rank: 0)", "  exitcode  : 1 (pid: 901)",
            "  error_file: /tmp/torchelastic_x/attempt_0/0/error.json", "  traceback : see above", "=" * 20]
    lines = [line.format(r=1) for line in tb] + [line.format(r=0) for line in tb] + root
    first = triage(scan_lines(lines)).first
    assert first is not None and (first.rank, first.alike) == (0, (1,)), first
    assert "Rank 0 is running" in first.first_line, first


def test_a_dead_dataloader_worker_is_a_consequence_of_the_oom_killer() -> None:
    lines = ["Traceback (most recent call last):", '  File "fit.py", line 9, in <module>', "    for b in loader:",
             "RuntimeError: DataLoader worker (pid 4410) is killed by signal: Killed.",
             "slurmstepd: error: Detected 1 oom_kill event in StepId=551.batch. Some of the step tasks have been "
             "OOM Killed."]
    first = triage(scan_lines(lines)).first
    assert first is not None and first.kind == "oom_kill", first
    alone = triage(scan_lines(lines[:4])).first  # with nothing else, the traceback is still what the log says
    assert alone is not None and alone.kind == "traceback", alone


def test_a_cuda_error_on_a_line_of_its_own_is_the_processs_error() -> None:
    lines = ["I0301 10:00:00.100 77 gpu.cc:12] GPU 0: 2100 MB",
             "E0301 10:00:09.500 77 net.cc:188] Exception from operator chain starting at '' (type 'Add'): "
             "EnforceNotMet: [enforce fail at gpu.h:156] . Encountered CUDA error: an illegal memory access was "
             "encountered Error from operator:"]
    found = scan_lines(lines)
    assert [f.kind for f in found] == ["traceback"], found
    assert found[0].first_line.startswith("CUDA error: an illegal memory access"), found[0]
    assert found[0].excerpt == (lines[1],)  # the whole line is kept as the excerpt
    assert scan_lines(["E0301 10:00:09.500 77 x.cc:1] CUDA error: out of memory"])[0].kind == "oom"


def test_horovodruns_tag_gives_the_rank_and_its_shut_down_error_is_a_peers() -> None:
    prefix, text = parse_prefix("[3]<stderr>:RuntimeError: boom")
    assert (prefix.rank, text) == (3, "RuntimeError: boom")
    lines = ["[1]<stderr>:Traceback (most recent call last):", '[1]<stderr>:  File "t.py", line 3, in <module>',
             "[1]<stderr>:    hvd.allreduce(x)",
             "[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error",
             "[0]<stderr>:Traceback (most recent call last):", '[0]<stderr>:  File "t.py", line 3, in <module>',
             "[0]<stderr>:    hvd.allreduce(x)",
             "[0]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused "
             "by an exception on one of the ranks or an attempt to allreduce after one of the ranks finished."]
    summary = triage(scan_lines(lines))
    assert summary.first is not None and summary.first.rank == 1, summary.first
    assert "ncclCommInitRank failed" in summary.first.first_line, summary.first
    assert summary.per_rank[0].kind == "peer_failure", summary.per_rank


BOX = ["╭───────────────── Traceback (most recent call last) ─────────────────╮",
       "│ /srv/app/cli.py:41 in fit                                            │",
       "│                                                                      │",
       "│   40 │   model = build(cfg)                                          │",
       "│ ❱ 41 │   trainer.fit(model)                                          │",
       "│                                                                      │",
       "│ /srv/env/lib/python3.11/site-packages/torch/nn/modules/module.py:17 │",
       "│ 39 in _wrapped_call_impl                                             │",
       "╰──────────────────────────────────────────────────────────────────────╯",
       "ValueError: Expected all tensors to be on the same device"]


def test_richs_boxed_traceback_is_read_as_pythons_plain_one() -> None:
    assert loglines.unbox(BOX[0]) == "Traceback (most recent call last):"
    assert loglines.unbox(BOX[1]) == '  File "/srv/app/cli.py", line 41, in fit'
    assert loglines.unbox(BOX[4]) == "    41 │   trainer.fit(model)"
    assert loglines.unbox(BOX[8]) == ""
    assert loglines.unbox("│ a table cell │") == "    a table cell"  # (read as a line inside a traceback only there)
    assert loglines.unbox("╭─ Settings ─╮") == "╭─ Settings ─╮"  # another box's top is not a traceback's
    assert [m.text for m in read_line("[rank1]: " + BOX[1])] == ['  File "/srv/app/cli.py", line 41, in fit']


def test_the_error_under_richs_box_is_the_ranks_error() -> None:
    v = decide(scan_lines(["[rank1]: " + line for line in BOX]))
    assert v.root is not None and (v.root.kind, v.root.rank) == ("traceback", 1), v.line
    assert "ValueError: Expected all tensors" in v.line, v.line
    plain = decide(scan_lines(BOX))
    assert plain.root is not None and plain.root.first_line.startswith("ValueError"), plain.line


BANNER = ["I0213 12:05:33.902000 870 torch/distributed/elastic/agent/server/api.py:525] [default] Rendezvous "
          "complete for workers. Result:",
          "I0213 12:05:33.902000 870 torch/distributed/elastic/agent/server/api.py:525]   group_rank=1",
          "I0213 12:05:33.902000 870 torch/distributed/elastic/agent/server/api.py:525]   local_ranks=[0, 1, 2, 3]",
          "I0213 12:05:33.902000 870 torch/distributed/elastic/agent/server/api.py:525]   role_ranks=[4, 5, 6, 7]",
          "I0213 12:05:33.902000 870 torch/distributed/elastic/agent/server/api.py:525]   global_ranks=[{g}]"]
FAILED = ["Traceback (most recent call last):", '  File "/w/train.py", line 3, in <module>', "    x.cuda()",
          "ValueError: bad shard",
          "E0213 12:09:33.902000 870 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
          "local_rank: 2 (pid: 8711) of binary: /usr/bin/python"]


def test_torch_elastics_rendezvous_result_gives_its_workers_global_ranks() -> None:
    lines = [line.format(g="4, 5, 6, 7") for line in BANNER] + FAILED
    v = decide(scan_lines(lines))
    assert v.root is not None and v.root.rank == 6 and "ValueError: bad shard" in v.line, v.line
    # two agents' banners in one log that does not say which node each line is from: the rank is not proven
    two = [line.format(g="0, 1, 2, 3") for line in BANNER] + [line.format(g="4, 5, 6, 7") for line in BANNER]
    unproven = decide(scan_lines(two + FAILED))
    assert unproven.root is not None and unproven.root.rank != 6, unproven.line


def test_the_deepspeed_launchers_node_rank_gives_this_logs_first_rank() -> None:
    lines = ["[2024-05-01 10:00:00,000] [INFO] [launch.py:146:main] WORLD INFO DICT: {'node-a': [0, 1, 2, 3], "
             "'node-b': [0, 1, 2, 3]}",
             "[2024-05-01 10:00:00,000] [INFO] [launch.py:152:main] nnodes=2, num_local_procs=4, node_rank=1",
             "Traceback (most recent call last):", '  File "/w/train.py", line 3, in <module>', "    x.cuda()",
             "ValueError: bad shape",
             "[2024-05-01 10:00:05,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
             "'train.py', '--local_rank=1'] exits with return code = 1"]
    v = decide(scan_lines(lines))
    assert v.root is not None and v.root.rank == 5 and "ValueError: bad shape" in v.line, v.line


def test_an_error_printed_before_a_timestamped_line_of_its_log_is_not_later_than_it() -> None:
    lines = ["[rank3]: Traceback (most recent call last):", '[rank3]:   File "/w/t.py", line 9, in <module>',
             "[rank3]:     out = model(x)",
             "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
             "[rank0]:[E1104 10:00:01.000 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 0] Process group "
             "watchdog thread terminated with exception: NCCL error: unhandled cuda error, NCCL version 2.21.5"]
    mtime = 1_800_000_000.0  # the file's time, well after the lines' own (the log was copied later)
    first = triage(scan_lines(lines, time=mtime, year=2024)).first
    assert first is not None and first.rank == 3 and "illegal memory access" in first.first_line, first
    # each log its own: another log's timestamped line says nothing of when this one's lines were printed
    other = triage({"a": scan_lines(lines[:4], time=mtime, year=2024),
                    "b": scan_lines(lines[4:], time=mtime, year=2024)}).first
    assert other is not None and other.rank == 0, other
    verdict = decide({"a": scan_lines(lines[:4], time=mtime, year=2024),
                      "b": scan_lines(lines[4:], time=mtime, year=2024)})  # the verdict keeps the logs apart too
    assert verdict.root is not None and verdict.root.rank == 0, verdict.line


def test_a_local_ranks_error_behind_torchruns_tee_prefix_printed_before_a_wait_wins() -> None:
    lines = ["[default0]:step 100 loss 2.1", "[default1]:Traceback (most recent call last):",
             '[default1]:  File "/w/train.py", line 9, in <module>', "[default1]:    loss = step(x)",
             "[default1]:ValueError: loss is inf or nan at step 101",
             "[default0]:[rank0]:[E1104 10:10:00.5 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
             "for 600041 milliseconds before timing out."]
    # read from a file: the traceback has only the file's time, the watchdog's line its own (earlier)
    first = triage(scan_lines(lines, time=1_800_000_000.0, year=2024)).first
    assert first is not None and first.first_line.startswith("ValueError: loss is inf or nan"), first
    assert first.local_rank == 1, first


def test_what_a_rank_says_after_its_own_timeout_did_not_cause_it() -> None:
    lines = ["[rank1]:[E1104 10:10:00.5 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=8, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
             "1800070 milliseconds before timing out.",
             "[rank1]:Traceback (most recent call last):", '[rank1]:  File "/w/ckpt.py", line 40, in save',
             "[rank1]:    buf = torch.empty(n, device=dev)",
             "[rank1]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.",
             "[rank2]:step 900 loss 1.1"]
    summary = triage(scan_lines(lines))
    assert summary.first is not None and summary.first.kind == "nccl_timeout", summary.first
    assert "rank 0 never reported" in summary.note, summary.note  # the rank the broadcast waited for
    assert summary.per_rank[1].kind == "nccl_timeout", summary.per_rank  # the rank is its wait, not the OOM after


def test_a_summary_retyped_by_hand_still_names_its_rank_and_signal() -> None:
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "fit.py FAILED", "Failures:",
             "<NO OTHER FAILURES>", "Root Cause (first observed failure) :", "[0]:", "time", "host",
             "2024-02-11 07:15:02", "box-k3", "rank3 (local rank: 3)exitcode: -9 (pid: 7102)error file: <N/A>",
             "traceback : signal 9 (SIGKILL) received by PID 7102"]
    v = decide(scan_lines(lines))
    assert v.root is not None and (v.root.rank, v.root.kind, v.root.signal) == (3, "rank_signal", "SIGKILL"), v.line


@pytest.mark.parametrize(("rank_line", "exit_line"), [
    ("  rank      : 3 (local_rank : 3)", "  exitcode  : -9 (pid: 77)"),
    ("rank: 3 (local rank: 3)", "exit code: -9 (pid: 77)"),
    ("Rank: 3 (local_rank: 3)", "Exitcode: -9 (pid: 77)"),
])
def test_a_summarys_fields_retyped_in_other_spellings_are_read(rank_line: str, exit_line: str) -> None:
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "fit.py FAILED",
             "Root Cause (first observed failure):", "[0]:", "  time : 2024-01-01_10:00:00", "  host : box-n1",
             rank_line, exit_line, "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID 77"]
    v = decide(scan_lines(lines))
    assert v.root is not None and (v.root.rank, v.root.local_rank, v.root.kind) == (3, 3, "rank_signal"), v.line


def test_a_chain_whose_inner_error_only_wraps_a_subprocess_names_the_outer() -> None:
    lines = ["Traceback (most recent call last):", '  File "/env/cpp_ext.py", line 1900, in _run_ninja_build',
             "    subprocess.run(cmd, check=True)",
             "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.", "",
             "The above exception was the direct cause of the following exception:", "",
             "Traceback (most recent call last):", '  File "/w/fit.py", line 12, in <module>', "    opt = FusedOpt()",
             "RuntimeError: Error building extension 'fused_opt'",
             "Traceback (most recent call last):", '  File "/w/fit.py", line 12, in <module>', "    opt = FusedOpt()",
             "ImportError: /home/u/.cache/ext/fused_opt.so: cannot open shared object file: No such file or directory"]
    first = triage(scan_lines(lines)).first
    assert first is not None and first.first_line == "RuntimeError: Error building extension 'fused_opt'", first
