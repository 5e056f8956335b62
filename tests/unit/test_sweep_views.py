"""A sweep in the views, without Textual: the queue's folded row, task states and counts from Slurm's answers, the
sweep's record, the compare table (values, metric from the log tail, failures by verdict), resubmitting the
failed tasks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ntui.core.jobfiles.manifest import (
    Manifest,
    SweepJob,
    encode_manifest,
    job_file_path,
    manifest_path,
    read_job_file,
    write_job_file,
)
from ntui.core.jobs.arrays import fold, task_count
from ntui.core.jobs.queue import FinishedJob, queue_row
from ntui.core.jobs.sweep import metric_value, plan_failed, same_manifest, sort_rows, sweep_lines, sweep_table
from ntui.core.records.history import History
from ntui.core.records.outcome import Outcome
from ntui.core.records.record import infer_from_batch_log, resolve_records
from ntui.core.records.sweeps import counts_text, failed_indices, state_counts, sweep_of, task_states
from ntui.core.slurm.squeue import parse_squeue
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line
from tests.support.screenshots_sweep import (
    _F,
    SACCT_TASKS,
    SQUEUE_AFTER,
    STEM,
    SWEEP_ID,
    SWEEP_LOG_DIR,
    live_line,
    sweep_entry,
    write_sweep_files,
)


def _jobs(text: str) -> dict[str, Any]:
    return {j.job_id: j for j in parse_squeue(text)}


# ---------------------------------------------------------------- the queue's row


def test_an_array_is_one_row_that_opens_into_its_tasks() -> None:
    live = _jobs(SQUEUE_AFTER)
    rows = {k: queue_row(j) for k, j in live.items()}
    gone = live[f"{SWEEP_ID}_0"]
    failed = FinishedJob(f"{SWEEP_ID}_2", f"{SWEEP_ID}_2", type(gone)(**{**vars(gone), "job_id": f"{SWEEP_ID}_2",
                                                                          "array_task_id": "2"}),
                         Outcome(f"{SWEEP_ID}_2", "FAILED", "1:0", "sacct", True))
    rows[failed.key] = queue_row(failed.job, False, failed)
    tags = {failed.key: "ended"}
    out = fold(rows, tags, live, {failed.key: failed})
    assert list(out.rows) == ["48213777", SWEEP_ID, "48213811"]  # where its first task was
    row = out.rows[SWEEP_ID]
    assert row[0] == f"▸ {SWEEP_ID}" and row[2] == "RUNNING" and row[3] == "41:09" and row[5] == "2"
    assert row[6] == "6 tasks: 2 running, 3 pending, 1 failed"
    assert out.representative(SWEEP_ID) == f"{SWEEP_ID}_0" and out.array_of(f"{SWEEP_ID}_2") == SWEEP_ID
    opened = fold(rows, tags, live, {failed.key: failed}, {SWEEP_ID})
    assert opened.rows[SWEEP_ID][0] == f"▾ {SWEEP_ID}"
    assert opened.parents == {k: SWEEP_ID for k in out.arrays[SWEEP_ID]}
    assert opened.rows[f"{SWEEP_ID}_1"][0] == f"  {SWEEP_ID}_1" and opened.tags[f"{SWEEP_ID}_2"] == "ended"


def test_pending_ranges_count_their_tasks_and_an_ended_array_is_ended() -> None:
    line = squeue_line(JobID="7", ArrayJobID="7", ArrayTaskID="4-9%2", Name="a", StateCompact="PD", State="PENDING",
                       Reason="JobHeldUser", NumNodes="1", UserName="u")
    (job,) = parse_squeue(line + "\n")
    assert task_count(job) == 6
    out = fold({job.job_id: queue_row(job)}, {}, {job.job_id: job}, {})
    assert out.rows["7"][6] == "6 tasks: 6 pending"
    done = FinishedJob("7_[0-9]", "7", job, Outcome("7", "COMPLETED", "0:0", "sacct", True), tasks=10)
    out = fold({done.key: queue_row(job, False, done)}, {done.key: "ended"}, {}, {done.key: done})
    assert out.rows["7"][2] == "COMPLETED" and out.tags["7"] == "ended" and out.rows["7"][6] == "10 tasks: 10 completed"


def test_an_array_whose_tasks_all_ended_shows_their_longest_run_time() -> None:
    """Before: 0:00, the last squeue line seen of a task (from while it was pending), when its tasks had run."""
    line = squeue_line(JobID="8_1", ArrayJobID="8", ArrayTaskID="1", Name="a", StateCompact="PD", State="PENDING",
                       Reason="Priority", NumNodes="1", UserName="u", TimeUsed="0:00")
    (job,) = parse_squeue(line + "\n")
    ended = {}
    for task, elapsed in (("8_1", 125), ("8_2", 3725)):
        ended[task] = FinishedJob(task, task, type(job)(**{**vars(job), "job_id": task}),
                                  Outcome(task, "COMPLETED", "0:0", "sacct", True, elapsed_s=elapsed))
    rows = {k: queue_row(f.job, False, f) for k, f in ended.items()}
    out = fold(rows, dict.fromkeys(rows, "ended"), {}, ended)
    assert out.rows["8"][3] == "1:02:05", out.rows["8"]


def test_counts() -> None:
    assert counts_text(["RUNNING", "PENDING", "PENDING", "FAILED", "COMPLETED", ""]) == \
        "6 tasks: 1 running, 2 pending, 1 completed, 1 failed, 1 unknown"
    assert counts_text(["OUT_OF_MEMORY"], total=3) == "3 tasks: 1 out of memory, 2 unknown"
    assert list(state_counts(["TIMEOUT", "CANCELLED", "COMPLETING"])) == ["running", "cancelled", "timeout"]


# ---------------------------------------------------------------- Slurm's answers, the record


def _runner(sacct: str = SACCT_TASKS) -> FakeRunner:
    return FakeRunner({"sacct": result(stdout=sacct), "squeue": result(stdout="")})


def test_task_states_from_one_sacct_call() -> None:
    write_sweep_files()
    ref = sweep_of(sweep_entry())
    assert ref is not None and ref.manifest is not None and ref.job.indices == tuple(range(6))
    runner = _runner()
    found = task_states(runner, [ref])
    states = found.tasks[SWEEP_ID]
    assert [states[i].state for i in range(6)] == ["RUNNING", "RUNNING", "FAILED", "PENDING", "PENDING", "PENDING"]
    assert found.sacct_calls == 1 and runner.calls == 1
    assert "-X" in runner.argvs()[0] and SWEEP_ID in runner.argvs()[0]
    assert failed_indices(states) == (2,)


#: Accounting behind the controller: tasks 0 and 1 run, sacct still has them in the array's pending record.
SACCT_LAGGING = SACCT_TASKS.replace(f"{SWEEP_ID}_0|", "DROP|").replace(f"{SWEEP_ID}_1|", "DROP|").replace(
    f"{SWEEP_ID}_[3-5%2]", f"{SWEEP_ID}_[0-1,3-5%2]")
SQUEUE_LIVE = (live_line(0, "RUNNING", node="nid200101") + live_line(1, "RUNNING", node="nid200102")
               + live_line(2, "RUNNING", node="nid200103")  # sacct says it ended: accounting's word stays
               + "".join(live_line(t, "PENDING", "JobArrayTaskLimit") for t in (3, 4, 5)))


def test_a_live_view_takes_the_controllers_word_for_tasks_accounting_has_not_seen_end() -> None:
    write_sweep_files()
    ref = sweep_of(sweep_entry())
    assert ref is not None
    lagging = "".join(line for line in SACCT_LAGGING.splitlines(keepends=True) if not line.startswith("DROP|"))
    runner = FakeRunner({"sacct": result(stdout=lagging), "squeue": result(stdout=SQUEUE_LIVE)})
    kept = task_states(runner, [ref]).tasks[SWEEP_ID]  # the record's use: accounting only
    assert [kept[i].state for i in range(3)] == ["PENDING", "PENDING", "FAILED"] and runner.calls == 1

    found = task_states(runner, [ref], live=True)
    states = found.tasks[SWEEP_ID]
    assert [states[i].state for i in range(6)] == ["RUNNING", "RUNNING", "FAILED", "PENDING", "PENDING", "PENDING"]
    assert states[0].source == "squeue" and states[0].node_list == "nid200101" and states[0].elapsed_s == 42
    assert states[2].source == "sacct" and states[5].reason == "JobArrayTaskLimit"
    assert found.sacct_calls == 1 and found.squeue_calls == 1 and runner.calls == 3
    argv = runner.argvs()[-1]
    assert argv[0] == "squeue" and "--array" in argv and f"--jobs={SWEEP_ID}" in argv and "--me" not in argv

    # the view's own table takes the same word
    table = sweep_table(sweep_entry(), FakeRunner({"sacct": result(stdout=lagging),
                                                   "squeue": result(stdout=SQUEUE_LIVE)}))
    assert table is not None and [r.state for r in table.rows][:2] == ["RUNNING", "RUNNING"]


def test_a_live_view_asks_the_controller_nothing_once_accounting_saw_every_task_end() -> None:
    write_sweep_files()
    ref = sweep_of(sweep_entry())
    assert ref is not None
    ended = "".join(f"{SWEEP_ID}_{t}|{STEM}|COMPLETED|0:0|None|2026-06-01T08:40:00|2026-06-01T08:48:51|"
                    f"2026-06-01T09:48:51|01:00:00|nid200101{_F}\n" for t in range(6))
    runner = FakeRunner({"sacct": result(stdout=ended), "squeue": result(stdout=SQUEUE_LIVE)})
    found = task_states(runner, [ref], live=True)
    assert {s.state for s in found.tasks[SWEEP_ID].values()} == {"COMPLETED"}
    assert found.squeue_calls == 0 and runner.calls == 1


def test_a_controller_that_does_not_answer_leaves_accountings_word_and_says_so() -> None:
    write_sweep_files()
    ref = sweep_of(sweep_entry())
    assert ref is not None
    runner = FakeRunner({"sacct": result(stdout=SACCT_TASKS),
                         "squeue": result(stderr="slurm_load_jobs error: Socket timed out on send/recv operation\n",
                                          returncode=1)})
    found = task_states(runner, [ref], live=True)
    assert [found.tasks[SWEEP_ID][i].state for i in range(3)] == ["RUNNING", "RUNNING", "FAILED"]
    assert found.squeue_calls == 1 and any(w.startswith("squeue:") for w in found.warnings), found.warnings


def test_without_accounting_the_controller_then_the_batch_logs(tmp_path: Path) -> None:
    write_sweep_files(str(tmp_path))
    entry = sweep_entry()
    from dataclasses import replace

    entry = replace(entry, log_dir=str(tmp_path))
    ref = sweep_of(entry)
    assert ref is not None
    (tmp_path / f"lr-sweep-{SWEEP_ID}_2.out").write_text("srun: error: nid200103: task 0: Exited with exit code 1\n")
    runner = FakeRunner({"sacct": result(stderr="Slurm accounting storage is disabled\n", returncode=1),
                         ("scontrol", "show", "job"): result(stderr="slurm_load_jobs error: Invalid job id specified\n",
                                                             returncode=1)})
    found = task_states(runner, [ref], infer=infer_from_batch_log)
    assert found.accounting is False and found.scontrol_calls == 1
    states = found.tasks[SWEEP_ID]
    assert states[2].state == "FAILED" and states[2].source == "inferred"
    assert states[0].state == "COMPLETED"  # a batch log with no failure reported
    assert 5 not in states  # no batch log: nothing to infer from


def test_the_sweep_is_resolved_once_every_task_ended(tmp_path: Path) -> None:
    write_sweep_files(str(tmp_path))
    history = History(tmp_path / "h.sqlite3")
    e = sweep_entry()
    history.record_intent(token="t", preset=e.preset, preset_path=None, overrides=e.overrides, job_name=e.job_name,
                          launcher=e.launcher, nodes=1, world_size=1, log_dir=str(tmp_path), log_stem=e.log_stem,
                          script=e.script.replace(SWEEP_LOG_DIR, str(tmp_path)))
    history.record_submitted("t", SWEEP_ID, None, None)
    report = resolve_records(history, _runner())
    assert not report.resolved and report.sweeps[SWEEP_ID] == "6 tasks: 2 running, 3 pending, 1 failed"
    done = SACCT_TASKS.replace("|RUNNING|", "|COMPLETED|").replace("|Unknown|00:41:09", "|2026-06-01T09:30:00|00:41:09")
    done = done.replace("|Unknown|00:38:40", "|2026-06-01T09:31:00|00:38:40")
    done = "".join(line + "\n" for line in done.splitlines() if "PENDING" not in line)
    done += "".join(f"{SWEEP_ID}_{i}|lr-sweep|COMPLETED|0:0|None|2026-06-01T08:40:00|2026-06-01T09:40:00|"
                    f"2026-06-01T09:50:00|00:10:00|nid200101|a|q|p|/w\n" for i in (3, 4, 5))
    report = resolve_records(history, _runner(done))
    (job_id, rec), = report.resolved
    assert job_id == SWEEP_ID and rec.state == "FAILED" and rec.exit_code == "1:0"
    assert rec.reason == "6 tasks: 5 completed, 1 failed" and rec.verdict.startswith("task 2: ")
    assert rec.start_time == "2026-06-01T08:48:51" and rec.end_time == "2026-06-01T09:50:00"
    kept = read_job_file(job_file_path(str(tmp_path), "lr-sweep", SWEEP_ID))
    assert kept is not None and kept.states[2].state == "FAILED" and kept.states[5].state == "COMPLETED"
    # the job file now answers: no Slurm call for the sweep's table
    entry = history.get(SWEEP_ID)
    assert entry is not None
    quiet = FakeRunner({})
    table = sweep_table(entry, quiet)
    assert table is not None and quiet.calls == 0 and table.counts == "6 tasks: 5 completed, 1 failed"
    history.close()


# ---------------------------------------------------------------- the table, resubmitting the failed tasks


def test_the_compare_table() -> None:
    write_sweep_files()
    table = sweep_table(sweep_entry(), _runner())
    assert table is not None and table.names == ("lr", "seed")
    rows = {r.index: r for r in table.rows}
    assert rows[0].values == {"lr": "3e-4", "seed": "1"} and rows[0].metric == "1.7410"
    assert rows[2].metric == "2.3012" and rows[3].metric is None
    # how far each task is, side by side (the preset's progress: pattern, from the end of each rank-0 log)
    assert [(rows[i].step, rows[i].total, rows[i].progress) for i in (0, 2, 3)] == [
        (300, 500, "300/500"), (100, 500, "100/500"), (None, None, "-")]
    assert [r.index for r in sort_rows(table.rows, "progress")][:3] == [2, 0, 1]
    (verdict, tasks), = table.groups
    assert tasks == (2,) and "OutOfMemoryError" in verdict
    by_metric = sort_rows(table.rows, "metric")
    assert [r.index for r in by_metric] == [0, 1, 2, 3, 4, 5]
    assert [r.index for r in sort_rows(table.rows, "metric", descending=True)][:3] == [2, 1, 0]
    assert [r.index for r in sort_rows(table.rows, "lr")][:3] == [3, 4, 5]  # 1e-4 < 3e-4 as numbers
    lines = sweep_lines(table)
    assert lines[0] == f"sweep {SWEEP_ID}: 6 tasks: 2 running, 3 pending, 1 failed · metric loss=([0-9.]+)"
    assert lines[1].split() == ["task", "lr", "seed", "state", "elapsed", "gpu", "progress", "metric"]
    data = json.loads(json.dumps(table.as_dict()))
    assert data["tasks"][2]["state"] == "FAILED" and data["failed_groups"][0]["tasks"] == [2]
    assert (data["tasks"][0]["step"], data["tasks"][0]["total"]) == (300, 500)


def test_metric_value() -> None:
    lines = ["step=1 loss=2.0", "noise", "step=2 loss=1.5 acc=0.3", "eval acc=0.5"]
    assert metric_value(re.compile(r"loss=([0-9.]+)"), lines) == "1.5"
    assert metric_value(re.compile(r"acc=(?P<value>[0-9.]+)"), lines) == "0.5"
    assert metric_value(re.compile(r"eval"), lines) == "eval"
    assert metric_value(re.compile(r"nothing"), lines) is None


def test_plan_failed() -> None:
    write_sweep_files()
    plan = plan_failed(sweep_entry(), _runner())
    assert plan.indices == (2,) and plan.array == "2" and plan.values == ((2, {"lr": "3e-4", "seed": "3"}),)
    assert same_manifest(plan, encode_manifest(Manifest(("lr", "seed"), plan.ref.manifest.tasks,  # type: ignore[union-attr]
                                                        "loss=([0-9.]+)"))) == ""
    assert "changed" in same_manifest(plan, encode_manifest(Manifest(("lr",), (("1",),))))
    none = plan_failed(sweep_entry(), _runner(SACCT_TASKS.replace("FAILED", "COMPLETED")))
    assert not none.indices and "no failed" in none.problem


def test_submitting_some_tasks_keeps_the_manifest(tmp_path: Path) -> None:
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.spec import validate
    from ntui.core.jobs.submission import submit_job
    from tests.conftest import REPO

    loaded = load_preset(str(REPO / "presets" / "local-sweep.yaml"), (f"logs.dir={tmp_path}",))
    spec, _ = validate(loaded)
    assert spec is not None and spec.sweep is not None
    runner = FakeRunner({"sbatch": result(stdout="77\n")})
    job = submit_job(loaded, spec, runner, None, indices=[4, 1], resubmit_of="70")
    assert job.tasks == (1, 4) and job.batch_log == f"{tmp_path}/local-sweep-77_1.out"
    argv = runner.argvs()[0]
    assert "--array=1,4%2" in argv  # the command line overrides the script's --array=0-5%2
    kept = read_job_file(job_file_path(str(tmp_path), "local-sweep", "77"))
    assert kept == SweepJob(Path(spec.sweep.manifest_path(str(tmp_path), "local-sweep")).name, 6, (1, 4), 2, "70")
    assert Path(spec.sweep.manifest_path(str(tmp_path), "local-sweep")).read_bytes() == spec.sweep.manifest_bytes()
    assert manifest_path(str(tmp_path), "local-sweep", spec.sweep.manifest_bytes()).endswith(".manifest")
    write_job_file(job_file_path(str(tmp_path), "x", "1"), kept)
