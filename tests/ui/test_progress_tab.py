"""The Progress tab (``ntui.ui.widgets.progress_pane``): an ended job's rank-0 log read once, a running job's view
taken from the selection, a job ntui did not submit said as such; on real captures (tests/data/progress/)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.selected import SelectedJob
from ntui.core.progress.board import ProgressBoard, ProgressView
from ntui.core.progress.series import Sample
from ntui.core.slurm.squeue import QueueJob
from ntui.ui.widgets.job_tab import TabDeps
from ntui.ui.widgets.job_tabs import JobTabs
from ntui.ui.widgets.progress_pane import LossPlot, ProgressPane
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
        assert chart.startswith("loss over 8 points, steps 10 to 80\n⠤⠤ loss")
        plot = pane.query_one(LossPlot)
        await wait_until(pilot, lambda: plot.size.height > 0)
        drawn = str(plot.render()).splitlines()  # plotext's figure at the plot's size: its axes and their ticks
        assert plot.display and len(drawn) == plot.size.height and drawn[-1].split()[:2] == ["loss", "step"]
        ticks = drawn[-2].split()
        assert ticks and all(t.isdigit() for t in ticks) and int(ticks[-1]) <= 80 and "┤" in "".join(drawn)
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


def _view(samples: list[Sample], restarts: int = 0) -> ProgressView:
    last = samples[-1]
    return ProgressView("9", last.step, 1000, None, dict(last.metrics), tuple(samples),
                        restarts=tuple(float(i) for i in range(restarts)))


async def _shown(view: ProgressView, size: tuple[int, int] = (100, 40)) -> tuple[str, list[str], set[str]]:
    """The chart's legend, what its plot draws (nothing where it is hidden) and the styles it draws in, for a
    running job's view."""
    job = QueueJob("9", "9", state="RUNNING", elapsed="10:00", time_limit="2:00:00")
    selected = SelectedJob("9", "queue", row_key="9", job=job, active=True, running=True, progress=view)
    app = ClockedHost(lambda: datetime.fromtimestamp(view.samples[-1].time))
    async with app.run_test(size=size) as pilot:
        tabs = app.query_one(JobTabs)
        tabs.show_tab(ProgressPane.TAB.pane_id)
        pane = app.query_one(ProgressPane)
        tabs.select_job(selected)
        await pilot.pause()
        plot = pane.query_one(LossPlot)
        legend = str(pane.query_one("#progress-chart", Static).render())
        rendered = plot.render()
        assert isinstance(rendered, Text)
        drawn = str(rendered).splitlines() if plot.display else []
        return legend, drawn, {str(span.style) for span in rendered.spans}


async def test_the_plot_draws_the_evaluation_and_the_restart_in_the_tab() -> None:
    """A run restarted from its checkpoint at step 500, evaluated every 200 steps: both in the plot, at their
    steps, and said in the legend; the loss over three decades on a log axis."""
    steps = list(range(0, 601, 10)) + list(range(500, 1001, 10))
    samples = [Sample(1000.0 + i, st, {"loss": 5.0 * 0.993 ** st, **({"eval_loss": 6.0 * 0.993 ** st}
                                                                        if st % 200 == 0 and st else {})},
                      0 if i <= 60 else 1) for i, st in enumerate(steps)]
    legend, drawn, styles = await _shown(_view(samples, restarts=1))
    assert legend.splitlines()[0] == "loss over 112 points, steps 0 to 1,000 (1 restart)"
    assert "◆ eval_loss (5 evaluations)" in legend and "┆ restart at step 500" in legend
    assert "log scale" in legend and drawn[-1].split()[:3] == ["loss", "(log", "scale)"]
    assert sum(x.count("◆") for x in drawn) >= 4 and len({x.index("┆") for x in drawn if "┆" in x}) == 1
    assert len(styles) >= 3  # the loss, the evaluations and the restart in their colours


async def test_one_point_is_said_in_words_and_no_plot_is_drawn() -> None:
    legend, drawn, _ = await _shown(_view([Sample(1000.0, 40, {"loss": 0.75})]))
    assert legend == "loss 0.75 at step 40: one point so far, the chart starts at the second" and drawn == []
