"""The jobs view: the live queue, the selected job's details (and GPU / log panes), keyboard actions.

Polling discipline (dolphie's pattern, ``../shared/reference/textual-style.md`` §5):

* **one squeue per refresh** (:class:`QueueFetcher`: ``query_queue``'s command plus ``--local``, with a
  per-line parse cache; own jobs, or everyone's after ``a``) serves the table, the details panel (its
  state-change check) and the panes;
* refreshes **never overlap**: a thread worker fetches + parses + formats, posts :class:`QueueFetched` (or
  :class:`QueueFailed`), and only then is the next one armed with ``set_timer``. :meth:`refresh_now` during a
  fetch just asks for another one right after it;
* the interval comes from :class:`~ntui.core.queue.PollPolicy` (short while own jobs pend or run, long when
  none do or this view is in the background; ``queue:`` in ``$XDG_CONFIG_HOME/ntui/config.yaml``);
  controller errors back off exponentially behind a banner ("controller unreachable, retry in N s") that goes
  away by itself on the first good answer;
* ``scontrol show job -d`` only for the selected job, cached, refetched when its state changes (and, while it
  runs and the Details tab is shown, when older than the idle interval), plus one ``sinfo -N`` of a running
  job's nodes with it (their
  state: a dead ``slurmd`` shows as ``NOT RESPONDING``/``DOWN`` long before the job's state changes);
  ``finished_outcome`` once per job that leaves the queue (capped per refresh), never per tick.
"""

from __future__ import annotations

import getpass
import importlib
import os
import pwd
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Static, TabbedContent, TabPane
from textual.worker import Worker

from ntui.core import slurm
from ntui.core.config import Settings, load_settings
from ntui.core.history import History, HistoryEntry
from ntui.core.hosts import format_index_ranges
from ntui.core.outcome import UNKNOWN, Outcome, finished_outcome
from ntui.core.queue import ACTIVE, PollPolicy, departed
from ntui.core.render import LogPaths
from ntui.core.runner import (
    CommandRunner,
    ControllerUnreachable,
    JobNotFound,
    SlurmError,
    SlurmTimeout,
    SubprocessRunner,
)
from ntui.core.slurm import JobDetails, NodeState, QueueJob, StateCategory
from ntui.ui.screens.base import NtuiScreen, describe_error
from ntui.ui.screens.job_actions import ConfirmCancelScreen, SignalPickerScreen
from ntui.ui.widgets.job_details import DetailsView, JobDetailsPanel
from ntui.ui.widgets.queue_table import ENDED, QueueTable, TableChange, VirtualTable, queue_row

__all__ = ["JobsScreen", "RefreshStats", "ended_row"]

#: Workers' groups (the error handler and the benchmark tell them apart by these).
SQUEUE_GROUP = "ntui-squeue"
DETAILS_GROUP = "ntui-details"
OUTCOME_GROUP = "ntui-outcome"
ACTION_GROUP = "ntui-action"

#: At most this many ``finished_outcome`` look-ups per refresh; further departures show "not looked up".
MAX_LOOKUPS_PER_REFRESH = 20
#: More tasks of one array than this leaving in one refresh collapse into one ended row (one look-up).
ARRAY_COLLAPSE = 8
#: Ended rows kept (oldest dropped first).
MAX_ENDED = 200
#: Delay between a cursor move and the details look-up (holding an arrow key costs no RPCs).
DETAILS_DEBOUNCE_S = 0.15

HistoryFactory = Callable[[], "History | None"]


def _current_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):
        return getpass.getuser()


def _optional_widget(module: str, name: str) -> type[Widget] | None:
    """A pane another part of ntui provides, when it is installed (and importable)."""
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except Exception:  # a missing or broken optional pane must not break the jobs view
        return None
    return cls if isinstance(cls, type) and issubclass(cls, Widget) else None


@dataclass
class EndedJob:
    """A job of ours that left the queue, kept listed with what became of it."""

    key: str  # the row key (= job id, or "ARRAY_[tasks]" for collapsed array tasks)
    query_id: str  # what sacct/scontrol are asked about
    job: QueueJob  # the last squeue line seen
    outcome: Outcome | None = None  # None while the look-up runs
    tasks: int = 1
    looked_up: bool = True


def ended_row(ended: EndedJob, all_users: bool) -> tuple[str, ...]:
    """Table cells for an ended job: its final state, and the exit code where the reason was."""
    j = ended.job
    out = ended.outcome
    if out is None:
        state, where = "ENDED", "(looking up the final state…)"
    elif out.state == UNKNOWN:
        state = "ENDED"
        where = f"ended (state unknown; last seen {j.state})" if ended.looked_up else "ended (not looked up)"
    else:
        state = out.state
        where = f"exit {out.exit_code}" if out.exit_code else "ended"
    if ended.tasks > 1:
        where = f"{ended.tasks} tasks · {where}"
    nodes = "" if j.num_nodes is None else str(j.num_nodes)
    cells = [ended.key, j.name, state, j.elapsed, j.time_limit, nodes, where, j.partition, j.qos or ""]
    if all_users:
        cells.insert(2, j.user)
    return tuple(cells)


