"""The GPU usage summary in the job record (history schema 3): migration, fill on resolve, history, recent list."""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ntui.cli.history import cmd_history
from ntui.core.gpu.usage import IDLE_UTIL_PERCENT, JobFacts, build_report
from ntui.core.jobfiles.samplefiles import find_sample_files
from ntui.core.jobs.recent import recent_cells, record_details
from ntui.core.records.history import FinalRecord, GpuSummary, History, HistoryEntry
from ntui.core.records.record import gpu_summary, recent_jobs, refresh_gpu_summary, resolve_records
from tests.support.bigjob import BigJob, make_bigjob
from tests.support.fakes import FakeRunner, capture, result

DATA = Path(__file__).resolve().parents[1] / "data"
SLURM = DATA / "slurm"

# The version-2 schema as ntui wrote it (the v1 table of tests/data/record/history-v1.sqlite3 plus the record).
V2_DDL = """
ALTER TABLE submissions ADD COLUMN final_state TEXT;
ALTER TABLE submissions ADD COLUMN exit_code TEXT;
ALTER TABLE submissions ADD COLUMN reason TEXT;
ALTER TABLE submissions ADD COLUMN start_time TEXT;
ALTER TABLE submissions ADD COLUMN end_time TEXT;
ALTER TABLE submissions ADD COLUMN elapsed_s INTEGER;
ALTER TABLE submissions ADD COLUMN node_list TEXT;
ALTER TABLE submissions ADD COLUMN verdict TEXT;
ALTER TABLE submissions ADD COLUMN record_source TEXT;
ALTER TABLE submissions ADD COLUMN resolved_at REAL;
ALTER TABLE submissions ADD COLUMN resubmit_of TEXT;
CREATE INDEX IF NOT EXISTS submissions_unresolved ON submissions(final_state);
UPDATE submissions SET final_state='TIMEOUT', exit_code='0:0', elapsed_s=62, verdict='v', record_source='sacct',
    resolved_at=1.0 WHERE job_id='25';
PRAGMA user_version=2;
"""


def _no_accounting() -> FakeRunner:
    return FakeRunner({
        "sacct": result(stdout=(SLURM / "sacct_no_accounting.stdout").read_text(),
                        stderr=(SLURM / "sacct_no_accounting.stderr").read_text(),
                        returncode=int((SLURM / "sacct_no_accounting.rc").read_text().strip())),
        "squeue": result(stdout=""),  # Slurm forgot them all: the batch log says how they ended
    })


def no_verdict(entry: object, job_id: str, slurm_final: object = None) -> str:
    return ""


def _job(root: Path, job_id: str, **kw: object) -> BigJob:
    return make_bigjob(root, nodes=2, per_node=4, job_id=job_id, fail_rank=None, silent_rank=None,
                       lagging_node=None, **kw)  # type: ignore[arg-type]


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "state" / "history.sqlite3")


# ---------------------------------------------------------------- schema


