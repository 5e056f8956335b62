"""What views and panes may use of the app: the services :class:`~ntui.ui.app.NtuiApp` provides.

A protocol rather than the app class itself, so that screens and widgets are typed against the app
without importing it (``ui/app.py`` imports the screens: importing it back would be a cycle).
``NtuiScreen.ntui_app`` returns the running app typed as :class:`NtuiServices`; the app module checks
statically that ``NtuiApp`` provides all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from textual.worker import Worker

    from ntui.core.config import Settings
    from ntui.core.jobs.submission import SubmittedJob
    from ntui.core.problems import Problem
    from ntui.core.records.history import History
    from ntui.core.remote.files import ClusterFiles
    from ntui.core.remote.link import LinkBoard
    from ntui.core.slurm.runner import CommandRunner

__all__ = ["NtuiServices", "ReportsWorkerErrors"]


@runtime_checkable
class ReportsWorkerErrors(Protocol):
    """An app with the one worker-error report (widgets also run in plain test apps: they check for this)."""

    def report_worker_error(self, worker: Worker[Any]) -> str: ...


class NtuiServices(ReportsWorkerErrors, Protocol):
    """The app's services (see ``NtuiApp`` for each). Not runtime-checked: ``settings`` is read on first use."""

    runner: CommandRunner
    clock: Callable[[], datetime]
    identity: str
    initial_preset: str | None
    cursor_blink_enabled: bool
    settings_problems: tuple[Problem, ...]
    first_frame_shown: bool
    links: LinkBoard  # each cluster's link state (ntui.core.remote.link), fed by its squeue and its files

    @property
    def settings(self) -> Settings: ...

    @property
    def last_submission(self) -> SubmittedJob | None: ...

    def open_history(self) -> History | None: ...

    def after_first_frame(self, callback: Callable[[], object]) -> None: ...

    def shown_clusters(self) -> tuple[str, ...]: ...

    @property
    def local_slurm(self) -> bool: ...

    def local_cluster_name(self) -> str: ...

    def cluster_runner(self, name: str) -> CommandRunner: ...

    def cluster_files(self, name: str) -> ClusterFiles: ...
