"""The jobs view's tabs (issue #29): every tab in the registry passes one contract, and the two defects the old
shape hid are gone (the log pane now knows the job's launcher; a failing report says so)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.selected import NOTHING, SelectedJob, selected_record
from ntui.core.logs.watch import JobLogWatcher, watch_files
from ntui.core.records.history import History
from ntui.core.records.record import recent_jobs
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets import report_pane
from ntui.ui.widgets.job_tab import JobTab, TabDeps
from ntui.ui.widgets.job_tabs import JOB_TABS, JobTabs
from ntui.ui.widgets.log_pane import LogPane
from ntui.ui.widgets.recent_jobs import RecentJobsTable
from tests.support.fakes import FakeRunner, capture, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import (
    FROZEN_NOW,
    MANY_RECENT,
    jobs_app,
    many_recent_history,
    many_recent_logs_scene,
    settle_jobs,
    wait_until,
)

HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))
DATA = Path(__file__).resolve().parents[1] / "data" / "logs"


def _runner() -> FakeRunner:
    """A Slurm without accounting that knows no job (every tab's worker gets an answer, never a real call)."""
    return FakeRunner({"squeue": result(stdout=""), "sacct": capture("sacct_no_accounting")},
                      default=capture("scontrol_show_job_unknown"))


def _history(state: Path, log_dir: Path, job_id: str, launcher: str, world: int, stem: str) -> Callable[[], History]:
    h = History(state, cluster="alpha", warn=lambda w: None)
    try:
        h.record_intent(token=f"t{job_id}", preset=f"local-{launcher}", preset_path=None, overrides=[],
                        job_name=stem, launcher=launcher, nodes=2, world_size=world, log_dir=str(log_dir),
                        log_stem=stem, script="#!/bin/bash\n#SBATCH --nodes=2\n",
                        created_at=FROZEN_NOW.timestamp() - 600)
        h.record_submitted(f"t{job_id}", job_id, "alpha", None, when=FROZEN_NOW.timestamp() - 600)
    finally:
        h.close()
    return lambda: History(state, cluster="alpha")


# ------------------------------------------------------------------------------------------ the contract


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.runner = _runner()

    def compose(self) -> ComposeResult:
        yield JobTabs(TabDeps(self.runner, HOUR), id="jobs-tabs")


def _record(tmp_path: Path) -> SelectedJob:
    opener = _history(tmp_path / "state", tmp_path / "logs", "77", "torchrun", 4, "train")
    (tmp_path / "logs").mkdir(exist_ok=True)
    with opener() as h:
        job = recent_jobs(h, None, days=1e6, now=FROZEN_NOW.timestamp()).jobs[0]
    return selected_record(job)


def _queue(tmp_path: Path) -> SelectedJob:
    record = _record(tmp_path)
    return SelectedJob("78", "queue", row_key="78", entry=record.entry, entry_known=True, details_known=True,
                       active=True, running=True)


async def _settle(pilot: Any) -> None:
    """The tab's own work started and its first results in (a log watcher or a GPU step runs on)."""
    for _ in range(5):
        await pilot.pause(0.02)


@pytest.mark.parametrize("tab_class", JOB_TABS, ids=[t.TAB.title for t in JOB_TABS])
async def test_every_registered_tab_keeps_the_contract(tab_class: type[JobTab], tmp_path: Path) -> None:
    """No job, a queue job, a recent job, hidden then shown, and a raising update: a new tab gets these free."""
    app = Host()
    async with app.run_test(size=(120, 36)) as pilot:
        tabs = app.query_one(JobTabs)
        tab = tabs.tab(tab_class)
        assert tab is not None and isinstance(tab, tab_class)
        spec = tab_class.TAB
        assert tabs.query_one(f"#{spec.pane_id}") is not None and tabs.query_one(f"#{spec.widget_id}") is tab
        tabs.show_tab(spec.pane_id)
        await _settle(pilot)
        for selected in (NOTHING, _queue(tmp_path), _record(tmp_path), NOTHING):
            tabs.select_job(selected)
            await _settle(pilot)
            assert tab.selected is selected and not tab._stale and tab.failure is None, (spec.title, selected)
        # hidden, then shown: a hidden tab that waits for its turn catches up when shown
        other = next(t for t in JOB_TABS if t is not tab_class).TAB.pane_id
        tabs.show_tab(other)
        await _settle(pilot)
        later = _record(tmp_path / "later")
        tabs.select_job(later)
        assert tab._stale is not tab_class.FEED_HIDDEN
        tabs.show_tab(spec.pane_id)
        await _settle(pilot)
        assert tab.selected is later and not tab._stale and tab.failure is None
        # a raising update: said in the tab, noticed once, the app goes on
        calls: list[SelectedJob] = []

        def broken(selected: SelectedJob) -> None:
            calls.append(selected)
            raise RuntimeError("a bug in the tab")

        tab.show_selected = broken  # type: ignore[method-assign]
        tabs.select_job(_queue(tmp_path / "q2"))
        tabs.select_job(NOTHING)
        await _settle(pilot)
        assert len(calls) == 2 and tab.failure is not None and "a bug in the tab" in tab.failure
        notices = [n for n in notified(app) if "a bug in the tab" in n.message]
        assert len(notices) == 1 and notices[0].severity == "error"
        assert app.is_running


def test_the_view_takes_its_tab_keys_and_help_from_the_registry() -> None:
    keys = {b.key: b.action for b in JobsScreen.BINDINGS if not isinstance(b, tuple)}  # type: ignore[union-attr]
    for tab in JOB_TABS:
        assert keys[tab.TAB.key] == f"show_tab('{tab.TAB.pane_id}')", tab.TAB.title
        assert tab in JobsScreen.HELP_PANES
    assert len({t.TAB.key for t in JOB_TABS}) == len(JOB_TABS) == len({t.TAB.pane_id for t in JOB_TABS})


# ------------------------------------------------------------------------------------------ the two defects


def _triage(paths: LogPaths, job_id: str, world: int, launcher: str | None) -> str:
    files, discover = watch_files(paths, job_id, world)
    watcher = JobLogWatcher(job_id, files, paths=paths, discover=discover, launcher=launcher)
    try:
        watcher.poll_all(now=FROZEN_NOW.timestamp())
        watcher.finish()
        return watcher.triage_line(job_active=False).text
    finally:
        watcher.close()


async def test_the_log_pane_reads_srun_tasks_as_the_launcher_says(tmp_path: Path) -> None:
    """Before: the app never gave the log pane the job's launcher, so under torchrun it read srun's ``task 1``
    (node 1's torchrun) as rank 1, where ``ntui logs --triage`` did not. The batch log of a real torchrun failure
    (tests/data/logs/fail-torchrun), its rank logs not there (purged, or on a node's local disk)."""
    case = json.loads((DATA / "fail-torchrun" / "case.json").read_text())
    job_id, stem, world = case["job_id"], case["preset"], case["world_size"]
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DATA / "fail-torchrun" / f"{stem}-{job_id}.out", logs)
    paths = LogPaths(str(logs), stem)
    cli = _triage(paths, job_id, world, "torchrun")  # what ntui logs --triage says
    assert cli != _triage(paths, job_id, world, None)  # the case tells the two readings apart
    opener = _history(tmp_path / "state", logs, job_id, "torchrun", world, stem)
    app = jobs_app(runner=_runner(), settings=HOUR, history_factory=opener)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        recent = screen.query_one("#jobs-recent", RecentJobsTable)
        await pilot.press("tab")
        recent.move_cursor(row=0)
        await pilot.press("l")
        pane = screen.tabs.tab(LogPane)
        assert isinstance(pane, LogPane)
        await wait_until(pilot, lambda: pane.triage_line.failed)  # the watcher is a thread: its state, not a count
        assert pane.target is not None and pane.target.launcher == "torchrun"
        assert pane.triage_line.text == cli


