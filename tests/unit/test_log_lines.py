"""The line reader (:mod:`ntui.core.loglines`): prefixes wherever they stand, glued and collapsed messages, cut
lines; and the triage rows built on it (each form's line, written here in that form with our own words)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.loglines import parse_prefix, read_line, uncollapse
from ntui.core.logs.rankdetector import scan_lines
from ntui.core.logs.triage import triage


@pytest.mark.parametrize(("line", "rank", "local", "host", "rest"), [
    # a CI runner's UTC stamp, then torch's rank label, then a logger's header
    ("2024-02-01T10:00:01.1234567Z [rank3]:[2024-02-01 09:59:58,120] torch.testing: [ERROR] Traceback (most recent "
     "call last):", 3, None, None, "Traceback (most recent call last):"),
    # pytest's node id before the label, pytest's E marker keeping the line's own indentation
    ("tests/test_x.py::test_y [rank1]:boom", 1, None, None, "boom"),
    ("E         File \"x.py\", line 3, in f", None, None, None, "  File \"x.py\", line 3, in f"),
    # Open MPI's tag, Ray's worker prefix, NCCL's own, pdsh's host
    ("[1,5]<stderr>:RuntimeError: x", 5, None, None, "RuntimeError: x"),
    ("(TrainWorker pid=881, ip=10.1.2.3) ValueError: y", None, None, None, "ValueError: y"),
    ("(head, rank=2, pid=77) ValueError: y", 2, None, None, "ValueError: y"),
    ("box-a7:3121:3188 [2] NCCL WARN Cuda failure", None, 2, "box-a7", "NCCL WARN Cuda failure"),
    ("worker-12: [2024-01-01 00:00:00,000] [ERROR] [launch.py:1:f] bad", None, None, "worker-12", "bad"),
    # behind a rank's label pytest's marker is its "E" and seven blanks; a shorter gap is the program's own text
    ("0: E       assert x == 2", 0, None, None, "assert x == 2"),
    ("0: E    #       LOSS NER  SCORE", 0, None, None, "E    #       LOSS NER  SCORE"),
    ("[default1]:E    #       LOSS NER", None, 1, None, "E    #       LOSS NER"),
    # the program's own words that look like a host are not one
    ("rank0: loss 1.5", None, None, None, "rank0: loss 1.5"),
    ("slurmstepd-nid001: error: x", None, None, None, "slurmstepd-nid001: error: x"),
    ("RuntimeError: plain", None, None, None, "RuntimeError: plain"),
])
def test_prefixes_are_taken_off_wherever_they_stand(line: str, rank: int | None, local: int | None,
                                                     host: str | None, rest: str) -> None:
    prefix, text = parse_prefix(line)
    assert (prefix.rank, prefix.local_rank, prefix.host, text) == (rank, local, host, rest)


def test_the_innermost_time_is_kept() -> None:
    prefix, _ = parse_prefix("2024-02-01T10:00:01Z [rank3]:[2024-02-01 09:59:58,120] x.y: [ERROR] z")
    other, _ = parse_prefix("2024-02-01T10:00:01Z z")
    assert prefix.time is not None and other.time is not None and other.time - prefix.time == pytest.approx(2.88)


def test_glued_and_carriage_return_messages_are_their_own() -> None:
    msgs = read_line("train  40%|####  | 4/10 [00:01<00:01]\r[rank1]:Traceback (most recent call last):")
    assert [(m.text, m.prefix.rank) for m in msgs] == [
        ("train  40%|####  | 4/10 [00:01<00:01]", None), ("Traceback (most recent call last):", 1)]
    glued = read_line("Epoch 1: 5/9 doneERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)")
    assert [m.text for m in glued] == ["Epoch 1: 5/9 done",
                                       "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)"]


def test_a_paste_whose_newlines_became_spaces_is_split_back() -> None:
    line = ("Traceback (most recent call last):      File \"/w/a.py\", line 9, in <module>        main()      "
            "File \"/w/a.py\", line 5, in main        raise KeyError(k)    KeyError: 'w'")
    assert uncollapse(line) == ["Traceback (most recent call last):", '  File "/w/a.py", line 9, in <module>',
                                "    main()", '  File "/w/a.py", line 5, in main', "    raise KeyError(k)",
                                "KeyError: 'w'"]
    found = scan_lines([line])
    assert [(f.kind, f.first_line) for f in found] == [("traceback", "KeyError: 'w'")]


def test_a_cut_line_is_marked() -> None:
    assert read_line("RuntimeError: the message went on and on...")[0].cut
    assert not read_line("RuntimeError: whole")[0].cut


@pytest.mark.parametrize(("lines", "kind", "rank", "signal"), [
    # the DeepSpeed launcher's report of a worker's end, its local rank in the command
    (["[2024-01-01 00:00:00,000] [ERROR] [launch.py:3:sigkill_handler] ['/bin/py', 'x.py', '--local_rank=1'] exits "
      "with return code = -11"], "rank_signal", None, "SIGSEGV"),
    # mp.spawn's report of another process, and its "-- Process N" before that process's traceback
    (["Traceback (most recent call last):", '  File "s.py", line 1, in j', "    raise E",
      "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL"],
     "rank_signal", 3, "SIGKILL"),
    (["-- Process 2 terminated with the following error:", "Traceback (most recent call last):",
      '  File "m.py", line 4, in f', "    g()", "ValueError: no"], "traceback", 2, None),
    # Open MPI's box: the rank above its exit code
    (["  Process name: [[4012,1],6]", "  Exit code:    3"], "child_failed", 6, None),
    # srun's own error (no task), and a watchdog line a paste wrapped
    (["srun: fatal: Unable to process configuration file"], "launch_error", None, None),
    (["[E412 08:41:27.1 ProcessGroupNCCL.cpp:565] [Rank 0] Watchdog",
      "caught collective operation timeout: WorkNCCL(SeqNum=2,"], "nccl_timeout", None, None),
])
def test_each_new_form_is_one_row(lines: list[str], kind: str, rank: int | None, signal: str | None) -> None:
    found = scan_lines(lines)
    assert [(f.kind, f.rank, f.signal) for f in found] == [(kind, rank, signal)], found


def test_nccls_specific_cause_under_its_category_wins() -> None:
    lines = ["[rank0]:Traceback (most recent call last):", '[rank0]:  File "t.py", line 1, in f', "[rank0]:    x()",
             "[rank0]:torch.distributed.DistBackendError: NCCL error in: pg.cpp:1, invalid usage, NCCL version 2.18",
             "[rank0]:ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
             "[rank0]:Last error:", "[rank0]:Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 3b000"]
    first = triage(scan_lines(lines)).first
    assert first is not None and first.first_line.startswith("Duplicate GPU detected"), first


def test_a_wait_loses_to_the_error_of_the_rank_it_waited_for() -> None:
    lines = ["[rank0]:[E914 10:32:05.5 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds",
             "[rank1]:Traceback (most recent call last):", '[rank1]:  File "t.py", line 1, in f', "[rank1]:    x()",
             "[rank1]:ValueError: a bad batch"]
    first = triage(scan_lines(lines)).first
    assert first is not None and (first.rank, first.first_line) == (1, "ValueError: a bad batch")


def test_a_signal_with_no_cause_in_the_log_is_said_so() -> None:
    from ntui.core.logs.verdict import decide

    v = decide(scan_lines(["srun: error: nid003: task 0: Terminated"]))
    assert v.kind == "unnamed" and v.failed and v.line.startswith("could not name the cause: rank 0 on nid003 was "
                                                                  "stopped by SIGTERM first")


def test_ranks_failing_alike_are_one_finding() -> None:
    from ntui.core.logs.verdict import decide

    lines = [line for r in (4, 5, 6, 7) for line in (
        f"[rank{r}]:Traceback (most recent call last):", f'[rank{r}]:  File "t.py", line 9, in f', f"[rank{r}]:    g()",
        f"[rank{r}]:ValueError: shard {r} is empty")]
    v = decide(scan_lines(lines))
    assert v.root is not None and (v.root.rank, v.root.alike) == (4, (5, 6, 7)), v
    assert v.line.startswith("ranks 4-7 failed first, alike: ValueError: shard 4 is empty") and "consequence" not in \
        v.line, v.line


@pytest.mark.parametrize(("line", "rank", "local", "host", "rest"), [
    # NCCL's own debug timestamp in front of its host:pid:tid [dev] prefix, bracketed or bare
    ("[2026-03-12 10:02:19] gpu-h17:71233:71290 [0] transport/nvls.cc:254 NCCL WARN Cuda failure 1 'x'", None, 0,
     "gpu-h17", "transport/nvls.cc:254 NCCL WARN Cuda failure 1 'x'"),
    ("2026-03-12 10:02:19.123 gpu-h17:71233:71290 [3] NCCL WARN x", None, 3, "gpu-h17", "NCCL WARN x"),
    # a wrapper's `date` glued to Open MPI's tag, before NCCL's own prefix
    ("Tue Jun 17 08:14:03 2025[1,4]<stdout>:node-a21:402117:402201 [4] NCCL WARN y", 4, 4, "node-a21", "NCCL WARN y"),
    # TensorFlow's / absl's C++ header on an error line (a warning's header stays: the detectors read its level)
    ("2025-05-14 11:20:31.662388: F tensorflow/core/x.cc:219] Check failed: out of memory", None, None, None,
     "Check failed: out of memory"),
    ("2025-05-14 11:20:31.662104: W tensorflow/core/bfc.cc:479] Allocator ran out of memory", None, None, None,
     "2025-05-14 11:20:31.662104: W tensorflow/core/bfc.cc:479] Allocator ran out of memory"),
    # a time in front of the program's own words is the program's: kept
    ("2025-01-20 14:01:07,332 [INFO] rank 0: e1", None, None, None, "2025-01-20 14:01:07,332 [INFO] rank 0: e1"),
    ("Tue Jun 17 08:14:03 2025 step 3 done", None, None, None, "Tue Jun 17 08:14:03 2025 step 3 done"),
])
def test_a_wrappers_timestamp_before_a_prefix_is_taken_off(line: str, rank: int | None, local: int | None,
                                                           host: str | None, rest: str) -> None:
    prefix, text = parse_prefix(line)
    assert (prefix.rank, prefix.local_rank, prefix.host, text) == (rank, local, host, rest)


def test_the_date_commands_time_is_kept_as_the_lines_time() -> None:
    prefix, _ = parse_prefix("Tue Jun 17 08:14:03 2025[1,0]<stdout>:n1:1:2 [0] NCCL WARN z")
    iso, _ = parse_prefix("[2025-06-17 08:14:05] n1:1:2 [0] NCCL WARN z")
    assert prefix.time is not None and iso.time is not None and iso.time - prefix.time == pytest.approx(2.0)


def test_the_rank_behind_a_date_stamped_mpi_tag_is_the_failed_one() -> None:
    from ntui.core.logs.verdict import decide

    lines = ["Tue Jun 17 08:14:03 2025[1,0]<stdout>:node-a21:4021:4022 [0] transport.cc:154 NCCL WARN Cuda failure "
             "'invalid argument'",
             "  Process name: [[40211,1],8]", "  Exit code:    1"]
    v = decide(scan_lines(lines))
    assert v.root is not None and (v.root.rank, v.root.kind) == (0, "nccl"), v.line


def test_a_socket_warning_that_the_peer_went_away_loses_to_that_peers_own_error() -> None:
    lines = ["node-c7:881:901 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
             "node-c7-ib<43117>",
             "node-c7:881:901 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x5613",
             "node-c7:884:911 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
             "Traceback (most recent call last):", '  File "t.py", line 1, in f', "    g()",
             "torch.distributed.DistBackendError: NCCL error in: pg.cpp:1, internal error - please report this issue",
             "ncclInternalError: Internal check failed.", "Last error:",
             "Socket recv failed while polling for opId=0x5613"]
    found = scan_lines(lines)
    socket = [f.kind for f in found if "Socket recv" in f.first_line or "Connection closed" in f.first_line]
    assert len(socket) >= 2 and set(socket) == {"peer_failure"}, found  # (the second warning is the first's repeat)
    first = triage(found).first
    assert first is not None and first.first_line.endswith("Cuda failure 'out of memory'"), first


def test_srun_naming_the_one_task_that_exited_is_the_rank_of_an_unprefixed_traceback() -> None:
    from ntui.core.logs.verdict import decide

    lines = ["Traceback (most recent call last):", '  File "fit.py", line 3, in step', "    y = x.view(-1, 6)",
             "RuntimeError: shape '[-1, 6]' is invalid for input of size 10",
             "srun: error: node-b3: task 2: Exited with exit code 1",
             "srun: error: node-b3: tasks 0-1,3: Terminated"]
    v = decide(scan_lines(lines))
    assert v.root is not None and (v.root.rank, v.root.kind) == (2, "traceback"), v.line


def test_as_many_alike_errors_as_failed_workers_are_those_ranks_alike() -> None:
    from ntui.core.logs.verdict import decide

    tb = ["Traceback (most recent call last):", '  File "ft.py", line 8, in main', "    loss.backward()",
          "RuntimeError: Expected to mark a variable ready only once."]
    summary = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 20, "ft.py FAILED",
               "-" * 20, "Failures:", "[1]:", "  time      : 2023-10-01_21:14:09", "  host      : dgx-q1",
               "  rank      : 1 (local_rank: 1)", "  exitcode  : 1 (pid: 4411)", "  error_file: <N/A>", "-" * 20,
               "Root Cause (first observed failure):", "[0]:", "  time      : 2023-10-01_21:14:09",
               "  host      : dgx-q1", "  rank      : 0 (local_rank: 0)", "  exitcode  : 1 (pid: 4410)",
               "  error_file: <N/A>", "=" * 20]
    v = decide(scan_lines(tb + tb + summary))
    assert v.root is not None and (v.root.rank, v.root.alike) == (0, (1,)), v.line
    one = decide(scan_lines(tb + summary))  # one error for two failed workers: which rank's is not proven
    assert one.root is not None and one.root.rank is None, one.line


def test_a_log_cut_mid_traceback_says_so_and_names_the_last_frame() -> None:
    from ntui.core.logs.verdict import decide

    lines = ["step 10 loss 2.31", "[rank3]:Traceback (most recent call last):",
             '[rank3]:  File "/w/fit.py", line 40, in <module>', "[rank3]:    main()",
             '[rank3]:  File "/w/fit.py", line 31, in main', "[rank3]:    model.cuda()"]
    v = decide(scan_lines(lines))
    assert v.failed and v.kind == "unnamed" and v.rank == 3, v
    assert "cut mid-traceback" in v.line and 'File "/w/fit.py", line 31, in main: model.cuda()' in v.line, v.line


def test_a_launchers_exit_report_alone_is_not_named_as_the_cause() -> None:
    from ntui.core.logs.verdict import decide

    lines = ["Traceback (most recent call last):", '  File "run.py", line 9, in <module>', "    mp.spawn(w, nprocs=2)",
             "Exception: process 0 terminated with exit code 1"]
    v = decide(scan_lines(lines))
    assert v.failed and v.kind == "unnamed" and v.line.startswith("could not name the cause: rank 0 exited with an "
                                                                  "error code and no log read shows its error"), v.line
    with_error = decide(scan_lines(["-- Process 0 terminated with the following error:", *lines[:3],
                                    "ValueError: bad shard", *lines]))
    assert with_error.kind == "rank_error" and "ValueError: bad shard" in with_error.line, with_error.line


def test_mpichs_rank_label_gives_the_rank_before_nccls_prefix() -> None:
    prefix, text = parse_prefix("[3] node-d2:22556:22580 [1] misc/socket.cc:49 NCCL WARN socketProgress: x")
    assert (prefix.rank, prefix.local_rank, prefix.host, text) == (3, 1, "node-d2",
                                                                    "misc/socket.cc:49 NCCL WARN socketProgress: x")
    assert parse_prefix("[3]: rank 3 entry")[0].rank is None  # torch elastic's summary entry is not a label


def test_lightnings_rank_prefix_gives_the_rank() -> None:
    """lightning_utilities' rank_prefixed_message: "[rank: N] " before the message (a warning of one rank)."""
    prefix, text = parse_prefix("[rank: 2] Epoch 3: 41%|####      | 41/100 [00:12<00:17, 3.40it/s, loss=0.5]")
    assert (prefix.rank, text) == (2, "Epoch 3: 41%|####      | 41/100 [00:12<00:17, 3.40it/s, loss=0.5]")
    assert parse_prefix("[rank: x] y")[0].rank is None


