"""The preset editor: the preset's YAML in a highlighted editor; ``ctrl+s`` validates, then writes atomically.

User presets are saved in place; shipped presets are read-only, so saving one asks for a name and
writes a copy into the user preset directory. Text with errors is never written: the problems are
listed with their lines and the cursor jumps to the first one. ``ctrl+o`` opens ``$EDITOR``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Footer, Header, Static, TextArea
from textual.worker import Worker

from ntui.core.compose.presetfiles import (
    PresetSaveRefused,
    display_path,
    first_error_line,
    save_preset_text,
    user_preset_path,
)
from ntui.core.compose.yamlsrc import YamlProblem, load_yaml_with_lines
from ntui.core.problems import Problem
from ntui.ui.messages import PresetSaved
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.dialogs import SaveAsScreen, YesNoScreen

CHECK_DELAY_S = 0.3


def _problem_lines(problems: list[Problem], target: Path | None, limit: int = 8) -> Content:
    """Problems of this file as ``line N: field: message``; those of other files (``extends``) name the file."""
    lines: list[Content] = []
    for p in problems[:limit]:
        tag, style = ("✗ ", "$text-error") if p.is_error else ("! ", "$text-warning")
        here = target is None or p.source.file in ("", str(target), str(target.resolve()))
        if here:
            where = f"line {p.source.line}: " if p.source.line else ""
        else:
            where = display_path(p.source.file) + (f":{p.source.line}" if p.source.line else "") + ": "
        what = f"{p.field}: " if p.field else ""
        lines.append(Content.assemble((tag, f"bold {style}"), (where, "bold"), (what + p.message, style)))
    if len(problems) > limit:
        lines.append(Content(f"… and {len(problems) - limit} more"))
    return Content("\n").join(lines)


class PresetEditorScreen(NtuiScreen):
    """Dismisses with the saved preset's name, or None when closed without saving."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="ntui.editor.save", priority=True,
                tooltip="Validate, then write atomically (shipped presets: save a copy)"),
        Binding("ctrl+o", "external_editor", "$EDITOR", id="ntui.editor.external"),
        Binding("escape", "close", "Close", id="ntui.editor.close", priority=True),
    ]

    @dataclass
    class TextLoaded(Message):
        text: str

    def __init__(self, name: str, path: Path | None, origin: str, text: str | None = None) -> None:
        """``origin``: ``user`` (saved in place), ``shipped`` or ``site`` (save as) or ``new`` (save as, ``name``
        suggested)."""
        super().__init__()
        self.preset_name = name
        self.path = path
        self.origin = origin
        self.initial_text = text
        self.saved_text = text if origin != "new" else None
        self._check_timer: Timer | None = None

    @property
    def editor(self) -> TextArea:
        return self.query_one("#preset-editor", TextArea)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static(self._info(), id="editor-info")
        area = TextArea.code_editor(self.initial_text or "", language="yaml", id="preset-editor")
        area.border_title = self.preset_name
        yield area
        yield Static("", id="editor-problems")
        yield Footer()

    def _info(self) -> Content:
        if self.origin == "user":
            return Content.assemble(("Editing ", "$text-muted"), (display_path(self.path), "bold"),
                                    (" · ctrl+s validates and saves in place", "$text-muted"))
        if self.origin in ("shipped", "site"):
            return Content.assemble((display_path(self.path), "bold"),
                                    (" is read-only · ctrl+s saves a copy into your presets", "$text-warning"))
        return Content.assemble(("New preset ", "$text-muted"), (self.preset_name, "bold"),
                                (" · fix the problems below, then ctrl+s", "$text-muted"))

    def on_mount(self) -> None:
        if self.app.is_headless or not getattr(self.app, "cursor_blink_enabled", True):
            self.editor.cursor_blink = False
        if self.initial_text is None and self.path is not None:
            self._read(self.path)
        else:
            self._check_syntax()
        self.editor.focus()

    @work(thread=True, exit_on_error=False, group="editor-read", description="read preset")
    def _read(self, path: Path) -> None:
        self.post_message(self.TextLoaded(path.read_text(encoding="utf-8")))

    @on(TextLoaded)
    def _loaded(self, message: TextLoaded) -> None:
        self.saved_text = message.text
        self.editor.load_text(message.text)
        self._check_syntax()

    # ------------------------------------------------------------ live syntax check

    @on(TextArea.Changed, "#preset-editor")
    def _changed(self) -> None:
        if self._check_timer is not None:
            self._check_timer.stop()
        self._check_timer = self.set_timer(CHECK_DELAY_S, self._check_syntax)
        self.editor.border_subtitle = "modified" if self.modified else ""

    @property
    def modified(self) -> bool:
        return self.saved_text is None or self.editor.text != self.saved_text

    def _check_syntax(self) -> None:
        """YAML syntax only (cheap, on every pause in typing); ctrl+s runs every preset rule."""
        self._check_timer = None
        try:
            load_yaml_with_lines(self.editor.text, self.preset_name)
        except YamlProblem as exc:
            self.show_problems([exc.problem])
            return
        self.show_problems([])

    def show_problems(self, problems: list[Problem], target: Path | None = None) -> None:
        box = self.query_one("#editor-problems", Static)
        box.update(_problem_lines(problems, target) if problems else "")
        box.set_class(bool(problems), "-shown")

    # ------------------------------------------------------------ saving

    def action_save(self) -> None:
        # The save checks every rule, syntax first: a syntax check still waiting for a pause in typing would
        # come after it and, finding no syntax error, wipe the save's problems (seen under load).
        if self._check_timer is not None:
            self._check_timer.stop()
            self._check_timer = None
        text = self.editor.text
        if self.origin == "user" and self.path is not None:
            self._save(text, self.path)
            return
        note = (f"{self.origin.capitalize()} presets are read-only; the copy goes to your presets and, with the "
                f"same name, takes precedence over the {self.origin} one.") if self.origin in ("shipped", "site") \
            else ""
        default = self.preset_name if self.origin == "new" else f"my-{self.preset_name}"

        def chosen(name: str | None) -> None:
            if name:
                self._save(self._relocated(text, name), user_preset_path(name))

        self.app.push_screen(SaveAsScreen("Save preset as", default, note), chosen)

    def _relocated(self, text: str, name: str) -> str:
        """The text as it must read under ``name`` in the user's directory: the same rule as save-as ``n``
        (:func:`~ntui.ui.widgets.form_model.relocation`): the new name, a relative script made absolute."""
        import yaml

        from ntui.core.compose.spec import resolve_path
        from ntui.ui.widgets.form_model import relocate_text, relocation

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return text  # the save reports the syntax error, on its line
        if not isinstance(data, dict):
            return text
        script = data.get("script")
        base = self.path.parent if self.path is not None else None
        resolved = resolve_path(script, base) if isinstance(script, str) and script else None
        changes, notes = relocation(data, name, resolved)
        for note in notes:
            self.notify(note, title="Saved as a copy")
        return relocate_text(text, changes)

    @work(thread=True, exclusive=True, exit_on_error=False, group="save-preset", description="save preset")
    def _save(self, text: str, target: Path) -> None:
        problems = save_preset_text(text, target)
        if any(p.is_error for p in problems):
            raise PresetSaveRefused(target, problems)
        self.post_message(PresetSaved(target.stem, str(target), tuple(str(p) for p in problems), text))

    @on(PresetSaved)
    def _saved(self, message: PresetSaved) -> None:
        message.stop()
        self.saved_text = message.text
        warn = f" ({len(message.warnings)} warning(s))" if message.warnings else ""
        self.notify(f"Saved preset {message.name}{warn}", title="Preset saved")
        self.dismiss(message.name)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        error = worker.error
        if isinstance(error, PresetSaveRefused):
            self.show_problems(error.problems, error.target)
            line = first_error_line(error.problems, error.target)
            if line:
                self.editor.cursor_location = (line - 1, 0)
                self.editor.scroll_cursor_visible(center=True)
            self.editor.focus()

    # ------------------------------------------------------------ closing, $EDITOR

    def action_close(self) -> None:
        if not self.modified or not self.editor.text.strip():
            self.dismiss(None)
            return

        def answer(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(YesNoScreen("Discard the unsaved changes?", yes="Discard", no="Keep editing"), answer)

    def action_external_editor(self) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.notify("Set $EDITOR (or $VISUAL) to edit outside ntui.", severity="warning")
            return
        with tempfile.TemporaryDirectory(prefix="ntui-edit-") as tmp:
            path = Path(tmp) / f"{self.preset_name}.yaml"
            path.write_text(self.editor.text, encoding="utf-8")
            with self.app.suspend():
                subprocess.call([*shlex.split(editor), str(path)])
            self.editor.load_text(path.read_text(encoding="utf-8"))
        self._check_syntax()
