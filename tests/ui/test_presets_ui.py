"""Preset editing from the app: save round-trips, invalid YAML never overwrites, shipped -> save as,
and "new preset from the current form"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from ntui.core.compose.presetfiles import check_preset_text, save_preset_text
from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.dialogs import SaveAsScreen
from ntui.ui.screens.editor import CHECK_DELAY_S, PresetEditorScreen
from tests.support.demo import settle, type_into
from tests.support.screenshots_jobs import wait_until
from tests.ui.conftest import SHIPPED, AppFactory


def compose(pilot: Pilot[Any]) -> ComposeScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, ComposeScreen))


async def open_editor(pilot: Pilot[Any]) -> PresetEditorScreen:
    await pilot.press("e")
    await settle(pilot)
    editor = pilot.app.screen
    assert isinstance(editor, PresetEditorScreen)
    return editor


async def test_user_preset_save_round_trips(app_factory: AppFactory, ui_presets: Path) -> None:
    app = app_factory(preset="my-experiment")
    path = ui_presets / "my-experiment.yaml"
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        editor = await open_editor(pilot)
        assert editor.editor.text == path.read_text()
        new_text = path.read_text().replace("nodes: 4", "nodes: 3")
        editor.editor.load_text(new_text)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ComposeScreen)
        assert path.read_text() == new_text
        screen = compose(pilot)
        assert screen.form.text_of("sbatch.nodes") == "3"
        spec, _ = validate(load_preset("my-experiment"))
        assert spec is not None and screen.preview.script == render(spec)
        assert not list(ui_presets.glob(".*"))  # no temp or probe files left behind


async def test_invalid_yaml_never_overwrites(app_factory: AppFactory, ui_presets: Path) -> None:
    app = app_factory(preset="my-experiment")
    path = ui_presets / "my-experiment.yaml"
    before = path.read_text()
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        editor = await open_editor(pilot)
        broken = before.replace("  nodes: 4\n", "  nodes: [4\n")
        editor.editor.load_text(broken)
        # the live check runs after a pause in typing (a timer, then the screen's turn): wait for it, not a sleep
        await wait_until(pilot, lambda: "YAML syntax error" in str(editor.query_one("#editor-problems").content))
        problems = str(editor.query_one("#editor-problems").content)
        assert "YAML syntax error" in problems and "line" in problems  # live check, before saving
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, PresetEditorScreen)
        assert path.read_text() == before
        problems = str(editor.query_one("#editor-problems").content)
        assert "YAML syntax error" in problems
        line = int(problems.split("line ")[1].split(":")[0])
        assert editor.editor.cursor_location == (line - 1, 0)
        # A rule violation (not syntax) is refused as well, pointing at its line.
        editor.editor.load_text(before.replace("nodes: 4", "nodes: zero"))
        await pilot.press("ctrl+s")
        await settle(pilot)
        # the syntax check armed by the edit must not wipe the save's problems when it comes late (it did once in
        # a loaded full run: the save's worker ended first, then the check found no syntax error)
        await pilot.pause(CHECK_DELAY_S + 0.3)
        assert path.read_text() == before
        problems = str(editor.query_one("#editor-problems").content)
        assert 'line 6: sbatch.nodes: expected a positive integer, got "zero"' in problems
        assert "shipped: demo-torchrun.yaml:23: script:" in problems  # a warning from the extended preset
        assert editor.editor.cursor_location == (5, 0)


async def test_shipped_preset_is_saved_as_a_user_copy(app_factory: AppFactory, ui_presets: Path) -> None:
    app = app_factory(preset="demo-local")
    shipped = SHIPPED / "demo-local.yaml"
    before = shipped.read_text()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        editor = await open_editor(pilot)
        editor.editor.load_text(before.replace("nodes: 2", "nodes: 1"))
        await pilot.press("ctrl+s")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, SaveAsScreen)
        name_input = dialog.query_one("#save-as-name", Input)
        assert name_input.value == "my-demo-local"
        await pilot.press("enter")
        await settle(pilot)
        assert shipped.read_text() == before
        copy = ui_presets / "my-demo-local.yaml"
        # saved under a new name, the copy says so (issue 15: it kept "name: demo-local")
        assert copy.read_text() == before.replace("nodes: 2", "nodes: 1").replace("name: demo-local",
                                                                                  'name: "my-demo-local"')
        assert compose(pilot).preset_name == "my-demo-local"


async def test_new_preset_from_the_current_form(app_factory: AppFactory, ui_presets: Path) -> None:
    app = app_factory(preset="demo-local")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_into(pilot, "sbatch.nodes", "1")
        await type_into(pilot, "sbatch.time", "00:20:00")
        await pilot.press("escape")
        await settle(pilot)
        overrides = compose(pilot).form.overrides
        await pilot.press("n")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, SaveAsScreen)
        dialog.query_one("#save-as-name", Input).value = "one-node"
        await pilot.press("enter")
        await settle(pilot)
        saved = ui_presets / "one-node.yaml"
        assert saved.exists()
        screen = compose(pilot)
        assert screen.preset_name == "one-node" and screen.form.overrides == ()
        spec, _ = validate(load_preset("demo-local", [*overrides, "name=one-node"]))
        assert spec is not None and screen.preview.script == render(spec)


def test_save_refuses_invalid_text_and_keeps_the_file(ui_presets: Path) -> None:
    target = ui_presets / "my-experiment.yaml"
    before = target.read_text()
    problems = save_preset_text("sbatch: [unclosed\n", target)
    assert problems and problems[0].is_error and problems[0].source.line > 0
    assert "YAML syntax error" in problems[0].message
    assert target.read_text() == before
    problems = save_preset_text("launcher: {type: torchrunn}\nscript: /x.py\n", target)
    assert any("did you mean 'torchrun'" in p.message for p in problems)
    assert target.read_text() == before
    assert check_preset_text(before, target) == [p for p in check_preset_text(before, target) if not p.is_error]