def test_srun_label_under_a_launcher_per_node_is_that_nodes_launcher_not_a_rank(tmp_path: Path) -> None:
    from ntui.core.logs.joblogs import files_verdict

    log = tmp_path / "job.out"
    log.write_text("\n".join([
        "0: [default0]:step 10 loss 2.1", "1: [default2]:Traceback (most recent call last):",
        '1: [default2]:  File "fit.py", line 3, in <module>', "1: [default2]:    main()",
        "1: [default2]:ValueError: bad shard",
        "1: E0909 14:03:50.013000 77 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) "
        "local_rank: 2 (pid: 9) of binary: /bin/python",
        "srun: error: node-e2: task 1: Exited with exit code 1"]) + "\n")
    verdict, _ = files_verdict([log])  # (the launcher read off torch elastic's lines behind srun's label)
    assert verdict.root is not None and verdict.rank is None, verdict.line
    assert verdict.line.startswith("local rank 2 of the launcher on node-e2 (srun task 1) failed first: ValueError"), \
        verdict.line
    prefix, _ = parse_prefix("1: [rank6]:boom")  # torch's own rank label behind srun's: a rank, not a task
    assert (prefix.rank, prefix.task) == (6, None)


def test_open_mpis_signal_report_is_the_processs_own_death() -> None:
    prefix, text = parse_prefix("[node-f4:00945] Signal: Segmentation fault (11)")
    assert (prefix.host, text) == ("node-f4", "Signal: Segmentation fault (11)")
    assert parse_prefix("[tool.loader:244] [PID:88] loading")[0].host is None  # a logger's own brackets
    found = scan_lines(["[node-f4:00945] *** Process received signal ***",
                        "[node-f4:00945] Signal: Segmentation fault (11)",
                        "[node-f4:00945] Signal code: Address not mapped (1)"])
    assert [(f.kind, f.signal, f.node) for f in found] == [("rank_signal", "SIGSEGV", "node-f4")], found


def test_the_c_plus_plus_exceptions_message_wins_over_the_abort_and_the_launchers_report() -> None:
    from ntui.core.logs.verdict import decide

    lines = ["terminate called after throwing an instance of 'c10::Error'",
             "  what():  CUDA error: an illegal memory access was encountered (insert_events at alloc.cpp:771)",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x46 (0x7f3a in libc10.so)",
             "Traceback (most recent call last):", '  File "launch.py", line 9, in <module>', "    spawn(f)",
             "Exception: process 1 terminated with signal SIGABRT"]
    v = decide(scan_lines(lines))
    assert v.root is not None and v.root.rank == 1 and "illegal memory access" in v.root.first_line, v.line
