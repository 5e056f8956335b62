"""ntui.core.slurm.srunlines: srun's and slurmstepd's line forms, read alike by triage and by the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.logs.rankdetector import scan_lines
from ntui.core.records.record import infer_from_batch_log
from ntui.core.slurm.srunlines import (
    CANCELLED,
    EXIT_CODE,
    LAUNCH_ERROR,
    NODE_FAILURE,
    OOM_KILL,
    TASK_END,
    SlurmCancel,
    parse_cancel,
    task_ids,
)


@pytest.mark.parametrize(("text", "ids"), [("3", (3,)), ("2-5,9", (2, 3, 4, 5, 9)), ("2-x", ()), ("", ())])
def test_srun_folds_the_tasks_that_ended_alike(text: str, ids: tuple[int, ...]) -> None:
    assert task_ids(text) == ids


def test_a_task_end_is_read_bare_and_behind_a_prefix() -> None:
    line = "srun: error: gpu017: tasks 4-7: Exited with exit code 2  "
    bare = TASK_END.match(line)
    assert bare is not None and (bare["node"], bare["tasks"], bare["what"]) == ("gpu017", "4-7",
                                                                                 "Exited with exit code 2")
    code = EXIT_CODE.fullmatch(bare["what"])
    assert code is not None and code["code"] == "2"
    prefixed = TASK_END.search("[2026-03-02 10:00:01] " + line)
    assert prefixed is not None and prefixed["tasks"] == "4-7"
    signal = TASK_END.match("srun: error: gpu017: task 1: Segmentation fault (core dumped)")
    assert signal is not None and EXIT_CODE.fullmatch(signal["what"]) is None


def test_cancel_lines_of_every_version() -> None:
    old = "slurmstepd-gpu017: error: *** JOB 4411 ON gpu017 CANCELLED AT 2026-03-02T10:00:01 DUE TO TIME LIMIT ***"
    new = "[2026-03-02T10:00:01.512] error: *** STEP 4411.0 ON gpu017 CANCELLED AT 2026-03-02T10:00:01 DUE to SIGNAL " \
          "Terminated ***"
    assert parse_cancel(old) == SlurmCancel("JOB", "4411", "gpu017", "2026-03-02T10:00:01", "TIME LIMIT")
    assert parse_cancel(new) == SlurmCancel("STEP", "4411.0", "gpu017", "2026-03-02T10:00:01", "SIGNAL Terminated")
    assert parse_cancel("*** nothing here ***") is None
    assert [m["scope"] for m in CANCELLED.finditer(old + "\n" + new)] == ["JOB", "STEP"]


def test_node_failure_and_launch_errors() -> None:
    m = NODE_FAILURE.search("srun: error: Node failure on gpu021")
    assert m is not None and m["node"] == "gpu021"
    assert LAUNCH_ERROR.match("srun: error: Unable to create step for job 4411: Invalid generic resource")
    assert LAUNCH_ERROR.match("srun: error: gpu017: task 1: Exited with exit code 1 (Invalid)") is None


def test_triage_and_the_record_read_one_batch_log_alike(tmp_path: Path) -> None:
    log = tmp_path / "slurm-4411.out"
    log.write_text("step 10 loss 2.3\nsrun: error: gpu017: task 3: Exited with exit code 7\n")
    record = infer_from_batch_log(log)
    assert record.state == "FAILED" and record.exit_code == "7:0" and record.node_list == "gpu017"
    found = scan_lines(log.read_text().splitlines())
    assert [(f.kind, f.node) for f in found] == [("srun_exit", "gpu017")]


@pytest.mark.parametrize("line", [
    "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4411.0. Some of your processes may have been killed",
    "[2026-03-02T10:00:01.512] error: Detected 2 oom_kill events in StepId=4411.batch. Some of the step tasks have",
])
def test_the_oom_kill_line_of_every_version_is_one_form_to_both_readers(line: str, tmp_path: Path) -> None:
    assert OOM_KILL.search(line)
    log = tmp_path / "slurm-4411.out"
    log.write_text("step 10 loss 2.3\n" + line + "\n")
    assert infer_from_batch_log(log).state == "OUT_OF_MEMORY"
    assert [f.kind for f in scan_lines([line])] == ["oom_kill"]
