"""The jobs view's model: the queue's rows and their life cycle, without Textual.

:class:`JobModel` holds everything the jobs view shows and decides every Slurm call it makes; the view
(``ntui.ui.screens.jobs``) only renders it, forwards keys and runs the model's thread-side calls in workers:

* **polling**: :meth:`JobModel.request_poll` starts a refresh unless one runs (then exactly one more follows
  it); :meth:`~JobModel.poll_succeeded` / :meth:`~JobModel.poll_failed` return the delay before the next one
  (:class:`~ntui.core.jobs.queue.PollPolicy`: short while own jobs are active, long when none are or the view is in
  the background, exponential back-off on controller errors). The caller re-arms only after a refresh ends,
  so refreshes never overlap. One squeue per refresh (:class:`~ntui.core.jobs.queue.QueueFetcher`, with a
  per-line parse cache);
* **ended jobs**: own jobs that leave the queue stay listed as :class:`~ntui.core.jobs.queue.FinishedJob` rows
  (many tasks of one array collapse into one row); their final state is resolved once per job
  (:meth:`~JobModel.take_lookups` / :meth:`~JobModel.resolve` / :meth:`~JobModel.outcomes_resolved`, capped
  per refresh). A job submitted from this app that ended before any squeue saw it gets its row too.
  Hooks: :meth:`~JobModel.on_departure` (called with the jobs that just left) and
  :attr:`~JobModel.recent` (the ended jobs, oldest first); the final-state resolver is injectable;
* **details**: ``scontrol show job -d`` of the selected job only, cached per state
  (:meth:`~JobModel.select`, :meth:`~JobModel.details_step`, :meth:`~JobModel.fetch_details`);
* **history**: the entry ntui recorded for a job (its log paths, its script) comes from its own look-up
  (:meth:`~JobModel.history_request`, :meth:`~JobModel.lookup_entry`), independent of the controller, so the
  logs of ntui's own jobs show at once even while ``scontrol`` hangs (:func:`ntui.core.jobs.selected.log_target`);
* **journals** (every couple of seconds, no Slurm call: :meth:`~JobModel.journal_request` /
  :meth:`~JobModel.journal_fetch` / :meth:`~JobModel.journal_done`): the history is listed (a submission from another
  process or host since the view opened is expected in the queue, and squeue is asked at once) and the journals of
  own jobs are read (:class:`~ntui.core.jobs.journals.JournalBoard`): a start shows a pending row as running, an
  end moves the row to the ended ones with the journal's final state (no look-up). While every own active job is
  followed, squeue runs at the idle pace (:attr:`~ntui.core.jobs.queue.PollPolicy.covered`).

One responsibility: the state of the jobs view and the decisions about it (its look-ups in flight:
:mod:`ntui.core.jobs.inflight`; what the tabs get of the selected job: :mod:`ntui.core.jobs.selected`).
Methods marked *thread-side* run in worker threads: they read their arguments and the squeue cache only,
and return values the UI thread hands back to the model. Everything else runs on the UI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

from ntui.core.compose.timefmt import parse_time_limit, time_limit_from_script
from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.hosts import format_index_ranges
from ntui.core.jobfiles.journal import JournalState
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.inflight import InFlight
from ntui.core.jobs.journals import Followed, JournalBoard
from ntui.core.jobs.queue import (
    ACTIVE,
    ENDED,
    Fetched,
    FinishedJob,
    PollPolicy,
    QueueFetcher,
    Row,
    departed,
    format_elapsed,
    queue_row,
)
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import UNKNOWN, Outcome, finished_outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import (
    CommandRunner,
    ControllerUnreachable,
    JobNotFound,
    SlurmConfigError,
    SlurmError,
    SlurmTimeout,
)
from ntui.core.slurm.scontrol import JobDetails, show_job
from ntui.core.slurm.sinfo import NodeState, node_states
from ntui.core.slurm.squeue import QueueJob
from ntui.core.slurm.version import installed_version

__all__ = [
    "ARRAY_COLLAPSE",
    "MAX_ENDED",
    "MAX_LOOKUPS_PER_REFRESH",
    "Applied",
    "CachedDetails",
    "DetailsRequest",
    "DetailsResult",
    "DetailsView",
    "FinalStateResolver",
    "JobModel",
    "JournalApplied",
    "JournalRequest",
    "JournalResult",
    "LogTarget",
    "PollRequest",
    "ROW_ANNOTATIONS",
    "RowAnnotation",
    "annotate",
    "annotate_runs",
]

#: At most this many final-state look-ups per refresh; further departures show "not looked up".
MAX_LOOKUPS_PER_REFRESH = 20
#: More tasks of one array than this leaving in one refresh collapse into one ended row (one look-up).
ARRAY_COLLAPSE = 8
#: Ended rows kept (oldest dropped first).
MAX_ENDED = 200
#: At most this many pending jobs have their journal looked for (an open that fails, each tick); squeue tells the
#: start of the others (and squeue keeps its active pace then).
MAX_PENDING_JOURNALS = 8
#: How many of the newest history entries are searched for the run of a queued job not in the history.
RUN_LINK_SCAN = 100
#: A job whose journal says it ended while squeue still lists it (slurmctld hears of the end a moment later; after a
#: node failure it requeues the job only once the node is declared down): squeue is asked again this soon (seconds),
#: until it no longer lists the job or shows it pending again, so a requeue shows within a few seconds.
CONFIRM_END_S = 3.0
#: A look-up whose sources have no final state yet (accounting lags the controller) is asked again with the
#: next batch, at most this many times; then the row keeps what the last answer said.
MAX_LOOKUP_RETRIES = 30

FinalStateResolver = Callable[[CommandRunner, str], Outcome]
"""What became of a job that left the queue (default :func:`~ntui.core.records.outcome.finished_outcome`: sacct, then
scontrol, then unknown). Runs in a worker thread."""


class HistoryLike(Protocol):
    """What the model needs of :class:`~ntui.core.records.history.History` (tests pass stand-ins)."""

    def get(self, job_id: str) -> HistoryEntry | None: ...

    def close(self) -> None: ...


HistoryOpener = Callable[[], "HistoryLike | None"]


# ---------------------------------------------------------------- values exchanged with the view


@dataclass(frozen=True)
class PollRequest:
    """One refresh to run (:meth:`JobModel.fetch` in a worker)."""

    generation: int  # the view (own jobs / all users) it was started for
    all_users: bool
    seq: int  # which poll (counted from 1)


@dataclass(frozen=True)
class Applied:
    """What a refresh changed: the rows to show (live rows in squeue order, then ended rows)."""

    rows: dict[str, Row]
    tags: dict[str, str]  # row key -> ENDED for jobs that left the queue
    unchanged: bool  # byte-identical answer and nothing new: nothing to redraw
    departed: tuple[FinishedJob, ...] = ()


@dataclass(frozen=True)
class DetailsRequest:
    """One ``scontrol show job -d`` to run (:meth:`JobModel.fetch_details` in a worker)."""

    key: str  # the row key
    query: str  # the job id asked about
    state: str  # the state the details are fetched at (cache key)


@dataclass(frozen=True)
class DetailsResult:
    key: str
    state: str
    details: JobDetails | None
    note: str = ""
    ok: bool = True
    nodes: tuple[NodeState, ...] = ()
    slurm: str = ""  # the Slurm version the details came from ("26.05.5"; "" when unknown)


@dataclass(frozen=True)
class CachedDetails:
    state: str  # the job state the details were fetched at
    details: JobDetails | None
    note: str = ""
    failed: bool = False  # retried when the job is selected again or its state changes
    nodes: tuple[NodeState, ...] = ()  # sinfo -N of a running job's nodes
    at: float = 0.0  # monotonic time of the fetch


@dataclass(frozen=True)
class DetailsView:
    """Everything the details panel shows for one job; each part may be missing."""

    job_id: str
    queue: QueueJob | None = None  # the last squeue line seen
    details: JobDetails | None = None  # scontrol show job -d
    entry: HistoryEntry | None = None  # what ntui submitted
    outcome: Outcome | None = None  # for a job that left the queue
    note: str = ""  # "loading…", "scontrol no longer knows this job", an error
    node_states: tuple[NodeState, ...] = ()  # sinfo -N of a running job's nodes
    slurm: str = ""  # the Slurm version ntui talks to ("26.05.5"; "" until a details answer said)


@dataclass(frozen=True)
class DetailsStep:
    """What a selection change means for the details panel: a view to show (None: leave it as it is) and a
    look-up to start (None: none needed)."""

    view: DetailsView | None
    request: DetailsRequest | None


@dataclass(frozen=True)
class LogTarget:
    """The arguments of the log pane's ``show_job`` for the selected job."""

    job_id: str | None
    paths: LogPaths | None
    world_size: int | None
    job_active: bool
    batch_log: str | None
    launcher: str | None = None  # srun, torchrun, accelerate: what srun's ``task N`` is (None: not ntui's job)


