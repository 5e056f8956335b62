"""The jobs view: renders :class:`~ntui.core.jobs.model.JobModel` and forwards keys; orchestration only.

The model (Textual-free, unit-tested without an app) decides every Slurm call and holds every row. The screen wires
four parts and hands each message to the one it is for:

* the queue box (:class:`~ntui.ui.widgets.queue_box.QueueBox`): the live queue with job arrays folded, its filter
  and sort, the recent jobs under it, and how they share the lines;
* the selected job's tabs (:class:`~ntui.ui.widgets.job_tabs.JobTabs`): the selected job goes to them as one
  :class:`~ntui.core.jobs.selected.SelectedJob`, built the same way for a queue row and a recent job;
* the model's workers (:class:`~ntui.ui.screens.jobs_workers.ModelWorkers`): squeue, details, history, final
  states, journals and recent jobs, each answer posted back as a message;
* the clusters reached over ssh (:class:`~ntui.ui.screens.jobs_clusters.RemoteClusters`): their workers, their
  answers handed to their model, a job's runner on its own cluster;
* the collaborators: what is done to a job (:class:`~ntui.ui.screens.job_operations.JobOperations`), why it waits and
  the start/end notices (:class:`~ntui.ui.screens.jobs_waiting.WaitingWatch`).

The screen itself draws the back-off banner and the status line, and keeps which job is selected.

One responsibility, the view's wiring (past 600 lines with its stylesheet and its key table, 115 of them).
"""

from __future__ import annotations

import getpass
import os
import pwd
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Footer, Static, TabbedContent
from textual.worker import Worker

from ntui.core.config import Settings
from ntui.core.jobs.arrays import Folded
from ntui.core.jobs.details import EntryBook, HistoryLike, HistoryOpener
from ntui.core.jobs.finals import FinalStateResolver
from ntui.core.jobs.model import JobModel
from ntui.core.jobs.progress import PROGRESS_TICK_S
from ntui.core.jobs.queue import ENDED, PollPolicy
from ntui.core.jobs.recent import record_details
from ntui.core.jobs.selected import selected_in_queue, selected_record
from ntui.core.jobs.submission import SubmittedJob
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import RECENT_ORDERS, RecentJob, RecentJobs
from ntui.core.slurm.runner import CommandRunner
from ntui.ui.messages import (
    ActionDone,
    DetailsFetched,
    EntryFound,
    JournalsRead,
    OutcomesResolved,
    ProgressRead,
    QueueFailed,
    QueueFetched,
    ResubmitWith,
    WhyFetched,
)
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.job_operations import ACTION_GROUP, JobOperations
from ntui.ui.screens.jobs_clusters import RemoteClusters, on_cluster_answers
from ntui.ui.screens.jobs_waiting import WHY_GROUP, WaitingWatch
from ntui.ui.screens.jobs_workers import JOURNAL_TICK_S, RECENT_GROUP, SQUEUE_GROUP, ModelWorkers
from ntui.ui.widgets.job_tab import TabDeps
from ntui.ui.widgets.job_tabs import JOB_TABS, JobTabs
from ntui.ui.widgets.queue_box import QueueBox
from ntui.ui.widgets.queue_table import QueueTable, TableChange, VirtualTable
from ntui.ui.widgets.recent_jobs import ORDER_KEY, RecentJobsTable, RecentLoaded

