"""The read-only, bash-highlighted preview of the rendered sbatch script: the job first, ntui's own blocks (the
event journal, the GPU sampler, a long run's signal handling, a sweep's values) folded into one marked line each
(:func:`ntui.core.jobfiles.machinery.fold_machinery`); ``f`` shows or folds them. The script submitted is always
the whole text."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TextArea

from ntui.core.jobfiles.machinery import fold_machinery

#: The key that shows or folds ntui's own lines.
FOLD_KEY = "f"


class ScriptPreview(TextArea):
    """``TextArea.code_editor(..., language="bash", read_only=True)`` that keeps its scroll position when the
    script changes, and dims itself while the form has errors (it then shows the last valid script)."""

    DEFAULT_CSS = """
    ScriptPreview.-stale { opacity: 60%; }
    """
    BINDINGS = [Binding(FOLD_KEY, "toggle_fold", "ntui's lines")]

    #: the whole script (what is submitted); the text shown is it folded, unless :attr:`folded` is off
    script = ""
    folded = True

    @classmethod
    def create(cls, script: str = "", *, id: str | None = None, lazy: bool = False) -> ScriptPreview:  # noqa: A002
        """``lazy``: load the bash grammar with the first script rather than now (start-up time)."""
        preview = cls.code_editor(fold_machinery(script).text, language=None, read_only=True, id=id,
                                  highlight_cursor_line=False)
        assert isinstance(preview, ScriptPreview)
        preview.script = script
        if not lazy:
            preview.use_bash()
        return preview

    _bash_tried = False

    def use_bash(self) -> None:
        if not self._bash_tried:
            self._bash_tried = True
            try:
                self.language = "bash"
            except Exception:  # no tree-sitter grammar: plain text is still exact
                self.language = None

    def on_mount(self) -> None:
        if self.app.is_headless or not getattr(self.app, "cursor_blink_enabled", True):
            self.cursor_blink = False

    def show_script(self, script: str) -> None:
        """Replace the script (only when it changed), keeping the scroll position."""
        self.set_class(False, "-stale")
        self.use_bash()
        self.script = script
        shown = fold_machinery(script).text if self.folded else script
        if shown == self.text:
            return
        x, y = self.scroll_offset
        self.load_text(shown)
        self.scroll_to(x, y, animate=False)

    def action_toggle_fold(self) -> None:
        """Show ntui's folded lines, or fold them again."""
        self.folded = not self.folded
        self.show_script(self.script)
        self.notify("ntui's own lines shown in full" if not self.folded else "ntui's own lines folded",
                    timeout=3)

    def mark_stale(self, stale: bool = True) -> None:
        self.set_class(stale, "-stale")
