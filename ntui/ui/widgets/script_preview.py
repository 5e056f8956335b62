"""The read-only, bash-highlighted preview of the rendered sbatch script."""

from __future__ import annotations

from textual.widgets import TextArea


class ScriptPreview(TextArea):
    """``TextArea.code_editor(..., language="bash", read_only=True)`` that keeps its scroll position when the
    script changes, and dims itself while the form has errors (it then shows the last valid script)."""

    DEFAULT_CSS = """
    ScriptPreview.-stale { opacity: 60%; }
    """

    @classmethod
    def create(cls, script: str = "", *, id: str | None = None, lazy: bool = False) -> ScriptPreview:  # noqa: A002
        """``lazy``: load the bash grammar with the first script rather than now (start-up time)."""
        preview = cls.code_editor(script, language=None, read_only=True, id=id, highlight_cursor_line=False)
        assert isinstance(preview, ScriptPreview)
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
        """Replace the text (only when it changed), keeping the scroll position."""
        self.set_class(False, "-stale")
        self.use_bash()
        if script == self.text:
            return
        x, y = self.scroll_offset
        self.load_text(script)
        self.scroll_to(x, y, animate=False)

    def mark_stale(self, stale: bool = True) -> None:
        self.set_class(stale, "-stale")
