"""Command palette (``ctrl+p``): "Load preset …", "Submit", "Check", "Save preset as …" and friends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ntui.core.compose.presets import PresetInfo, list_presets


class NtuiCommands(Provider):
    """Compose commands (when the compose view is showing) and one "Load preset: NAME" per preset."""

    async def startup(self) -> None:
        self.presets: list[PresetInfo] = []
        try:
            self.presets = await asyncio.to_thread(list_presets)
        except Exception:  # a broken preset directory must not break the palette
            self.presets = []

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from ntui.ui.screens.compose import ComposeScreen

        screen = self.screen
        out: list[tuple[str, str, Callable[[], object]]] = []
        if isinstance(screen, ComposeScreen):
            out += [
                ("Load preset …", "Pick a preset (or type 'load' and its name)", screen.picker.focus),
                ("Submit", "Submit the job (shows the script to confirm)", partial(screen.run_action, "submit")),
                ("Check (sbatch --test-only)", "Ask Slurm when the job would start",
                 partial(screen.run_action, "check")),
                ("Save preset as …", "New preset from the current form", partial(screen.run_action, "save_as")),
                ("Import a script …", "A preset of an sbatch script you have (ntui import)",
                 partial(screen.run_action, "import_script")),
                ("Edit preset", "Edit the current preset's YAML", partial(screen.run_action, "edit_preset")),
                ("Reset form", "Back to the preset's values", partial(screen.run_action, "reset_form")),
            ]
            for p in getattr(self, "presets", []):
                help_text = f"{p.launcher or '?'} · {p.origin} · {p.problem or p.description}"
                out.append((f"Load preset: {p.name}", help_text, partial(screen.load_preset, p.name)))
        out.append(("Help: keys", "Every binding", partial(self.app.run_action, "help")))
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            if not name.startswith("Load preset:"):
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
