"""The progress scene: a running job whose rate cannot meet its time limit, its queue row and its Progress tab.

Job 48213777 of the demo queue runs (1:02:13 of 2:00:00 used); its rank-0 log is the real capture of a long tqdm
run stopped after 30 s (``tests/data/progress/tqdm-4.70.1/tqdm-long-partial.out``, made by that folder's
``capture.py``): step 74 of 10,000 at 2.49 it/s, so the 58 minutes left end at about step 8,700. The view's
progress tick reads it; the row says so, a notice says it once, ``p`` shows the tab with the loss.

The chart scene: the Progress tab alone with a long run's view made here (:func:`chart_view`): its loss over three
decades on a log axis, its evaluations beside it, its restart marked.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.selected import SelectedJob
from ntui.core.progress.board import ProgressView
from ntui.core.progress.series import Sample
from ntui.core.slurm.squeue import QueueJob
from ntui.ui.app import NtuiApp
from ntui.ui.widgets.job_tab import TabDeps
from ntui.ui.widgets.job_tabs import JobTabs
from tests.support.fakes import FakeRunner, capture, result
from tests.support.screenshots_jobs import (
    SQUEUE_AFTER,
    DemoHistory,
    demo_history,
    demo_jobs_runner,
    jobs_app,
    open_tab_after_progress_tick,
    wait_until,
)

CAPTURE = Path(__file__).resolve().parents[1] / "data" / "progress" / "tqdm-4.70.1" / "tqdm-long-partial.out"
JOB = "48213777"


def progress_history(directory: Path) -> DemoHistory:
    """The demo history, its job's logs in ``directory`` with the capture as rank 0's log."""
    demo = demo_history()
    entry = replace(demo.entries[JOB], log_dir=str(directory))
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CAPTURE, directory / f"{entry.log_stem}-{JOB}-rank-0.out")
    return DemoHistory({JOB: entry})


def progress_app(directory: Path) -> NtuiApp:
    history = progress_history(directory)
    return jobs_app(runner=demo_jobs_runner(refreshes=(SQUEUE_AFTER,)), history_factory=lambda: history)


async def progress_scene(pilot: Pilot[Any]) -> None:
    """The progress tick read the job's log (its row's words and the notice), the job selected, ``p`` pressed."""
    from ntui.ui.widgets.progress_pane import ProgressPane

    screen = await open_tab_after_progress_tick(pilot, JOB, "p")
    pane = screen.query_one("#jobs-progress", ProgressPane)
    await wait_until(pilot, lambda: pane.series is not None)
    screen._tick()
    await pilot.pause()


def save_progress_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-progress.svg`` (same bytes on every run)."""
    import asyncio
    import tempfile

    from tests.support.screenshots_jobs import _shoot

    async def take(path: Path) -> Path:
        with tempfile.TemporaryDirectory() as tmp:
            return await _shoot(progress_app(Path(tmp) / "logs"), progress_scene, path, (120, 36), "ntui · progress")

    return asyncio.run(take(out / "jobs-progress.svg"))


#: The chart scene's run: a loss falling over three decades (a log axis), an evaluation every 500 steps, and a
#: restart from the checkpoint of step 3,000 after the first allocation reached step 3,400 (the overlap redone).
CHART_JOB = "48213802"


def chart_view() -> ProgressView:
    """The chart scene's view, made here (its numbers a formula's, the same on every run)."""
    steps = list(range(0, 3401, 20)) + list(range(3000, 6001, 20))
    samples = []
    for i, step in enumerate(steps):
        segment = 0 if i <= 3400 // 20 else 1
        loss = 4.0 * math.exp(-step / 900) + 0.004 + 0.25 * math.exp(-step / 900) * math.sin(step / 37)
        metrics = {"loss": round(loss, 5)}
        if step % 500 == 0 and step and not (segment == 1 and step <= 3400):
            metrics["eval_loss"] = round(4.4 * math.exp(-step / 950) + 0.009, 5)
        samples.append(Sample(1_700_000_000.0 + 3 * i, step, metrics, segment))
    last = samples[-1]
    return ProgressView(CHART_JOB, last.step, 8000, None, {**last.metrics, "eval_loss": 0.0278}, tuple(samples),
                        restarts=(1_700_000_000.0 + 3 * (3400 // 20 + 1),), printed_rates=(0.33,))


class ChartHost(App[None]):
    """The jobs view's tabs alone, the Progress tab showing :func:`chart_view` at a frozen clock."""

    TITLE = "ntui"

    def compose(self) -> ComposeResult:
        runner = FakeRunner({"squeue": result(stdout=""), "sacct": capture("sacct_no_accounting")},
                            default=capture("scontrol_show_job_unknown"))
        clock = datetime.fromtimestamp(chart_view().samples[-1].time)
        yield JobTabs(TabDeps(runner, Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600)),
                              lambda: clock), id="jobs-tabs")


async def chart_scene(pilot: Pilot[Any]) -> None:
    """The running job selected with its view, the Progress tab shown."""
    from ntui.ui.widgets.progress_pane import ProgressPane

    app = pilot.app
    tabs = app.query_one(JobTabs)
    tabs.show_tab(ProgressPane.TAB.pane_id)
    job = QueueJob(CHART_JOB, CHART_JOB, state="RUNNING", elapsed="5:10:00", time_limit="8:00:00")
    tabs.select_job(SelectedJob(CHART_JOB, "queue", row_key=CHART_JOB, job=job, active=True, running=True,
                                progress=chart_view()))
    await pilot.pause()
    await pilot.pause()
