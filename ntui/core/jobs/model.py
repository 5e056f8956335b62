"""The jobs view's model: the queue's rows and their life cycle, without Textual.

:class:`JobModel` holds everything the jobs view shows and decides every Slurm call it makes; the view
(``ntui.ui.screens.jobs``) only renders it, forwards keys and runs the model's thread-side calls in workers. The
model is the live queue and the decisions that cross books; each concern is a small book of its own, every look-up
in flight kept by one idiom (:class:`~ntui.core.jobs.inflight.InFlight`):

* **polling** (:class:`~ntui.core.jobs.polling.PollBook`, ``polls``): :meth:`JobModel.request_poll` starts a refresh
  unless one runs (then exactly one more follows it); :meth:`~JobModel.poll_succeeded` / :meth:`~JobModel.poll_failed`
  return the delay before the next one. One squeue per refresh (:class:`~ntui.core.jobs.queue.QueueFetcher`, with a
  per-line parse cache);
* **ended jobs** (:class:`~ntui.core.jobs.finals.EndedBook`, ``finished``): own jobs that leave the queue stay
  listed, their final state resolved once per job. A job submitted from this app that ended before any squeue saw it
  gets its row too;
* **details** (:class:`~ntui.core.jobs.details.DetailsBook`, ``details``): ``scontrol show job -d`` of the selected
  job only, cached per state (:meth:`~JobModel.details_step`);
* **history entries** (:class:`~ntui.core.jobs.details.EntryBook`, ``history``): the entry ntui recorded for a job
  (its log paths, its script), looked up on its own, independent of the controller, so the logs of ntui's own jobs
  show at once even while ``scontrol`` hangs (:func:`ntui.core.jobs.selected.log_target`);
* **journals** (:class:`~ntui.core.jobs.journals.JournalBook`, ``journal``; every couple of seconds, no Slurm call:
  :meth:`~JobModel.journal_request` / :meth:`JournalBook.fetch <ntui.core.jobs.journals.JournalBook.fetch>` /
  :meth:`~JobModel.journal_done`): the history is listed (a submission from another process or host since the view
  opened is expected in the queue, and squeue is asked at once) and the journals of own jobs are read: a start shows
  a pending row as running, an end moves the row to the ended ones with the journal's final state (no look-up).
  While every own active job is followed, squeue runs at the idle pace
  (:attr:`~ntui.core.jobs.queue.PollPolicy.covered`);
* **row annotations**: what a row says besides squeue's words goes through one hook, :data:`ROW_ANNOTATIONS`.

One responsibility: the state of the jobs view and the decisions about it (what the tabs get of the selected job:
:mod:`ntui.core.jobs.selected`). Methods marked *thread-side* run in worker threads: they read their arguments and
the squeue cache only, and return values the UI thread hands back to the model. Everything else runs on the UI
thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.jobfiles.journal import JournalState
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.details import (
    CachedDetails,
    DetailsBook,
    DetailsRequest,
    DetailsStep,
    DetailsView,
    EntryBook,
)
from ntui.core.jobs.finals import EndedBook, FinalStateResolver
from ntui.core.jobs.journals import JournalBook, JournalRequest, JournalResult
from ntui.core.jobs.polling import PollBook, PollRequest
from ntui.core.jobs.progress import ProgressBook, ProgressRequest
from ntui.core.jobs.queue import (
    ACTIVE,
    Fetched,
    FinishedJob,
    PollPolicy,
    QueueFetcher,
    Row,
    departed,
    queue_row,
)
from ntui.core.progress.board import ProgressView
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import Outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.durations import format_elapsed, time_limit_from_script
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import QueueJob

__all__ = [
    "CONFIRM_END_S",
    "Applied",
    "JobModel",
    "JournalApplied",
    "LogTarget",
    "ROW_ANNOTATIONS",
    "RowAnnotation",
    "RowFacts",
    "annotate",
    "annotate_progress",
    "annotate_runs",
]

#: A job whose journal says it ended while squeue still lists it (slurmctld hears of the end a moment later; after a
#: node failure it requeues the job only once the node is declared down): squeue is asked again this soon (seconds),
#: until it no longer lists the job or shows it pending again, so a requeue shows within a few seconds.
CONFIRM_END_S = 3.0


# ---------------------------------------------------------------- values exchanged with the view


@dataclass(frozen=True)
class Applied:
    """What a refresh changed: the rows to show (live rows in squeue order, then ended rows)."""

    rows: dict[str, Row]
    tags: dict[str, str]  # row key -> ENDED for jobs that left the queue
    unchanged: bool  # byte-identical answer and nothing new: nothing to redraw
    departed: tuple[FinishedJob, ...] = ()


@dataclass(frozen=True)
class LogTarget:
    """Where the selected job's logs are and how to read them: the job (None: none selected), ntui's log files of
    it (None: not ntui's job), how many ranks write them, whether it still runs (its logs still grow), its batch
    log and its launcher. Made from the selection by :func:`ntui.core.jobs.selected.log_target`; whatever shows
    logs reads it."""

    job_id: str | None
    paths: LogPaths | None
    world_size: int | None
    job_active: bool
    batch_log: str | None
    launcher: str | None = None  # srun, torchrun, accelerate: what srun's ``task N`` is (None: not ntui's job)


@dataclass(frozen=True)
class JournalApplied:
    """What a journal tick changed: the rows to show (None: none changed) and whether to ask squeue now."""

    applied: Applied | None
    poll_now: bool


def _time_limit(entry: HistoryEntry | None) -> int | None:
    return time_limit_from_script(entry.script) if entry is not None and entry.script else None


# ---------------------------------------------------------------- the model


class JobModel:
    """The live queue, and the books of the jobs view (see the module docstring)."""

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
        self.all_users = settings.queue.all_users
        self.user = user
        self.clock = clock
        self.monotonic = monotonic
        self.fetcher = QueueFetcher()
        self.polls = PollBook(settings.queue, clock)
        self.finished = EndedBook(resolver)
        self.details = DetailsBook(timeout=settings.slurm.timeout, recheck_s=settings.queue.idle_interval,
                                   monotonic=monotonic)
        self.history = EntryBook()
        self.journal = JournalBook()
        self.progress = ProgressBook(quiet_after_s=settings.progress.quiet_after)
        # the queue
        self.live: dict[str, QueueJob] = {}
        self._live_all_users = self.all_users
        self._have_snapshot = False
        self._rows: dict[str, Row] = {}  # the last squeue answer's rows
        self._expect: dict[str, int] = {}  # submitted job id -> polls started before it was submitted
        self._from_history: dict[str, HistoryEntry] = {}  # job id -> what the history knows of it
        self.started_at = time.time()
        """Wall-clock start (the history's clock): ntui's jobs submitted since are listed even if no poll saw them."""

    # ------------------------------------------------------------ the books' state, as the view reads it

    @property
    def ended(self) -> dict[str, FinishedJob]:
        return self.finished.ended

    @property
    def entries(self) -> dict[str, HistoryEntry | None]:
        return self.history.entries

    @property
    def journals(self) -> dict[str, JournalState]:
        return self.journal.states

    @property
    def cache(self) -> dict[str, CachedDetails]:
        return self.details.cache

    @property
    def selected(self) -> str | None:
        return self.details.selected

    @property
    def policy(self) -> PollPolicy:
        return self.polls.policy

    @property
    def polling(self) -> bool:
        return self.polls.polling

    @property
    def error(self) -> BaseException | None:
        return self.polls.error

    @property
    def last_update(self) -> datetime | None:
        return self.polls.last_update

    @property
    def refresh_count(self) -> int:
        return self.polls.refresh_count

    @property
    def busy(self) -> bool:
        """A refresh, a details, history or final-state look-up is running or waiting."""
        return bool(self.polls.polling or self.details.inflight.busy or self.finished.busy
                    or self.history.inflight.busy)

    # ------------------------------------------------------------ polling

    def request_poll(self) -> PollRequest | None:
        """A refresh to start now, or None when one is running (then another follows right after it)."""
        return self.polls.request(self.all_users)

    def fetch(self, runner: CommandRunner, request: PollRequest) -> Fetched:
        """*Thread-side*: the squeue of one refresh (raises :class:`~ntui.core.slurm.runner.SlurmError`)."""
        return self.fetcher.fetch(runner, request.all_users, self.slurm_timeout)

    def poll_succeeded(self, request: PollRequest, got: Fetched, *, background: bool = False) -> tuple[
        Applied | None, float
    ]:
        """Apply a refresh; returns what changed (None: the view changed during the fetch, nothing to apply)
        and the delay before the next refresh."""
        polls = self.polls
        if not polls.current(request):  # the view changed (all users) during the fetch
            return None, polls.rearm(0.0, background=background)
        polls.applied(got.counts)
        applied = self._apply(request, got)
        policy = polls.policy
        if policy.covered and any(k not in self.journal.states for k in self._own_active()):
            policy.covered = False  # a job no journal tick has seen yet: squeue keeps its pace until one has
        # same jobs: the activity found before; else counted anew (only own jobs in everyone's view)
        delay = polls.paced(got.jobs, unchanged=got.unchanged, user=self.user if request.all_users else None)
        if self.journal.unconfirmed:  # ended by its journal, still listed: requeued or not, squeue says so soon
            delay = min(delay, CONFIRM_END_S)
        return applied, polls.rearm(delay, background=background)

    def poll_failed(self, error: BaseException, *, background: bool = False) -> float:
        """A refresh failed: keep the rows, back off; returns the delay before the next try."""
        return self.polls.failed(error, background=background)

    def toggle_all_users(self) -> None:
        """Own jobs <-> everyone's: another view, nothing of the old one is reused."""
        self.all_users = not self.all_users
        self.polls.generation += 1
        self.fetcher = QueueFetcher()

    def expect_submission(self, job_id: str) -> None:
        """A job submitted from this app: if no squeue started after now lists it, it ended in between."""
        self._expect[job_id] = self.polls.seq  # polls up to this one may have started before sbatch

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
        finished = self.finished
        finished.refreshed()
        if got.unchanged and self._have_snapshot and not self._check_expected(self.live, request.seq) \
                and not any(job_id in got.live for job_id in self.journal.ended):
            # byte-identical answer: nothing to diff (10,000 held tasks cost nothing here). Unless a journal
            # ended a job this answer lists: that end may have come after the answer showed it requeued
            return Applied({}, {}, True)
        # copies: the fetcher keeps this answer to hand back when the next is byte-identical, and the model's live
        # jobs change between answers (a journal's end removes one)
        live, rows = self.journal.correct(dict(got.live), dict(got.rows), request.all_users)
        gone: tuple[FinishedJob, ...] = ()
        if self._have_snapshot:
            both_own = not (request.all_users or self._live_all_users)
            gone = finished.record(departed(self.live, live.values(), None if both_own else self.user))
        self._check_expected(live, request.seq)
        finished.back_in_queue(live)
        self.live, self._live_all_users, self._have_snapshot = live, request.all_users, True
        self._rows = dict(got.rows)
        rows, tags = self._with_ended(rows, request.all_users)
        finished.announce(gone)
        return Applied(rows, tags, False, gone)

    def _with_ended(self, rows: dict[str, Row], all_users: bool) -> tuple[dict[str, Row], dict[str, str]]:
        """The live rows, then the ended ones, annotated."""
        tags: dict[str, str] = {}
        if self.ended:
            ended_rows, tags = self.finished.rows(all_users)
            rows = {**rows, **ended_rows}
        facts = RowFacts(self.journal.states, self.progress.row_texts(self.live, self.clock().timestamp()))
        return annotate(rows, facts), tags

    def _current_rows(self) -> tuple[dict[str, Row], dict[str, str]]:
        """The rows as they stand (the last squeue answer, as the journals correct it), without a refresh."""
        rows = {k: v for k, v in self._rows.items() if k in self.live}
        for key, job in self.live.items():
            if key in self.journal.started:
                rows[key] = queue_row(job, self._live_all_users)
        return self._with_ended(rows, self._live_all_users)

    # ------------------------------------------------------------ progress (ntui.core.jobs.progress)

    def progress_request(self) -> ProgressRequest | None:
        """A progress tick to start now (own running jobs whose logs ntui knows), or None."""
        running = {k: j for k, j in self.live.items()
                   if j.category is StateCategory.RUNNING and (not self._live_all_users or j.user == self.user)}
        return self.progress.request(running, self.entries)

    def progress_done(self, views: Mapping[str, ProgressView]) -> Applied | None:
        """Apply a progress tick: the rows to show again when a job's progress moved (None: none did)."""
        if not self.progress.done(views) or not self._have_snapshot:
            return None
        rows, tags = self._current_rows()
        return Applied(rows, tags, False)

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
                    self.finished.unseen(QueueJob(job_id=job_id, raw_job_id=job_id, user=self.user,
                                                  name=known.job_name if known else "",
                                                  num_nodes=known.nodes if known else None))
                    found = True
        return found

    # ------------------------------------------------------------ journals (ntui.core.jobs.journals)

    def _own_active(self) -> list[str]:
        return [k for k, j in self.live.items()
                if j.category in ACTIVE and (not self._live_all_users or j.user == self.user)]

    def journal_request(self, since: float | None = None) -> JournalRequest | None:
        """A journal tick to start now, or None while one runs."""
        own = tuple(self._own_active())
        pending = frozenset(k for k in own if self.live[k].category is StateCategory.PENDING)
        return self.journal.request(own, pending, self.started_at if since is None else since, self.entries,
                                    frozenset(self.ended))

    def journal_done(self, result: JournalResult) -> JournalApplied:
        """Apply a journal tick: starts and ends seen in journals change rows at once
        (:meth:`JournalBook.correct <ntui.core.jobs.journals.JournalBook.correct>`)."""
        journal, entries = self.journal, self.entries
        journal.read()
        for job_id, entry in result.entries.items():
            entries.setdefault(job_id, entry)
        new = self.history_submissions(result.recent)
        changed = False
        gone: list[FinishedJob] = []
        for job_id, followed in result.followed.items():
            state = followed.state
            prev = journal.states.get(job_id)
            journal.states[job_id] = state
            entry = entries.get(job_id)
            if state.run_next and entry is not None and entries.get(state.run_next) is None:
                entries[state.run_next] = entry  # the chain's next link: the same run, logs and journal names
            if state.run_id is not None and job_id in self.live and (
                    prev is None or (prev.run_id, prev.run_restart, prev.run_max)
                    != (state.run_id, state.run_restart, state.run_max)):
                changed = True  # a long run's row says which allocation it is in (annotate_runs)
            if journal.new_end(job_id, state):
                ended = self._ended_by_journal(job_id, state, entry or self._from_history.get(job_id))
                if ended is not None:
                    gone.append(ended)
                    changed = True
            elif state.started and not state.ended:
                job = self.live.get(job_id)
                if job is not None and job.category is StateCategory.PENDING:
                    journal.started.add(job_id)
                    self.live[job_id] = journal.as_started(job)
                    changed = True
        own_active = self._own_active()
        pending = {k for k in own_active if self.live[k].category is StateCategory.PENDING}
        self.policy.covered = JournalBook.covers(own_active, result.followed, pending, all_users=self.all_users)
        # a new submission is expected in the queue; an end is confirmed by squeue at once (a job ended by a signal
        # may be requeued: a node failure, a preemption, scontrol requeue)
        poll_now = bool(gone) or any(j not in self.live and j not in self.ended for j in new)
        if not changed:
            return JournalApplied(None, poll_now)
        self.finished.trim()
        rows, tags = self._current_rows()
        departed_now = tuple(gone)
        self.finished.announce(departed_now)
        return JournalApplied(Applied(rows, tags, False, departed_now), poll_now)

    def _ended_by_journal(self, job_id: str, state: JournalState, entry: HistoryEntry | None) -> FinishedJob | None:
        """The job's journal told its end: its ended row, with the journal's final state (None: the end's state is
        not known yet)."""
        end = state.final(_time_limit(entry))
        if end is None:
            return None
        self.journal.end(job_id, state.allocations)
        self._expect.pop(job_id, None)
        job = self.live.pop(job_id, None) or (self.ended[job_id].job if job_id in self.ended else None)
        if job is None:
            job = QueueJob(job_id=job_id, raw_job_id=job_id, user=self.user,
                           name=entry.job_name if entry else "", num_nodes=entry.nodes if entry else None)
        outcome = Outcome(job_id, end.state, end.exit_code, "job", True, state.elapsed_s)
        finished = FinishedJob(job_id, job_id, job, outcome=outcome)
        self.finished.ended_by_journal(finished)
        return finished

    # ------------------------------------------------------------ selection and details

    def state_of(self, key: str) -> str:
        job = self.live.get(key)
        if job is not None:
            return job.state
        return self.finished.state_of(key) or ""

    def select(self, key: str | None) -> bool:
        """The cursor moved to ``key``; False when it was already there. Reselecting retries a failed
        look-up."""
        return self.details.select(key)

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
            slurm=self.details.slurm_version,
        )

    def details_step(self, key: str, *, details_visible: bool) -> DetailsStep:
        """The details of the selected job: cached per state; a running job's node states are looked at
        again now and then, but only while the details are on screen (RPC budget)."""
        book = self.details
        book.selected = key
        state = self.state_of(key)
        if book.fresh(key, state, visible=details_visible):
            return DetailsStep(self.details_view(key), None)
        if not book.start(key, state):
            return DetailsStep(None, None)
        cached = book.cache.get(key)
        view = self.details_view(key, note="loading details…") if cached is None or cached.state != state else None
        ended = self.ended.get(key)
        return DetailsStep(view, DetailsRequest(key, ended.query_id if ended else key, state))

    # ------------------------------------------------------------ banner and status line

    #: Running rows whose elapsed ticks between polls (more are left as squeue said: a cell update each).
    TICK_LIMIT = 300

    def ticked_seconds(self) -> dict[str, int]:
        """The elapsed time of running jobs now, in seconds: squeue's value (as of the last poll) plus the time
        since, so the column ticks between polls. At most :attr:`TICK_LIMIT` jobs."""
        if self.last_update is None:
            return {}
        since = max(0, int((self.clock() - self.last_update).total_seconds()))
        out: dict[str, int] = {}
        for key, job in self.live.items():
            if job.category is not StateCategory.RUNNING:
                continue
            base = job.elapsed_s if job.elapsed else 0
            if base is None:
                continue
            out[key] = base + since
            if len(out) >= self.TICK_LIMIT:
                break
        return out

    def ticked_elapsed(self) -> dict[str, str]:
        """:meth:`ticked_seconds` as the queue cells spell them (:func:`~ntui.core.slurm.durations.format_elapsed`)."""
        return {key: format_elapsed(seconds) for key, seconds in self.ticked_seconds().items()}

    def empty_text(self) -> str:
        """What the queue table says when it has no rows: "no jobs" only once squeue answered."""
        if self.last_update is not None:
            return "no jobs in the queue"
        if self.error is not None:
            return f"no data: {describe_error(self.error)}"
        return "waiting for squeue…"

    def status_line(self, *, filter_text: str = "", shown: int = 0, slurm_calls: int | None = None) -> str:
        polls = self.polls
        who = "everyone's jobs" if self.all_users else f"{self.user}'s jobs" if self.user else "my jobs"
        if polls.last_update is None:  # no answer yet: nothing is known about the queue
            parts = [who]
        else:
            parts = [who, " · ".join(f"{n} {label}" for label, n in polls.counts.items() if n) or "none queued"]
        if self.ended:
            parts.append(f"{len(self.ended)} ended")
        if filter_text:
            parts.append(f"filter {filter_text!r}: {shown} shown")
        if polls.last_update is None:
            parts.append("waiting for squeue…" if polls.error is None else "no data yet")
        else:
            age = max(0, int((self.clock() - polls.last_update).total_seconds()))
            parts.append(f"updated {age} s ago")
        if polls.polling:
            parts.append("refreshing…")
        elif polls.next_poll is not None and polls.error is None:
            parts.append(f"next in {polls.retry_in()} s")
        if slurm_calls is not None:
            parts.append(f"{slurm_calls} Slurm calls")
        return "  │  ".join(parts)


@dataclass(frozen=True)
class RowFacts:
    """What the view follows of its jobs besides squeue, for the row annotations: each own job's journal, and the
    progress words of those whose logs say how far they are."""

    journals: Mapping[str, JournalState]
    progress: Mapping[str, str] = field(default_factory=dict)


def annotate_runs(rows: dict[str, Row], facts: RowFacts) -> dict[str, Row]:
    """A long run's row says which allocation it is in (T10): ``allocation 2 of ≤ 6 · nid[001-002]`` in the
    node/reason cell (the third cell from the end), from its journal's last run-alloc event. Pure."""
    out: dict[str, Row] | None = None
    for job_id, row in rows.items():
        state = facts.journals.get(job_id)
        if state is None or state.run_id is None or len(row) < 3:
            continue
        most = f" of ≤ {state.run_max + 1}" if state.run_max is not None else ""
        where = row[-3]
        said = f"allocation {state.run_restart + 1}{most}" + (f" · {where}" if where else "")
        out = out if out is not None else dict(rows)
        out[job_id] = (*row[:-3], said, *row[-2:])
    return rows if out is None else out


def annotate_progress(rows: dict[str, Row], facts: RowFacts) -> dict[str, Row]:
    """A running job whose log says how far it is: ``42% · ends in 1 h 10 min · nid[001-002]`` in the node/reason
    cell (:meth:`~ntui.core.jobs.progress.ProgressBook.row_texts`). Pure."""
    out: dict[str, Row] | None = None
    for job_id, words in facts.progress.items():
        row = rows.get(job_id)
        if row is None or len(row) < 3:
            continue
        where = row[-3]
        out = out if out is not None else dict(rows)
        out[job_id] = (*row[:-3], f"{words} · {where}" if where else words, *row[-2:])
    return rows if out is None else out


RowAnnotation = Callable[[dict[str, Row], RowFacts], dict[str, Row]]
"""What a queue row says besides squeue's words, from what the view follows of the job (its journal, its progress):
pure, returns the rows (a new dict only where one changed)."""

#: Every row annotation, applied in this order to each refresh's and each journal or progress tick's rows: one more
#: (a quiet job) is one more entry here.
ROW_ANNOTATIONS: tuple[RowAnnotation, ...] = (annotate_runs, annotate_progress)


def annotate(rows: dict[str, Row], facts: RowFacts) -> dict[str, Row]:
    for annotation in ROW_ANNOTATIONS:
        rows = annotation(rows, facts)
    return rows
