"""Job records: history schema v2 and its migration, sacct parsing, batch-log inference, batched resolution,
recent jobs. Slurm answers are real captures (``tests/data/record/``, ``tests/data/slurm/``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from ntui.core.records.history import FinalRecord, History
from ntui.core.records.record import NOT_FROM_NTUI, infer_from_batch_log, recent_jobs, resolve_records
from ntui.core.slurm.sacct import (
    RECORD_FIELDS,
    SacctUnavailable,
    build_sacct_jobs_argv,
    build_sacct_since_argv,
    parse_sacct_records,
    sacct_jobs,
)
from tests.support.fakes import FakeRunner, result

DATA = Path(__file__).resolve().parents[1] / "data"
REC = DATA / "record"
SLURM = DATA / "slurm"
SEP = "\x1f"
STEMS = {"22": "rc-ok", "23": "rc-fail", "24": "rc-cancel", "25": "rc-timeout"}
LOGS = {"22": "batch-completed.out", "23": "batch-failed.out", "24": "batch-cancelled.out", "25": "batch-timeout.out"}


def _cap(name: str) -> str:
    return (SLURM / name).read_text()


def no_accounting() -> object:
    return result(stdout=_cap("sacct_no_accounting.stdout"), stderr=_cap("sacct_no_accounting.stderr"),
                  returncode=int(_cap("sacct_no_accounting.rc").strip()))


def sacct_capture() -> object:
    return result(stdout=(REC / "sacct_jobs.stdout").read_text())


def _submit(history: History, job_id: str, log_dir: Path, *, age: float = 3600.0) -> None:
    token = uuid.uuid4().hex
    stem = STEMS.get(job_id, f"job{job_id}")
    history.record_intent(token=token, preset="local-srun", preset_path=None, overrides=(f"x={job_id}",),
                          job_name=stem, launcher="srun", nodes=1, world_size=1, log_dir=str(log_dir),
                          log_stem=stem, script="#!/bin/bash\n", created_at=time.time() - age)
    history.record_submitted(token, job_id, None, None, when=time.time() - age)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for job_id, name in LOGS.items():
        shutil.copy(REC / name, d / f"{STEMS[job_id]}-{job_id}.out")
    return d


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "state" / "history.sqlite3")


def no_verdict(entry: object, job_id: str, slurm_final: object = None) -> str:
    return ""


# ---------------------------------------------------------------- schema


def test_a_version_1_history_file_is_migrated_to_record_files_once(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    shutil.copy(REC / "history-v1.sqlite3", path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        before = conn.execute("SELECT token, job_id, preset, overrides, script FROM submissions ORDER BY id").fetchall()
    raw = path.read_bytes()
    assert [r[1] for r in before] == ["22", "23", "24", "25"]
    h = History(path)
    try:
        entries = {e.job_id: e for e in h.entries()}
        assert set(entries) == set(STEMS)
        assert sorted((e.token, e.job_id, e.preset, json.dumps(list(e.overrides)), e.script)
                      for e in entries.values()) == sorted(before)
        assert all(e.final_state is None and e.record_source is None and e.resubmit_of is None and e.gpu is None
                   for e in entries.values())
        assert [e.job_id for e in h.unresolved()] == ["22", "23", "24", "25"]
        rec = FinalRecord("TIMEOUT", "0:0", None, "2026-11-30T09:33:46", "2026-11-30T09:34:48", 62, "nid002",
                          "v", "sacct")
        assert h.record_final("25", rec)
        assert not h.record_final("25", rec)  # already resolved
        got = h.get("25")
        assert got is not None and (got.final_state, got.elapsed_s, got.node_list, got.record_source) == (
            "TIMEOUT", 62, "nid002", "sacct")
    finally:
        h.close()
    files = sorted(p.name for p in (tmp_path / "records").iterdir())
    again = History(path)  # idempotent: a second open migrates nothing again
    try:
        assert len(again.entries()) == 4 and again.get("25") is not None
        assert sorted(p.name for p in (tmp_path / "records").iterdir()) == files
    finally:
        again.close()
    assert path.read_bytes() == raw  # the old file is only read
    (tmp_path / "history.sqlite3.migrated").unlink()  # a migration killed before its marker: runs again, no twin
    third = History(path)
    try:
        assert sorted(p.name for p in (tmp_path / "records").iterdir()) == files
        assert len(third.entries()) == 4
    finally:
        third.close()


def test_sacct_argv_is_one_call_for_all_jobs() -> None:
    argv = build_sacct_jobs_argv(["25", "3", "22", "3"])
    assert argv[:3] == ["sacct", "-j", "3,22,25"] and "-X" in argv and "-P" in argv and "-n" in argv
    assert argv[-1] == "--format=" + ",".join(RECORD_FIELDS)
    with pytest.raises(ValueError):
        build_sacct_jobs_argv(["1;rm"])
    with pytest.raises(ValueError):
        build_sacct_jobs_argv([])
    since = build_sacct_since_argv("2026-11-23T09:00:00")
    assert since[:6] == ["sacct", "-X", "-P", "-n", "-S", "2026-11-23T09:00:00"]
    with pytest.raises(ValueError):
        build_sacct_since_argv("-u evil")


def test_parse_real_sacct_output() -> None:
    recs = {r.job_id: r for r in parse_sacct_records((REC / "sacct_jobs.stdout").read_text())}
    assert {j: r.state for j, r in recs.items()} == {
        "22": "COMPLETED", "23": "FAILED", "24": "CANCELLED", "25": "TIMEOUT"}
    assert recs["24"].raw_state == "CANCELLED by 0"
    assert recs["23"].exit_code == "3:0"
    assert recs["25"].elapsed_s == 62 and recs["25"].node_list == "nid002"
    assert recs["25"].start == "2026-11-30T09:33:46" and recs["25"].end == "2026-11-30T09:34:48"
    assert recs["22"].account == "ntuidev" and recs["22"].name == "rc-ok"


def test_a_job_name_with_a_pipe_is_kept_whole() -> None:
    line = "7|a|b|COMPLETED|0:0|None|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:02|00:00:01|n1|" \
           "acct|normal|debug|/w"
    (rec,) = parse_sacct_records(line)
    assert rec.name == "a|b" and rec.state == "COMPLETED" and rec.work_dir == "/w"


def test_sacct_without_accounting_says_so() -> None:
    with pytest.raises(SacctUnavailable) as err:
        sacct_jobs(FakeRunner({"sacct": no_accounting()}), ["26"])
    assert err.value.disabled


# ---------------------------------------------------------------- batch-log inference


@pytest.mark.parametrize(("log", "state", "node"), [
    ("batch-completed.out", "COMPLETED", None),
    ("batch-failed.out", "FAILED", "nid001"),
    ("batch-cancelled.out", "CANCELLED", "nid001"),
    ("batch-timeout.out", "TIMEOUT", "nid002"),
])
def test_inferred_from_real_batch_logs(log: str, state: str, node: str | None) -> None:
    rec = infer_from_batch_log(REC / log)
    assert (rec.state, rec.node_list, rec.source) == (state, node, "inferred")
    if state == "FAILED":
        assert rec.exit_code == "3:0"
    if state in ("CANCELLED", "TIMEOUT"):
        assert rec.end_time is not None and rec.end_time.startswith("2026-11-30T09:3")


@pytest.mark.parametrize(("line", "state"), [
    ("slurmstepd: error: *** JOB 9 ON nid001 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***", "PREEMPTED"),
    ("slurmstepd: error: *** JOB 9 ON nid001 CANCELLED AT 2026-01-01T00:00:00 DUE TO NODE FAILURE ***", "NODE_FAIL"),
    ("srun: error: Node failure on nid002", "NODE_FAIL"),
    ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your processes may have been killed "
     "by the cgroup out-of-memory handler.", "OUT_OF_MEMORY"),
])
def test_inferred_job_level_ends(tmp_path: Path, line: str, state: str) -> None:
    log = tmp_path / "b.out"
    log.write_text(f"srun: error: nid002: task 1: Exited with exit code 1\n{line}\n")
    assert infer_from_batch_log(log).state == state  # the job-level cause wins over the task's exit


@pytest.mark.parametrize(("case", "exit_code", "reason"), [
    ("signal-abort-srun", "0:6", "batch log: task 3 on nid002 killed by SIGABRT (Aborted)"),
    ("signal-segv-srun", "0:11", "batch log: task 1 on nid001 killed by SIGSEGV (Segmentation fault)"),
    ("signal-kill-srun", "0:9", "batch log: task 2 on nid002 killed by SIGKILL (Killed)"),
    ("signal-abort-torchrun", "1:0",
     "batch log: rank 3 killed by SIGABRT (torch elastic); task 1 on nid002 exited with code 1"),
    ("signal-segv-accelerate", "1:0",
     "batch log: rank 1 killed by SIGSEGV (torch elastic); task 1 on nid002 exited with code 1"),
    ("slurm-26.05/signal-abort-srun", "0:6", "batch log: task 3 on nid002 killed by SIGABRT (Aborted)"),
])
def test_inferred_signal_from_real_batch_logs(case: str, exit_code: str, reason: str) -> None:
    """Before: the srun jobs were COMPLETED ("no failure reported": srun's "Aborted" is no exit line)."""
    d = DATA / "logs" / case
    batch = next(p for p in d.glob("*.out") if "-rank-" not in p.name)
    rec = infer_from_batch_log(batch)
    assert (rec.state, rec.exit_code, rec.reason) == ("FAILED", exit_code, reason)


def test_inferred_stop_signal_only(tmp_path: Path) -> None:
    log = tmp_path / "b.out"
    log.write_text("srun: error: nid001: tasks 0-1: Terminated\nsrun: Force Terminated StepId=9.0\n")
    rec = infer_from_batch_log(log)
    assert (rec.state, rec.exit_code) == ("FAILED", "0:15") and "killed by SIGTERM" in (rec.reason or "")


def test_no_batch_log_gives_unknown(tmp_path: Path) -> None:
    assert infer_from_batch_log(tmp_path / "missing.out").state == "UNKNOWN"
    assert infer_from_batch_log(None).state == "UNKNOWN"


# ---------------------------------------------------------------- resolution


def test_resolve_with_accounting_is_one_batched_sacct_call(history: History, logs: Path) -> None:
    for j in STEMS:
        _submit(history, j, logs)
    runner = FakeRunner({"sacct": sacct_capture()})
    report = resolve_records(history, runner)
    sacct = [a for a in runner.argvs() if a[0] == "sacct"]
    assert len(sacct) == 1 and report.sacct_calls == 1
    assert sacct[0][1:3] == ("-j", "22,23,24,25")
    assert runner.calls == 1  # no squeue, no scontrol
    assert report.accounting is True
    got = {e.job_id: e for e in history.entries()}
    assert {j: (e.final_state, e.record_source) for j, e in got.items()} == {
        "22": ("COMPLETED", "sacct"), "23": ("FAILED", "sacct"), "24": ("CANCELLED", "sacct"),
        "25": ("TIMEOUT", "sacct")}
    assert got["24"].reason is not None and got["24"].reason.startswith("cancelled by ")
    assert got["23"].exit_code == "3:0" and got["25"].elapsed_s == 62
    # the verdict comes from triage over the job's own logs
    assert "Exited with exit code 3" in (got["23"].verdict or "")
    assert got["22"].verdict == ""
    again = FakeRunner({"sacct": sacct_capture()})
    assert resolve_records(history, again) == resolve_records(history, again)
    assert again.calls == 0  # nothing left to resolve: no Slurm call at all


def test_resolve_gives_the_verdict_slurms_exit_code(history: History, logs: Path) -> None:
    """The verdict gets sacct's exit code with the state (a fault signal there is named, verdict.py)."""
    _submit(history, "23", logs)
    said: dict[str, object] = {}

    def remember(entry: object, job_id: str, slurm_final: object = None) -> str:
        said[job_id] = slurm_final
        return ""

    resolve_records(history, FakeRunner({"sacct": sacct_capture()}), verdict=remember)
    final = said["23"]
    assert getattr(final, "state", None) == "FAILED" and getattr(final, "exit_code", None) == "3:0"


def _queue_line(job_id: str, state: str) -> str:
    return SEP.join((job_id, job_id, "N/A", "n", state, "/x/run.sbatch")) + SEP


def test_resolve_without_accounting_uses_scontrol_then_the_batch_log(history: History, logs: Path) -> None:
    for j in STEMS:
        _submit(history, j, logs)
    _submit(history, "26", logs)  # still running
    runner = FakeRunner({
        "sacct": no_accounting(),
        "squeue": result(stdout="\n".join([_queue_line("25", "TIMEOUT"), _queue_line("26", "RUNNING")]) + "\n"),
        ("scontrol", "show", "job"): result(stdout=(REC / "scontrol_show_job_timeout.stdout").read_text()),
    })
    report = resolve_records(history, runner, verdict=no_verdict)
    kinds = [a[0] for a in runner.argvs()]
    assert kinds.count("sacct") == 1 and kinds.count("squeue") == 1 and kinds.count("scontrol") == 1
    assert report.accounting is False and report.unresolved == ("26",)
    got = {e.job_id: (e.final_state, e.record_source) for e in history.entries()}
    assert got == {"22": ("COMPLETED", "inferred"), "23": ("FAILED", "inferred"), "24": ("CANCELLED", "inferred"),
                   "25": ("TIMEOUT", "scontrol"), "26": (None, None)}


def test_resolve_reuses_a_fresh_squeue_answer(history: History, logs: Path) -> None:
    """At app start reconcile has just asked squeue: resolution takes that answer instead of asking again."""
    from ntui.core.records.reconcile import parse_own_jobs

    for j in STEMS:
        _submit(history, j, logs)
    _submit(history, "26", logs)  # still running
    queue = parse_own_jobs("\n".join([_queue_line("25", "TIMEOUT"), _queue_line("26", "RUNNING")]) + "\n")
    runner = FakeRunner({
        "sacct": no_accounting(),
        ("scontrol", "show", "job"): result(stdout=(REC / "scontrol_show_job_timeout.stdout").read_text()),
    })
    report = resolve_records(history, runner, verdict=no_verdict, queue=queue)
    kinds = [a[0] for a in runner.argvs()]
    assert "squeue" not in kinds and report.squeue_calls == 0 and kinds.count("scontrol") == 1
    assert report.unresolved == ("26",)
    got = {e.job_id: e.record_source for e in history.entries()}
    assert got["25"] == "scontrol" and got["22"] == "inferred" and got["26"] is None


def test_with_accounting_a_young_job_missing_from_sacct_waits_for_slurmdbd(history: History, logs: Path) -> None:
    _submit(history, "22", logs, age=10)
    runner = FakeRunner({"sacct": result(stdout=""), "squeue": result(stdout="")})
    report = resolve_records(history, runner, verdict=no_verdict)
    assert report.unresolved == ("22",) and history.get("22") is not None
    assert history.unresolved()[0].job_id == "22"


def test_nothing_is_inferred_while_the_controller_does_not_answer(history: History, logs: Path) -> None:
    _submit(history, "23", logs)
    runner = FakeRunner({"sacct": no_accounting(), "squeue": result(
        stderr="squeue: error: Unable to contact slurm controller (connect failure)", returncode=1)})
    report = resolve_records(history, runner, verdict=no_verdict)
    assert report.unresolved == ("23",) and report.warnings
    assert [e.job_id for e in history.unresolved()] == ["23"]


# ---------------------------------------------------------------- recent jobs


def test_recent_jobs_lists_ntui_records_and_the_users_other_jobs(history: History, logs: Path) -> None:
    for j in STEMS:
        _submit(history, j, logs)
    resolve_records(history, FakeRunner({"sacct": sacct_capture()}), verdict=no_verdict)
    _submit(history, "5", logs, age=30 * 86400)  # too old for the last 7 days
    other = ("99|my-notebook|FAILED|1:0|None|2026-11-30T08:00:00|2026-11-30T08:00:01|2026-11-30T08:10:01|00:10:00|"
             "nid001|ntuidev|normal|debug|/home\n")
    runner = FakeRunner({"sacct": result(stdout=(REC / "sacct_jobs.stdout").read_text() + other)})
    recent = recent_jobs(history, runner, sort="elapsed")
    assert len([a for a in runner.argvs() if a[0] == "sacct"]) == 1
    assert "-S" in runner.argvs()[0]
    assert [j.job_id for j in recent.jobs] == ["99", "25", "24", "22", "23"]  # longest elapsed first
    foreign = recent.jobs[0]
    assert not foreign.from_ntui and foreign.note == NOT_FROM_NTUI and foreign.state == "FAILED"
    assert all(j.from_ntui for j in recent.jobs[1:]) and recent.accounting is True
    assert {j.job_id: j.state for j in recent.jobs[1:]} == {
        "22": "COMPLETED", "23": "FAILED", "24": "CANCELLED", "25": "TIMEOUT"}
    wider = recent_jobs(history, None, days=60, sort="job", descending=False)
    assert [j.job_id for j in wider.jobs] == ["5", "22", "23", "24", "25"] and wider.accounting is None
    without = recent_jobs(history, FakeRunner({"sacct": no_accounting()}))
    assert without.accounting is False and all(j.from_ntui for j in without.jobs)
    with pytest.raises(ValueError):
        recent_jobs(history, None, sort="nope")


# ---------------------------------------------------------------- app start


async def test_app_start_records_jobs_that_ended_while_it_was_closed(tmp_path: Path, logs: Path) -> None:
    from tests.support.appstart import start_app_once

    path = tmp_path / "state" / "history.sqlite3"
    h = History(path)
    for j in STEMS:
        _submit(h, j, logs)
    h.close()
    runner = FakeRunner({"squeue": result(stdout=""), "sacct": sacct_capture()}, default=result(stdout=""))
    await start_app_once(runner, path)
    h = History(path)
    try:
        assert {e.job_id: e.final_state for e in h.entries()} == {
            "22": "COMPLETED", "23": "FAILED", "24": "CANCELLED", "25": "TIMEOUT"}
    finally:
        h.close()
    assert sum(1 for a in runner.argvs() if a[0] == "sacct") == 1


# ---------------------------------------------------------------- the job's own journal first (J2)

JOURNAL_END = {  # job id -> the journal's lines after its allocation (t=100)
    "22": ['{"v":1,"ev":"end","t":102,"job":"22","rc":0,"phase":"after"}'],
    "23": ['{"v":1,"ev":"launch-end","t":101,"job":"23","rc":3}', '{"v":1,"ev":"end","t":101,"job":"23","rc":3}'],
    "24": ['{"v":1,"ev":"end","t":108,"job":"24","rc":null,"sig":null,"phase":"launch"}'],
    "25": ['{"v":1,"ev":"end","t":181,"job":"25","rc":null,"sig":null,"phase":"launch"}'],
}


def _journals(history: History, log_dir: Path) -> None:
    for job_id, lines in JOURNAL_END.items():
        head = f'{{"v":1,"ev":"alloc","t":100,"job":"{job_id}","restart":0,"nodes":"nid001","host":"nid001"}}'
        (log_dir / f"{STEMS[job_id]}-{job_id}.events").write_text("\n".join([head, *lines]) + "\n")


def _journal_history(tmp_path: Path, logs: Path) -> History:
    h = History(tmp_path / "state")
    for job_id, stem in STEMS.items():
        token = uuid.uuid4().hex
        limit = "#!/bin/bash\n#SBATCH --time=00:01:00\n" if job_id == "25" else "#!/bin/bash\n"
        h.record_intent(token=token, preset="local-srun", preset_path=None, overrides=(), job_name=stem,
                        launcher="srun", nodes=1, world_size=1, log_dir=str(logs), log_stem=stem, script=limit,
                        created_at=time.time() - 3600)
        h.record_submitted(token, job_id, None, None, when=time.time() - 3600)
    _journals(h, logs)
    return h


WANT_JOURNAL = {"22": ("COMPLETED", "0:0"), "23": ("FAILED", "3:0"), "24": ("CANCELLED", "0:0"),
                "25": ("TIMEOUT", "0:0")}


def test_the_journal_decides_with_no_accounting_and_no_controller(tmp_path: Path, logs: Path) -> None:
    h = _journal_history(tmp_path, logs)
    runner = FakeRunner({"sacct": no_accounting(), "squeue": result(returncode=1, stderr="connect failure")})
    report = resolve_records(h, runner, verdict=no_verdict)
    got = {j: (r.state, r.exit_code, r.source) for j, r in report.resolved}
    assert got == {j: (*want, "job") for j, want in WANT_JOURNAL.items()}
    assert [a[0] for a in runner.argvs()] == ["sacct"]  # no squeue, no scontrol: the journals said it all
    e = h.get("25")
    assert e is not None and e.elapsed_s == 81 and e.node_list == "nid001" and e.confirmed_by is None
    assert "time limit 60 s" in (e.reason or "")


def test_sacct_confirms_the_journal_and_wins_where_it_names_another_end(tmp_path: Path, logs: Path) -> None:
    h = _journal_history(tmp_path, logs)
    rows = (REC / "sacct_jobs.stdout").read_text().splitlines()
    # job 24: Slurm says it was preempted, which the job could only see as a signal
    rows = [r.replace("|CANCELLED by 0|", "|PREEMPTED|") if r.startswith("24|") else r for r in rows]
    runner = FakeRunner({"sacct": result(stdout="\n".join(rows) + "\n")})
    report = resolve_records(h, runner, verdict=no_verdict)
    by = dict(report.resolved)
    for job_id in ("22", "23", "25"):
        assert (by[job_id].state, by[job_id].exit_code) == WANT_JOURNAL[job_id]
        assert (by[job_id].source, by[job_id].confirmed_by) == ("job", "sacct")
    assert by["24"].state == "PREEMPTED" and by["24"].source == "sacct"
    assert "the job's journal said CANCELLED" in (by["24"].reason or "")
    assert by["22"].start_time == "2026-11-30T09:33:43"  # Slurm's times once it confirmed


def test_a_journal_record_sacct_lags_on_is_confirmed_later_and_a_signal_waits(tmp_path: Path, logs: Path) -> None:
    h = _journal_history(tmp_path, logs)
    running = "\n".join(f"{j}|{STEMS[j]}|RUNNING|0:0|None|2026-11-30T09:33:43|2026-11-30T09:33:43|Unknown|"
                        "00:00:05|nid001|ntuidev|normal|debug|/tmp" for j in STEMS) + "\n"
    first = resolve_records(h, FakeRunner({"sacct": result(stdout=running)}), verdict=no_verdict)
    # exit statuses are the job's own: recorded; ends by a signal may be a preemption Slurm requeues: they wait
    assert {j for j, _ in first.resolved} == {"22", "23"} and set(first.unresolved) == {"24", "25"}
    assert h.get("22").confirmed_by is None  # type: ignore[union-attr]
    done = FakeRunner({"sacct": result(stdout=(REC / "sacct_jobs.stdout").read_text())})
    second = resolve_records(h, done, verdict=no_verdict)
    assert set(second.confirmed) == {"22", "23"} and {j for j, _ in second.resolved} == {"24", "25"}
    argv = done.argvs()
    assert len(argv) == 1 and set(argv[0][argv[0].index("-j") + 1].split(",")) == set(STEMS)  # one call for all
    for job_id, (state, code) in WANT_JOURNAL.items():
        e = h.get(job_id)
        assert e is not None and (e.final_state, e.exit_code, e.record_source) == (state, code, "job"), e
        assert e.confirmed_by == "sacct"
    assert (h.get("24").reason or "").startswith("cancelled by ")  # type: ignore[union-attr]