@dataclass(frozen=True)
class JournalRequest:
    """One journal tick to run (:meth:`JobModel.journal_fetch` in a worker)."""

    own_live: tuple[str, ...]  # own active jobs in the queue
    since: float  # submissions at or after this (the history's clock) are the view's
    pending: frozenset[str] = frozenset()  # those of them still pending (their journal does not exist yet)
    known: dict[str, HistoryEntry | None] = field(default_factory=dict)  # entries the view has already
    done: frozenset[str] = frozenset()  # jobs whose end the view knows: not followed any more


@dataclass(frozen=True)
class JournalResult:
    entries: dict[str, HistoryEntry | None]  # entries looked up for own jobs in the queue
    recent: tuple[HistoryEntry, ...]  # the history's submissions since the view opened
    followed: dict[str, Followed]


@dataclass(frozen=True)
class JournalApplied:
    """What a journal tick changed: the rows to show (None: none changed) and whether to ask squeue now."""

    applied: Applied | None
    poll_now: bool


def _time_limit(entry: HistoryEntry | None) -> int | None:
    return time_limit_from_script(entry.script) if entry is not None and entry.script else None


def _task_ranges(tasks: list[str]) -> str:
    nums = sorted(int(t) for t in tasks if t.isdigit())
    return format_index_ranges(nums) if nums else ",".join(tasks)


