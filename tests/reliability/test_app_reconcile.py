"""On start, the app reconciles the history with the queue (issue 8, "nothing lost")."""

from __future__ import annotations

from pathlib import Path

from ntui.core.records.history import History
from ntui.ui.app import make_app
from ntui.ui.screens.compose import ComposeScreen
from tests.reliability.conftest import wait_for
from tests.reliability.test_reconcile import _intent, _line
from tests.support.appstart import start_app_once
from tests.support.fakes import FakeRunner, result


async def test_app_start_records_a_job_the_history_lacked(tmp_path: Path) -> None:
    path = tmp_path / "state" / "history.sqlite3"
    history = History(path)
    logs = tmp_path / "logs"
    token = _intent(history, logs)  # ntui was killed after sbatch accepted job 777
    history.close()
    runner = FakeRunner({"squeue": result(stdout=_line("777", f"{logs}/.local-srun-{token}.sbatch") + "\n")})
    await start_app_once(runner, path)
    entry = History(path).get("777")
    assert entry is not None and entry.status == "recovered" and entry.token == token
    assert any(a[0] == "squeue" for a in runner.argvs())


async def test_app_start_does_not_reconcile_unless_asked(tmp_path: Path) -> None:
    runner = FakeRunner({"squeue": result(stdout="")})
    app = make_app(runner=runner, history_factory=lambda: History(tmp_path / "h.sqlite3"), identity="",
                   cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        # the whole start, the form included: leaving while its fields still mount raced Textual's Select once
        # (NoMatches: SelectOverlay) on a loaded machine. (No cluster answers here: the form, not the cluster.)
        screen = app.screen
        await wait_for(pilot, "the form", lambda: isinstance(screen, ComposeScreen) and screen.up_to_date
                       and all(row.control.is_mounted for row in screen.form.rows.values()))
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert not any(a[0] == "squeue" for a in runner.argvs())
