"""The recent-jobs list under the live queue: loaded in a worker at start and when jobs leave the queue
(records resolved first), a selected record shows its details and its logs; snapshots at 120x36 and 80x24."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ntui.core.config import QueueSettings, Settings
from ntui.core.slurm.runner import CommandResult
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.log_pane import LogPane
from ntui.ui.widgets.recent_jobs import ORDER_KEY, RecentJobsTable
from tests.support.fakes import result
from tests.support.screenshots_jobs import (
    LOG_DIR,
    SACCT_RUNNING,
    SQUEUE_AFTER,
    SQUEUE_BEFORE,
    jobs_app,
    recent_history,
    recent_jobs_runner,
    recent_scene,
    settle_jobs,
)
from tests.unit.test_recentview import gpu_history

#: One refresh an hour: the test decides when the next one runs.
HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))


def _screen(app: Any) -> JobsScreen:
    screen = app.screen
    assert isinstance(screen, JobsScreen)
    return screen


async def _settled(pilot: Any, app: Any) -> tuple[JobsScreen, RecentJobsTable]:
    """The jobs view once its first refresh and look-ups are done, and its recent-jobs list."""
    await settle_jobs(pilot)
    screen = _screen(app)
    return screen, screen.query_one("#jobs-recent", RecentJobsTable)


async def test_recent_jobs_listed_under_the_queue_and_a_record_shows_details_and_logs(tmp_path: Path) -> None:
    runner = recent_jobs_runner()
    app = jobs_app(runner=runner, settings=HOUR, history_factory=recent_history(tmp_path / "h.sqlite3"))
    async with app.run_test(size=(120, 36)) as pilot:
        screen, recent = await _settled(pilot, app)
        assert recent.display
        # newest first; the running job is in the queue above, not here; the notebook job is sacct's
        assert list(recent.jobs) == ["48213650", "48213701", "48213322", "48213544", "48213410"]
        assert "last 7 days · 5 jobs" in str(recent.border_title)
        assert recent.get_row("48213322")[6].plain == "not from ntui: logs unknown"  # type: ignore[union-attr]
        await pilot.press("tab")  # from the queue to the recent list
        assert recent.has_focus
        recent.move_cursor(row=recent.get_row_index("48213701"))
        await settle_jobs(pilot)
        view = screen.query_one(JobDetailsPanel).view
        assert view is not None and view.job_id == "48213701" and view.outcome is not None
        assert view.outcome.state == "FAILED" and "rank 5 on nid200021" in view.note
        logs = screen.query_one(LogPane)
        target = logs.target
        assert target is not None and target.job_id == "48213701" and not target.job_active
        assert target.paths is not None and target.paths.log_dir == LOG_DIR and logs is screen.tabs.tab(LogPane)
        scontrol_before = [a for a in runner.argvs() if a[:2] == ("scontrol", "show")]
        # a queue refresh keeps the record shown (no scontrol for a record)
        screen.refresh_now()
        await settle_jobs(pilot)
        view = screen.query_one(JobDetailsPanel).view
        assert view is not None and view.job_id == "48213701"
        assert [a for a in runner.argvs() if a[:2] == ("scontrol", "show")] == scontrol_before
        # back to the queue: the queue's cursor again
        await pilot.press("shift+tab")
        await settle_jobs(pilot)
        assert screen.table.has_focus
        view = screen.query_one(JobDetailsPanel).view
        assert view is not None and view.job_id != "48213701"


async def test_a_job_that_leaves_the_queue_gets_its_record_and_joins_the_list(tmp_path: Path) -> None:
    runner = recent_jobs_runner((SQUEUE_BEFORE, SQUEUE_AFTER))
    running = SACCT_RUNNING + SACCT_RUNNING.replace("48213777", "48213701")

    def still_running(argv: tuple[str, ...]) -> CommandResult | None:
        """Until the second squeue, sacct says both jobs run (then the canned FAILED record of 48213701)."""
        if argv[0] == "sacct" and "-j" in argv and len([a for a in runner.argvs() if a[0] == "squeue"]) < 2:
            return result(stdout=running)
        return None

    runner.handler = still_running
    opener = recent_history(tmp_path / "h.sqlite3", unresolved=("48213701",))
    app = jobs_app(runner=runner, settings=HOUR, history_factory=opener)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, recent = await _settled(pilot, app)
        assert "48213701" not in recent.jobs  # running: in the queue
        screen.refresh_now()  # 48213701 and 48213650 leave the queue
        await settle_jobs(pilot)
        assert recent.jobs["48213701"].state == "FAILED"
        resolves = [a for a in runner.argvs() if a[0] == "sacct" and "-j" in a
                    and "48213701" in a[a.index("-j") + 1].split(",") and "48213777" in a[a.index("-j") + 1]]
        assert len(resolves) == 2  # one batched resolve at start (both unresolved) and one after the departure
        assert recent.jobs["48213701"].verdict == ""  # no logs on this machine: no triage verdict
    history = opener()
    try:
        entry = history.get("48213701")
        assert entry is not None and entry.final_state == "FAILED" and entry.record_source == "sacct"
    finally:
        history.close()


async def test_the_order_key_cycles_the_recent_list_and_the_subtitle_names_it(tmp_path: Path) -> None:
    """Issue 14: the recent list can be sorted by GPU use (the wasteful jobs on top). ``o`` works from any pane of
    the view, re-sorts what was loaded (no Slurm call), keeps the cursor on its job, and the box says the order."""
    runner = recent_jobs_runner()
    app = jobs_app(runner=runner, settings=HOUR, history_factory=gpu_history(tmp_path / "h.sqlite3"))
    async with app.run_test(size=(120, 36)) as pilot:
        screen, recent = await _settled(pilot, app)
        newest = ["48213650", "48213701", "48213322", "48213544", "48213410"]
        assert list(recent.jobs) == newest and _rows(recent) == newest
        assert str(recent.border_subtitle) == f"newest first ({ORDER_KEY}: order)"
        recent.move_cursor(row=recent.get_row_index("48213701"))
        calls = runner.calls
        assert screen.table.has_focus
        await pilot.press(ORDER_KEY)  # from the queue: a view-level key
        await pilot.pause()
        # measured first, the lowest mean utilisation on top; then the unmeasured ones, newest first
        assert _rows(recent) == ["48213544", "48213701", "48213650", "48213322", "48213410"]
        assert str(recent.border_subtitle) == f"lowest GPU use first ({ORDER_KEY}: order)"
        assert recent.cursor_job is not None and recent.cursor_job.job_id == "48213701"
        assert recent.get_row("48213544")[4] == "12%"
        await pilot.press("tab")  # into the recent list: the same key there
        assert recent.has_focus
        await pilot.press(ORDER_KEY)
        await pilot.pause()
        # FAILED, TIMEOUT and CANCELLED (newest first), then the rest
        assert _rows(recent) == ["48213701", "48213544", "48213410", "48213650", "48213322"]
        assert str(recent.border_subtitle) == f"failed first ({ORDER_KEY}: order)"
        await pilot.press(ORDER_KEY)
        await pilot.pause()
        assert _rows(recent) == newest  # round again
        assert runner.calls == calls  # re-sorted in place: Slurm was not asked
        # no other binding of the app, the view or any widget in it (Textual's own included) uses the key
        holders = [node for node in (app, screen, *screen.walk_children())
                   if ORDER_KEY in node._bindings.key_to_bindings]
        assert holders == [screen] and len(screen._bindings.key_to_bindings[ORDER_KEY]) == 1


def _rows(table: RecentJobsTable) -> list[str]:
    return [str(table.coordinate_to_cell_key((r, 0)).row_key.value) for r in range(table.row_count)]


async def test_no_history_no_list() -> None:
    app = jobs_app(runner=recent_jobs_runner(), settings=HOUR)  # history_factory gives None
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        assert not _screen(app).query_one("#jobs-recent", RecentJobsTable).display


def _snapshot(snap_compare: Callable[..., bool], tmp_path: Path, size: tuple[int, int]) -> bool:
    app = jobs_app(runner=recent_jobs_runner(), history_factory=recent_history(tmp_path / "h.sqlite3"))
    return snap_compare(app, terminal_size=size, run_before=recent_scene)


def test_recent_jobs_snapshot_wide(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    assert _snapshot(snap_compare, tmp_path, (120, 36))


def test_recent_jobs_snapshot_narrow(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    assert _snapshot(snap_compare, tmp_path, (80, 24))


async def test_l_on_an_empty_queue_keeps_the_recent_jobs_in_sight(tmp_path: Path) -> None:
    app = jobs_app(runner=recent_jobs_runner(("",)), settings=HOUR,
                   history_factory=recent_history(tmp_path / "h.sqlite3"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        recent = screen.query_one("#jobs-recent", RecentJobsTable)
        assert screen.table.row_count == 0 and recent.row_count > 0
        assert recent.region.height > 0
        await pilot.press("l")
        await settle_jobs(pilot)
        # before the fix: the box shrinks to the empty queue's header, the recent list gets 0 lines, and the
        # Logs pane says "no job selected" with no row left to select
        assert recent.region.height > 1, f"recent list height {recent.region.height}"