def test_a_version_2_file_is_migrated_keeping_its_records(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    shutil.copy(DATA / "record" / "history-v1.sqlite3", path)
    with sqlite3.connect(path) as conn:
        conn.executescript(V2_DDL)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    h = History(path)
    try:
        old = h.get("25")
        assert old is not None and (old.final_state, old.elapsed_s, old.verdict) == ("TIMEOUT", 62, "v")
        assert old.gpu is None and all(e.gpu is None for e in h.entries())
        summary = GpuSummary(37.5, 0.25, 0.18, 4, 12.5, 2, "GPU 3 on nid002 idle 92 % of the time")
        assert h.record_gpu_summary("25", summary)
        assert not h.record_gpu_summary("999", summary)  # no such job
        got = h.get("25")
        assert got is not None and got.gpu == summary and got.final_state == "TIMEOUT"
    finally:
        h.close()
    again = History(path)  # a second open migrates nothing again: the summary stays
    try:
        got = again.get("25")
        assert got is not None and got.gpu is not None and got.gpu.util_mean == 37.5
        assert len(again.entries()) == 4
    finally:
        again.close()


# ---------------------------------------------------------------- fill on resolve


def _expected_util(job: BigJob) -> float:
    per_gpu = [sum(job.reading(n, g, s)[0] for s in range(job.steps)) / job.steps
               for n in range(len(job.nodes)) for g in range(4)]
    return sum(per_gpu) / len(per_gpu)


def test_resolving_a_job_stores_the_summary_of_its_sample_files(tmp_path: Path, history: History) -> None:
    job = _job(tmp_path / "a", "700", idle_gpus=((1, 2),))
    job.record_history(history)
    report = resolve_records(history, _no_accounting(), verdict=no_verdict)
    assert [j for j, _ in report.resolved] == ["700"] and not report.warnings
    entry = history.get("700")
    assert entry is not None and entry.final_state == "COMPLETED" and entry.gpu is not None
    gpu = entry.gpu
    assert gpu.gpus == 8
    assert gpu.util_mean == pytest.approx(_expected_util(job))
    idle = [all(job.reading(n, g, s)[0] < IDLE_UTIL_PERCENT for s in range(job.steps))
            for n in range(2) for g in range(4)]
    assert idle.count(True) == 1 and gpu.idle_fraction == pytest.approx(1 / 8)
    assert gpu.mem_peak_fraction == pytest.approx((31_000 + 200 * 3) / 40960)
    assert gpu.energy_wh is not None and gpu.energy_wh > 0
    assert gpu.findings >= 1 and "idle" in gpu.first_finding and job.nodes[1] in gpu.first_finding


def test_no_sample_files_leave_the_summary_null(tmp_path: Path, history: History) -> None:
    job = _job(tmp_path / "a", "701", samples=False)
    job.record_history(history)
    resolve_records(history, _no_accounting(), verdict=no_verdict)
    entry = history.get("701")
    assert entry is not None and entry.final_state == "COMPLETED" and entry.gpu is None
    assert not [p for p in history.records.iterdir() if ".gpu." in p.name]  # no summary file written


def test_a_failing_summary_is_a_warning_and_the_state_is_kept(tmp_path: Path, history: History) -> None:
    _job(tmp_path / "a", "702").record_history(history)

    def broken(entry: HistoryEntry, job_id: str, final: object) -> GpuSummary | None:
        raise ValueError("bad sample file")

    report = resolve_records(history, _no_accounting(), verdict=no_verdict, usage=broken)
    entry = history.get("702")
    assert entry is not None and entry.final_state == "COMPLETED" and entry.gpu is None
    assert report.warnings == ("GPU usage of job 702: bad sample file",)


def test_a_full_report_refreshes_the_summary_of_a_record_resolved_without_one(tmp_path: Path,
                                                                            history: History) -> None:
    job = _job(tmp_path / "a", "703", idle_gpus=((0, 1),))
    job.record_history(history)
    files = find_sample_files(job.paths.log_dir, job.paths.stem, "703")
    entry = history.get("703")
    assert entry is not None
    live = build_report(files, JobFacts("703", "RUNNING", False))
    assert not refresh_gpu_summary(history, entry, live)  # not resolved, still running: nothing stored
    history.record_final("703", FinalRecord("COMPLETED", "0:0", None, None, None, 120, None, "", "sacct"),
                         when=0.0)
    entry = history.get("703")
    assert entry is not None and entry.gpu is None  # resolved before its summary existed
    ended = build_report(files, JobFacts("703", "COMPLETED", True, 120.0))
    assert refresh_gpu_summary(history, entry, ended)
    got = history.get("703")
    assert got is not None and got.gpu == gpu_summary(ended) and got.gpu is not None and got.gpu.gpus == 8
    assert got.gpu.idle_fraction == pytest.approx(1 / 8)


# ---------------------------------------------------------------- history and the recent list


@pytest.fixture
def three_jobs(tmp_path: Path) -> dict[str, BigJob]:
    """Job 710 with two idle GPUs, 711 with none, 712 without samples; all resolved in the default history."""
    h = History()
    try:
        jobs = {"710": _job(tmp_path / "a", "710", idle_gpus=((0, 0), (1, 3))),
                "711": _job(tmp_path / "b", "711", idle_gpus=()),
                "712": _job(tmp_path / "c", "712", samples=False)}
        for j in jobs.values():
            j.record_history(h)
        resolve_records(h, _no_accounting(), verdict=no_verdict)
    finally:
        h.close()
    return jobs


def test_history_shows_a_gpu_column_and_json_has_the_summary(
    three_jobs: dict[str, BigJob], capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(n=20, json=False, reconcile=False, no_resolve=True)
    assert cmd_history(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["JOBID", "SUBMITTED", "STATE", "ELAPSED", "GPU"]
    rows = {ln.split()[0]: ln.split() for ln in lines[1:]}
    want = {j: f"{_expected_util(b):.0f}%" for j, b in three_jobs.items() if j != "712"}
    assert rows["710"][5] == want["710"] and rows["711"][5] == want["711"] and rows["712"][5] == "-"
    assert want["710"] != want["711"]
    assert cmd_history(argparse.Namespace(n=20, json=True, reconcile=False, no_resolve=True)) == 0
    data = {d["job_id"]: d for d in json.loads(capsys.readouterr().out)}
    assert data["712"]["gpu"] is None
    assert data["710"]["gpu"]["gpus"] == 8 and data["710"]["gpu"]["idle_fraction"] == pytest.approx(2 / 8)
    assert set(data["711"]["gpu"]) == {"util_mean", "idle_fraction", "mem_peak_fraction", "gpus", "energy_wh",
                                       "findings", "first_finding"}


def test_recent_jobs_sort_by_gpu_and_rows_show_it(three_jobs: dict[str, BigJob]) -> None:
    h = History()
    try:
        down = recent_jobs(h, None, sort="gpu")
        up = recent_jobs(h, None, sort="gpu", descending=False)
    finally:
        h.close()
    assert [j.job_id for j in down.jobs] == ["711", "710", "712"]  # busiest first, unmeasured last
    assert [j.job_id for j in up.jobs] == ["712", "710", "711"]
    by_id = {j.job_id: j for j in down.jobs}
    assert by_id["711"].gpu_util == pytest.approx(_expected_util(three_jobs["711"]))
    cells = recent_cells(by_id["710"], 0.0)
    assert cells[4] == f"{_expected_util(three_jobs['710']):.0f}%" and recent_cells(by_id["712"], 0.0)[4] == "-"
    note = record_details(by_id["710"]).note
    assert "GPU: 8 sampled" in note and "idle 25 %" in note and "finding: " in note
    assert "GPU:" not in record_details(by_id["712"]).note


def test_ntui_report_of_an_ended_job_stores_its_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from ntui import cli
    from ntui.cli import report as cli_report
    from tests.unit.test_cli_report import _history, _samples

    fake = FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
                       "sacct": capture("sacct_steps_2node")})
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    _history(tmp_path)
    _samples(tmp_path, "nid001", 90)
    _samples(tmp_path, "nid002", 60)
    h = History()
    h.record_final("12", FinalRecord("FAILED", "1:0", None, None, None, 9, None, "", "sacct"), when=0.0)
    h.close()
    assert cli.run(["report", "12", "--width", "100"]) == 0
    capsys.readouterr()
    h = History()
    try:
        got = h.get("12")
    finally:
        h.close()
    assert got is not None and got.gpu is not None
    assert (got.gpu.gpus, got.gpu.idle_fraction) == (4, pytest.approx(0.5))  # GPU 0 of each node reads 1 %
    assert got.gpu.util_mean == pytest.approx((1 + 90 + 1 + 60) / 4)
