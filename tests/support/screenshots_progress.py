"""The progress scene: a running job whose rate cannot meet its time limit, its queue row and its Progress tab.

Job 48213777 of the demo queue runs (1:02:13 of 2:00:00 used); its rank-0 log is the real capture of a long tqdm
run stopped after 30 s (``tests/data/progress/tqdm-4.70.1/tqdm-long-partial.out``, made by that folder's
``capture.py``): step 74 of 10,000 at 2.49 it/s, so the 58 minutes left end at about step 8,700. The view's
progress tick reads it; the row says so, a notice says it once, ``p`` shows the tab with the loss.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from ntui.ui.app import NtuiApp
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