def _task_ranges(tasks: list[str]) -> str:
    nums = sorted(int(t) for t in tasks if t.isdigit())
    return format_index_ranges(nums) if nums else ",".join(tasks)


@dataclass(frozen=True)
class Fetched:
    """One squeue answer, parsed and formatted (everything here is computed off the UI thread)."""

    jobs: tuple[QueueJob, ...]
    live: dict[str, QueueJob]  # job id -> job
    rows: dict[str, tuple[str, ...]]  # job id -> table cells
    counts: dict[str, int]  # "running" / "pending" / "other" -> jobs
    unchanged: bool  # byte-identical to the previous answer (same view)
    squeue_s: float
    parse_s: float  # parse + format of the lines not seen last time


def _count_label(job: QueueJob) -> str:
    cat = job.category
    if cat in (StateCategory.RUNNING, StateCategory.COMPLETING):
        return "running"
    return "pending" if cat is StateCategory.PENDING else "other"


_Entry = tuple[QueueJob, tuple[str, ...], str]  # job, cells, count label


class QueueFetcher:
    """``squeue`` (one call, :func:`squeue_argv`) with a per-line cache.

    Same command and error semantics as :func:`~ntui.core.slurm.query_queue`, but a line identical to one of
    the previous answer reuses its parsed job and table cells: with 10,000 held array tasks nothing changes
    between refreshes, and re-parsing them would cost more than the squeue call itself. Used from the poll
    worker only (refreshes never overlap), so it needs no lock.
    """

    def __init__(self) -> None:
        self._cache: dict[str, _Entry] = {}
        self._view: bool | None = None
        self._stdout: str | None = None
        self._last: Fetched | None = None

    def fetch(self, runner: CommandRunner, all_users: bool, timeout: float) -> Fetched:
        t0 = time.perf_counter()
        stdout, _ = slurm.run_squeue(runner, squeue_argv(all_users), timeout=timeout)
        squeue_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        if all_users != self._view:
            self._cache, self._view, self._stdout, self._last = {}, all_users, None, None
        last = self._last
        if last is not None and stdout == self._stdout:
            return Fetched(last.jobs, last.live, last.rows, last.counts, True, squeue_s, time.perf_counter() - t1)
        lines = [ln for ln in stdout.split("\n") if ln]
        cache = self._cache
        missing = [ln for ln in lines if ln not in cache] if cache else lines
        fresh: dict[str, _Entry] = {}
        if missing:
            parsed = slurm.parse_squeue("\n".join(missing))
            pairs: Iterable[tuple[str, QueueJob]] = zip(missing, parsed, strict=False)
            if len(parsed) != len(missing):  # some lines did not parse: pair them one by one
                pairs = ((ln, job) for ln in missing for job in slurm.parse_squeue(ln))
            for line, job in pairs:
                fresh[line] = (job, queue_row(job, all_users), _count_label(job))
        keep: dict[str, _Entry] = {}
        live: dict[str, QueueJob] = {}
        rows: dict[str, tuple[str, ...]] = {}
        counts: dict[str, int] = {}
        for line in lines:
            hit = cache.get(line) or fresh.get(line)
            if hit is None:
                continue
            keep[line] = hit
            job, cells, label = hit
            live[job.job_id] = job
            rows[job.job_id] = cells
            counts[label] = counts.get(label, 0) + 1
        got = Fetched(tuple(live.values()), live, rows, counts, False, squeue_s, time.perf_counter() - t1)
        self._cache, self._stdout, self._last = keep, stdout, got
        return got


def squeue_argv(all_users: bool) -> list[str]:
    """:func:`~ntui.core.slurm.build_squeue_argv`: one line per array task for own jobs only (everyone's
    pending tasks stay folded as ``123_[4-9999]``: a big site's queue would be millions of lines)."""
    return slurm.build_squeue_argv(all_users, array_tasks=not all_users)


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


@dataclass
class _Cached:
    state: str  # the job state the details were fetched at
    details: JobDetails | None
    note: str = ""
    failed: bool = False  # retried when the job is selected again or its state changes
    nodes: tuple[NodeState, ...] = ()  # sinfo -N of a running job's nodes
    at: float = 0.0  # time.monotonic() of the fetch


@dataclass
class _Panes:
    gpu: Widget | None = None  # the GpuPane, when installed (has watch_job)
    logs: Widget | None = None  # the LogPane, when installed (has show_job)
    gpu_job: str | None = None
    log_args: tuple[Any, ...] | None = None
    failed: set[str] = field(default_factory=set)


