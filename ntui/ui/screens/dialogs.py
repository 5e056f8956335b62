"""Small typed dialogs: yes/no, unsaved edits (save as / discard / cancel), and a preset name for "save as"."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ntui.core.compose.presetfiles import check_preset_name
from ntui.core.paths import user_presets_dir
from ntui.ui.widgets.validators import CoreCheck


class YesNoScreen(ModalScreen[bool]):
    """Ask a yes/no question; dismisses with the answer."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="ntui.dialog.yes"),
        Binding("n,escape", "answer(False)", "No", id="ntui.dialog.no"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="warning", id="yes")
                yield Button(self.no, id="no")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class UnsavedEditsScreen(ModalScreen["str | None"]):
    """The form has edits and something would replace them: dismisses with "save", "discard" or None (cancel)."""

    BINDINGS = [
        Binding("s", "answer('save')", "Save as …", id="ntui.edits.save"),
        Binding("d", "answer('discard')", "Discard", id="ntui.edits.discard"),
        Binding("escape,c", "answer(None)", "Cancel", id="ntui.edits.cancel"),
    ]

    def __init__(self, preset: str, changes: tuple[str, ...], then: str) -> None:
        super().__init__()
        self.preset, self.changes, self.then = preset, changes, then

    def compose(self) -> ComposeResult:
        shown = ", ".join(self.changes[:4]) + (f" and {len(self.changes) - 4} more" if len(self.changes) > 4 else "")
        with Vertical(classes="dialog", id="edits-dialog"):
            yield Label(f"{len(self.changes)} unsaved change(s) to {self.preset}", classes="dialog-title")
            yield Static(f"{shown}\n\n{self.then} would discard them.", classes="dialog-text", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save as … (s)", variant="primary", id="save")
                yield Button("Discard (d)", variant="warning", id="discard")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id if event.button.id in ("save", "discard") else None)

    def action_answer(self, answer: str | None) -> None:
        self.dismiss(answer)


def user_preset_names() -> frozenset[str]:
    """The names of the user's preset files (one directory listing; called from a worker thread)."""
    try:
        return frozenset(p.stem for p in user_presets_dir().glob("*.yaml"))
    except OSError:  # no directory yet, or unreadable: nothing to replace
        return frozenset()


class SaveAsScreen(ModalScreen["str | None"]):
    """Ask for a user preset name; dismisses with it (or None). Whether the name is taken comes from one
    listing of the user's presets, read in a worker when the dialog opens (no file check per keystroke)."""

    @dataclass
    class _Listed(Message, bubble=False):
        names: frozenset[str]

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ntui.dialog.cancel")]

    def __init__(self, title: str, default: str, note: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.note = note
        self._existing: frozenset[str] = frozenset()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            if self.note:
                yield Static(self.note, classes="dialog-text")
            yield Input(
                self.default,
                placeholder="preset name",
                id="save-as-name",
                validators=[CoreCheck(check_preset_name)],
                validate_on=["changed", "submitted"],
            )
            yield Static("", id="save-as-where", classes="dialog-note")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        inp = self.query_one("#save-as-name", Input)
        if self.app.is_headless:
            inp.cursor_blink = False
        self._where(inp.value)
        self._list_names()

    @work(thread=True, exclusive=True, exit_on_error=False, group="save-as-names", description="list presets")
    def _list_names(self) -> None:
        self.post_message(self._Listed(user_preset_names()))

    @on(_Listed)
    def _listed(self, message: _Listed) -> None:
        self._existing = message.names
        self._where(self.query_one("#save-as-name", Input).value)

    def _where(self, name: str) -> None:
        problem = check_preset_name(name)
        where = self.query_one("#save-as-where", Static)
        if problem:
            where.update(f"✗ {problem}")
            return
        exists = name in self._existing
        where.update(f"→ your presets: {name}.yaml" + ("  (exists: it will be replaced)" if exists else ""))

    @on(Input.Changed, "#save-as-name")
    def _changed(self, event: Input.Changed) -> None:
        self._where(event.value)

    @on(Input.Submitted, "#save-as-name")
    def _submitted(self, event: Input.Submitted) -> None:
        self._accept(event.value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._accept(self.query_one("#save-as-name", Input).value)
        else:
            self.dismiss(None)

    def _accept(self, name: str) -> None:
        name = name.strip()
        problem = check_preset_name(name)
        if problem:
            self.notify(problem, severity="error")
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ImportScriptScreen(ModalScreen["str | None"]):
    """Ask for an sbatch script's path to import (``ntui import`` in the app); dismisses with it (or None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ntui.dialog.cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Import an sbatch script", classes="dialog-title")
            yield Static("A preset of the script's job, with the rules' fixes; it opens in the form, and is saved "
                         "among your presets.", classes="dialog-text")
            yield Input("", placeholder="path of the script", id="import-path")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import", variant="primary", id="import")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        inp = self.query_one("#import-path", Input)
        if self.app.is_headless:
            inp.cursor_blink = False

    @on(Input.Submitted, "#import-path")
    def _submitted(self, event: Input.Submitted) -> None:
        self._accept(event.value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "import":
            self._accept(self.query_one("#import-path", Input).value)
        else:
            self.dismiss(None)

    def _accept(self, path: str) -> None:
        if not path.strip():
            self.notify("Type the path of an sbatch script.", severity="error")
            return
        self.dismiss(path.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
