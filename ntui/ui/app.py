"""The ntui app: views as Textual modes, app-wide bindings, the worker-error handler, the factory.

Extension point: ``VIEWS``. Each entry is a mode with its key, title and screen class; the app builds
``MODES`` and a ``1``/``2``/... binding from it. A new view adds a screen under ``ntui/ui/screens/`` and
an entry here, without touching the other views' widgets. The jobs view hosts the details, GPU and log
panes as tabs.

Views subclass :class:`~ntui.ui.screens.base.NtuiScreen` (one worker-error handler for all) and reach
shared services through the app: ``app.runner`` (every Slurm call), ``app.clock``, ``app.open_history()``.
A submission posts :class:`~ntui.ui.messages.JobSubmitted`, which the app stores in the reactive
``last_submission``: a jobs view does ``self.watch(self.app, "last_submission", select_job)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import importlib
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ntui import __version__
from ntui.ui.messages import JobSubmitted
from ntui.ui.screens.base import describe_error
from ntui.ui.screens.compose import ComposeScreen

if TYPE_CHECKING:
    from textual.command import Provider

    from ntui.core.history import History
    from ntui.core.runner import CommandRunner
    from ntui.core.submission import SubmittedJob
    from ntui.ui.screens.help import HelpSections

# Start-up budget (bench/startup.py): modules that the first frame does not need (Slurm layer, history,
# dialogs, editor, palette provider, tree-sitter grammars) are imported where they are first used.


@dataclass(frozen=True)
class LazyScreen:
    """A screen class imported on first use: the jobs view's modules cost ~75 ms to import, which
    would otherwise delay the first frame of the compose view."""

    module: str
    name: str

    def load(self) -> type[Screen[Any]]:
        cls: type[Screen[Any]] = getattr(importlib.import_module(self.module), self.name)
        return cls

    def __call__(self) -> Screen[Any]:
        return self.load()()


@dataclass(frozen=True)
class View:
    """A top-level view: a Textual mode switched to with ``key``."""

    mode: str
    key: str
    title: str
    screen: Callable[[], Screen[Any]]


#: The registration point for views (see the module docstring).
VIEWS: tuple[View, ...] = (
    View("compose", "1", "Compose", ComposeScreen),
    View("jobs", "2", "Jobs", LazyScreen("ntui.ui.screens.jobs", "JobsScreen")),
)

def _commands_provider() -> type[Provider]:
    from ntui.ui.commands import NtuiCommands

    return NtuiCommands


PALETTE_BINDING = Binding("ctrl+p", "command_palette", "Command palette", id="ntui.palette")


def _only_bindings(items: Sequence[Any]) -> list[Binding]:
    """``BINDINGS`` entries as Binding objects (tuples are allowed there too)."""
    return [b if isinstance(b, Binding) else Binding(*b) for b in items]


def _view_bindings(views: Sequence[View]) -> list[Binding]:
    return [
        Binding(v.key, f"app.switch_view('{v.mode}')", v.title, id=f"ntui.view.{v.mode}", show=False)
        for v in views
    ]


class NtuiApp(App[int]):
    """Compose, check and submit Slurm jobs from presets (and, as views land, watch them)."""

    TITLE = "ntui"
    CSS_PATH = "ntui.tcss"
    COMMANDS = App.COMMANDS | {_commands_provider}
    MODES = {v.mode: v.screen for v in VIEWS}
    DEFAULT_MODE = VIEWS[0].mode
    BINDINGS = [
        Binding("q", "quit", "Quit", id="ntui.quit"),
        Binding("question_mark", "help", "Help", id="ntui.help", key_display="?"),
        *_view_bindings(VIEWS),
    ]

    last_submission: reactive[SubmittedJob | None] = reactive(None, init=False)
    """The most recent job submitted from this app (views watch it, e.g. to select the job)."""

    def __init__(
        self,
        *,
        runner: CommandRunner,
        clock: Callable[[], datetime] = datetime.now,
        history_factory: Callable[[], History | None] | None = None,
        preset: str | None = None,
        identity: str = "",
        cursor_blink: bool = True,
        reconcile_on_start: bool = False,
    ) -> None:
        super().__init__()
        self.reconcile_on_start = reconcile_on_start
        self.runner = runner
        self.clock = clock
        self.history_factory = history_factory
        self.initial_preset = preset
        self.identity = identity
        self.cursor_blink_enabled = cursor_blink

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, partial(self.exit, return_code=128 + sig))
        if self.reconcile_on_start:
            self.call_after_refresh(self._reconcile)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reconcile", description="reconcile history")
    def _reconcile(self) -> None:
        """Once at start: own jobs that ntui submitted but the history lacks (ntui killed between sbatch
        and the history write) are recorded as recovered. One squeue call; failures only logged."""
        from ntui.core.reconcile import reconcile
        from ntui.core.record import resolve_records

        history = self.open_history()
        if history is None:
            return
        try:
            report = reconcile(history, self.runner)
        except Exception as exc:  # the controller may be down: the jobs view reports that itself
            self.log.warning(f"reconcile skipped: {exc}")
            history.close()
            return
        try:
            resolve_records(history, self.runner)  # the end of jobs that ended while ntui was closed
        except Exception as exc:
            self.log.warning(f"job records not resolved: {exc}")
        finally:
            history.close()
        if report.recovered:
            ids = ", ".join(r.job_id for r in report.recovered)
            self.call_from_thread(self.notify, f"recorded job(s) {ids} that ntui submitted but had not recorded",
                                  title="History recovered", timeout=8)

    def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)

    def open_history(self) -> History | None:
        """A history handle for one submission (closed by the caller); called from worker threads."""
        if self.history_factory is None:
            from ntui.core.history import History

            return History()
        return self.history_factory()

    # ------------------------------------------------------------ views, help

    def action_switch_view(self, mode: str) -> None:
        if mode != self.current_mode:
            self.switch_mode(mode)

    def help_sections(self) -> HelpSections:
        from ntui.ui.screens.confirm import ConfirmSubmitScreen
        from ntui.ui.screens.dialogs import SaveAsScreen, YesNoScreen
        from ntui.ui.screens.editor import PresetEditorScreen

        sections: list[tuple[str, Sequence[Binding]]] = [("Everywhere", [*_only_bindings(self.BINDINGS),
                                                                         PALETTE_BINDING])]
        for view in VIEWS:
            screen = view.screen.load() if isinstance(view.screen, LazyScreen) else view.screen
            bindings = _only_bindings(vars(screen).get("BINDINGS", []) if isinstance(screen, type) else [])
            if bindings:
                sections.append((f"{view.title} view", bindings))
        sections += [
            ("Preset editor", _only_bindings(PresetEditorScreen.BINDINGS)),
            ("Confirm submission", _only_bindings(ConfirmSubmitScreen.BINDINGS)),
            ("Dialogs", _only_bindings([*YesNoScreen.BINDINGS, *SaveAsScreen.BINDINGS])),
        ]
        return sections

    def action_help(self) -> None:
        from ntui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_sections()))

    # ------------------------------------------------------------ messages, errors

    @on(JobSubmitted)
    def _job_submitted(self, message: JobSubmitted) -> None:
        self.last_submission = message.job

    def report_worker_error(self, worker: Worker[Any]) -> str:
        """The one place a failed worker is reported: a notification with the core's wording."""
        message = describe_error(worker.error)
        self.log.error(f"worker {worker.name!r} ({worker.group}) failed: {worker.error!r}")
        self.notify(message, title=worker.description or worker.name or "failed", severity="error", timeout=12)
        return message

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.report_worker_error(event.worker)


def default_identity() -> str:
    try:
        who = f"{getpass.getuser()}@{socket.gethostname().split('.')[0]}"
    except Exception:  # the identity is decoration only
        who = ""
    return f"{who} · ntui {__version__}".strip(" ·")


def make_app(
    *,
    runner: CommandRunner | None = None,
    clock: Callable[[], datetime] | None = None,
    history_factory: Callable[[], History | None] | None = None,
    preset: str | None = None,
    identity: str | None = None,
    cursor_blink: bool = True,
) -> NtuiApp:
    """The app, with everything injectable (tests and screenshots pass a FakeRunner, a frozen clock, ...)."""
    if runner is None:
        from ntui.core.runner import SubprocessRunner

        runner = SubprocessRunner()
    return NtuiApp(
        runner=runner,
        clock=clock or datetime.now,
        history_factory=history_factory,
        preset=preset,
        identity=default_identity() if identity is None else identity,
        cursor_blink=cursor_blink,
    )


def run_app() -> int:
    """Run the app in the terminal; Textual restores the terminal on every exit (errors, signals, ^C)."""
    app = make_app()
    app.reconcile_on_start = True
    try:
        app.run()
    except KeyboardInterrupt:
        return 130
    return int(app.return_code or 0)
