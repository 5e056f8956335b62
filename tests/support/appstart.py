"""Start the whole app once over a history file, as after a restart, and let its start-up work finish."""

from __future__ import annotations

from pathlib import Path

from ntui.core.records.history import History
from ntui.core.slurm.runner import CommandRunner


async def start_app_once(runner: CommandRunner, history_path: Path) -> None:
    """Run the app (with the start-up reconcile and record resolution) until its workers are done, then quit."""
    from ntui.ui.app import make_app

    app = make_app(runner=runner, history_factory=lambda: History(history_path), identity="", cursor_blink=False)
    app.reconcile_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
