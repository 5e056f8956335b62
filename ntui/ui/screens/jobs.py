"""The jobs view: renders :class:`~ntui.core.jobs.model.JobModel` and forwards keys.

The model (Textual-free, unit-tested without an app) decides every Slurm call and holds every row; this
screen runs its thread-side calls in workers that post :mod:`ntui.ui.messages`, arms the timers it asks for,
and draws: the queue table, the back-off banner and the status line; the selected job goes, as one
:class:`~ntui.core.jobs.selected.SelectedJob`, to the tabs (:mod:`ntui.ui.widgets.job_tabs`: each tab draws it).

* one squeue per refresh; refreshes never overlap (the next one is armed with ``set_timer`` only after the
  last one ended); the interval adapts (``queue:`` in ``$XDG_CONFIG_HOME/ntui/config.yaml``) and backs off
  behind a banner that goes away by itself on the first good answer;
* ``scontrol show job -d`` only for the selected job, cached per state; the history look-up that gives a
  job's log paths is a worker of its own, so the log pane of ntui's own jobs never waits for the controller;
* final states once per job that leaves the queue, never per tick;
* a job array is one row that opens into its tasks (``t`` or enter: :func:`ntui.core.jobs.arrays.fold`); the
  row's details, logs, GPUs and report are one task's (a running one, else one that failed), its Sweep tab
  compares every task (:mod:`ntui.ui.widgets.sweep_pane`); ``ctrl+r`` on a sweep resubmits its failed tasks
  (:mod:`ntui.ui.screens.sweep_resubmit`).
* every :data:`JOURNAL_TICK_S` a journal worker lists the history (a submission from another terminal or host shows
  within a tick) and reads own jobs' journals through held descriptors (a start or an end shows within a tick, no
  Slurm call); squeue then runs at the idle pace (:class:`~ntui.core.jobs.queue.PollPolicy`).

One responsibility: the jobs view's widgets and workers (its decisions are the model's).
"""

from __future__ import annotations

import getpass
import os
import pwd
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Footer, Input, Static, TabbedContent
from textual.worker import Worker

from ntui.core.config import Settings
from ntui.core.jobs.arrays import Folded, fold
from ntui.core.jobs.journals import JournalBoard
from ntui.core.jobs.model import (
    DetailsRequest,
    FinalStateResolver,
    HistoryLike,
    HistoryOpener,
    JobModel,
    JournalRequest,
    PollRequest,
)
from ntui.core.jobs.queue import ENDED, FinishedJob, PollPolicy, Row
from ntui.core.jobs.recent import RecentLoads, RecentRequest, load_recent, record_details
from ntui.core.jobs.selected import selected_in_queue, selected_record
from ntui.core.jobs.submission import SubmittedJob
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import RECENT_ORDERS, RecentJob, RecentJobs, next_order
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.ui.messages import (
    ActionDone,
    DetailsFetched,
    EntryFound,
    JournalsRead,
    OutcomesResolved,
    QueueFailed,
    QueueFetched,
    WhyFetched,
)
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.jobs_actions import ACTION_GROUP, JobActions
from ntui.ui.screens.jobs_waiting import WHY_GROUP, WaitingWatch
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.job_tab import TabDeps
from ntui.ui.widgets.job_tabs import JOB_TABS, JobTabs
from ntui.ui.widgets.log_pane import LogPane
from ntui.ui.widgets.queue_table import QueueTable, TableChange, VirtualTable
from ntui.ui.widgets.recent_jobs import ORDER_KEY, RecentJobsTable, RecentLoaded
from ntui.ui.widgets.report_pane import ReportPane

__all__ = ["JobsScreen", "RefreshStats"]

#: Workers' groups (the error handler and the benchmark tell them apart by these).
SQUEUE_GROUP = "ntui-squeue"
DETAILS_GROUP = "ntui-details"
HISTORY_GROUP = "ntui-history"
OUTCOME_GROUP = "ntui-outcome"
RECENT_GROUP = "ntui-recent"
JOURNAL_GROUP = "ntui-journal"

#: How often the history is listed and own jobs' journals are read (files only, no Slurm call): a start or an end
#: shows within this, and a job submitted from another terminal too.
JOURNAL_TICK_S = 2.0

#: The queue box's share of the view's height when the recent list is under the queue (``-with-recent`` in the
#: CSS), and the list's least height.
RECENT_BOX_SHARE = 70
RECENT_MIN_HEIGHT = 5
#: While the focus is in the selected job's tabs, they get the room: the queue box keeps this share of the view's
#: height, and no more than the lines its rows need; on a short terminal (fewer than SHORT_VIEW rows) it keeps
#: COMPACT_BOX lines (its border and the queue's selected row), so that the log shows a dozen lines at 80x24.
TABS_FOCUSED_BOX_SHARE = 30
SHORT_VIEW = 30
COMPACT_BOX = 4

