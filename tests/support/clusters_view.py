"""The pilot's steps the app's tests with clusters share (tests/ui/test_app_clusters*.py): the app started with its
clusters, the jobs view once the rows asked for are in its queue, a row selected; what the status line says."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from ntui.ui.screens.jobs import JobsScreen
from tests.support.screenshots_jobs import settle_jobs, wait_until

__all__ = ["clusters_view", "jobs_screen", "select_row", "status_text"]


def jobs_screen(app: Any) -> JobsScreen:
    """The app's jobs view (under any dialog it shows)."""
    screen = next(s for s in app.screen_stack if isinstance(s, JobsScreen))
    assert isinstance(screen, JobsScreen)
    return screen


def status_text(screen: JobsScreen) -> str:
    """The status line as shown."""
    return str(screen.query_one("#jobs-status", Static).content)


async def select_row(pilot: Pilot[Any], screen: JobsScreen, key: str) -> None:
    """The queue's cursor on row ``key``, the view settled (its details asked, the tabs told)."""
    screen.table.move_cursor(key=key)
    await settle_jobs(pilot)


@asynccontextmanager
async def clusters_view(app: Any, *rows: str, size: tuple[int, int], select: str | None = None
                        ) -> AsyncIterator[tuple[Pilot[Any], JobsScreen]]:
    """The app (:func:`tests.support.screenshots_clusters.clusters_app`) run at ``size``: its pilot and jobs view
    once the queue holds every row of ``rows`` (row keys: ``CLUSTER/JOBID``, a local job's id), with row
    ``select`` selected when given."""
    async with app.run_test(size=size) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        await wait_until(pilot, lambda: set(rows) <= set(screen.table.rows))
        if select is not None:
            await select_row(pilot, screen, select)
        yield pilot, screen
