"""The help screen: every binding of every view, pane and dialog, with its id (for keymaps), and the palette.

Generated from the bindings: the current view first, from its mounted widgets (each ntui widget that has keys is
a section of its own, e.g. the jobs view's log pane), then the app's keys, the other views (mounted ones from
their widgets, the others from their screen class and ``HELP_PANES``), then the dialogs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Label, Static

#: (section title, bindings) as collected by ``NtuiApp.help_sections``.
HelpSections = Sequence[tuple[str, Sequence[Binding]]]


def as_bindings(items: Iterable[Any]) -> list[Binding]:
    """``BINDINGS`` entries as Binding objects (tuples are allowed there too)."""
    return [b if isinstance(b, Binding) else Binding(*b) for b in items]


def own_bindings(cls: type[DOMNode]) -> list[Binding]:
    """The bindings ntui's classes in ``cls``'s ancestry define, the most derived first for a key (Textual's
    own widgets' keys are Textual's: an Input's editing keys are not listed)."""
    out: list[Binding] = []
    keys: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("ntui.") or "BINDINGS" not in vars(klass):
            continue
        for b in as_bindings(vars(klass)["BINDINGS"]):
            if b.key not in keys:
                keys.add(b.key)
                out.append(b)
    return out


def pane_title(cls: type[DOMNode]) -> str:
    """``HELP_TITLE`` of a widget class, else its name in words (``LogPane`` -> "Log pane")."""
    title = getattr(cls, "HELP_TITLE", None)
    if isinstance(title, str):
        return title
    words = re.findall(r"[A-Z][a-z0-9]*", cls.__name__.lstrip("_")) or [cls.__name__]
    return " ".join([words[0], *(w.lower() for w in words[1:])])


def view_sections(title: str, screen: type[DOMNode], panes: Iterable[type[DOMNode]]) -> list[tuple[str, list[Binding]]]:
    """A view's keys, then one section per pane class that has keys of its own."""
    sections = [(title, own_bindings(screen))]
    seen: set[type[DOMNode]] = set()
    for pane in panes:
        if pane in seen:
            continue
        seen.add(pane)
        bindings = own_bindings(pane)
        if bindings:
            sections.append((f"{title} · {pane_title(pane)}", bindings))
    return [(t, b) for t, b in sections if b]


def mounted_panes(node: DOMNode) -> list[type[DOMNode]]:
    """The classes of the widgets mounted under ``node``, in DOM order."""
    return [type(w) for w in node.walk_children(with_self=False)]

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
                        (f"  {key:<12}", "bold $text-accent"),
                        (f"{b.description or b.action:<26}", ""),
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