__all__ = ["JobsScreen", "RefreshStats"]

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
    """The queue box and the selected job's tabs, wired to the model's workers and the collaborators (see the module
    docstring)."""

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
        #jobs-tabs.-maximized { height: 1fr; max-height: 100%; width: 1fr; }
        #jobs-tabs { height: 1fr; }
        &.-wide #jobs-tabs { width: 45%; }
        #jobs-status { height: 1; padding: 0 1; color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh_now", "Refresh", id="ntui.jobs.refresh", tooltip="Run squeue now"),
        Binding("c", "job('cancel')", "Cancel", id="ntui.jobs.cancel", tooltip="scancel the job (asks first)"),
        Binding("C", "job('signal')", "Signal", id="ntui.jobs.signal", tooltip="scancel --signal=SIG (pick one)"),
        Binding("h", "job('hold_release')", "Hold/release", id="ntui.jobs.hold", tooltip="scontrol hold / release"),
        Binding("R", "job('requeue')", "Requeue", id="ntui.jobs.requeue", tooltip="scontrol requeue"),
        Binding("a", "toggle_all_users", "All users", id="ntui.jobs.all_users", tooltip="Own jobs / everyone's"),
        *QueueBox.KEYS,
        *JobTabs.bindings(),
        Binding("ctrl+r", "resubmit", "Resubmit", id="ntui.jobs.resubmit", show=False,
                tooltip="Open the job's preset with its recorded overrides in the compose view"),
        Binding(ORDER_KEY, "recent_order", "Recent order", id="ntui.jobs.recent_order", show=False,
                tooltip="Recent jobs: " + " → ".join(o.label for o in RECENT_ORDERS) + " (the box's subtitle)"),
        Binding("w", "job('what_if')", "What if", id="ntui.jobs.what_if", show=False,
                tooltip="A pending job: what would start sooner (fewer nodes, a shorter time, another QOS or "
                        "partition), each asked of sbatch --test-only"),
        Binding("x", "job('shell')", "Shell", id="ntui.jobs.shell", show=False,
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
        self._details_timer: Timer | None = None
        self._debounce_pending = False
        self.last_refresh: RefreshStats | None = None
        self._recent_job: RecentJob | None = None  # a recent job is selected (not the queue's cursor)
        self._tabs_focused = False  # the focus is in the selected job's tabs: they get the room (QueueBox.fit)
        # the clusters reached over ssh (ntui/ui/screens/jobs_clusters.py): one poller each, through its own runner
        self.remote = RemoteClusters(self, self, resolver=resolver)
        self.clusters = self.remote.queues  # their queues, as the collaborators read them (jobs_view.JobsViewCore)
        self.model_workers = ModelWorkers(self, self, local=self.remote.board.local)  # squeue, look-ups, journals
        self.waiting = WaitingWatch(self, self)  # why it waits, notices (ntui/ui/screens/jobs_waiting.py)
        self.actions = JobOperations(self, self)  # cancel, signal, ..., resubmit (ntui/ui/screens/job_operations.py)

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

    def runner_for(self, cluster: str | None) -> CommandRunner:
        """The runner of a job's cluster: the local one (None), or that cluster's over ssh."""
        return self.remote.runner_for(cluster)

    def open_history(self) -> HistoryLike | None:
        """*Thread-side*: ntui's history (a test's own, or the app's)."""
        factory = self._history_factory or self.ntui_app.open_history
        return factory()

    def compose(self) -> ComposeResult:
        # No Header, as in the compose view: the rows go to the panes; who and where is the queue's subtitle.
        yield Static("", id="jobs-banner", markup=False)
        with Vertical(id="jobs-body"):
            yield QueueBox(self.model, empty_text=self.model.empty_text(), id="jobs-queue",
                           cluster_of=self.remote.board.column())
            yield JobTabs(TabDeps(self.runner, self.full_settings, self.model.clock, files=self.remote.files,
                                  links=self.remote.links),
                          id="jobs-tabs")
        yield Static("", id="jobs-status", markup=False)
        yield Footer()

    @property
    def queue_box(self) -> QueueBox:
        return self.query_one("#jobs-queue", QueueBox)

    @property
    def table(self) -> QueueTable:
        return self.queue_box.table

    @property
    def folded(self) -> Folded:
        """The queue's rows as last shown: job arrays folded into one row each."""
        return self.queue_box.folded

    @property
    def tabs(self) -> JobTabs:
        return self.query_one("#jobs-tabs", JobTabs)

    def on_mount(self) -> None:
        self.sub_title = self.ntui_app.identity
        self.queue_box.set_title(self.ntui_app.identity)
        self.table.focus()
        self.set_interval(1.0, self._tick)
        self.set_interval(JOURNAL_TICK_S, self.model_workers.journal_tick, name="journals")
        self.set_interval(PROGRESS_TICK_S, self.model_workers.progress_tick, name="progress")
        self.watch(self.app, "last_submission", self._submitted, init=False)
        last = self.ntui_app.last_submission
        if last is not None:  # submitted before this view was first opened: select it
            self.table.move_cursor(key=self.remote.board.submission_key(str(last.job_id), last.via))
        self.refresh_now()
        self.model.finished.on_departure(self.model_workers.jobs_departed)
        self.model_workers.load_recent(resolve=True)
        self.remote.start()  # each cluster's own history, and again when a job leaves its queue

    def on_unmount(self) -> None:
        self.model_workers.close()

    def on_screen_resume(self) -> None:
        if self.model.polls.stale():
            self.refresh_now()

    # ------------------------------------------------------------ the model's answers

    def refresh_now(self) -> None:
        """Refresh as soon as possible (after a submit or an action). Never overlaps a running refresh:
        during one, another follows right after it."""
        if self.remote.board.local:
            self.model_workers.start_poll()
        self.remote.refresh()

    @on_cluster_answers  # a cluster's worker answered: to the clusters' owner (ntui/ui/screens/jobs_clusters.py)
    def _cluster_answer(self, msg: Message) -> None:
        msg.stop()
        self.remote.handle(msg)

    @on(QueueFetched)
    def _queue_fetched(self, msg: QueueFetched) -> None:
        msg.stop()
        self._apply(msg)

    def _apply(self, msg: QueueFetched) -> None:
        """A refresh's answer to the model, its rows to the queue box (``bench/queue_scale.py`` times a key sent as
        this starts)."""
        t0 = time.perf_counter()
        applied, delay = self.model.poll_succeeded(msg.request, msg.got, background=not self.is_current)
        if applied is not None:
            box = self.queue_box
            if applied.unchanged:
                change, rows = TableChange(), len(box.table.rows)
            else:
                change, rows = box.show_rows(applied.rows, applied.tags), len(box.folded.rows)
            t1 = time.perf_counter()
            got = msg.got
            self.last_refresh = RefreshStats(got.squeue_s, got.parse_s, t1 - t0, t1 - msg.started, rows, change,
                                             msg.started, t1)
            if not applied.unchanged:
                self._show_recent()  # a job that entered or left the queue moves between the two lists
                self.waiting.queue_applied()
            self.model_workers.start_lookups()
            self._selection_changed()
        self._arm(delay)

    @on(QueueFailed)
    def _queue_failed(self, msg: QueueFailed) -> None:
        msg.stop()
        self._arm(self.model.poll_failed(msg.error, background=not self.is_current))

    def _arm(self, delay: float) -> None:
        self.model_workers.arm(delay)
        self._tick()

    @on(JournalsRead)
    def _journals_read(self, msg: JournalsRead) -> None:
        msg.stop()
        done = self.model.journal_done(msg.result)
        if done.applied is not None:  # folded as a refresh's rows are (a job array stays one row)
            self.queue_box.show_rows(done.applied.rows, done.applied.tags)
            self._show_recent()
            # a start or an end learned from a journal is announced as one learned from squeue (once: the
            # transitions remember the state they last saw, which the next squeue answer then agrees with)
            self.waiting.queue_applied()
            self.waiting.outcomes(tuple((f.key, f.outcome) for f in done.applied.departed if f.outcome))
            self._selection_changed()
        if done.poll_now:
            self.refresh_now()

    @on(ProgressRead)
    def _progress_read(self, msg: ProgressRead) -> None:
        msg.stop()
        applied = self.model.progress_done(msg.views)
        if applied is not None:  # a job's progress moved: its row's words
            self.queue_box.show_rows(applied.rows, applied.tags)
            self._selection_changed()
        now = self.model.clock().timestamp()
        for job_id, words in self.model.progress.newly_cut(self.model.live, now):
            self.notify(f"Job {job_id} {words}", title="Will be cut at its time limit", severity="warning",
                        timeout=30, markup=False)
        for job_id, words in self.model.progress.newly_quiet(now):
            self.notify(f"Job {job_id} is {words}. k shows where each rank waits.", title="A job has gone quiet",
                        severity="warning", timeout=30, markup=False)

    @on(OutcomesResolved)
    def _outcomes(self, msg: OutcomesResolved) -> None:
        msg.stop()
        changed = self.model.finished.resolved(msg.outcomes, all_users=self.all_users)
        if changed:  # by diff: an ended row's cells, and the counts of the array it belongs to
            self.queue_box.update_rows(changed)
        self.waiting.outcomes(msg.outcomes)
        self.model_workers.start_lookups()
        self._selection_changed()

    @on(DetailsFetched)
    def _details_fetched(self, msg: DetailsFetched) -> None:
        msg.stop()
        if self.model.details.fetched(msg.result) and msg.result.key == self.queue_box.pane_key():
            self._selection_changed()

    @on(EntryFound)
    def _entry_found(self, msg: EntryFound) -> None:
        msg.stop()
        self.model.history.found(msg.key, msg.entry)
        if msg.key == self.model.selected and msg.key == self.queue_box.pane_key():
            self._selection_changed()  # the details gain what ntui submitted; the log pane its paths

    @on(WhyFetched)
    def _why_fetched(self, msg: WhyFetched) -> None:
        msg.stop()
        self.waiting.fetched(msg.extras)

    @on(ActionDone)
    def _action_done(self, msg: ActionDone) -> None:
        msg.stop()
        self.actions.done(msg.text)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A worker raised something unexpected (the notification is out): keep the view working."""
        group = worker.group
        if self.remote.failed(worker, message):
            return
        if group == SQUEUE_GROUP:
            self._arm(self.model.poll_failed(worker.error or RuntimeError(message), background=not self.is_current))
        elif group == RECENT_GROUP:
            self.model_workers.recent_done()
            self.waiting.records(None)
        elif self.model_workers.failed(group):
            return
        elif group == ACTION_GROUP:
            self.refresh_now()
        elif group == WHY_GROUP:
            self.waiting.failed()

    # ------------------------------------------------------------ selection

    @on(VirtualTable.RowHighlighted, "#jobs-table")
    def _row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        event.stop()
        if not self.remote.board.select(event.row_key, self.model):
            return
        self._recent_job = None
        if self._details_timer is not None:
            self._details_timer.stop()
        self._debounce_pending = True
        self._details_timer = self.set_timer(DETAILS_DEBOUNCE_S, self._selection_changed, name="details debounce")

    @on(RecentJobsTable.Selected)
    def _recent_selected(self, msg: RecentJobsTable.Selected) -> None:
        msg.stop()
        self._recent_job = msg.job
        self._show_record(msg.job)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self.table and self._recent_job is not None:  # back from the recent jobs
            self._recent_job = None
            self._selection_changed()
        in_tabs = self.tabs in event.widget.ancestors
        if in_tabs != self._tabs_focused:
            self._tabs_focused = in_tabs  # the tabs get the room while the user works in them
            self.call_after_refresh(self._fit)

    @property
    def record_selected(self) -> bool:
        """A recent job's record is selected, not the queue's row."""
        return self._recent_job is not None

    @property
    def busy(self) -> bool:
        """A refresh, details, history or final-state look-up, or an action is running (tests and benchmarks
        wait for ``not busy``; the panes' own long-lived workers do not count)."""
        if (self.model.busy or self._debounce_pending or self.model_workers.recent_loads.running
                or self.waiting.inflight or self.clusters.busy()):
            return True
        return any(w.group == ACTION_GROUP and not w.is_finished for w in self.workers)

    def _selection_changed(self) -> None:
        """The selected job to every tab: the queue's row (its details looked up, its history entry asked for),
        or the recent job's record."""
        self._debounce_pending = False
        if self._recent_job is not None:  # a recent job is selected: its record, not the queue's cursor
            self._show_record(self._recent_job)
            return
        box = self.queue_box
        key = box.pane_key()
        if self.remote.selected(key):  # a job of a cluster reached over ssh (or ended there): asked there
            return
        if key is None:
            self.model.details.selected = None
            self.tabs.select_job(selected_in_queue(self.model, box.folded, None))
            self.waiting.selected(None)
            return
        step = self.model.details_step(key, details_visible=self._details_visible())
        if step.request is not None:
            self.model_workers.details(step.request)
        wanted = self.model.history.request(key)
        if wanted is not None:
            self.model_workers.history(wanted)
        self.tabs.select_job(selected_in_queue(self.model, box.folded, box.table.cursor_key, step.view))
        self.waiting.selected(key)

    def _show_record(self, job: RecentJob) -> None:
        """A recent job: its record to every tab (no Slurm call); its logs as for a live job (a job of a cluster
        reached over ssh: read there)."""
        self.tabs.select_job(selected_record(job, record_details(job), cluster=self.remote.board.record_cluster(job)))

    def open_history_entry(self, job_id: str) -> HistoryEntry | None:
        """*Thread-side*: ntui's history entry of ``job_id`` (a file read)."""
        return EntryBook.lookup(self.open_history, job_id)

    # ------------------------------------------------------------ tabs

    @on(TabbedContent.TabActivated, "#jobs-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if self._details_visible():
            self._selection_changed()  # a running job's node states may be stale: looked at again

    def _details_visible(self) -> bool:
        """The shown tab wants the selected job's details fresh (a running job's node states)."""
        try:
            return self.tabs.wants_fresh_details
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
        tabs = self.tabs
        focused = self.focused
        self.maximized = tabs if focused is not None and tabs in focused.ancestors else self.queue_box

    def action_tab_action(self, tab: str, action: str) -> None:
        """A tab's view-wide key (its ``TabSpec.keys``, such as the log's ``E``): the tab shown, then its action."""
        self.action_show_tab(tab)
        self.tabs.run_tab_action(tab, action)

    # ------------------------------------------------------------ status line and banner

    def _tick(self) -> None:
        if not self.is_mounted:
            return
        board = self.remote.board
        banner = self.query_one("#jobs-banner", Static)
        text = board.banner(self.model)
        if text != banner.content:  # (the Static keeps the text it shows)
            banner.update(text)
        banner.set_class(bool(text), "-shown")
        table = self.table
        for key, text in board.ticked_elapsed(self.model).items():  # elapsed ticks between polls
            if key in table and table.row_tag(key) != ENDED:
                table.update_cell(key, "elapsed", text, update_width=False)
        self.waiting.tick()  # the details' elapsed and why, as of now
        empty = board.empty_text(self.model)
        if empty != table.empty_text:
            table.empty_text = empty
            if not table.row_count:
                table.refresh()
        calls = getattr(self.runner, "calls", None)  # counted by test and demo runners only
        status = board.status_line(self.model, filter_text=table.filter_text, shown=table.row_count,
                                   slurm_calls=calls if isinstance(calls, int) else None)
        status_line = self.query_one("#jobs-status", Static)
        if status != status_line.content:
            status_line.update(status)

    @on(QueueBox.FilterChanged)
    def _filter_changed(self, msg: QueueBox.FilterChanged) -> None:
        msg.stop()
        self._tick()

    # ------------------------------------------------------------ view actions (the queue box's)

    def action_refresh_now(self) -> None:
        self.refresh_now()
        self.remote.reload_histories()  # the recent list: each cluster's own history again

    def action_toggle_all_users(self) -> None:
        self.model.toggle_all_users()
        self.remote.toggle_all_users()
        self.table.configure(self.all_users)
        self.queue_box.set_title()
        self.refresh_now()
        self._tick()

    def action_queue_box(self, key: str) -> None:
        """A key of the queue box's (:data:`QueueBox.KEYS`), from anywhere in the view."""
        self.queue_box.run_key(key)

    # ------------------------------------------------------------ job actions (ntui/ui/screens/job_operations.py)

    def action_job(self, operation: str) -> None:
        """A key of a job action (``c``, ``C``, ``h``, ``R``, ``w``, ``x``): the operation of that name."""
        getattr(self.actions, operation)()

    def action_resubmit(self) -> None:
        """The selected job (a recent one, or the queue's) in the compose view: its preset and overrides."""
        job_id = self._recent_job.job_id if self._recent_job is not None else self.table.cursor_key
        if job_id is None:
            self.notify("No job selected to resubmit.", severity="warning")
            return
        self.actions.resubmit(job_id)

    @on(ResubmitWith)
    def _resubmit_with(self, msg: ResubmitWith) -> None:
        msg.stop()
        self.actions.resubmit(msg.job_id, msg.extra)

    def _submitted(self, job: SubmittedJob | None) -> None:
        if job is None or not job.job_id:
            return
        if self.remote.submitted(str(job.job_id), job.via):  # to a cluster reached over ssh: asked there
            return
        self.model.expect_submission(str(job.job_id))
        self.table.move_cursor(key=str(job.job_id))
        self.refresh_now()

    # ------------------------------------------------------------ recent jobs (ntui/core/jobs/recent.py)

    @on(RecentLoaded)
    def _recent_loaded(self, msg: RecentLoaded) -> None:
        msg.stop()
        if msg.jobs is not None:
            for warning in msg.jobs.warnings:
                self.log.warning(f"recent jobs: {warning}")
            self._show_recent(self.remote.recent.here_loaded(msg.jobs))
        self.waiting.records(msg.jobs)
        self.model_workers.recent_done()

    def _show_recent(self, jobs: RecentJobs | None = None) -> None:
        """The recent jobs (``jobs``: a new load, else the last one) without those in the live queue."""
        if self.queue_box.show_recent(jobs, now=self.model.clock().timestamp(),
                                      days=self.full_settings.queue.recent_days, remote=self.clusters.names(),
                                      notes=self.remote.recent.notes()):
            self.call_after_refresh(self._fit)

    def action_recent_order(self) -> None:
        """The recent list's next order (:data:`ntui.core.records.record.RECENT_ORDERS`): re-sorted at once, no new
        load."""
        self.queue_box.next_recent_order()
        self._show_recent()

    # ------------------------------------------------------------ room

    def _fit(self) -> None:
        """The queue box's share of the view (:meth:`QueueBox.fit`), after each layout that may change it."""
        if not self.is_mounted:
            return
        box = self.queue_box
        box.fit(room=self.query_one("#jobs-body").content_size.height, view_height=self.size.height,
                full=self.has_class("-wide") or box.has_class("-maximized"), tabs_focused=self._tabs_focused,
                in_recent=self._recent_job is not None)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._fit)
