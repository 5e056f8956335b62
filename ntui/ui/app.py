"""The ntui app: views as Textual modes, app-wide bindings, the worker-error handler, the factory.

Extension point: ``VIEWS``. Each entry is a mode with its key, title and screen class; the app builds
``MODES`` and a ``1``/``2``/... binding from it. A new view adds a screen under ``ntui/ui/screens/`` and
an entry here, without touching the other views' widgets. The jobs view hosts the details, GPU and log
panes as tabs.

Views subclass :class:`~ntui.ui.screens.base.NtuiScreen` (one worker-error handler for all) and reach
shared services through its typed ``ntui_app`` (:class:`~ntui.ui.services.NtuiServices`): ``runner`` (every
Slurm call), ``clock``, ``open_history()``, ``settings`` (read once by :func:`make_app`, before the app starts).
A submission posts :class:`~ntui.ui.messages.JobSubmitted`, which the app stores in the reactive
``last_submission``: a jobs view does ``self.watch(self.app, "last_submission", select_job)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import getpass
import os
import signal
import socket
import sys
import termios
import threading
from collections.abc import Callable, Mapping, Sequence
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
from ntui.core.remote.link import LinkBoard
from ntui.ui.messages import JobSubmitted
from ntui.ui.screens.compose import ComposeScreen

if TYPE_CHECKING:
    from textual.command import Provider

    from ntui.core.config import Settings, SlurmSettings
    from ntui.core.jobs.submission import SubmittedJob
    from ntui.core.problems import Problem
    from ntui.core.records.history import History
    from ntui.core.remote.files import ClusterFiles
    from ntui.core.slurm.runner import CommandRunner
    from ntui.ui.screens.help import HelpSections

#: Seconds after start before the settings file is read (in a worker): the first frame needs none of it.
SETTINGS_DELAY_S = 0.3
#: Seconds a shutdown by SIGTERM or SIGHUP may take before the process ends anyway (:meth:`NtuiApp._end_by_signal`).
EXIT_GRACE_S = 5.0
#: How often the app looks whether its terminal is still there (:meth:`NtuiApp._check_terminal`).
TERMINAL_CHECK_S = 2.0

# Start-up budget (bench/startup.py): modules that the first frame does not need (Slurm layer, history,
# dialogs, editor, palette provider, tree-sitter grammars) are imported where they are first used; the
# default runner (YAML, settings, Slurm layer) is built on its first use (tests/ui/test_startup.py).


def _compose_screen() -> type[Screen[Any]]:
    return ComposeScreen


def _jobs_screen() -> type[Screen[Any]]:
    """Imported on first use: the jobs view's modules would otherwise delay the compose view's first frame."""
    from ntui.ui.screens.jobs import JobsScreen

    return JobsScreen


@dataclass(frozen=True)
class View:
    """A top-level view: a Textual mode switched to with ``key``; ``screen`` gives its screen class."""

    mode: str
    key: str
    title: str
    screen: Callable[[], type[Screen[Any]]]

    def make(self) -> Screen[Any]:
        screen = self.screen()()
        # Textual re-parses the whole stylesheet (refresh_css) when a mode's screen is first shown and its CSS
        # generation differs from the app's; a screen made now is styled when mounted with the app's current
        # variables, so that re-parse (twice the CSS work of the first frame) only repeats what mounting does.
        with contextlib.suppress(Exception):  # outside a running app: nothing to sync
            screen._css_update_count = screen.app._css_update_count
        return screen


#: The registration point for views (see the module docstring).
VIEWS: tuple[View, ...] = (
    View("compose", "1", "Compose", _compose_screen),
    View("jobs", "2", "Jobs", _jobs_screen),
)


def _commands_provider() -> type[Provider]:
    from ntui.ui.commands import NtuiCommands

    return NtuiCommands


PALETTE_BINDING = Binding("ctrl+p", "command_palette", "Command palette", id="ntui.palette")


def pane_title_of(screen: Screen[Any]) -> str:
    from ntui.ui.screens.help import pane_title

    return pane_title(type(screen))


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
    MODES = {v.mode: v.make for v in VIEWS}
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
        runner: CommandRunner | None = None,
        clock: Callable[[], datetime] = datetime.now,
        history_factory: Callable[[], History | None] | None = None,
        preset: str | None = None,
        identity: str = "",
        cursor_blink: bool = True,
        reconcile_on_start: bool = False,
        settings: Settings | None = None,
        settings_problems: Sequence[Problem] = (),
        cluster_runners: Mapping[str, CommandRunner] | None = None,
        clusters: Sequence[str] | None = None,
        local_slurm: bool | None = None,
        local_name: str | None = None,
    ) -> None:
        super().__init__()
        self._cluster_runners: dict[str, CommandRunner] = dict(cluster_runners or {})
        self._clusters = tuple(clusters) if clusters is not None else None
        self._local_slurm = local_slurm
        self._local_name = local_name
        self._cluster_files: dict[str, ClusterFiles] = {}
        self.links = LinkBoard()
        """Each cluster's link state (up, slow, down, back), fed by its files and its squeue; the jobs view's banner
        and status line and the Logs tab read it."""
        self._files_lock = threading.Lock()
        self._settings: Settings | None = settings
        self._settings_lock = threading.Lock()
        self.settings_problems: tuple[Problem, ...] = tuple(settings_problems)
        """What was wrong in the settings file (bad values fell back to defaults); shown once."""
        self.reconcile_on_start = reconcile_on_start
        self._problems_reported = False
        self._runner: CommandRunner | None = runner
        self._runner_lock = threading.Lock()
        self.clock = clock
        self.history_factory = history_factory
        self.initial_preset = preset
        self.identity = identity
        self.cursor_blink_enabled = cursor_blink
        self.first_frame_shown = False
        """The first frame is on the terminal (Textual's ``Ready``); :meth:`after_first_frame` waits for it."""
        self._after_first_frame: list[Callable[[], object]] = []

    @property
    def runner(self) -> CommandRunner:
        """Every Slurm call goes through it. Without one given, the CLI's runner (timeouts and bin-dir from
        the settings, read on first use), built on first use from any thread: its modules (YAML, the Slurm
        layer) would otherwise delay the first frame."""
        with self._runner_lock:
            if self._runner is None:
                from ntui.core.config import SettingsRunner

                self._runner = SettingsRunner(self._slurm_settings)
            return self._runner

    @runner.setter
    def runner(self, runner: CommandRunner) -> None:
        with self._runner_lock:
            self._runner = runner

    # ------------------------------------------------------------ clusters (ntui.core.jobs.clusters)

    def shown_clusters(self) -> tuple[str, ...]:
        """The clusters reached over ssh that the jobs view shows: those given to :func:`make_app`, else every
        cluster of the settings' ``clusters:``."""
        if self._clusters is not None:
            return self._clusters
        self._ensure_settings()
        assert self._settings is not None
        return tuple(c.name for c in self._settings.clusters)

    @property
    def local_slurm(self) -> bool:
        """The jobs view shows this machine's Slurm too: always without clusters in the settings; with some, when
        Slurm's clients are here (a login node) or a runner was given for it."""
        if self._local_slurm is not None:
            return self._local_slurm
        if not self.shown_clusters() or self._runner is not None:
            return True
        import shutil

        bin_dir = self._slurm_settings().bin_dir
        return shutil.which("squeue", path=bin_dir) is not None if bin_dir else shutil.which("squeue") is not None

    def local_cluster_name(self) -> str:
        """The local cluster's name in the Cluster column: Slurm's ``ClusterName`` (slurm.conf), else "local"."""
        if self._local_name is None:
            from ntui.core.slurm.scontrol import cluster_name

            self._local_name = cluster_name() or "local"
        return self._local_name

    def cluster_runner(self, name: str) -> CommandRunner:
        """The runner of cluster ``name`` of the settings (Slurm on its login node over one shared ssh login,
        :func:`ntui.core.config.cluster_runner`), built on first use from any thread."""
        with self._runner_lock:
            runner = self._cluster_runners.get(name)
            if runner is None:
                from ntui.core.config import cluster_runner

                self._ensure_settings()
                assert self._settings is not None
                runner = self._cluster_runners[name] = cluster_runner(self._settings, name)
            return runner

    def cluster_files(self, name: str) -> ClusterFiles:
        """The files of cluster ``name`` (logs, read by offsets): its agent (``ntui agent --stdio``) over that
        cluster's master, else plain commands (:func:`ntui.core.remote.files.connect`); opened once per cluster on
        first use, from a worker thread (it may wait on the link), closed when the app ends."""
        runner = self.cluster_runner(name)
        with self._files_lock:
            files = self._cluster_files.get(name)
            if files is None:
                from ntui.core.remote.files import agent_command, connect

                configured = self._settings.cluster(name) if self._settings is not None else None
                files = connect(runner, command=agent_command(configured.agent if configured else None),
                                on_link=lambda words: self.log.warning(f"{name}: {words}"),
                                link=self.links.of(name))
                self._cluster_files[name] = files
            return files

    def _close_cluster_files(self) -> None:
        with self._files_lock:
            opened, self._cluster_files = self._cluster_files, {}
        for files in opened.values():
            with contextlib.suppress(Exception):  # the link may be gone already
                files.close()

    _ending = False  # a signal or a vanished terminal ends the app (once)

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, partial(self._end_by_signal, sig))
        if not self.is_headless:
            self.set_interval(TERMINAL_CHECK_S, self._check_terminal, name="terminal check")
        if self.reconcile_on_start:  # its thread (history, squeue) would compete with the first frame
            self.after_first_frame(self._reconcile)
        if self._settings is None:  # read off the event loop, once the first frame is out
            self.set_timer(SETTINGS_DELAY_S, self._read_settings, name="read settings")
        elif self.settings_problems:
            self.call_after_refresh(self._report_settings_problems)

    def _end_by_signal(self, sig: int) -> None:
        """SIGTERM or SIGHUP (the terminal went away): exit, and end the process after :data:`EXIT_GRACE_S` whatever
        Textual's shutdown does. Its driver flushes its pending output to a terminal that may be gone; seen in a full
        test run (a tmux server killed under the app): the shutdown waited on the driver's output queue forever, and
        the orphaned app kept polling the controller. The records are written as each job's state changes, so
        nothing is lost."""
        if self._ending:
            return
        self._ending = True
        self.exit(return_code=128 + sig)
        fallback = threading.Timer(EXIT_GRACE_S, os._exit, args=(128 + sig,))
        fallback.daemon = True
        fallback.start()

    def _check_terminal(self) -> None:
        """The terminal hung up without a SIGHUP reaching the app (it is not the terminal's controlling process, as
        under a launcher that started it in a session of its own): its attributes read EIO. End as on SIGHUP."""
        stdin = sys.__stdin__
        if stdin is None:
            return
        try:
            termios.tcgetattr(stdin.fileno())
        except termios.error as exc:
            if exc.args and exc.args[0] == errno.EIO:
                self._end_by_signal(signal.SIGHUP)
        except (OSError, ValueError):
            return

    def after_first_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the first frame is on the terminal (at once, later on). Start-up work that the
        first frame does not show waits for it: it would delay the frame otherwise."""
        if self.first_frame_shown:
            self.call_later(callback)
        else:
            self._after_first_frame.append(callback)

    def on_ready(self) -> None:
        self.first_frame_shown = True
        # what start-up built (modules, classes, the screens and widgets) lives as long as the app: the collector's
        # full passes leave it out from here on. A refresh of 10,000 new squeue lines triggers such passes; over the
        # whole heap they were half its parse + format time (bench/queue_scale.py --offline). Start-up's cycles
        # that die later wait for on_unmount's unfreeze; anything freed by its count goes at once, as ever.
        gc.freeze()
        waiting, self._after_first_frame = self._after_first_frame, []
        for callback in waiting:
            self.call_later(callback)

    @property
    def settings(self) -> Settings:
        """The user's settings (``$XDG_CONFIG_HOME/ntui/config.yaml``, read once). Read in a worker shortly after
        start; a view that needs them before (UI thread) reads them then."""
        if self._ensure_settings():
            self.call_later(self._report_settings_problems)
        assert self._settings is not None
        return self._settings

    def _slurm_settings(self) -> SlurmSettings:
        """The Slurm section of the settings, from any thread (problems are reported by the settings worker)."""
        self._ensure_settings()
        assert self._settings is not None
        return self._settings.slurm

    def _ensure_settings(self) -> tuple[Problem, ...]:
        """Read the settings unless done; returns the problems when this call read them (to report once)."""
        with self._settings_lock:
            if self._settings is not None:
                return ()
            from ntui.core.config import load_settings

            self._settings, problems = load_settings()
            self.settings_problems = tuple(problems)
            return self.settings_problems

    @work(thread=True, exclusive=True, exit_on_error=False, group="settings", description="read settings")
    def _read_settings(self) -> None:
        self._ensure_settings()  # a Slurm call may have read them first: report either way (once)
        self.call_from_thread(self._report_settings_problems)

    def _report_settings_problems(self) -> None:
        if self._problems_reported or not self.settings_problems:
            return
        self._problems_reported = True
        lines = [str(p) for p in self.settings_problems]
        more = f"\n… and {len(lines) - 5} more" if len(lines) > 5 else ""
        self.notify("\n".join(lines[:5]) + more + "\n(defaults used for these)", title="Settings ignored",
                    severity="warning", timeout=15)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reconcile", description="reconcile history")
    def _reconcile(self) -> None:
        """Once at start: own jobs that ntui submitted but the history lacks (ntui killed between sbatch
        and the history write) are recorded as recovered. One squeue call; failures only logged."""
        from ntui.core.records.reconcile import reconcile
        from ntui.core.records.record import resolve_records

        if not self.local_slurm:  # no Slurm here: the records of the clusters reached over ssh stay theirs
            return
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
            # the end of jobs that ended while ntui was closed; reuses reconcile's squeue answer
            resolve_records(history, self.runner, queue=report.queue)
        except Exception as exc:
            self.log.warning(f"job records not resolved: {exc}")
        finally:
            history.close()
        if report.recovered:
            ids = ", ".join(r.job_id for r in report.recovered)
            self.call_from_thread(self.notify, f"recorded job(s) {ids} that ntui submitted but had not recorded",
                                  title="History recovered", timeout=8)

    def on_unmount(self) -> None:
        gc.unfreeze()  # on_ready's freeze ends with the app (a process that runs apps in turn, as tests do, frees each)
        self._close_cluster_files()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)

    def open_history(self) -> History | None:
        """A history handle for one submission (closed by the caller); called from worker threads. A damaged
        record file it sets aside is said in a notification (never on the terminal Textual draws on)."""
        if self.history_factory is None:
            from ntui.core.records.history import History
            from ntui.core.slurm.scontrol import cluster_name

            # two clusters' same-numbered jobs: the one of the cluster this app talks to
            return History(warn=self._history_warning, cluster=lambda: cluster_name())
        return self.history_factory()

    def _history_warning(self, text: str) -> None:
        self.log.warning(text)
        try:
            self.call_from_thread(self.notify, text, title="History", severity="warning", timeout=12)
        except RuntimeError:  # on the event loop itself
            self.notify(text, title="History", severity="warning", timeout=12)

    # ------------------------------------------------------------ views, help

    async def action_quit(self) -> None:
        """``q``: edits in the compose form are never dropped without asking (save as / discard / cancel)."""
        compose = self._mounted_view(VIEWS[0].mode)
        if isinstance(compose, ComposeScreen) and compose.is_mounted:
            compose.guard_edits("Quitting", self.exit)
        else:
            self.exit()

    def action_switch_view(self, mode: str) -> None:
        if mode != self.current_mode:
            self.switch_mode(mode)

    def help_sections(self) -> HelpSections:
        """Every key, generated from the bindings: the current view (or dialog) first, its panes as mounted,
        then the app's keys, the other views and the dialogs."""
        from ntui.ui.screens.action_dialogs import ConfirmCancelScreen, ConfirmRequeueScreen, SignalPickerScreen
        from ntui.ui.screens.confirm import ConfirmSubmitScreen
        from ntui.ui.screens.dialogs import SaveAsScreen, UnsavedEditsScreen, YesNoScreen
        from ntui.ui.screens.editor import PresetEditorScreen
        from ntui.ui.screens.help import HelpScreen, as_bindings, mounted_panes, view_sections
        from ntui.ui.screens.resubmit import ResubmitDiffScreen
        from ntui.ui.screens.sweep_resubmit import ResubmitFailedScreen
        from ntui.ui.screens.whatif import WhatIfScreen

        current = next((s for s in reversed(self.screen_stack) if not isinstance(s, HelpScreen)), self.screen)
        titles = {v.screen(): f"{v.title} view" for v in VIEWS}
        first = view_sections(titles.get(type(current), pane_title_of(current)), type(current),
                              mounted_panes(current))
        sections: list[tuple[str, Sequence[Binding]]] = [*first]
        sections.append(("Everywhere", [*as_bindings(self.BINDINGS), PALETTE_BINDING]))
        for view in VIEWS:
            cls = view.screen()
            if isinstance(current, cls):
                continue
            mounted = self._mounted_view(view.mode)
            panes = mounted_panes(mounted) if mounted is not None else getattr(cls, "HELP_PANES", ())
            sections += view_sections(f"{view.title} view", cls, panes)
        dialogs = (("Preset editor", PresetEditorScreen), ("Confirm submission", ConfirmSubmitScreen),
                   ("Confirm cancel", ConfirmCancelScreen), ("Confirm requeue", ConfirmRequeueScreen),
                   ("Signal picker", SignalPickerScreen), ("Yes / no questions", YesNoScreen),
                   ("Save as", SaveAsScreen), ("Unsaved edits", UnsavedEditsScreen),
                   ("Resubmit: the preset changed", ResubmitDiffScreen),
                   ("Resubmit a sweep's failed tasks", ResubmitFailedScreen), ("What would start sooner", WhatIfScreen),
                   ("This help", HelpScreen))
        for title, cls in dialogs:
            if not isinstance(current, cls):
                sections += view_sections(title, cls, ())
        return sections

    def _mounted_view(self, mode: str) -> Screen[Any] | None:
        """The base screen of a view that has been opened (its widgets are mounted), else None."""
        stack = self._screen_stacks.get(mode) or []
        return stack[0] if stack else None

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
        from ntui.core.errors import describe_error

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
    settings: Settings | None = None,
    cluster_runners: Mapping[str, CommandRunner] | None = None,
    clusters: Sequence[str] | None = None,
    local_slurm: bool | None = None,
    local_name: str | None = None,
) -> NtuiApp:
    """The app, with everything injectable (tests and screenshots pass a FakeRunner, a frozen clock, ...).
    Without ``settings`` the app reads the user's settings file itself (:attr:`NtuiApp.settings`). ``clusters``: the
    clusters of the settings the jobs view shows (default: all), each through its runner in ``cluster_runners`` (a
    test's) or its own ssh login; ``local_slurm``: whether it shows this machine's Slurm too (default: when its
    clients are here); ``local_name``: that cluster's name in the Cluster column (default: slurm.conf's)."""
    return NtuiApp(
        runner=runner,
        clock=clock or datetime.now,
        history_factory=history_factory,
        preset=preset,
        identity=default_identity() if identity is None else identity,
        cursor_blink=cursor_blink,
        settings=settings,
        cluster_runners=cluster_runners,
        clusters=clusters,
        local_slurm=local_slurm,
        local_name=local_name,
    )


if TYPE_CHECKING:  # the app provides every service views and panes use (ntui.ui.services)
    from ntui.ui.services import NtuiServices

    _SERVICES: type[NtuiServices] = NtuiApp


def run_app(clusters: Sequence[str] | None = None) -> int:
    """Run the app in the terminal; Textual restores the terminal on every exit (errors, signals, ^C).
    ``clusters``: show only these clusters of the settings, reached over ssh, and not this machine's Slurm
    (``ntui --cluster NAME``); None: every cluster of the settings, and this machine's Slurm where it is here."""
    app = make_app(clusters=clusters, local_slurm=False if clusters else None)
    app.reconcile_on_start = True
    try:
        app.run()
    except KeyboardInterrupt:
        return 130
    return int(app.return_code or 0)
