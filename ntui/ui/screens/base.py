"""The base of every ntui view: the one worker-error handler, and typed access to the app's services.

``Worker.StateChanged`` does not bubble, so it is handled on the node that started the worker; every
view inherits this handler (and the app has the same one), which all funnel into
:func:`~ntui.core.errors.describe_error` and ``NtuiApp.report_worker_error``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, cast

from textual import on
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ntui.ui.services import NtuiServices

__all__ = ["NtuiScreen"]


class NtuiScreen(Screen[Any]):
    """Base screen: handles its workers' failures (notify once, then ``worker_failed`` for local display)."""

    @property
    def ntui_app(self) -> NtuiServices:
        """The running app's services (runner, clock, settings, history, ...)."""
        return cast(NtuiServices, self.app)

    def call_after_refresh(self, callback: Any, *args: Any, **kwargs: Any) -> bool:
        """Textual's, except before the app's first frame: Textual 8.2.8 runs these callbacks before the first
        paint while the app starts (its start-up batch is open), so work meant to follow the first frame
        (mounting the preview, starting workers) would delay it. Until then they wait for the first frame."""
        app = self.ntui_app
        if not app.first_frame_shown:
            app.after_first_frame(partial(super().call_after_refresh, callback, *args, **kwargs))
            return True
        return super().call_after_refresh(callback, *args, **kwargs)

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            message = self.ntui_app.report_worker_error(event.worker)
            self.worker_failed(event.worker, message)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """Hook for views: show a failure where it belongs (the notification is already out)."""