def _history_key(key: str) -> str:
    """The job id a history entry is recorded under (collapsed array rows ``12_[3-9]`` -> ``12``)."""
    return key.split("_[", 1)[0]


# ---------------------------------------------------------------- the model


class JobModel:
    """The queue, ended jobs, details and history entries of the jobs view (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        user: str,
        *,
        clock: Callable[[], datetime] = datetime.now,
        monotonic: Callable[[], float] = time.monotonic,
        resolver: FinalStateResolver | None = None,
    ) -> None:
        self.settings = settings.queue
        self.slurm_timeout = settings.slurm.timeout
        self.policy = PollPolicy(settings.queue)
        self.all_users = settings.queue.all_users
        self.user = user
        self.clock = clock
        self.monotonic = monotonic
        self.resolver: FinalStateResolver = resolver or (lambda runner, job_id: finished_outcome(runner, job_id))
        self.fetcher = QueueFetcher()
        # polling
        self.generation = 0
        self.polling = False
        self._again = False
        self.next_poll: datetime | None = None
        self.error: BaseException | None = None
        self.last_update: datetime | None = None
        self.refresh_count = 0
        self.poll_seq = 0
        self.counts: dict[str, int] = {}
        # the queue and ended jobs
        self.live: dict[str, QueueJob] = {}
        self._live_all_users = self.all_users
        self._have_snapshot = False
        self.ended: dict[str, FinishedJob] = {}
        self._expect: dict[str, int] = {}  # submitted job id -> polls started before it was submitted
        self._from_history: dict[str, HistoryEntry] = {}  # job id -> what the history knows of it
        self.started_at = time.time()
        """Wall-clock start (the history's clock): ntui's jobs submitted since are listed even if no poll saw them."""
        self._lookups: list[tuple[str, str]] = []  # (row key, query id) waiting for the resolver
        self._lookup_retries: dict[str, int] = {}  # row key -> look-ups that found no final state yet
        self._deferred: list[tuple[str, str]] = []  # those, asked again after the next refresh (not in a loop)
        self.looking_up = False
        self._departure_hooks: list[Callable[[tuple[FinishedJob, ...]], None]] = []
        # details and history
        self.selected: str | None = None
        self.cache: dict[str, CachedDetails] = {}
        self.details_inflight: InFlight[tuple[str, str]] = InFlight(exclusive=True)  # (row key, its state)
        self.slurm_version = ""  # from the last details answer that knew it
        self.entries: dict[str, HistoryEntry | None] = {}
        self.history_inflight: InFlight[str] = InFlight()
        # journals (ntui.core.jobs.journals)
        self.journal_inflight: InFlight[str] = InFlight(exclusive=True)  # the one tick
        self.journals: dict[str, JournalState] = {}
        self._journal_ended: dict[str, int] = {}  # job id -> allocations its journal had when it ended
        self._unconfirmed: set[str] = set()  # of those, the ones squeue listed (not pending) at the last refresh
        #: job id -> allocations its journal had when squeue showed it pending again after that end (requeued):
        #: the same allocation's end does not end it again at the next tick, only a later allocation's does
        self._journal_requeued: dict[str, int] = {}
        self._journal_started: set[str] = set()  # pending in squeue, started per its journal
        self._rows: dict[str, Row] = {}  # the last squeue answer's rows

    # ------------------------------------------------------------ hooks

    def on_departure(self, hook: Callable[[tuple[FinishedJob, ...]], None]) -> None:
        """Call ``hook`` (UI thread) with the own jobs that just left the queue, as soon as a refresh sees them
        go (their final state is not known yet: ``outcome`` None, or "not looked up" beyond the cap)."""
        self._departure_hooks.append(hook)

    @property
    def recent(self) -> tuple[FinishedJob, ...]:
        """The ended jobs still listed, oldest first (at most :data:`MAX_ENDED`)."""
        return tuple(self.ended.values())

    @property
    def busy(self) -> bool:
        """A refresh, a details, history or final-state look-up is running or waiting."""
        return bool(self.polling or self.details_inflight.busy or self.looking_up or self._lookups
                    or self.history_inflight.busy)

    # ------------------------------------------------------------ polling

    def request_poll(self) -> PollRequest | None:
        """A refresh to start now, or None when one is running (then another follows right after it)."""
        if self.polling:
            self._again = True
            return None
        self.polling = True
        self._again = False
        self.next_poll = None
        self.poll_seq += 1
        return PollRequest(self.generation, self.all_users, self.poll_seq)

    def fetch(self, runner: CommandRunner, request: PollRequest) -> Fetched:
        """*Thread-side*: the squeue of one refresh (raises :class:`~ntui.core.slurm.runner.SlurmError`)."""
        return self.fetcher.fetch(runner, request.all_users, self.slurm_timeout)

    def poll_succeeded(self, request: PollRequest, got: Fetched, *, background: bool = False) -> tuple[
        Applied | None, float
    ]:
        """Apply a refresh; returns what changed (None: the view changed during the fetch, nothing to apply)
        and the delay before the next refresh."""
        if request.generation != self.generation:  # the view changed (all users) during the fetch
            self._again = True
            return None, self._rearm(0.0, background)
        self.error = None
        applied = self._apply(request, got)
        if self.policy.covered and any(k not in self.journals for k in self._own_active()):
            self.policy.covered = False  # a job no journal tick has seen yet: squeue keeps its pace until one has
        if got.unchanged:  # same jobs, same activity
            self.policy.errors = 0
            delay = self.policy.delay()
        else:
            delay = self.policy.on_success(got.jobs, user=self.user if request.all_users else None)
        if self._unconfirmed:  # ended by its journal, still listed: requeued or not, squeue says so soon
            delay = min(delay, CONFIRM_END_S)
        return applied, self._rearm(delay, background)

    def poll_failed(self, error: BaseException, *, background: bool = False) -> float:
        """A refresh failed: keep the rows, back off; returns the delay before the next try."""
        self.error = error
        return self._rearm(self.policy.on_error(), background)

    def _rearm(self, delay: float, background: bool) -> float:
        self.polling = False
        if self._again:
            delay = 0.0
        elif self.error is None and background:
            delay = max(delay, self.settings.idle_interval)  # in the background: poll slowly
        self._again = False
        self.next_poll = self.clock() + timedelta(seconds=delay)
        return delay

    def stale(self) -> bool:
        """The rows are older than the active interval and no refresh runs (the view came back)."""
        if self.last_update is None or self.polling:
            return False
        return (self.clock() - self.last_update).total_seconds() >= self.settings.active_interval

    def toggle_all_users(self) -> None:
        """Own jobs <-> everyone's: another view, nothing of the old one is reused."""
        self.all_users = not self.all_users
        self.generation += 1
        self.fetcher = QueueFetcher()

    def expect_submission(self, job_id: str) -> None:
        """A job submitted from this app: if no squeue started after now lists it, it ended in between."""
        self._expect[job_id] = self.poll_seq  # polls up to this one may have started before sbatch

    def history_submissions(self, entries: Iterable[HistoryEntry]) -> list[str]:
        """Hook for ntui's own jobs from its history (the job record adds final states there): a job submitted
        since this view started (from the CLI too) that no squeue lists ended between two polls; it is listed
        like any job that left the queue, with what the history knows (name, nodes), its final state looked up
        once. Called on the UI thread with the history's recent entries; returns the jobs new to the view."""
        new: list[str] = []
        for entry in entries:
            job_id = entry.job_id
            when = entry.submitted_at or entry.created_at
            if not job_id or when < self.started_at or job_id in self._from_history:
                continue
            self._from_history[job_id] = entry
            if job_id not in self.live and job_id not in self.ended and job_id not in self._expect:
                self.expect_submission(job_id)
                new.append(job_id)
        return new

    # ------------------------------------------------------------ applying a refresh

    def _apply(self, request: PollRequest, got: Fetched) -> Applied:
        self.last_update = self.clock()
        self.refresh_count += 1
        if self._deferred:
            self._lookups.extend(self._deferred)
            self._deferred.clear()
        if got.unchanged and self._have_snapshot and not self._check_expected(self.live, request.seq):
            # byte-identical answer: nothing to diff (10,000 held tasks cost nothing here)
            return Applied({}, {}, True)
        live, rows = self._journal_view(got.live, got.rows, request.all_users)
        gone: tuple[FinishedJob, ...] = ()
        if self._have_snapshot:
            both_own = not (request.all_users or self._live_all_users)
            gone = self._record_departures(departed(self.live, live.values(), None if both_own else self.user))
        self._check_expected(live, request.seq)
        for key in [k for k in self.ended if k in live]:  # back in the queue (requeued)
            del self.ended[key]
        self.live, self._live_all_users, self._have_snapshot = live, request.all_users, True
        self._rows = dict(got.rows)
        tags: dict[str, str] = {}
        if self.ended:
            rows = dict(rows)
            for key, ended in self.ended.items():
                rows[key] = queue_row(ended.job, request.all_users, ended)
                tags[key] = ENDED
        rows = self._run_rows(rows)
        self.counts = got.counts
        if gone:
            for hook in self._departure_hooks:
                hook(gone)
        return Applied(rows, tags, False, gone)

    def _run_rows(self, rows: dict[str, Row]) -> dict[str, Row]:
        return annotate(rows, self.journals)

    def _journal_view(self, live: dict[str, QueueJob], rows: dict[str, Row],
                      all_users: bool) -> tuple[dict[str, QueueJob], dict[str, Row]]:
        """squeue's answer as the journals correct it: a job whose journal ended stays ended while squeue still
        lists it (slurmctld hears of the end a moment later; it is requeued only when squeue shows it pending
        again or its journal a new allocation); a pending job whose journal started shows as running."""
        self._unconfirmed = set()
        if not self._journal_ended and not self._journal_started:
            return live, rows
        live, rows = dict(live), dict(rows)
        for job_id, allocations in list(self._journal_ended.items()):
            job = live.get(job_id)
            if job is None:
                continue
            state = self.journals.get(job_id)
            if job.category is StateCategory.PENDING or (state is not None and state.allocations > allocations):
                del self._journal_ended[job_id]  # requeued: live again
                self._journal_requeued[job_id] = allocations
                continue
            self._unconfirmed.add(job_id)
            del live[job_id]
            rows.pop(job_id, None)
        for job_id in list(self._journal_started):
            job = live.get(job_id)
            if job is None or job.category is not StateCategory.PENDING:
                self._journal_started.discard(job_id)
                continue
            live[job_id] = started = self._as_started(job)
            rows[job_id] = queue_row(started, all_users)
        return live, rows

    def _as_started(self, job: QueueJob) -> QueueJob:
        state = self.journals.get(job.job_id)
        return replace(job, state="RUNNING", reason="", elapsed=job.elapsed or "0:00",
                       nodelist=(state.nodes if state is not None and state.nodes else job.nodelist))

    # ------------------------------------------------------------ journals (ntui.core.jobs.journals)

    def _own_active(self) -> list[str]:
        return [k for k, j in self.live.items()
                if j.category in ACTIVE and (not self._live_all_users or j.user == self.user)]

    def journal_request(self, since: float | None = None) -> JournalRequest | None:
        """A journal tick to start now, or None while one runs."""
        if not self.journal_inflight.start("tick"):
            return None
        own = tuple(self._own_active())
        pending = frozenset(k for k in own if self.live[k].category is StateCategory.PENDING)
        return JournalRequest(own, self.started_at if since is None else since, pending, dict(self.entries),
                              frozenset(self._journal_ended) | frozenset(self.ended))

    @staticmethod
    def journal_fetch(open_history: HistoryOpener, board: JournalBoard, request: JournalRequest, *,
                      close: bool = True) -> JournalResult:
        """*Thread-side*: list the history (one directory listing: submissions since the view opened, entries of
        own queued jobs not known yet) and read what each followed journal appended. ``close=False``: the history
        is the caller's, kept open from tick to tick."""
        entries: dict[str, HistoryEntry | None] = {}
        recent: tuple[HistoryEntry, ...] = ()
        history = None
        try:
            history = open_history()
            if history is not None:
                since, latest = getattr(history, "since", None), getattr(history, "entries", None)
                if callable(since):
                    recent = tuple(since(request.since))
                elif callable(latest):  # a stand-in history with only its newest entries
                    recent = tuple(latest(limit=20))
                for job_id in request.own_live:
                    if job_id not in request.known:
                        entries[job_id] = history.get(_history_key(job_id))
                if callable(latest) and any(e is None for e in entries.values()):
                    # a long run's later chain links: not in the history, named by their run's file (T10)
                    from ntui.core.records.runs import run_links

                    links = run_links(latest(limit=RUN_LINK_SCAN))  # run_of skips what is not a run
                    entries.update({k: links[k] for k, e in entries.items() if e is None and k in links})
        except Exception:  # noqa: S110 - an unreadable history only means no new entries this tick
            pass
        finally:
            if history is not None and close:
                history.close()
        wanted: dict[str, HistoryEntry] = {}
        pending = 0
        for job_id in request.own_live:
            entry = request.known.get(job_id) or entries.get(job_id)
            if entry is None or not entry.log_stem:
                continue
            if job_id in request.pending:
                pending += 1
                if pending > MAX_PENDING_JOURNALS:
                    continue
            wanted[job_id] = entry
        for entry in recent:
            if entry.job_id and entry.job_id not in wanted and entry.job_id not in request.done and entry.log_stem:
                wanted[entry.job_id] = entry
        return JournalResult(entries, recent, board.poll(wanted))

    def journal_failed(self) -> None:
        self.journal_inflight.clear()

    def journal_done(self, result: JournalResult) -> JournalApplied:
        """Apply a journal tick: starts and ends seen in journals change rows at once (see :meth:`_journal_view`)."""
        self.journal_inflight.clear()
        for job_id, entry in result.entries.items():
            self.entries.setdefault(job_id, entry)
        new = self.history_submissions(result.recent)
        changed = False
        gone: list[FinishedJob] = []
        for job_id, followed in result.followed.items():
            state = followed.state
            prev = self.journals.get(job_id)
            self.journals[job_id] = state
            entry = self.entries.get(job_id)
            if state.run_next and entry is not None and self.entries.get(state.run_next) is None:
                self.entries[state.run_next] = entry  # the chain's next link: the same run, logs and journal names
            if state.run_id is not None and job_id in self.live and (
                    prev is None or (prev.run_id, prev.run_restart, prev.run_max)
                    != (state.run_id, state.run_restart, state.run_max)):
                changed = True  # a long run's row says which allocation it is in (annotate_runs)
            if state.ended and job_id not in self._journal_ended \
                    and self._journal_requeued.get(job_id) != state.allocations:
                entry = self.entries.get(job_id) or self._from_history.get(job_id)
                end = state.final(_time_limit(entry))
                if end is None:
                    continue
                self._journal_ended[job_id] = state.allocations
                self._journal_started.discard(job_id)
                self._expect.pop(job_id, None)
                job = self.live.pop(job_id, None) or (self.ended[job_id].job if job_id in self.ended else None)
                if job is None:
                    job = QueueJob(job_id=job_id, raw_job_id=job_id, user=self.user,
                                   name=entry.job_name if entry else "", num_nodes=entry.nodes if entry else None)
                outcome = Outcome(job_id, end.state, end.exit_code, "job", True, state.elapsed_s)
                finished = FinishedJob(job_id, job_id, job, outcome=outcome)
                self.ended[job_id] = finished
                self._lookups = [(k, q) for k, q in self._lookups if k != job_id]
                gone.append(finished)
                changed = True
            elif state.started and not state.ended:
                job = self.live.get(job_id)
                if job is not None and job.category is StateCategory.PENDING:
                    self._journal_started.add(job_id)
                    self.live[job_id] = self._as_started(job)
                    changed = True
        own_active = self._own_active()
        self.policy.covered = bool(own_active) and not self.all_users and all(
            k in result.followed and (result.followed[k].exists or self.live[k].category is StateCategory.PENDING)
            for k in own_active)
        # a new submission is expected in the queue; an end is confirmed by squeue at once (a job ended by a signal
        # may be requeued: a node failure, a preemption, scontrol requeue)
        poll_now = bool(gone) or any(j not in self.live and j not in self.ended for j in new)
        if not changed:
            return JournalApplied(None, poll_now)
        rows = {k: v for k, v in self._rows.items() if k in self.live}
        for key, job in self.live.items():
            if key in self._journal_started:
                rows[key] = queue_row(job, self._live_all_users)
        tags: dict[str, str] = {}
        for key, ended in self.ended.items():
            rows[key] = queue_row(ended.job, self._live_all_users, ended)
            tags[key] = ENDED
        rows = annotate(rows, self.journals)
        while len(self.ended) > MAX_ENDED:
            del self.ended[next(iter(self.ended))]
        departed_now = tuple(gone)
        if departed_now:
            for hook in self._departure_hooks:
                hook(departed_now)
        return JournalApplied(Applied(rows, tags, False, departed_now), poll_now)

    def _record_departures(self, gone: list[QueueJob]) -> tuple[FinishedJob, ...]:
        if not gone:
            return ()
        by_array: dict[str, list[QueueJob]] = {}
        singles: list[QueueJob] = []
        for job in gone:
            if job.array_job_id and job.array_task_id is not None:
                by_array.setdefault(job.array_job_id, []).append(job)
            else:
                singles.append(job)
        new: list[FinishedJob] = []
        for array_id, tasks in by_array.items():
            if len(tasks) > ARRAY_COLLAPSE:
                key = f"{array_id}_[{_task_ranges([t.array_task_id or '' for t in tasks])}]"
                new.append(FinishedJob(key, array_id, tasks[0], tasks=len(tasks)))
            else:
                singles.extend(tasks)
        new.extend(FinishedJob(j.job_id, j.job_id, j) for j in singles)
        for i, ended in enumerate(new):
            if i < MAX_LOOKUPS_PER_REFRESH:
                self._lookups.append((ended.key, ended.query_id))
            else:
                new[i] = ended = replace(ended, outcome=Outcome(ended.query_id, UNKNOWN, None, "none", True),
                                         looked_up=False)
            self.ended[ended.key] = ended
        while len(self.ended) > MAX_ENDED:
            del self.ended[next(iter(self.ended))]
        return tuple(new)

    def _check_expected(self, live: dict[str, QueueJob], seq: int) -> bool:
        """A job submitted from this app that never showed up: it ended between two refreshes (True when
        such a job was found)."""
        found = False
        for job_id, since in list(self._expect.items()):
            if job_id in live or any(j.raw_job_id == job_id for j in live.values()):
                del self._expect[job_id]
            elif seq > since:  # this squeue ran after the submission and did not list the job
                del self._expect[job_id]
                if job_id not in self.ended:
                    known = self._from_history.get(job_id)
                    placeholder = QueueJob(job_id=job_id, raw_job_id=job_id, user=self.user,
                                           name=known.job_name if known else "",
                                           num_nodes=known.nodes if known else None)
                    self.ended[job_id] = FinishedJob(job_id, job_id, placeholder)
                    self._lookups.append((job_id, job_id))
                    found = True
        return found

    # ------------------------------------------------------------ final states

    def take_lookups(self) -> tuple[tuple[str, str], ...] | None:
        """The (row key, job id) pairs to resolve now, or None (nothing waits, or a batch is running)."""
        if self.looking_up or not self._lookups:
            return None
        batch, self._lookups = tuple(self._lookups), []
        self.looking_up = True
        return batch

    def resolve(self, runner: CommandRunner, batch: Iterable[tuple[str, str]]) -> tuple[tuple[str, Outcome], ...]:
        """*Thread-side*: the final state of each job of a batch (one failure does not lose the others)."""
        out: list[tuple[str, Outcome]] = []
        for key, query_id in batch:
            try:
                outcome = self.resolver(runner, query_id)
            except Exception:  # one failed look-up must not lose the others
                outcome = Outcome(query_id, UNKNOWN, None, "none", True)
            out.append((key, outcome))
        return tuple(out)

    def outcomes_resolved(self, outcomes: Iterable[tuple[str, Outcome]]) -> dict[str, Row]:
        """Store resolved final states; returns the new cells of the ended rows they change."""
        self.looking_up = False
        rows: dict[str, Row] = {}
        for key, outcome in outcomes:
            ended = self.ended.get(key)
            if ended is None:  # back in the queue (requeued) or dropped from the ended rows
                self._lookup_retries.pop(key, None)
                continue
            if not outcome.finished:
                tries = self._lookup_retries[key] = self._lookup_retries.get(key, 0) + 1
                if tries <= MAX_LOOKUP_RETRIES:
                    self._deferred.append((key, ended.query_id))  # not final yet: ask after the next refresh
                    continue
            self._lookup_retries.pop(key, None)
            ended = self.ended[key] = replace(ended, outcome=outcome)
            rows[key] = queue_row(ended.job, self.all_users, ended)
        return rows

    def lookups_failed(self) -> None:
        """The resolver's worker died unexpectedly: let the next batch start."""
        self.looking_up = False

    # ------------------------------------------------------------ selection and details

    def state_of(self, key: str) -> str:
        job = self.live.get(key)
        if job is not None:
            return job.state
        ended = self.ended.get(key)
        if ended is not None:
            return f"ENDED:{ended.outcome.state if ended.outcome else '?'}"
        return ""

    def select(self, key: str | None) -> bool:
        """The cursor moved to ``key``; False when it was already there. Reselecting retries a failed
        look-up."""
        if key == self.selected:
            return False
        self.selected = key
        cached = self.cache.get(key) if key else None
        if key is not None and cached is not None and cached.failed:
            del self.cache[key]
        return True

    def details_view(self, key: str, note: str = "") -> DetailsView:
        cached = self.cache.get(key)
        ended = self.ended.get(key)
        return DetailsView(
            job_id=key,
            queue=self.live.get(key) or (ended.job if ended else None),
            details=cached.details if cached else None,
            entry=self.entries.get(key),
            outcome=ended.outcome if ended else None,
            note=note or (cached.note if cached else ""),
            node_states=cached.nodes if cached else (),
            slurm=self.slurm_version,
        )

    def details_step(self, key: str, *, details_visible: bool) -> DetailsStep:
        """The details of the selected job: cached per state; a running job's node states are looked at
        again now and then, but only while the details are on screen (RPC budget)."""
        self.selected = key
        state = self.state_of(key)
        cached = self.cache.get(key)
        fresh = cached is not None and cached.state == state
        if (fresh and cached is not None and cached.nodes and details_visible
                and self.monotonic() - cached.at > self.settings.idle_interval):
            fresh = False  # a node may have died
        if fresh:
            return DetailsStep(self.details_view(key), None)
        if not self.details_inflight.start((key, state)):
            return DetailsStep(None, None)
        view = self.details_view(key, note="loading details…") if cached is None or cached.state != state else None
        ended = self.ended.get(key)
        return DetailsStep(view, DetailsRequest(key, ended.query_id if ended else key, state))

    def fetch_details(self, runner: CommandRunner, request: DetailsRequest) -> DetailsResult:
        """*Thread-side*: ``scontrol show job -d``, plus ``sinfo -N`` of a running job's nodes."""
        details: JobDetails | None = None
        note = ""
        ok = True
        try:
            details = show_job(runner, request.query, timeout=self.slurm_timeout)
        except JobNotFound:
            note = "Slurm no longer knows this job (it forgets finished jobs after MinJobAge)."
        except (SlurmError, ValueError) as exc:
            note = describe_error(exc)
            ok = False
        nodes: tuple[NodeState, ...] = ()
        if details is not None and details.category in (StateCategory.RUNNING, StateCategory.COMPLETING):
            try:
                nodes = node_states(runner, details.nodes, timeout=self.slurm_timeout)
            except Exception:  # the node states are an extra; the details stand without them
                nodes = ()
        version = installed_version(runner, timeout=self.slurm_timeout)  # local, asked once per process
        return DetailsResult(request.key, request.state, details, note, ok, nodes, str(version) if version else "")

    def details_fetched(self, result: DetailsResult) -> bool:
        """Store a details answer; True when it is for the selected job (the view shows it)."""
        self.details_inflight.done((result.key, result.state))
        self.slurm_version = result.slurm or self.slurm_version
        previous = self.cache.get(result.key)
        details = result.details or (previous.details if previous and not result.ok else None)
        nodes = result.nodes or (previous.nodes if previous and not result.ok else ())
        self.cache[result.key] = CachedDetails(result.state, details, result.note, failed=not result.ok,
                                               nodes=nodes, at=self.monotonic())
        return result.key == self.selected

    def details_failed(self) -> None:
        """The details worker died unexpectedly: the next selection change asks again."""
        self.details_inflight.clear()

    # ------------------------------------------------------------ history entries

    def history_request(self, key: str) -> str | None:
        """The row key whose history entry to look up now, or None (known, or being looked up)."""
        if key in self.entries or not self.history_inflight.start(key):
            return None
        return key

    @staticmethod
    def lookup_entry(open_history: HistoryOpener, key: str) -> HistoryEntry | None:
        """*Thread-side*: what ntui recorded when it submitted the job (None: not ntui's, or unreadable)."""
        history = None
        try:
            history = open_history()
            return history.get(_history_key(key)) if history is not None else None
        except Exception:  # an unreadable history only hides the script and the per-rank logs
            return None
        finally:
            if history is not None:
                history.close()

    def entry_found(self, key: str, entry: HistoryEntry | None) -> bool:
        """Store a history answer; True when it is for the selected job."""
        self.history_inflight.done(key)
        self.entries[key] = entry
        return key == self.selected

    def history_failed(self, key: str | None = None) -> None:
        if key is None:
            self.history_inflight.clear()
        else:
            self.history_inflight.done(key)

    # ------------------------------------------------------------ what the panes get

    # ------------------------------------------------------------ banner and status line

    def banner(self, polling_now: bool | None = None) -> str:
        """The back-off banner ("" when squeue answered last time)."""
        err = self.error
        if err is None:
            return ""
        polling = self.polling if polling_now is None else polling_now
        if isinstance(err, SlurmConfigError):  # Slurm's own words; the controller was never asked
            what = "Slurm's configuration cannot be read"
        elif isinstance(err, (ControllerUnreachable, SlurmTimeout)):
            what = "controller unreachable"
        else:
            what = "squeue failed"
        head = f"⚠ {what}, retrying now…" if polling else f"⚠ {what}, retry in {self.retry_in()} s"
        return f"{head}  ·  {describe_error(err)}  ·  r: retry now"

    def retry_in(self) -> int:
        if self.next_poll is None:
            return 0
        return max(0, round((self.next_poll - self.clock()).total_seconds()))

    #: Running rows whose elapsed ticks between polls (more are left as squeue said: a cell update each).
    TICK_LIMIT = 300

    def ticked_elapsed(self) -> dict[str, str]:
        """The elapsed time of running jobs now: squeue's value (as of the last poll) plus the time since, so
        the column ticks between polls. Keys -> cell text; at most :attr:`TICK_LIMIT` jobs."""
        if self.last_update is None:
            return {}
        since = max(0, int((self.clock() - self.last_update).total_seconds()))
        out: dict[str, str] = {}
        for key, job in self.live.items():
            if job.category is not StateCategory.RUNNING:
                continue
            try:
                base = parse_time_limit(job.elapsed) if job.elapsed else 0
            except ValueError:
                continue
            out[key] = format_elapsed(base + since)
            if len(out) >= self.TICK_LIMIT:
                break
        return out

    def empty_text(self) -> str:
        """What the queue table says when it has no rows: "no jobs" only once squeue answered."""
        if self.last_update is not None:
            return "no jobs in the queue"
        if self.error is not None:
            return f"no data: {describe_error(self.error)}"
        return "waiting for squeue…"

    def status_line(self, *, filter_text: str = "", shown: int = 0, slurm_calls: int | None = None) -> str:
        counts = self.counts
        who = "everyone's jobs" if self.all_users else f"{self.user}'s jobs" if self.user else "my jobs"
        if self.last_update is None:  # no answer yet: nothing is known about the queue
            parts = [who]
        else:
            parts = [who, " · ".join(f"{n} {label}" for label, n in counts.items() if n) or "none queued"]
        if self.ended:
            parts.append(f"{len(self.ended)} ended")
        if filter_text:
            parts.append(f"filter {filter_text!r}: {shown} shown")
        if self.last_update is None:
            parts.append("waiting for squeue…" if self.error is None else "no data yet")
        else:
            age = max(0, int((self.clock() - self.last_update).total_seconds()))
            parts.append(f"updated {age} s ago")
        if self.polling:
            parts.append("refreshing…")
        elif self.next_poll is not None and self.error is None:
            parts.append(f"next in {self.retry_in()} s")
        if slurm_calls is not None:
            parts.append(f"{slurm_calls} Slurm calls")
        return "  │  ".join(parts)



def annotate_runs(rows: dict[str, Row], journals: Mapping[str, JournalState]) -> dict[str, Row]:
    """A long run's row says which allocation it is in (T10): ``allocation 2 of ≤ 6 · nid[001-002]`` in the
    node/reason cell (the third cell from the end), from its journal's last run-alloc event. Pure."""
    out: dict[str, Row] | None = None
    for job_id, row in rows.items():
        state = journals.get(job_id)
        if state is None or state.run_id is None or len(row) < 3:
            continue
        most = f" of ≤ {state.run_max + 1}" if state.run_max is not None else ""
        where = row[-3]
        said = f"allocation {state.run_restart + 1}{most}" + (f" · {where}" if where else "")
        out = out if out is not None else dict(rows)
        out[job_id] = (*row[:-3], said, *row[-2:])
    return rows if out is None else out


RowAnnotation = Callable[[dict[str, Row], Mapping[str, JournalState]], dict[str, Row]]
"""What a queue row says besides squeue's words, from what the view follows of the job (its journal): pure, returns
the rows (a new dict only where one changed)."""

#: Every row annotation, applied in this order to each refresh's and each journal tick's rows: one more (a job's
#: progress, a quiet job) is one more entry here.
ROW_ANNOTATIONS: tuple[RowAnnotation, ...] = (annotate_runs,)


def annotate(rows: dict[str, Row], journals: Mapping[str, JournalState]) -> dict[str, Row]:
    for annotation in ROW_ANNOTATIONS:
        rows = annotation(rows, journals)
    return rows