class JobsScreen(NtuiScreen):
    """The queue with details, actions and (when installed) the GPU and log panes."""

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
        #jobs-queue {
            height: 1fr;
            border: round $panel-lighten-2;
            border-title-color: $text-muted;
            border-subtitle-color: $text-muted;
        }
        #jobs-queue:focus-within { border: round $primary; border-title-color: $text; }
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
        Binding("slash", "filter", "Filter", id="ntui.jobs.filter", key_display="/"),
        Binding("s", "sort", "Sort", id="ntui.jobs.sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse sort", id="ntui.jobs.reverse_sort", show=False),
        Binding("d", "show_tab('tab-details')", "Details", id="ntui.jobs.tab_details", show=False),
        Binding("g", "show_tab('tab-gpus')", "GPUs", id="ntui.jobs.tab_gpus", show=False),
        Binding("l", "show_tab('tab-logs')", "Logs", id="ntui.jobs.tab_logs", show=False),
        Binding("E", "first_error", "First error", id="ntui.jobs.first_error", show=False,
                tooltip="Open the logs at the error of the rank that failed first"),
        Binding("escape", "clear_filter", "Clear filter", id="ntui.jobs.clear_filter", show=False),
    ]

    # ------------------------------------------------------------ messages (worker -> UI thread)

    @dataclass
    class QueueFetched(Message):
        """One squeue answer, parsed and formatted off the UI thread."""

        generation: int
        all_users: bool
        got: Fetched
        started: float  # perf_counter at the start of the worker
        seq: int = 0  # which poll (JobsScreen counts the polls it starts)

        @property
        def jobs(self) -> tuple[QueueJob, ...]:
            return self.got.jobs

    @dataclass
    class QueueFailed(Message):
        generation: int
        error: BaseException

    @dataclass
    class DetailsFetched(Message):
        key: str
        state: str
        details: JobDetails | None
        entry: HistoryEntry | None
        entry_known: bool
        note: str = ""
        ok: bool = True
        nodes: tuple[NodeState, ...] = ()

    @dataclass
    class OutcomesResolved(Message):
        outcomes: tuple[tuple[str, Outcome], ...]

    @dataclass
    class ActionDone(Message):
        text: str

    # ------------------------------------------------------------ set-up

    def __init__(
        self,
        *,
        runner: CommandRunner | None = None,
        settings: Settings | None = None,
        user: str | None = None,
        clock: Callable[[], datetime] | None = None,
        history_factory: HistoryFactory | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        if settings is None:
            settings, _problems = load_settings()  # problems are the app's to report
        self.full_settings = settings
        self.settings = settings.queue
        self.slurm_timeout = settings.slurm.timeout
        self.policy = PollPolicy(settings.queue)
        self.all_users = settings.queue.all_users
        self.user = user or _current_user()
        self._runner = runner
        self._clock = clock
        self._history_factory = history_factory
        # polling
        self._generation = 0
        self._polling = False
        self._again = False
        self._poll_timer: Timer | None = None
        self._next_poll: datetime | None = None
        self._error: BaseException | None = None
        self.last_update: datetime | None = None
        self.last_refresh: RefreshStats | None = None
        self.refresh_count = 0
        self._poll_seq = 0  # polls started
        self._fetcher = QueueFetcher()
        self._counts: dict[str, int] = {}
        # data
        self._live: dict[str, QueueJob] = {}
        self._live_all_users = self.all_users
        self._have_snapshot = False
        self._ended: dict[str, EndedJob] = {}
        self._expect: dict[str, int] = {}  # submitted job id -> polls started before it was submitted
        self._lookups: list[tuple[str, str]] = []  # (row key, query id) waiting for finished_outcome
        self._looking_up = False
        # details
        self._selected: str | None = None
        self._cache: dict[str, _Cached] = {}
        self._entries: dict[str, HistoryEntry | None] = {}
        self._details_timer: Timer | None = None
        self._debounce_pending = False
        self._details_inflight: tuple[str, str] | None = None
        self._panes = _Panes()
        self._table: QueueTable | None = None
        self._status_text = ""
        self._banner_text = ""

    @property
    def runner(self) -> CommandRunner:
        if self._runner is None:
            self._runner = getattr(self.app, "runner", None) or SubprocessRunner()
        return self._runner

    def now(self) -> datetime:
        clock = self._clock or getattr(self.app, "clock", None) or datetime.now
        return clock()

    def _open_history(self) -> History | None:
        """Called from worker threads."""
        factory = self._history_factory or getattr(self.app, "open_history", None) or History
        return factory()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="jobs-banner", markup=False)
        with Vertical(id="jobs-body"):
            with Vertical(id="jobs-queue"):
                yield QueueTable(all_users=self.all_users, id="jobs-table", empty_text="no jobs in the queue")
                yield Input(placeholder="filter: text anywhere in a row (Enter keeps it, Esc clears)",
                            id="jobs-filter", compact=True)
            with TabbedContent(id="jobs-tabs", initial="tab-details"):
                with TabPane("Details", id="tab-details"):
                    yield JobDetailsPanel(id="jobs-details")
                with TabPane("GPUs", id="tab-gpus"):
                    yield self._pane("ntui.ui.widgets.gpu_pane", "GpuPane", "jobs-gpu", "The GPU pane",
                                     self.runner, self.full_settings.gpu)
                with TabPane("Logs", id="tab-logs"):
                    yield self._pane("ntui.ui.widgets.log_pane", "LogPane", "jobs-logs", "The log pane",
                                     self.full_settings.logs)
        yield Static("", id="jobs-status", markup=False)
        yield Footer()

    def _pane(self, module: str, name: str, pane_id: str, what: str, *args: Any) -> Widget:
        """Another part of ntui's pane when it is installed, else a note (the jobs view works without)."""
        cls = _optional_widget(module, name)
        if cls is not None:
            try:
                return cls(*args, id=pane_id)
            except Exception as exc:  # a pane that cannot start must not take the queue down
                self.log.error(f"{name} failed to start: {exc!r}")
                return Static(f"{what} failed to start: {describe_error(exc)}", classes="pane-missing")
        return Static(f"{what} is not installed in this build.", classes="pane-missing")

    @property
    def table(self) -> QueueTable:
        if self._table is None:
            self._table = self.query_one("#jobs-table", QueueTable)
        return self._table

    @property
    def details_panel(self) -> JobDetailsPanel:
        return self.query_one("#jobs-details", JobDetailsPanel)

    def on_mount(self) -> None:
        for pane_id, method, attr in (("#jobs-gpu", "watch_job", "gpu"), ("#jobs-logs", "show_job", "logs")):
            found = self.query(pane_id)
            if found and callable(getattr(found.first(), method, None)):
                setattr(self._panes, attr, found.first())
        self.sub_title = getattr(self.app, "identity", "")
        self._set_queue_title()
        self.table.focus()
        self.set_interval(1.0, self._tick)
        if hasattr(self.app, "last_submission"):
            self.watch(self.app, "last_submission", self._submitted, init=False)
            last = getattr(self.app, "last_submission", None)
            if last is not None:  # submitted before this view was first opened: select it
                self.table.move_cursor(key=str(last.job_id))
        self._start_poll()

    def on_screen_resume(self) -> None:
        if self.last_update is not None and not self._polling:
            age = (self.now() - self.last_update).total_seconds()
            if age >= self.settings.active_interval:
                self.refresh_now()

    def _set_queue_title(self) -> None:
        box = self.query_one("#jobs-queue")
        box.border_title = "Queue · all users" if self.all_users else "Queue · my jobs"

    # ------------------------------------------------------------ polling

    def refresh_now(self) -> None:
        """Refresh as soon as possible (after a submit or an action). Never overlaps a running refresh:
        during one, another follows right after it."""
        if self._polling:
            self._again = True
            return
        self._start_poll()

    def _start_poll(self) -> None:
        if self._polling:
            self._again = True
            return
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._polling = True
        self._again = False
        self._next_poll = None
        self._poll_seq += 1
        self._poll_worker(self._generation, self.all_users, self._poll_seq)

    @work(thread=True, exit_on_error=False, group=SQUEUE_GROUP, name="squeue", description="squeue")
    def _poll_worker(self, generation: int, all_users: bool, seq: int) -> None:
        started = time.perf_counter()
        try:
            got = self._fetcher.fetch(self.runner, all_users, self.slurm_timeout)
        except SlurmError as exc:
            self.post_message(self.QueueFailed(generation, exc))
            return
        self.post_message(self.QueueFetched(generation, all_users, got, started, seq))

    def _rearm(self, delay: float) -> None:
        self._polling = False
        if self._again:
            delay = 0.0
        elif self._error is None and not self.is_current:
            delay = max(delay, self.settings.idle_interval)  # in the background: poll slowly
        self._again = False
        self._next_poll = self.now() + timedelta(seconds=delay)
        if delay > 0:
            self._poll_timer = self.set_timer(delay, self._start_poll, name="squeue re-arm")
        else:  # (a zero-delay Timer divides by zero in Textual 8.2.8)
            self._poll_timer = None
            self.call_later(self._start_poll)
        self._tick()

    @on(QueueFetched)
    def _queue_fetched(self, msg: QueueFetched) -> None:
        msg.stop()
        if msg.generation != self._generation:  # the view changed (all users) during the fetch
            self._again = True
            self._rearm(0)
            return
        self._error = None
        self._apply(msg)
        if msg.got.unchanged:  # same jobs, same activity
            self.policy.errors = 0
            delay = self.policy.delay()
        else:
            delay = self.policy.on_success(msg.jobs, user=self.user if msg.all_users else None)
        self._rearm(delay)

    @on(QueueFailed)
    def _queue_failed(self, msg: QueueFailed) -> None:
        msg.stop()
        self._failed(msg.error)

    def _failed(self, error: BaseException) -> None:
        self._error = error
        self._rearm(self.policy.on_error())

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A worker raised something unexpected (the notification is out): keep the view working."""
        if worker.group == SQUEUE_GROUP:
            self._failed(worker.error or RuntimeError(message))
        elif worker.group == DETAILS_GROUP:
            self._details_inflight = None
        elif worker.group == OUTCOME_GROUP:
            self._looking_up = False
        elif worker.group == ACTION_GROUP:
            self.refresh_now()

    # ------------------------------------------------------------ applying a refresh

    def _apply(self, msg: QueueFetched) -> None:
        t0 = time.perf_counter()
        got = msg.got
        if got.unchanged and self._have_snapshot and not self._check_expected(self._live, msg.seq):
            # byte-identical answer: nothing to diff (10,000 held tasks cost nothing here)
            self._applied(msg, t0, TableChange(), len(self.table.rows))
            return
        live = got.live
        if self._have_snapshot:
            both_own = not (msg.all_users or self._live_all_users)
            self._record_departures(departed(self._live, msg.jobs, None if both_own else self.user))
        self._check_expected(live, msg.seq)
        for key in [k for k in self._ended if k in live]:  # back in the queue (requeued)
            del self._ended[key]
        self._live, self._live_all_users, self._have_snapshot = live, msg.all_users, True
        rows = got.rows
        tags: dict[str, str] = {}
        if self._ended:
            rows = dict(rows)
            for key, ended in self._ended.items():
                rows[key] = ended_row(ended, msg.all_users)
                tags[key] = ENDED
        change = self.table.apply(rows, tags)
        self._counts = got.counts
        self._applied(msg, t0, change, len(rows))

    def _applied(self, msg: QueueFetched, t0: float, change: TableChange, rows: int) -> None:
        self.last_update = self.now()
        self.refresh_count += 1
        t1 = time.perf_counter()
        self.last_refresh = RefreshStats(msg.got.squeue_s, msg.got.parse_s, t1 - t0, t1 - msg.started, rows,
                                         change, msg.started, t1)
        self._start_lookups()
        self._selection_changed()

    def _record_departures(self, gone: list[QueueJob]) -> None:
        if not gone:
            return
        by_array: dict[str, list[QueueJob]] = {}
        singles: list[QueueJob] = []
        for job in gone:
            if job.array_job_id and job.array_task_id is not None:
                by_array.setdefault(job.array_job_id, []).append(job)
            else:
                singles.append(job)
        new: list[EndedJob] = []
        for array_id, tasks in by_array.items():
            if len(tasks) > ARRAY_COLLAPSE:
                key = f"{array_id}_[{_task_ranges([t.array_task_id or '' for t in tasks])}]"
                new.append(EndedJob(key, array_id, tasks[0], tasks=len(tasks)))
            else:
                singles.extend(tasks)
        new.extend(EndedJob(j.job_id, j.job_id, j) for j in singles)
        for i, ended in enumerate(new):
            if i < MAX_LOOKUPS_PER_REFRESH:
                self._lookups.append((ended.key, ended.query_id))
            else:
                ended.outcome = Outcome(ended.query_id, UNKNOWN, None, "none", True)
                ended.looked_up = False
            self._ended[ended.key] = ended
        while len(self._ended) > MAX_ENDED:
            del self._ended[next(iter(self._ended))]

    def _check_expected(self, live: Mapping[str, QueueJob], seq: int) -> bool:
        """A job submitted from this app that never showed up: it ended between two refreshes (True when
        such a job was found)."""
        found = False
        for job_id, since in list(self._expect.items()):
            if job_id in live or any(j.raw_job_id == job_id for j in live.values()):
                del self._expect[job_id]
            elif seq > since:  # this squeue ran after the submission and did not list the job
                del self._expect[job_id]
                if job_id not in self._ended:
                    placeholder = QueueJob(job_id=job_id, raw_job_id=job_id, user=self.user)
                    self._ended[job_id] = EndedJob(job_id, job_id, placeholder)
                    self._lookups.append((job_id, job_id))
                    found = True
        return found

    def _start_lookups(self) -> None:
        if self._looking_up or not self._lookups:
            return
        batch, self._lookups = self._lookups, []
        self._looking_up = True
        self._outcome_worker(tuple(batch))

    @work(thread=True, exit_on_error=False, group=OUTCOME_GROUP, description="final state")
    def _outcome_worker(self, batch: tuple[tuple[str, str], ...]) -> None:
        out: list[tuple[str, Outcome]] = []
        for key, query_id in batch:
            try:
                outcome = finished_outcome(self.runner, query_id)
            except Exception:  # one failed look-up must not lose the others
                outcome = Outcome(query_id, UNKNOWN, None, "none", True)
            out.append((key, outcome))
        self.post_message(self.OutcomesResolved(tuple(out)))

    @on(OutcomesResolved)
    def _outcomes(self, msg: OutcomesResolved) -> None:
        msg.stop()
        self._looking_up = False
        table = self.table
        for key, outcome in msg.outcomes:
            ended = self._ended.get(key)
            if ended is None:
                continue
            ended.outcome = outcome
            if key in table and table.row_tag(key) == ENDED:
                cells = ended_row(ended, table.all_users)
                for ci, col in enumerate(table.columns):
                    table.update_cell(key, col.key, cells[ci])
        self._start_lookups()
        self._selection_changed()

    # ------------------------------------------------------------ selection, details, panes

    @on(VirtualTable.RowHighlighted, "#jobs-table")
    def _row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key == self._selected:
            return
        self._selected = event.row_key
        cached = self._cache.get(event.row_key) if event.row_key else None
        if cached is not None and cached.failed:  # reselecting retries a failed look-up
            del self._cache[event.row_key]  # type: ignore[arg-type]
        if self._details_timer is not None:
            self._details_timer.stop()
        self._debounce_pending = True
        self._details_timer = self.set_timer(DETAILS_DEBOUNCE_S, self._selection_changed, name="details debounce")

    @on(VirtualTable.HeaderSelected, "#jobs-table")
    def _header_selected(self, event: VirtualTable.HeaderSelected) -> None:
        event.stop()
        table = self.table
        reverse = not table.sort_reverse if table.sort_column == event.column_key else False
        table.sort(event.column_key, reverse=reverse)

    @property
    def busy(self) -> bool:
        """A refresh, details or final-state look-up, or an action is running (tests and benchmarks wait
        for ``not busy``; the panes' own long-lived workers do not count)."""
        if self._polling or self._details_inflight is not None or self._looking_up or self._lookups:
            return True
        if self._debounce_pending:
            return True
        return any(w.group == ACTION_GROUP and not w.is_finished for w in self.workers)

    @property
    def selected_job(self) -> str | None:
        """The highlighted row's key (a job id)."""
        return self.table.cursor_key

    def _state_of(self, key: str) -> str:
        job = self._live.get(key)
        if job is not None:
            return job.state
        ended = self._ended.get(key)
        if ended is not None:
            return f"ENDED:{ended.outcome.state if ended.outcome else '?'}"
        return ""

    def _view(self, key: str, note: str = "") -> DetailsView:
        cached = self._cache.get(key)
        ended = self._ended.get(key)
        return DetailsView(
            job_id=key,
            queue=self._live.get(key) or (ended.job if ended else None),
            details=cached.details if cached else None,
            entry=self._entries.get(key),
            outcome=ended.outcome if ended else None,
            note=note or (cached.note if cached else ""),
            node_states=cached.nodes if cached else (),
        )

    def _selection_changed(self) -> None:
        self._debounce_pending = False
        key = self.table.cursor_key
        self._selected = key
        if key is None:
            self.details_panel.show(None)
            self._feed_panes()
            return
        state = self._state_of(key)
        cached = self._cache.get(key)
        fresh = cached is not None and cached.state == state and key in self._entries
        if (fresh and cached is not None and cached.nodes and self._details_visible()
                and time.monotonic() - cached.at > self.settings.idle_interval):
            # A running job's nodes: look again now and then (a node may have died), but only while
            # the details are on screen: refresh the visible pane only (RPC budget).
            fresh = False
        if fresh:
            self.details_panel.show(self._view(key))
        elif self._details_inflight != (key, state):
            if cached is None or cached.state != state:
                self.details_panel.show(self._view(key, note="loading details…"))
            ended = self._ended.get(key)
            query = ended.query_id if ended else key
            self._details_inflight = (key, state)
            self._details_worker(key, query, state, key in self._entries)
        self._feed_panes()

    @work(thread=True, exclusive=True, exit_on_error=False, group=DETAILS_GROUP, description="job details")
    def _details_worker(self, key: str, query: str, state: str, entry_known: bool) -> None:
        details: JobDetails | None = None
        note = ""
        ok = True
        try:
            details = slurm.show_job(self.runner, query, timeout=self.slurm_timeout)
        except JobNotFound:
            note = "Slurm no longer knows this job (it forgets finished jobs after MinJobAge)."
        except (SlurmError, ValueError) as exc:
            note = describe_error(exc)
            ok = False
        nodes: tuple[NodeState, ...] = ()
        if details is not None and details.category in (StateCategory.RUNNING, StateCategory.COMPLETING):
            try:
                nodes = slurm.node_states(self.runner, details.nodes, timeout=self.slurm_timeout)
            except Exception:  # the node states are an extra; the details stand without them
                nodes = ()
        entry: HistoryEntry | None = None
        if not entry_known:
            history = None
            try:
                history = self._open_history()
                entry = history.get(key.split("_[", 1)[0]) if history is not None else None
            except Exception:  # an unreadable history only hides the script
                entry = None
            finally:
                if history is not None:
                    history.close()
        # Only a lookup made here is news about the history entry; a refresh for a new state
        # must not overwrite the entry found earlier with None.
        self.post_message(self.DetailsFetched(key, state, details, entry, not entry_known, note, ok, nodes))

    @on(DetailsFetched)
    def _details_fetched(self, msg: DetailsFetched) -> None:
        msg.stop()
        if self._details_inflight == (msg.key, msg.state):
            self._details_inflight = None
        if msg.entry_known:
            self._entries[msg.key] = msg.entry
        previous = self._cache.get(msg.key)
        details = msg.details or (previous.details if previous and not msg.ok else None)
        nodes = msg.nodes or (previous.nodes if previous and not msg.ok else ())
        self._cache[msg.key] = _Cached(msg.state, details, msg.note, failed=not msg.ok, nodes=nodes,
                                       at=time.monotonic())
        if msg.key == self.table.cursor_key:
            self._selection_changed()

    @on(TabbedContent.TabActivated, "#jobs-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if self._details_visible():
            self._selection_changed()  # refreshes stale node states, then feeds the panes
        else:
            self._feed_panes()

    def _details_visible(self) -> bool:
        try:
            return self.query_one("#jobs-tabs", TabbedContent).active == "tab-details"
        except Exception:  # not composed yet
            return True

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#jobs-tabs", TabbedContent).active = tab

    def action_first_error(self) -> None:
        """``E`` from anywhere in the view (the log pane has the same key when it has focus)."""
        logs = self._panes.logs
        if logs is None:
            return
        self.action_show_tab("tab-logs")
        self.call_after_refresh(self._call_pane, logs, "action_first_error")

    def _feed_panes(self) -> None:
        """Give the GPU and log panes the selected job. The GPU pane runs its watch step only while it is
        visible (it pauses itself when its tab is hidden); the log pane reads files (no RPCs) and gets the
        job once the history told where its logs are."""
        key = self.table.cursor_key
        job = self._live.get(key) if key else None
        running = job is not None and job.category in (StateCategory.RUNNING, StateCategory.COMPLETING)
        gpu, logs = self._panes.gpu, self._panes.logs
        if gpu is not None:
            want = key if running else None
            if want != self._panes.gpu_job:
                self._panes.gpu_job = want
                self._call_pane(gpu, "watch_job", want)
        if logs is not None and (key is None or key in self._entries):
            entry = self._entries.get(key) if key else None
            cached = self._cache.get(key) if key else None
            paths = LogPaths(entry.log_dir, entry.log_stem) if entry and entry.log_stem else None
            world_size = entry.world_size if entry and entry.world_size > 0 else None
            active = job is not None and job.category in ACTIVE
            batch_log = cached.details.std_out if cached and cached.details else None
            args = (key, paths, world_size, active, batch_log)
            if args != self._panes.log_args:
                self._panes.log_args = args
                self._call_pane(logs, "show_job", key, paths=paths, world_size=world_size,
                                job_active=active, batch_log=batch_log)

    def _call_pane(self, pane: Widget, method: str, *args: Any, **kwargs: Any) -> None:
        try:
            getattr(pane, method)(*args, **kwargs)
        except Exception as exc:  # a pane's bug must not take the queue down
            name = type(pane).__name__
            self.log.error(f"{name}.{method} failed: {exc!r}")
            if name not in self._panes.failed:
                self._panes.failed.add(name)
                self.notify(f"{name}: {describe_error(exc)}", severity="error")

    # ------------------------------------------------------------ status line and banner

    def _tick(self) -> None:
        if not self.is_mounted:
            return
        now = self.now()
        banner = self.query_one("#jobs-banner", Static)
        retry = max(0, round((self._next_poll - now).total_seconds())) if self._next_poll else 0
        if self._error is not None:
            err = self._error
            if isinstance(err, (ControllerUnreachable, SlurmTimeout)):
                head = f"⚠ controller unreachable, retry in {retry} s"
            else:
                head = f"⚠ squeue failed, retry in {retry} s"
            if self._polling:
                head = "⚠ controller unreachable, retrying now…" if isinstance(
                    err, (ControllerUnreachable, SlurmTimeout)) else "⚠ squeue failed, retrying now…"
            text = f"{head}  ·  {describe_error(err)}  ·  r: retry now"
            if text != self._banner_text:
                self._banner_text = text
                banner.update(text)
            banner.add_class("-shown")
        elif self._banner_text:
            self._banner_text = ""
            banner.update("")
            banner.remove_class("-shown")
        self._update_status(now, retry)

    def _update_status(self, now: datetime, retry: int) -> None:
        counts = self._counts
        parts = ["everyone's jobs" if self.all_users else f"{self.user}'s jobs" if self.user else "my jobs"]
        parts.append(" · ".join(f"{n} {label}" for label, n in counts.items() if n) or "none queued")
        if self._ended:
            parts.append(f"{len(self._ended)} ended")
        table = self.table
        if table.filter_text:
            parts.append(f"filter {table.filter_text!r}: {table.row_count} shown")
        if self.last_update is None:
            parts.append("waiting for squeue…" if self._error is None else "no data yet")
        else:
            age = max(0, int((now - self.last_update).total_seconds()))
            parts.append(f"updated {age} s ago")
        if self._polling:
            parts.append("refreshing…")
        elif self._next_poll is not None and self._error is None:
            parts.append(f"next in {retry} s")
        calls = getattr(self.runner, "calls", None)
        if isinstance(calls, int):
            parts.append(f"{calls} Slurm calls")
        text = "  │  ".join(parts)
        if text != self._status_text:
            self._status_text = text
            self.query_one("#jobs-status", Static).update(text)

    # ------------------------------------------------------------ view actions

    def action_refresh_now(self) -> None:
        self.refresh_now()

    def action_toggle_all_users(self) -> None:
        self.all_users = not self.all_users
        self._generation += 1
        self._fetcher = QueueFetcher()  # another view: nothing to reuse
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

    # ------------------------------------------------------------ job actions

    def _target(self, what: str) -> tuple[str, QueueJob] | None:
        key = self.table.cursor_key
        if key is None:
            self.notify(f"No job selected to {what}.", severity="warning")
            return None
        job = self._live.get(key)
        if job is None:
            self.notify(f"Job {key} has left the queue; nothing to {what}.", severity="warning")
            return None
        return key, job

    def action_cancel_job(self) -> None:
        target = self._target("cancel")
        if target is None:
            return
        key, job = target
        where = job.nodelist or (f"({job.reason})" if job.reason else "")
        summary = f"{job.name} · {job.state} · {job.elapsed} of {job.time_limit} · {where}".strip(" ·")
        self.app.push_screen(ConfirmCancelScreen(key, summary), partial(self._confirmed_cancel, key))

    def _confirmed_cancel(self, key: str, yes: bool | None) -> None:
        if yes:
            self._run_action(f"cancel job {key}", partial(slurm.cancel, self.runner, key,
                                                          timeout=self.slurm_timeout), f"Cancelled job {key}.")

    def action_signal_job(self) -> None:
        target = self._target("signal")
        if target is None:
            return
        key, _ = target
        self.app.push_screen(SignalPickerScreen(key), partial(self._picked_signal, key))

    def _picked_signal(self, key: str, signal: str | None) -> None:
        if signal:
            self._run_action(f"signal {signal} to job {key}",
                             partial(slurm.cancel, self.runner, key, signal=signal, timeout=self.slurm_timeout),
                             f"Sent SIG{signal} to job {key}'s steps.")

    def action_hold_release(self) -> None:
        target = self._target("hold")
        if target is None:
            return
        key, job = target
        held = job.category is StateCategory.PENDING and job.reason.startswith("JobHeld")
        if held:
            self._run_action(f"release job {key}", partial(slurm.release, self.runner, key,
                                                           timeout=self.slurm_timeout), f"Released job {key}.")
        elif job.category is StateCategory.PENDING:
            self._run_action(f"hold job {key}", partial(slurm.hold, self.runner, key, timeout=self.slurm_timeout),
                             f"Held job {key} (h again releases it).")
        else:
            self.notify(f"Job {key} is {job.state}: Slurm holds only pending jobs.", severity="warning")

    def action_requeue_job(self) -> None:
        target = self._target("requeue")
        if target is None:
            return
        key, _ = target
        self._run_action(f"requeue job {key}", partial(slurm.requeue, self.runner, key,
                                                       timeout=self.slurm_timeout), f"Requeued job {key}.")

    def _run_action(self, description: str, call: Callable[[], object], done: str) -> None:
        def work() -> None:
            call()
            self.post_message(self.ActionDone(done))

        self.run_worker(work, thread=True, exit_on_error=False, group=ACTION_GROUP, description=description)

    @on(ActionDone)
    def _action_done(self, msg: ActionDone) -> None:
        msg.stop()
        self.notify(msg.text, timeout=4)
        self.refresh_now()

    # ------------------------------------------------------------ submissions

    def _submitted(self, job: Any) -> None:
        job_id = getattr(job, "job_id", None)
        if not job_id:
            return
        self._expect[str(job_id)] = self._poll_seq  # polls up to this one may have started before sbatch
        self.table.move_cursor(key=str(job_id))
        self.refresh_now()
