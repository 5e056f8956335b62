"""The recent-jobs list's core (:mod:`ntui.core.jobs.recent`): loads, rows, what a selected record shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ntui.core.jobs.recent import (
    RecentLoads,
    RecentRequest,
    age_text,
    load_recent,
    recent_cells,
    recent_title,
    record_details,
    shown_jobs,
    state_text,
)
from ntui.core.jobs.selected import log_target, selected_record
from ntui.core.records.history import GpuSummary, History
from ntui.core.records.record import (
    NOT_FROM_NTUI,
    RECENT_ORDERS,
    RecentJob,
    next_order,
    recent_jobs,
    recent_order,
    sort_recent,
)
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import (
    FROZEN_NOW,
    LOG_DIR,
    SACCT_RUNNING,
    SACCT_SINCE,
    recent_history,
    recent_jobs_runner,
)

NOW = FROZEN_NOW.timestamp()


def _job(job_id: str = "7", **kw: object) -> RecentJob:
    values: dict[str, object] = dict(job_id=job_id, name="train", state="FAILED", exit_code="1:0", elapsed_s=199,
                                     verdict="rank 3 failed first", submitted_at=NOW - 7200, end_time=None,
                                     source="sacct", from_ntui=True)
    values.update(kw)
    return RecentJob(**values)  # type: ignore[arg-type]


def test_loads_never_overlap_and_a_waiting_resolve_is_kept() -> None:
    loads = RecentLoads()
    assert loads.request(resolve=False) == RecentRequest(False)
    assert loads.request(resolve=True) is None and loads.request(resolve=False) is None
    assert loads.finished() == RecentRequest(True)  # one more, resolving: one of the waiting asked to
    assert loads.running and loads.finished() is None and not loads.running


def test_rows_say_state_elapsed_age_and_verdict_and_foreign_jobs_say_logs_unknown() -> None:
    assert recent_cells(_job(), NOW) == ("7", "train", "FAILED 1:0", "3:19", "-", "2 h ago", "rank 3 failed first")
    foreign = _job("8", from_ntui=False, note=NOT_FROM_NTUI, verdict="", state="COMPLETED", exit_code="0:0")
    assert recent_cells(foreign, NOW)[2:] == ("COMPLETED", "3:19", "-", "2 h ago", "not from ntui: logs unknown")
    assert state_text(_job(source="inferred", state="TIMEOUT", exit_code=None)) == "~TIMEOUT"
    assert recent_cells(_job(state="", exit_code=None, verdict="", elapsed_s=None), NOW)[2:4] == ("?", "-")
    assert (age_text(NOW - 59, NOW), age_text(NOW - 3 * 86400, NOW), age_text(None, NOW)) == (
        "0 min ago", "3 d ago", "-")
    assert [j.job_id for j in shown_jobs([_job("1"), _job("2"), _job("3")], {"2"})] == ["1", "3"]
    assert [j.job_id for j in shown_jobs([_job(str(i)) for i in range(9)], {"0"}, limit=3)] == ["1", "2", "3"]
    assert recent_title(7, 500, True) == "Recent · last 7 days · the newest 500 jobs"
    assert recent_title(7, 1, False) == "Recent · last 7 days · 1 job · ntui's jobs only (no accounting)"
    assert recent_title(1.5, 3, True) == "Recent · last 1.5 days · 3 jobs"


def test_load_resolves_first_then_lists_with_one_sacct_each(tmp_path: Path) -> None:
    opener = recent_history(tmp_path / "h.sqlite3")
    runner = recent_jobs_runner()
    history = opener()
    got = load_recent(history, runner, RecentRequest(True), days=7, now=NOW, timeout=5)
    history.close()
    assert got is not None and got.accounting is True
    sacct = [a for a in runner.argvs() if a[0] == "sacct"]
    assert len(sacct) == 2 and "-j" in sacct[0] and "-S" in sacct[1]  # resolve (batched), then the list
    by_id = {j.job_id: j for j in got.jobs}
    assert by_id["48213777"].state == ""  # still running: sacct says so, left unresolved
    assert by_id["48213322"].note == NOT_FROM_NTUI and not by_id["48213322"].from_ntui
    assert by_id["48213701"].state == "FAILED" and by_id["48213701"].verdict.startswith("rank 5")
    # without resolving: only the list's sacct
    runner2 = recent_jobs_runner()
    history = opener()
    load_recent(history, runner2, RecentRequest(False), days=7, now=NOW, timeout=5)
    history.close()
    assert [a for a in runner2.argvs() if a[0] == "sacct" and "-j" in a] == []
    # a stand-in that is not the history file: nothing to list
    assert load_recent(object(), runner2, RecentRequest(True), days=7, now=NOW, timeout=5) is None
    assert SACCT_SINCE and SACCT_RUNNING


def test_a_failing_sacct_leaves_the_list_with_a_warning(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    runner = FakeRunner({"sacct": result(stderr="sacct: error: slurmdbd: connection refused", returncode=1),
                         "squeue": result(stdout="")})
    got = load_recent(history, runner, RecentRequest(True), days=7, now=NOW, timeout=5)
    assert got is not None and got.jobs == () and got.warnings


def test_a_selected_record_shows_its_details_and_its_logs_as_for_a_live_job(tmp_path: Path) -> None:
    opener = recent_history(tmp_path / "h.sqlite3")
    history = opener()
    got = load_recent(history, None, RecentRequest(False), days=7, now=NOW, timeout=5)
    history.close()
    assert got is not None
    job = next(j for j in got.jobs if j.job_id == "48213701")
    view = record_details(job)
    assert view.outcome is not None and (view.outcome.state, view.outcome.exit_code) == ("FAILED", "1:0")
    assert view.entry is not None and "verdict: rank 5 on nid200021" in view.note
    target = log_target(selected_record(job))
    assert target is not None
    assert target.paths is not None and target.paths.log_dir == LOG_DIR and not target.job_active
    assert target.world_size == 8 and target.batch_log == f"{LOG_DIR}/alice-ddp-48213701.out"
    foreign = _job("9", from_ntui=False, note=NOT_FROM_NTUI)
    assert "logs unknown" in record_details(foreign).note
    foreign_target = log_target(selected_record(foreign))
    assert foreign_target is not None and foreign_target.paths is None and foreign_target.batch_log is None


# ---------------------------------------------------------------- orders (issue 14: sort by GPU use)

#: Mean GPU utilisation recorded for three of the canned recent jobs (the others have no samples).
GPU_UTIL = {"48213650": 80.0, "48213701": 55.0, "48213544": 12.0}


def gpu_history(path: Path) -> Callable[[], History]:
    """The canned recent history (:func:`recent_history`) with :data:`GPU_UTIL` in its records; its opener."""
    opener = recent_history(path)
    h = opener()
    try:
        for job_id, util in GPU_UTIL.items():
            assert h.record_gpu_summary(job_id, GpuSummary(util, 0.1, 0.3, 8, 12.0, 0, ""))
    finally:
        h.close()
    return opener


def test_orders_newest_lowest_gpu_use_failed_first_and_round_again(tmp_path: Path) -> None:
    gpu_history(tmp_path / "h.sqlite3")
    h = History(tmp_path / "h.sqlite3")
    try:
        loaded = recent_jobs(h, None, now=NOW)
    finally:
        h.close()
    assert [o.name for o in RECENT_ORDERS] == ["newest", "gpu", "failed"]
    newest, gpu, failed = RECENT_ORDERS
    live = {"48213777"}
    ids = lambda order: [j.job_id for j in shown_jobs(loaded.jobs, live, order=order)]  # noqa: E731
    assert ids(newest) == ["48213650", "48213701", "48213544", "48213410"] == ids(None)
    assert ids(gpu) == ["48213544", "48213701", "48213650", "48213410"]  # measured, lowest first; then the rest
    assert ids(failed) == ["48213701", "48213544", "48213410", "48213650"]  # FAILED, TIMEOUT, ~CANCELLED first
    assert [next_order(o) for o in RECENT_ORDERS] == [gpu, failed, newest]
    assert recent_order("gpu") is gpu
    with pytest.raises(ValueError, match="newest, gpu, failed"):
        recent_order("fastest")
    # the newest ``limit`` are cut first, then sorted: the title's "the newest N jobs" stays true
    assert [j.job_id for j in shown_jobs(loaded.jobs, live, limit=2, order=gpu)] == ["48213701", "48213650"]
    assert sort_recent([_job("1", state=""), _job("2", state="COMPLETED")], failed)[0].job_id == "2"


def test_history_sort_takes_the_same_orders(capsys: pytest.CaptureFixture[str]) -> None:
    from ntui import cli
    from ntui.core.records.history import default_history_path

    gpu_history(default_history_path())  # the test's own state dir (tests/conftest.py)

    def ids(*args: str) -> list[str]:
        assert cli.run(["history", "--no-resolve", *args]) == 0
        return [ln.split()[0] for ln in capsys.readouterr().out.splitlines()[1:]]

    # newest first is the stored order (by submission time)
    assert ids() == ids("--sort", "newest") == ["48213650", "48213701", "48213777", "48213544", "48213410"]
    assert ids("--sort", "gpu") == ["48213544", "48213701", "48213650", "48213777", "48213410"]
    assert ids("--sort", "gpu", "-n", "2") == ["48213544", "48213701"]  # the two that used their GPUs least
    assert ids("--sort", "failed") == ["48213701", "48213544", "48213410", "48213650", "48213777"]
    with pytest.raises(SystemExit):
        cli.run(["history", "--sort", "fastest"])
    assert "invalid choice: 'fastest' (choose from 'newest', 'gpu', 'failed')" in capsys.readouterr().err


def test_a_record_from_the_journal_says_so_and_who_confirmed_it(tmp_path: Path) -> None:
    from ntui.core.records.history import FinalRecord

    h = History(tmp_path / "state")
    try:
        h.record_intent(token="j1", preset="p", preset_path=None, overrides=[], job_name="train",  # noqa: S106
                        launcher="srun", nodes=1, world_size=1, log_dir=str(tmp_path), log_stem="train", script="")
        h.record_submitted("j1", "9", None, None)
        h.record_final("9", FinalRecord("CANCELLED", "0:0", "cancelled by alice (uid 1000)", None, None, 12,
                                        "nid001", "", "job", confirmed_by="sacct"))
        job = next(j for j in recent_jobs(h, None, now=NOW + 1e9, days=1e6).jobs if j.job_id == "9")
    finally:
        h.close()
    note = record_details(job).note
    assert note.startswith("record from job (its own journal), confirmed by sacct\nreason: cancelled by alice")
    assert state_text(job) == "CANCELLED"  # not marked as inferred
