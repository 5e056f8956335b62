"""The preset picker: shipped and user presets with launcher and description."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from ntui.core.compose.presets import PresetInfo


def _prompt(info: PresetInfo, current: bool) -> Content:
    """One line: marker, name, launcher, origin, description (ellipsised by the CSS when too long)."""
    marker = ("▶ ", "bold $accent") if current else ("  ", "")
    tag = " (user)" if info.origin == "user" else ""
    detail = (f"  broken: {info.problem}", "$text-error") if info.problem else (
        f"  {info.description}", "$text-muted")
    return Content.assemble(
        marker,
        (info.name, "bold"),
        (f" · {info.launcher or '?'}", "$text-secondary"),
        (tag, "italic $text-success"),
        detail,
    )


class PresetPicker(OptionList):
    """Lists presets; ``enter`` or a click posts :class:`PresetPicker.Chosen`."""

    DEFAULT_CSS = """
    PresetPicker { height: auto; max-height: 12; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    @dataclass
    class Chosen(Message):
        """The user chose a preset."""

        picker: PresetPicker
        info: PresetInfo

        @property
        def control(self) -> PresetPicker:
            return self.picker

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.presets: tuple[PresetInfo, ...] = ()
        self.current: str | None = None

    def set_presets(self, presets: Sequence[PresetInfo], current: str | None = None) -> None:
        self.presets = tuple(presets)
        if current is not None:
            self.current = current
        self._rebuild()

    def mark_current(self, name: str) -> None:
        self.current = name
        self._rebuild()

    def _rebuild(self) -> None:
        highlighted = self.highlighted
        self.set_options(Option(_prompt(p, p.name == self.current), id=p.name) for p in self.presets)
        names = [p.name for p in self.presets]
        if self.current in names:
            self.highlighted = names.index(self.current)
        elif highlighted is not None and names:
            self.highlighted = min(highlighted, len(names) - 1)
        self.call_after_refresh(self.scroll_to_highlight)

    def on_resize(self) -> None:
        # The first scroll can run before the list has its size (a no-op then); keep the
        # highlighted preset in view whenever the size settles or changes.
        self.scroll_to_highlight()

    def info(self, name: str) -> PresetInfo | None:
        return next((p for p in self.presets if p.name == name), None)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        info = self.info(event.option.id or "")
        if info is not None:
            self.post_message(self.Chosen(self, info))
