"""The Jobs view until [queue] lands: says what is coming and shows the last submission."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.widgets import Footer, Header, Static

from ntui.ui.screens.base import NtuiScreen

if TYPE_CHECKING:
    from ntui.core.submission import SubmittedJob


class JobsPlaceholderScreen(NtuiScreen):
    """Replaced by the real queue view (register it in ``ntui.ui.app.VIEWS`` under mode ``jobs``)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Middle(), Center():
            yield Static(
                "The Jobs view (queue, GPU and log panes) is coming.\n"
                "Until then: `ntui jobs`, `ntui show JOBID`, `ntui logs JOBID` in a shell.",
                id="jobs-placeholder",
            )
            yield Static("", id="jobs-last")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "last_submission", self._last, init=True)

    def _last(self, job: SubmittedJob | None) -> None:
        text = f"Last submitted: job {job.job_id} · batch log {job.batch_log}" if job else ""
        self.query_one("#jobs-last", Static).update(text)
