"""The save-as dialog says when a name is taken, from one listing of the user's presets read in a worker
(no file check per keystroke on the event loop)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Static

import ntui.ui.screens.dialogs as dialogs
from ntui.ui.screens.dialogs import SaveAsScreen


async def test_save_as_marks_an_existing_name_from_one_listing(ui_presets: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert (ui_presets / "my-experiment.yaml").is_file()
    listings: list[frozenset[str]] = []
    real = dialogs.user_preset_names

    def counted() -> frozenset[str]:
        listings.append(real())
        return listings[-1]

    monkeypatch.setattr(dialogs, "user_preset_names", counted)
    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = SaveAsScreen("Save preset as", "my-experiment")
        app.push_screen(dialog)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        where = dialog.query_one("#save-as-where", Static)
        assert str(where.content) == "→ your presets: my-experiment.yaml  (exists: it will be replaced)"
        dialog.query_one("#save-as-name", Input).focus()
        await pilot.press("end", *"-2")
        await pilot.pause()
        assert str(where.content) == "→ your presets: my-experiment-2.yaml"
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert "(exists: it will be replaced)" in str(where.content)
        assert len(listings) == 1 and "my-experiment" in listings[0]