#: Delay between a cursor move and the details look-up (holding an arrow key costs no RPCs).
DETAILS_DEBOUNCE_S = 0.15


def _current_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):
        return getpass.getuser()


@dataclass(frozen=True)
class RefreshStats:
    """Timings of one refresh (seconds), for the status line and ``bench/queue_scale.py``."""

    squeue_s: float  # the squeue command, in the worker thread
    parse_s: float  # parse + format of new lines, in the worker thread
    apply_s: float  # diff + table update, on the UI thread
    total_s: float  # from the start of the worker to the end of the apply
    rows: int
    change: TableChange
    started_at: float = 0.0  # perf_counter() at the start of the worker
    finished_at: float = 0.0  # perf_counter() at the end of the apply


class JobsScreen(NtuiScreen):
    """The queue and the selected job's tabs; what it does to a job is :class:`JobActions`', why a job waits and the
    start/end notices :class:`WaitingWatch`'s."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]

    DEFAULT_CSS = """
    JobsScreen {
        #jobs-banner {
            display: none;
            height: auto;
            padding: 0 1;
            background: $error-muted;
            color: $text;
            text-style: bold;
        }
        #jobs-banner.-shown { display: block; }
        #jobs-body { height: 1fr; layout: vertical; }
        &.-wide #jobs-body { layout: horizontal; }
        /* the queue takes the rows it has (at least a few, at most ~40 %); the lower pane gets the rest */
        #jobs-queue {
            height: auto;
            min-height: 6;
            max-height: 40%;
            border: round $panel-lighten-2;
            border-title-color: $text-muted;
            border-subtitle-color: $text-muted;
        }
        #jobs-queue.-with-recent { max-height: 70%; }
        /* the focus is in the tabs: the class is the queue box's alone (a class on the screen restyles every widget) */
        #jobs-queue.-compact { min-height: 3; }
        #jobs-queue.-compact #jobs-table { scrollbar-size-horizontal: 0; }  /* its line goes to the selected row */
        #jobs-queue.-with-recent #jobs-table { max-height: 50%; }
        #jobs-queue:focus-within { border: round $primary; border-title-color: $text; }
        #jobs-table { height: auto; max-height: 100%; }
        &.-wide #jobs-queue { height: 1fr; max-height: 100%; }
        &.-wide #jobs-table { height: 1fr; }
        #jobs-queue.-maximized, #jobs-tabs.-maximized { height: 1fr; max-height: 100%; width: 1fr; }
        #jobs-queue.-maximized #jobs-table { height: 1fr; }
        #jobs-filter { display: none; }
        #jobs-filter.-shown { display: block; }
        #jobs-tabs { height: 1fr; }
        &.-wide #jobs-tabs { width: 45%; }
        #jobs-status { height: 1; padding: 0 1; color: $text-muted; }
        .pane-missing { padding: 1 2; color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh_now", "Refresh", id="ntui.jobs.refresh", tooltip="Run squeue now"),
        Binding("c", "cancel_job", "Cancel", id="ntui.jobs.cancel", tooltip="scancel the job (asks first)"),
        Binding("C", "signal_job", "Signal", id="ntui.jobs.signal", tooltip="scancel --signal=SIG (pick one)"),
        Binding("h", "hold_release", "Hold/release", id="ntui.jobs.hold", tooltip="scontrol hold / release"),
        Binding("R", "requeue_job", "Requeue", id="ntui.jobs.requeue", tooltip="scontrol requeue"),
        Binding("a", "toggle_all_users", "All users", id="ntui.jobs.all_users", tooltip="Own jobs / everyone's"),
        Binding("slash", "filter", "Filter jobs", id="ntui.jobs.filter", key_display="/",
                tooltip="Filter the queue's rows (the log pane's / searches its lines)"),
        Binding("s", "sort", "Sort", id="ntui.jobs.sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse sort", id="ntui.jobs.reverse_sort", show=False),
        *JobTabs.bindings(),
        Binding("E", "first_error", "First error", id="ntui.jobs.first_error", show=False,
                tooltip="Open the logs at the error of the rank that failed first"),
        Binding("escape", "clear_filter", "Clear filter", id="ntui.jobs.clear_filter", show=False),
        Binding("t", "toggle_tasks", "Tasks", id="ntui.jobs.tasks", show=False,
                tooltip="Open a job array's row into its tasks, or fold them (enter too)"),
        Binding("ctrl+r", "resubmit", "Resubmit", id="ntui.jobs.resubmit", show=False,
                tooltip="Open the job's preset with its recorded overrides in the compose view"),
        Binding(ORDER_KEY, "recent_order", "Recent order", id="ntui.jobs.recent_order", show=False,
                tooltip="Recent jobs: " + " → ".join(o.label for o in RECENT_ORDERS) + " (the box's subtitle)"),
        Binding("w", "what_if", "What if", id="ntui.jobs.what_if", show=False,
                tooltip="A pending job: what would start sooner (fewer nodes, a shorter time, another QOS or "
                        "partition), each asked of sbatch --test-only"),
        Binding("x", "shell", "Shell", id="ntui.jobs.shell", show=False,
                tooltip="A running job: a shell on its first node inside its allocation (srun --overlap --pty); "
                        "exit it to come back"),
        Binding("z", "toggle_maximize", "Zoom pane", id="ntui.jobs.zoom",
                tooltip="Maximise the focused pane (the queue, or the selected job's tabs); z again restores"),
    ]

    #: The panes with keys of their own, for the help screen before this view is first opened (the tabs: every one
    #: in the registry).
    HELP_PANES: ClassVar[tuple[type, ...]] = (QueueTable, *JOB_TABS)

    # ------------------------------------------------------------ set-up

    def __init__(
        self,
        *,
        runner: CommandRunner | None = None,
        settings: Settings | None = None,
        user: str | None = None,
        clock: Callable[[], datetime] | None = None,
        history_factory: HistoryOpener | None = None,
        resolver: FinalStateResolver | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.full_settings = settings if settings is not None else self.ntui_app.settings
        self._runner = runner
        self._history_factory = history_factory
        self.model = JobModel(self.full_settings, user or _current_user(),
                              clock=clock or (lambda: self.ntui_app.clock()), resolver=resolver)
        self._poll_timer: Timer | None = None
        self._details_timer: Timer | None = None
        self._debounce_pending = False
        self.last_refresh: RefreshStats | None = None
        self._table: QueueTable | None = None
        self._status_text = ""
        self._banner_text = ""
        self._recent_loads = RecentLoads()  # recent jobs (ntui/core/jobs/recent.py)
        self._journals = JournalBoard()  # own jobs' journals (ntui/core/jobs/journals.py)
        self._journal_store: HistoryLike | None = None  # the history the journal worker keeps open between ticks
        # held by a journal tick while it reads, and by the unmount that closes what it reads (an index connection
        # closed under a running query crashed the interpreter: SQLite's use after free, seen once at app exit)
        self._journal_lock = threading.Lock()
        self._journal_closed = False
        self._recent_job: RecentJob | None = None  # a recent job is selected (not the queue's cursor)
        self._tabs_focused = False  # the focus is in the selected job's tabs: they get the room (_fit_recent)
        # job arrays: one row each (ntui/core/jobs/arrays.py); the rows of the last refresh, before folding
        self._expanded: set[str] = set()
        self._folded: Folded = Folded({}, {})
        self._queue_rows: dict[str, Row] = {}
        self._queue_tags: dict[str, str] = {}
        self.waiting = WaitingWatch(self, self)  # why it waits, notices (ntui/ui/screens/jobs_waiting.py)
        self.actions = JobActions(self, self)  # cancel, signal, ..., resubmit (ntui/ui/screens/jobs_actions.py)

    # the model's state, as tests and benchmarks read it
    @property
    def policy(self) -> PollPolicy:
        return self.model.policy

    @property
    def all_users(self) -> bool:
        return self.model.all_users

    @property
    def user(self) -> str:
        return self.model.user

    @property
    def last_update(self) -> datetime | None:
        return self.model.last_update

    @property
    def refresh_count(self) -> int:
        return self.model.refresh_count

    @property
    def runner(self) -> CommandRunner:
        if self._runner is None:
            self._runner = self.ntui_app.runner
        return self._runner

    def _open_history(self) -> HistoryLike | None:
        """Called from worker threads."""
        factory = self._history_factory or self.ntui_app.open_history
        return factory()

    def compose(self) -> ComposeResult:
        # No Header, as in the compose view: the rows go to the panes; who and where is the queue's subtitle.
        yield Static("", id="jobs-banner", markup=False)
        with Vertical(id="jobs-body"):
            with Vertical(id="jobs-queue"):
                yield QueueTable(all_users=self.all_users, id="jobs-table", empty_text=self.model.empty_text())
                yield Input(placeholder="filter: text anywhere in a row (Enter keeps it, Esc clears)",
                            id="jobs-filter", compact=True)
                yield RecentJobsTable(id="jobs-recent")
            yield JobTabs(TabDeps(self.runner, self.full_settings, self.model.clock), id="jobs-tabs")
        yield Static("", id="jobs-status", markup=False)
        yield Footer()

    @property
    def tabs(self) -> JobTabs:
        return self.query_one("#jobs-tabs", JobTabs)

    @property
    def logs_pane(self) -> LogPane | None:
        tab = self.tabs.tab(LogPane)
        return tab if isinstance(tab, LogPane) else None

    @property
    def table(self) -> QueueTable:
        if self._table is None:
            self._table = self.query_one("#jobs-table", QueueTable)
        return self._table

    @property
    def details_panel(self) -> JobDetailsPanel:
        return self.query_one("#jobs-details", JobDetailsPanel)

    def on_mount(self) -> None:
        self.sub_title = self.ntui_app.identity
        self.query_one("#jobs-queue").border_subtitle = self.ntui_app.identity
        self._set_queue_title()
        self.table.focus()
        self.set_interval(1.0, self._tick)
        self.set_interval(JOURNAL_TICK_S, self._journal_tick, name="journals")
        self.watch(self.app, "last_submission", self._submitted, init=False)
        last = self.ntui_app.last_submission
        if last is not None:  # submitted before this view was first opened: select it
            self.table.move_cursor(key=str(last.job_id))
        self._start_poll()
        self.model.on_departure(self._jobs_departed)
        self._load_recent(resolve=True)

    def on_unmount(self) -> None:
        with self._journal_lock:  # a tick in flight finishes its reads first (file reads: milliseconds)
            self._journal_closed = True
            self._journals.close()
            if self._journal_store is not None:
                self._journal_store.close()
                self._journal_store = None

    def on_screen_resume(self) -> None:
        if self.model.stale():
            self.refresh_now()

    def _set_queue_title(self) -> None:
        box = self.query_one("#jobs-queue")
        box.border_title = "Queue · all users" if self.all_users else "Queue · my jobs"

    # ------------------------------------------------------------ polling

    def refresh_now(self) -> None:
        """Refresh as soon as possible (after a submit or an action). Never overlaps a running refresh:
        during one, another follows right after it."""
        self._start_poll()

    def _start_poll(self) -> None:
        request = self.model.request_poll()
        if request is None:
            return
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._poll_worker(request)

    @work(thread=True, exit_on_error=False, group=SQUEUE_GROUP, name="squeue", description="squeue")
    def _poll_worker(self, request: PollRequest) -> None:
        recent = self._recent_history()
        if recent:
            self.app.call_from_thread(self.model.history_submissions, recent)
        started = time.perf_counter()
        try:
            got = self.model.fetch(self.runner, request)
        except SlurmError as exc:
            self.post_message(QueueFailed(request, exc))
            return
        self.post_message(QueueFetched(request, got, started))

    def _recent_history(self) -> list[Any]:
        """*Thread-side*: the history's latest submissions (record files): jobs submitted from the CLI that may
        start and end between two polls (:meth:`JobModel.history_submissions`). The journal tick lists them too,
        more often; here each squeue sees the history as it is just before it."""
        try:
            history = self._open_history()
        except Exception:  # the history is a help here, never a reason for the queue to fail
            return []
        if history is None:
            return []
        try:
            entries = getattr(history, "entries", None)
            return list(entries(limit=20)) if callable(entries) else []
        except Exception:
            return []
        finally:
            history.close()

    # ------------------------------------------------------------ journals (ntui/core/jobs/journals.py)

    def _journal_tick(self) -> None:
        request = self.model.journal_request()
        if request is not None:
            self._journal_worker(request)

    @work(thread=True, exit_on_error=False, group=JOURNAL_GROUP, description="journals")
    def _journal_worker(self, request: JournalRequest) -> None:
        """Ticks never overlap, so the one history kept open here (opening it each tick cost more CPU than the
        tick's reads) is only ever used by one thread at a time; the lock keeps the unmount from closing it (and the
        journals' descriptors) under a tick."""
        with self._journal_lock:
            if self._journal_closed:
                return
            result = JobModel.journal_fetch(self._journal_history, self._journals, request, close=False)
        self.post_message(JournalsRead(result))

    def _journal_history(self) -> HistoryLike | None:
        """*Thread-side* (the journal worker): the history, opened on the first tick."""
        if self._journal_store is None:
            self._journal_store = self._open_history()
        return self._journal_store

    @on(JournalsRead)
    def _journals_read(self, msg: JournalsRead) -> None:
        msg.stop()
        done = self.model.journal_done(msg.result)
        if done.applied is not None:  # folded as a refresh's rows are (a job array stays one row)
            self._show_rows(done.applied.rows, done.applied.tags)
            self._show_recent()
            # a start or an end learned from a journal is announced as one learned from squeue (once: the
            # transitions remember the state they last saw, which the next squeue answer then agrees with)
            self.waiting.queue_applied()
            self.waiting.outcomes(tuple((f.key, f.outcome) for f in done.applied.departed if f.outcome))
            self._selection_changed()
        if done.poll_now:
            self.refresh_now()

    def _arm(self, delay: float) -> None:
        if delay > 0:
            self._poll_timer = self.set_timer(delay, self._start_poll, name="squeue re-arm")
        else:  # (a zero-delay Timer divides by zero in Textual 8.2.8)
            self._poll_timer = None
            self.call_later(self._start_poll)
        self._tick()

    @on(QueueFetched)
    def _queue_fetched(self, msg: QueueFetched) -> None:
        msg.stop()
        self._apply(msg)

    @on(QueueFailed)
    def _queue_failed(self, msg: QueueFailed) -> None:
        msg.stop()
        self._failed(msg.error)

    def _failed(self, error: BaseException) -> None:
        self._arm(self.model.poll_failed(error, background=not self.is_current))

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A worker raised something unexpected (the notification is out): keep the view working."""
        if worker.group == SQUEUE_GROUP:
            self._failed(worker.error or RuntimeError(message))
        elif worker.group == DETAILS_GROUP:
            self.model.details_failed()
        elif worker.group == HISTORY_GROUP:
            self.model.history_failed()
        elif worker.group == OUTCOME_GROUP:
            self.model.lookups_failed()
        elif worker.group == ACTION_GROUP:
            self.refresh_now()
        elif worker.group == RECENT_GROUP:
            self._recent_done()
            self.waiting.records(None)
        elif worker.group == WHY_GROUP:
            self.waiting.failed()
        elif worker.group == JOURNAL_GROUP:
            self.model.journal_failed()

    # ------------------------------------------------------------ applying a refresh

    def _apply(self, msg: QueueFetched) -> None:
        t0 = time.perf_counter()
        applied, delay = self.model.poll_succeeded(msg.request, msg.got, background=not self.is_current)
        if applied is not None:
            if applied.unchanged:
                change, rows = TableChange(), len(self.table.rows)
            else:
                change, rows = self._show_rows(applied.rows, applied.tags), len(self._folded.rows)
            t1 = time.perf_counter()
            got = msg.got
            self.last_refresh = RefreshStats(got.squeue_s, got.parse_s, t1 - t0, t1 - msg.started, rows, change,
                                             msg.started, t1)
            if not applied.unchanged:
                self._show_recent()  # a job that entered or left the queue moves between the two lists
                self.waiting.queue_applied()
            self._start_lookups()
            self._selection_changed()
        self._arm(delay)

    def _start_lookups(self) -> None:
        batch = self.model.take_lookups()
        if batch is not None:
            self._outcome_worker(batch)

    @work(thread=True, exit_on_error=False, group=OUTCOME_GROUP, description="final state")
    def _outcome_worker(self, batch: tuple[tuple[str, str], ...]) -> None:
        self.post_message(OutcomesResolved(self.model.resolve(self.runner, batch)))

    @on(OutcomesResolved)
    def _outcomes(self, msg: OutcomesResolved) -> None:
        msg.stop()
        changed = self.model.outcomes_resolved(msg.outcomes)
        if changed:  # by diff: an ended row's cells, and the counts of the array it belongs to
            rows = dict(self._queue_rows)
            rows.update((k, c) for k, c in changed.items() if k in rows)
            self._show_rows(rows, self._queue_tags)
        self.waiting.outcomes(msg.outcomes)
        self._start_lookups()
        self._selection_changed()

    # ------------------------------------------------------------ job arrays (ntui/core/jobs/arrays.py)

    def _show_rows(self, rows: dict[str, Row], tags: dict[str, str]) -> TableChange:
        """The queue's rows with each job array folded into one row (open ones with their tasks under it)."""
        self._queue_rows, self._queue_tags = rows, tags
        folded = self._folded = fold(rows, tags, self.model.live, self.model.ended, self._expanded,
                                     all_users=self.all_users)
        self._expanded &= set(folded.arrays)
        change = self.table.apply(folded.rows, folded.tags)
        self.table.set_parents(folded.parents)
        return change

    def _pane_key(self) -> str | None:
        """The job the details, log, GPU and report panes show: the cursor's, or for a job array's row one of its
        tasks (a running one, else one that failed, else the first)."""
        key = self.table.cursor_key
        return self._folded.representative(key) if key is not None else None

    def action_toggle_tasks(self) -> None:
        """``t`` (or enter on an array's row): open the array into its tasks, or fold them back."""
        array = self._folded.array_of(self.table.cursor_key)
        if array is None:
            self.notify("Not a job array: it has no tasks to open.", severity="warning", timeout=3)
            return
        self._expanded.symmetric_difference_update({array})
        self._show_rows(self._queue_rows, self._queue_tags)
        self.table.move_cursor(key=array)

    @on(VirtualTable.RowSelected, "#jobs-table")
    def _row_selected(self, event: VirtualTable.RowSelected) -> None:
        event.stop()
        if event.row_key is not None and event.row_key in self._folded.arrays:
            self.action_toggle_tasks()

    # ------------------------------------------------------------ selection, details, panes

    @on(VirtualTable.RowHighlighted, "#jobs-table")
    def _row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        event.stop()
        if not self.model.select(event.row_key):
            return
        self._recent_job = None
        if self._details_timer is not None:
            self._details_timer.stop()
        self._debounce_pending = True
        self._details_timer = self.set_timer(DETAILS_DEBOUNCE_S, self._selection_changed, name="details debounce")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self.table and self._recent_job is not None:  # back from the recent jobs
            self._recent_job = None
            self._selection_changed()
        in_tabs = self.tabs in event.widget.ancestors
        if in_tabs != self._tabs_focused:
            self._tabs_focused = in_tabs  # the tabs get the room while the user works in them
            self.call_after_refresh(self._fit_recent)

    @on(VirtualTable.HeaderSelected, "#jobs-table")
    def _header_selected(self, event: VirtualTable.HeaderSelected) -> None:
        event.stop()
        table = self.table
        reverse = not table.sort_reverse if table.sort_column == event.column_key else False
        table.sort(event.column_key, reverse=reverse)

    @property
    def busy(self) -> bool:
        """A refresh, details, history or final-state look-up, or an action is running (tests and benchmarks
        wait for ``not busy``; the panes' own long-lived workers do not count)."""
        if self.model.busy or self._debounce_pending or self._recent_loads.running or self.waiting.inflight:
            return True
        return any(w.group == ACTION_GROUP and not w.is_finished for w in self.workers)

    def _selection_changed(self) -> None:
        """The selected job to every tab: the queue's row (its details looked up, its history entry asked for),
        or the recent job's record."""
        self._debounce_pending = False
        if self._recent_job is not None:  # a recent job is selected: its record, not the queue's cursor
            self._show_record(self._recent_job)
            return
        key = self._pane_key()
        if key is None:
            self.model.selected = None
            self.tabs.select_job(selected_in_queue(self.model, self._folded, None))
            self.waiting.selected(None)
            return
        step = self.model.details_step(key, details_visible=self._details_visible())
        if step.request is not None:
            self._details_worker(step.request)
        wanted = self.model.history_request(key)
        if wanted is not None:
            self._history_worker(wanted)
        self.tabs.select_job(selected_in_queue(self.model, self._folded, self.table.cursor_key, step.view))
        self.waiting.selected(key)

    @work(thread=True, exclusive=True, exit_on_error=False, group=DETAILS_GROUP, description="job details")
    def _details_worker(self, request: DetailsRequest) -> None:
        self.post_message(DetailsFetched(self.model.fetch_details(self.runner, request)))

    @on(DetailsFetched)
    def _details_fetched(self, msg: DetailsFetched) -> None:
        msg.stop()
        if self.model.details_fetched(msg.result) and msg.result.key == self._pane_key():
            self._selection_changed()

    @work(thread=True, exit_on_error=False, group=HISTORY_GROUP, description="history look-up")
    def _history_worker(self, key: str) -> None:
        """The history (a local file, no Slurm call): where ntui wrote the job's logs, its script."""
        self.post_message(EntryFound(key, JobModel.lookup_entry(self._open_history, key)))

    @on(EntryFound)
    def _entry_found(self, msg: EntryFound) -> None:
        msg.stop()
        if self.model.entry_found(msg.key, msg.entry) and msg.key == self._pane_key():
            self._selection_changed()  # the details gain what ntui submitted; the log pane its paths

    @on(TabbedContent.TabActivated, "#jobs-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if self._details_visible():
            self._selection_changed()  # a running job's node states may be stale: looked at again

    def _details_visible(self) -> bool:
        try:
            return self.query_one("#jobs-tabs", TabbedContent).active == "tab-details"
        except Exception:  # not composed yet
            return True

    def action_show_tab(self, tab: str) -> None:
        """A tab's key (:data:`~ntui.ui.widgets.job_tabs.JOB_TABS`) from any pane of the view: the tab is shown and
        the focus moves into it (``z`` then zooms it). With the focus inside the tab being hidden, it goes to the
        queue first: Textual would move it to the next widget of the same tab, whose focus re-activates that tab
        (the key seemed to do nothing)."""
        tabs = self.tabs
        focused = self.focused
        if tab != tabs.active and focused is not None and tabs in focused.ancestors:
            self.table.focus()
        tabs.show_tab(tab)

    def action_toggle_maximize(self) -> None:
        """``z``: the focused pane (the queue, or the selected job's tabs) fills the view; ``z`` restores."""
        if self.maximized is not None:
            self.minimize()
            return
        tabs = self.query_one("#jobs-tabs", TabbedContent)
        focused = self.focused
        self.maximized = tabs if focused is not None and tabs in focused.ancestors else self.query_one("#jobs-queue")

    def action_first_error(self) -> None:
        """``E`` from anywhere in the view (the log pane has the same key when it has focus)."""
        logs = self.logs_pane
        if logs is None:
            return
        self.action_show_tab(LogPane.TAB.pane_id)
        self.call_after_refresh(logs.action_first_error)

    # ------------------------------------------------------------ status line and banner

    def _tick(self) -> None:
        if not self.is_mounted:
            return
        banner = self.query_one("#jobs-banner", Static)
        text = self.model.banner()
        if text:
            if text != self._banner_text:
                self._banner_text = text
                banner.update(text)
            banner.add_class("-shown")
        elif self._banner_text:
            self._banner_text = ""
            banner.update("")
            banner.remove_class("-shown")
        table = self.table
        for key, text in self.model.ticked_elapsed().items():  # elapsed ticks between polls
            if key in table and table.row_tag(key) != ENDED:
                table.update_cell(key, "elapsed", text, update_width=False)
        self.waiting.tick()  # the details' elapsed and why, as of now
        empty = self.model.empty_text()
        if empty != table.empty_text:
            table.empty_text = empty
            if not table.row_count:
                table.refresh()
        calls = getattr(self.runner, "calls", None)  # counted by test and demo runners only
        status = self.model.status_line(filter_text=table.filter_text, shown=table.row_count,
                                        slurm_calls=calls if isinstance(calls, int) else None)
        if status != self._status_text:
            self._status_text = status
            self.query_one("#jobs-status", Static).update(status)

    # ------------------------------------------------------------ view actions

    def action_refresh_now(self) -> None:
        self.refresh_now()

    def action_toggle_all_users(self) -> None:
        self.model.toggle_all_users()
        self.table.configure(self.all_users)
        self._set_queue_title()
        self.refresh_now()
        self._tick()

    def action_filter(self) -> None:
        box = self.query_one("#jobs-filter", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Changed, "#jobs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.table.filter_text = event.value
        self._tick()

    @on(Input.Submitted, "#jobs-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.query_one("#jobs-filter", Input).remove_class("-shown")
        self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#jobs-filter", Input)
        if box.has_class("-shown") or self.table.filter_text:
            box.value = ""
            box.remove_class("-shown")
            self.table.filter_text = ""
            self.table.focus()
            self._tick()

    def action_sort(self) -> None:
        table = self.table
        keys = [c.key for c in table.columns]
        current = table.sort_column
        nxt = keys[0] if current is None else (keys[keys.index(current) + 1] if keys.index(current) + 1 < len(
            keys) else None)
        table.sort(nxt, reverse=False)
        self.notify(f"sorted by {nxt}" if nxt else "squeue order", timeout=2)

    def action_reverse_sort(self) -> None:
        table = self.table
        table.sort(table.sort_column or "id", reverse=not table.sort_reverse)

    # ------------------------------------------------------------ job actions (ntui/ui/screens/jobs_actions.py)

    @property
    def record_selected(self) -> bool:
        """A recent job's record is selected, not the queue's row."""
        return self._recent_job is not None

    @on(WhyFetched)
    def _why_fetched(self, msg: WhyFetched) -> None:
        msg.stop()
        self.waiting.fetched(msg.extras)

    @property
    def folded(self) -> Folded:
        """The queue's rows as last shown: job arrays folded into one row each."""
        return self._folded

    def open_history_entry(self, job_id: str) -> HistoryEntry | None:
        """*Thread-side*: ntui's history entry of ``job_id`` (a file read)."""
        return JobModel.lookup_entry(self._open_history, job_id)

    def action_cancel_job(self) -> None:
        self.actions.cancel()

    def action_signal_job(self) -> None:
        self.actions.signal()

    def action_hold_release(self) -> None:
        self.actions.hold_release()

    def action_requeue_job(self) -> None:
        self.actions.requeue()

    def action_what_if(self) -> None:
        self.actions.what_if()

    def action_shell(self) -> None:
        self.actions.shell()

    def action_resubmit(self) -> None:
        """The selected job (a recent one, or the queue's) in the compose view: its preset and overrides."""
        job_id = self._recent_job.job_id if self._recent_job is not None else self.table.cursor_key
        if job_id is None:
            self.notify("No job selected to resubmit.", severity="warning")
            return
        self.actions.resubmit(job_id)

    @on(ActionDone)
    def _action_done(self, msg: ActionDone) -> None:
        msg.stop()
        self.actions.done(msg.text)

    @on(ReportPane.ApplyFix)
    def _apply_fix(self, msg: ReportPane.ApplyFix) -> None:
        msg.stop()
        self.actions.resubmit(msg.job_id, (msg.fix,))

    # ------------------------------------------------------------ submissions

    def _submitted(self, job: SubmittedJob | None) -> None:
        if job is None or not job.job_id:
            return
        self.model.expect_submission(str(job.job_id))
        self.table.move_cursor(key=str(job.job_id))
        self.refresh_now()

    # ------------------------------------------------------------ recent jobs (ntui/core/jobs/recent.py)

    def _jobs_departed(self, gone: tuple[FinishedJob, ...]) -> None:
        self._load_recent(resolve=True)  # their records first, then the list

    def _load_recent(self, *, resolve: bool) -> None:
        request = self._recent_loads.request(resolve=resolve)
        if request is not None:
            self._recent_worker(request)

    @work(thread=True, exit_on_error=False, group=RECENT_GROUP, description="recent jobs")
    def _recent_worker(self, request: RecentRequest) -> None:
        history = self._open_history()
        try:
            got = load_recent(history, self.runner, request, days=self.full_settings.queue.recent_days,
                              now=self.model.clock().timestamp(), timeout=self.model.slurm_timeout)
        finally:
            if history is not None:
                history.close()
        self.post_message(RecentLoaded(got))

    @on(RecentLoaded)
    def _recent_loaded(self, msg: RecentLoaded) -> None:
        msg.stop()
        if msg.jobs is not None:
            for warning in msg.jobs.warnings:
                self.log.warning(f"recent jobs: {warning}")
            self._show_recent(msg.jobs)
        self.waiting.records(msg.jobs)
        self._recent_done()

    def _show_recent(self, jobs: RecentJobs | None = None) -> None:
        """The recent jobs (``jobs``: a new load, else the last one) without those in the live queue."""
        recent = self.query_one("#jobs-recent", RecentJobsTable)
        loaded = jobs if jobs is not None else recent.loaded
        if loaded is None:
            return
        recent.show_jobs(loaded, live=set(self.model.live), now=self.model.clock().timestamp(),
                         days=self.full_settings.queue.recent_days)
        # the queue box makes room for the list under the live queue (the queue keeps at least half)
        self.query_one("#jobs-queue").set_class(recent.has_class("-shown"), "-with-recent")
        self.call_after_refresh(self._fit_recent)

    def _fit_recent(self) -> None:
        """Share the queue box's lines between the live queue and the recent list: the queue gets what it needs
        up to at least half of them (more when the list needs less), the list the rest. (Percentages of an
        auto-height box, in CSS, capped each at half the box and left the rest of it empty.) Runs after each
        layout that may change the shares."""
        if not self.is_mounted:
            return
        recent = self.query_one("#jobs-recent", RecentJobsTable)
        table = self.table
        box = self.query_one("#jobs-queue")
        body = self.query_one("#jobs-body")
        full = self.has_class("-wide") or box.has_class("-maximized")
        room = body.content_size.height
        box.set_class(self._tabs_focused and not full, "-compact")
        if self._tabs_focused and not full:
            cap = COMPACT_BOX if self.size.height < SHORT_VIEW else room * TABS_FOCUSED_BOX_SHARE // 100
            box.styles.max_height = cap
        else:
            cap = room if full else room * RECENT_BOX_SHARE // 100
            box.styles.max_height = None  # the stylesheet's
        if not recent.has_class("-shown"):
            table.styles.max_height = None
            recent.styles.max_height = None
            return
        box_filter = self.query_one("#jobs-filter", Input)
        inner = cap - box.styles.gutter.height - (box_filter.outer_size.height if box_filter.display else 0)
        compact = self._tabs_focused and not full
        recent.set_class(compact, "-compact")
        if compact:  # the list that holds the selection keeps the box's lines, its cursor's row in sight
            in_recent = self._recent_job is not None
            fits = (0, inner) if in_recent else (inner, 0)
        else:
            recent_need = recent.row_count + 1 + recent.styles.gutter.height  # rows, header, border
            table_max = max(inner // 2, inner - recent_need)
            table_need = table.virtual_size.height  # rows and header
            fits = (table_max, max(RECENT_MIN_HEIGHT, inner - min(table_need, table_max)))
        for widget, lines in zip((table, recent), fits, strict=True):
            if widget.styles.max_height is None or widget.styles.max_height.value != lines:
                widget.styles.max_height = lines
        if compact:
            self.call_after_refresh(self._cursor_in_sight)

    def _cursor_in_sight(self) -> None:
        """The recent list's selected row, in the list made smaller (the queue table does it on its own resize)."""
        if self._recent_job is not None:
            recent = self.query_one("#jobs-recent", RecentJobsTable)
            recent.move_cursor(row=recent.cursor_row, scroll=True, animate=False)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._fit_recent)

    def action_recent_order(self) -> None:
        """The recent list's next order (:data:`ntui.core.records.record.RECENT_ORDERS`): re-sorted at once, no new
        load."""
        recent = self.query_one("#jobs-recent", RecentJobsTable)
        recent.order = next_order(recent.order)
        self._show_recent()

    def _recent_done(self) -> None:
        again = self._recent_loads.finished()
        if again is not None:
            self._recent_worker(again)

    @on(RecentJobsTable.Selected)
    def _recent_selected(self, msg: RecentJobsTable.Selected) -> None:
        msg.stop()
        self._recent_job = msg.job
        self._show_record(msg.job)

    def _show_record(self, job: RecentJob) -> None:
        """A recent job: its record to every tab (no Slurm call); its logs as for a live job."""
        self.details_panel.show_why(None)
        self.tabs.select_job(selected_record(job, record_details(job)))
