"""The Progress tab (``ntui.ui.widgets.progress_pane``): an ended job's rank-0 log read once, a running job's view
taken from the selection, a job ntui did not submit said as such; on real captures (tests/data/progress/)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.selected import SelectedJob
from ntui.core.progress.board import ProgressBoard
from ntui.core.slurm.squeue import QueueJob
from ntui.ui.widgets.job_tab import TabDeps
from ntui.ui.widgets.job_tabs import JobTabs
from ntui.ui.widgets.progress_pane import ProgressPane
from tests.support.screenshots_jobs import wait_until
from tests.ui.test_job_tabs import Host, _record

DATA = Path(__file__).resolve().parents[1] / "data" / "progress"


class ClockedHost(Host):
    def __init__(self, clock: Callable[[], datetime]) -> None:
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        yield JobTabs(TabDeps(self.runner, Settings(queue=QueueSettings(active_interval=3600)), self.clock),
                      id="jobs-tabs")


def _words(pane: ProgressPane) -> str:
    return str(pane.query_one("#progress-words", Static).render())


async def test_an_ended_job_is_read_once_from_its_rank_0_log(tmp_path: Path) -> None:
    selected = _record(tmp_path)
    assert selected.entry is not None and selected.job_id is not None
    log = Path(selected.entry.log_dir) / f"{selected.entry.log_stem}-{selected.job_id}-rank-0.out"
    shutil.copyfile(DATA / "transformers-5.24.0" / "hf-trainer.out", log)
    app = Host()
    async with app.run_test(size=(120, 36)) as pilot:
        tabs = app.query_one(JobTabs)
        tabs.show_tab(ProgressPane.TAB.pane_id)
        pane = app.query_one(ProgressPane)
        tabs.select_job(selected)
        await wait_until(pilot, lambda: pane.series is not None)
        assert pane.series is not None and (pane.series.step, pane.series.total) == (80, 80)
        assert _words(pane).startswith("step 80 of 80: done")
        chart = str(pane.query_one("#progress-chart", Static).render())
        assert chart.startswith("loss over 8 points")
        log.unlink()  # selected again: not read again (it is over)
        tabs.select_job(SelectedJob(None))
        tabs.select_job(selected)
        await pilot.pause()
        assert pane.series is not None and pane.series.step == 80 and pane.reading is None


async def test_a_running_jobs_view_comes_with_the_selection_and_its_cut_is_red(tmp_path: Path) -> None:
    board = ProgressBoard()
    view = board.poll({"9": str(DATA / "tqdm-4.70.1" / "tqdm-long-partial.out")})["9"]
    job = QueueJob("9", "9", state="RUNNING", elapsed="1:02:13", time_limit="2:00:00")
    selected = SelectedJob("9", "queue", row_key="9", job=job, active=True, running=True, progress=view)
    last = datetime.fromtimestamp(view.samples[-1].time)  # the clock at the last point read (what "now" is in the
    app = ClockedHost(lambda: last)  # view's tick; the file's time, not this test's)
    async with app.run_test(size=(100, 30)) as pilot:
        tabs = app.query_one(JobTabs)
        tabs.show_tab(ProgressPane.TAB.pane_id)
        pane = app.query_one(ProgressPane)
        tabs.select_job(selected)
        await pilot.pause()
        assert pane.reading is None  # nothing read: the view is the tick's
        words = pane.query_one("#progress-words", Static).render()
        assert str(words).startswith("will be cut at about step") and "58 min left" in str(words)
        assert [str(span.style) for span in words.spans][:1] == ["bold red"]  # type: ignore[union-attr]


async def test_a_job_ntui_did_not_submit_says_where_to_go(tmp_path: Path) -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        tabs = app.query_one(JobTabs)
        tabs.show_tab(ProgressPane.TAB.pane_id)
        pane = app.query_one(ProgressPane)
        other: Any = SelectedJob("5", "queue", row_key="5", entry=None, entry_known=True, active=True, running=True)
        tabs.select_job(other)
        await pilot.pause()
        assert "ntui did not submit it" in _words(pane) and "ntui progress FILE" in _words(pane)