async def test_a_failing_report_says_so_in_the_tab_and_once_in_a_notice(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: an exception in the report's worker left "Reading the GPU samples…" on screen, with no notice."""
    def fails(*args: object, **kwargs: object) -> object:
        raise OSError(5, "Input/output error", "/scratch/logs/train-77-gpu-nid001.csv")

    monkeypatch.setattr(report_pane, "job_usage", fails)
    (tmp_path / "logs").mkdir()
    opener = _history(tmp_path / "state", tmp_path / "logs", "77", "torchrun", 4, "train")
    app = jobs_app(runner=_runner(), settings=HOUR, history_factory=opener)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        await pilot.press("tab")
        screen.query_one("#jobs-recent", RecentJobsTable).move_cursor(row=0)
        await pilot.press("u")
        pane = screen.query_one("#jobs-report", report_pane.ReportPane)
        await wait_until(pilot, lambda: pane.failure is not None)  # the report's worker is a thread
        text = str(pane.query_one("#report-text").render())
        assert pane.failure is not None and "Input/output error" in text and "Reading" not in text
        assert [n.severity for n in notified(app) if "Input/output error" in n.message] == ["error"]


# ------------------------------------------------------------------------------------------ the tabs get the room


def _many_app(tmp_path: Path) -> Any:
    return jobs_app(runner=_runner(), settings=HOUR, history_factory=many_recent_history(tmp_path))


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
async def test_with_150_recent_jobs_the_log_keeps_a_dozen_lines_and_l_then_z_zooms_it(
        tmp_path: Path, size: tuple[int, int]) -> None:
    """Before: at 120x36 the recent list took the view and the log had 4 lines (at 80x24 it was pushed off the
    screen); ``l`` left the focus in the list, so ``z`` zoomed the queue."""
    app = _many_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await many_recent_logs_scene(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        recent = screen.query_one("#jobs-recent", RecentJobsTable)
        assert recent.row_count == MANY_RECENT
        log = screen.query_one("#lp-log")
        assert log.region.height >= 12 and log.region.bottom <= size[1] - 2, log.region  # above status + footer
        assert screen.focused is not None and screen.tabs in screen.focused.ancestors
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.tabs and log.region.height > 12
        await pilot.press("z")
        await pilot.pause()
        recent.focus()  # back in the list: the queue box has its room again
        await pilot.pause()
        await pilot.pause()
        assert screen.query_one("#jobs-queue").region.height > (size[1] - 2) // 2


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_logs_tab_with_150_recent_jobs_snapshot(snap_compare: Callable[..., bool], tmp_path: Path,
                                               size: tuple[int, int]) -> None:
    assert snap_compare(_many_app(tmp_path), terminal_size=size, run_before=many_recent_logs_scene)
