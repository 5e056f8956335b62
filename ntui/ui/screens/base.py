"""The base of every ntui view: the one worker-error handler, and the error wording.

``Worker.StateChanged`` does not bubble, so it is handled on the node that started the worker; every
view inherits this handler (and the app has the same one), which all funnel into
:func:`describe_error` and ``NtuiApp.report_worker_error``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual import on
from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from ntui.ui.app import NtuiApp

NO_SLURM = "Slurm client not found: ntui can compose, render and save presets here, but cannot check or submit."


def describe_error(error: BaseException | None) -> str:
    """One line for a failed worker, with Slurm's own reason where there is one."""
    from ntui.core.runner import ControllerUnreachable, SlurmError, SlurmNotInstalled, SlurmRejected, SlurmTimeout
    from ntui.ui.widgets.preset_files import PresetSaveRefused

    if isinstance(error, SlurmRejected):
        return f"Slurm rejected it: {error.reason}"
    if isinstance(error, SlurmNotInstalled):
        return NO_SLURM
    if isinstance(error, (ControllerUnreachable, SlurmTimeout)):
        return str(error)
    if isinstance(error, SlurmError):
        return str(error)
    if isinstance(error, PresetSaveRefused):
        return str(error)
    if isinstance(error, OSError):
        return f"{error.strerror or error}: {error.filename}" if error.filename else str(error)
    if error is None:
        return "failed"
    return f"{type(error).__name__}: {error}"


class NtuiScreen(Screen[Any]):
    """Base screen: handles its workers' failures (notify once, then ``worker_failed`` for local display)."""

    @property
    def ntui_app(self) -> NtuiApp:
        return cast("NtuiApp", self.app)

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            message = self.ntui_app.report_worker_error(event.worker)
            self.worker_failed(event.worker, message)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """Hook for views: show a failure where it belongs (the notification is already out)."""
