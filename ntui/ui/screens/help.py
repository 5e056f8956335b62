"""The help screen: every binding of every view and dialog, with its id (for keymaps), and the palette."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

#: (section title, bindings) as collected by ``NtuiApp.help_sections``.
HelpSections = Sequence[tuple[str, Sequence[Binding]]]

PALETTE_COMMANDS = (
    "Load preset …",
    "Submit",
    "Check (sbatch --test-only)",
    "Save preset as … (new preset from the current form)",
    "Edit preset",
    "Reset form",
    "Help",
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="ntui.help.close")]

    def __init__(self, sections: HelpSections) -> None:
        super().__init__()
        self.sections = sections

    def _table(self) -> Content:
        lines: list[Content] = []
        for title, bindings in self.sections:
            lines.append(Content.assemble((title, "bold $text-primary")))
            seen: set[tuple[str, str]] = set()
            for b in bindings:
                key = " ".join(self.app.get_key_display(replace(b, key=k.strip())) for k in b.key.split(","))
                if (key, b.action) in seen:
                    continue
                seen.add((key, b.action))
                lines.append(
                    Content.assemble(
                        (f"  {key:<14}", "bold $text-accent"),
                        (f"{b.description or b.action:<30}", ""),
                        (b.id or "", "$text-muted"),
                    )
                )
            lines.append(Content(""))
        lines.append(Content.assemble(("Command palette (ctrl+p)", "bold $text-primary")))
        lines.extend(Content.assemble(("  ", ""), (c, "")) for c in PALETTE_COMMANDS)
        lines.append(Content(""))
        lines.append(
            Content.assemble(
                ("Typing goes into the focused field; press escape to leave it, then the single-key bindings work. ",
                 "$text-muted"),
                ("tab / shift+tab move between fields.", "$text-muted"),
            )
        )
        return Content("\n").join(lines)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="help-dialog"):
            yield Label("Keys", classes="dialog-title")
            with VerticalScroll():
                yield Static(self._table(), id="help-table")

    def action_close(self) -> None:
        self.dismiss(None)
