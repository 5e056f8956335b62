"""The journals of ntui's own jobs as the jobs view follows them: held descriptors, one ``pread`` per tick.

Each own job in the queue (and each one submitted since the view opened, from this process or another) whose
history entry names its log directory has its journal (:mod:`ntui.core.jobfiles.journal`) followed by a
:class:`~ntui.core.jobfiles.journal.JournalReader`: the file is opened once (a pending job's is tried again each
tick until it appears), then every tick reads only what was appended, with no ``open`` or ``stat``, under the same
descriptor budget as the log watcher (:class:`~ntui.core.logs.tail.FdBudget`). The view learns a job's start and
end from it within a tick, and squeue can go slower while every own active job is followed
(:class:`~ntui.core.jobs.queue.PollPolicy`). Thread-side: :meth:`JournalBoard.poll` runs in the view's journal
worker; ticks never overlap, so the board needs no lock.

:class:`JournalBook` is the jobs view model's book of what the journals said: a start shows a pending row as running,
an end moves the row to the ended ones with the journal's final state until squeue agrees (a job whose journal ended
while squeue still lists it running stays ended; it is requeued only when squeue shows it pending again, or its
journal a new allocation). :meth:`JournalBook.fetch` is the tick's thread-side half: it lists the history (the
submissions since the view opened; the entries of own queued jobs not known yet) and reads the journals.

A cluster reached over ssh has its own active jobs' journals read the same way through its agent (issue #45): its
board makes an :class:`OffsetJournalReader` per journal (one ``read`` request from the offset reached per tick, the
lines folded by the same parse) and its history is a :class:`LookupHistory` (its entries asked one job at a time,
no listing). :meth:`JournalBook.covers` is the one rule, for the local queue and every cluster's, of when squeue may
go at the idle pace.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field, replace

from ntui.core.jobfiles.journal import (
    JournalReader,
    JournalState,
    journal_path,
)
from ntui.core.jobs.details import HistoryOpener, history_key
from ntui.core.jobs.inflight import InFlight
from ntui.core.jobs.queue import Row, queue_row
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.squeue import QueueJob

__all__ = [
    "MAX_FOLLOWED",
    "MAX_PENDING_JOURNALS",
    "Followed",
    "JournalBoard",
    "JournalBook",
    "JournalRequest",
    "JournalResult",
    "LookupHistory",
    "OffsetJournalReader",
    "ReadAt",
    "ReaderFactory",
]

#: At most this many journals are followed (the newest jobs first); beyond that squeue alone tells.
MAX_FOLLOWED = 64
#: At most this many pending jobs have their journal looked for (an open that fails, each tick); squeue tells the
#: start of the others (and squeue keeps its active pace then).
MAX_PENDING_JOURNALS = 8
#: How many of the newest history entries are searched for the run of a queued job not in the history.
RUN_LINK_SCAN = 100


@dataclass(frozen=True)
class Followed:
    """One followed journal after a tick."""

    job_id: str
    state: JournalState
    exists: bool  # the file was found (False: not there yet, e.g. a pending job, or no journal at all)
    changed: bool  # new events this tick


#: Bytes of a journal from an offset (path, offset, at most this many): b"" when nothing more is there, None when
#: the file is not there (yet); raises when the other machine cannot be asked (the tick fails).
ReadAt = Callable[[str, int, int], "bytes | None"]
#: A journal's reader for (path, job id).
ReaderFactory = Callable[[str, str], JournalReader]


class OffsetJournalReader(JournalReader):
    """A journal on another machine (a cluster's login node) read by offset through ``read_at`` (its agent's ``read``):
    each :meth:`poll` asks from the offset reached (a file not there yet is asked at most once per ``retry_s``), and
    each chunk is folded by :meth:`JournalReader.feed`, as a local journal's. No descriptor is held:
    :attr:`open` says the file was found."""

    def __init__(self, path: str, job_id: str, read_at: ReadAt, *, retry_s: float = 4.0,
                 clock: Callable[[], float] = time.monotonic, chunk: int = 65536) -> None:
        super().__init__(path, job_id, retry_s=retry_s, clock=clock, chunk=chunk)
        self._read_at = read_at
        self.found = False

    @property
    def open(self) -> bool:
        return self.found

    def poll(self) -> bool:
        if not self.found and not self.try_now():
            return False
        changed = False
        while True:
            data = self._read_at(self.path, self.offset, self._chunk)
            self.reads += 1
            if data is None:  # not there (yet), or gone: what was read stands
                break
            self.found = True
            if not data:
                break
            changed = self.feed(data) or changed
            if len(data) < self._chunk:
                break
        return changed

    def close(self) -> None:
        pass  # no descriptor: the offset is kept for the next poll


class LookupHistory:
    """A history whose entries are asked one job at a time (a cluster's, through its agent's ``job``): no listing,
    so a tick sees no submission of another process there (that cluster's squeue does)."""

    def __init__(self, get: Callable[[str], HistoryEntry | None]) -> None:
        self._get = get

    def get(self, job_id: str) -> HistoryEntry | None:
        return self._get(job_id)

    def close(self) -> None:
        pass


class JournalBoard:
    def __init__(self, *, budget: FdBudget | None = None, retry_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic, reader: ReaderFactory | None = None) -> None:
        self.budget = budget or FdBudget()
        self.retry_s = retry_s
        self.clock = clock
        self._make: ReaderFactory = reader or (
            lambda path, job_id: JournalReader(path, job_id, retry_s=self.retry_s, clock=self.clock))
        self.readers: dict[str, JournalReader] = {}
        self._held: set[str] = set()

    def poll(self, wanted: Mapping[str, HistoryEntry]) -> dict[str, Followed]:
        """Follow exactly the journals of ``wanted`` (job id -> its entry), read what was appended to each."""
        for job_id in [j for j in self.readers if j not in wanted]:
            self._drop(job_id)
        out: dict[str, Followed] = {}
        for job_id, entry in list(wanted.items())[:MAX_FOLLOWED]:
            reader = self.readers.get(job_id)
            if reader is None:
                if not entry.log_dir or not entry.log_stem:
                    continue
                reader = self._make(journal_path(entry.log_dir, entry.log_stem, job_id), job_id)
                self.readers[job_id] = reader
            was_open = reader.open
            changed = reader.poll()
            if reader.open and not was_open:
                if self.budget.acquire():
                    self._held.add(job_id)
                else:  # over the budget: read it once more next tick through a fresh descriptor
                    reader.close()
            elif reader.open and job_id not in self._held:
                reader.close()
            out[job_id] = Followed(job_id, reader.state, reader.open or reader.offset > 0, changed)
        return out

    def _drop(self, job_id: str) -> None:
        reader = self.readers.pop(job_id, None)
        if reader is not None:
            reader.close()
        if job_id in self._held:
            self._held.discard(job_id)
            self.budget.release()

    def close(self) -> None:
        for job_id in list(self.readers):
            self._drop(job_id)


@dataclass(frozen=True)
class JournalRequest:
    """One journal tick to run (:meth:`JournalBook.fetch` in a worker)."""

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


class JournalBook:
    """What the followed journals said, as the jobs view's model keeps it (see the module docstring)."""

    def __init__(self) -> None:
        self.inflight: InFlight[str] = InFlight(exclusive=True)  # the one tick
        self.states: dict[str, JournalState] = {}
        self.ended: dict[str, int] = {}  # job id -> allocations its journal had when it ended
        self.unconfirmed: set[str] = set()  # of those, the ones squeue listed (not pending) at the last refresh
        #: job id -> allocations its journal had when squeue showed it pending again after that end (requeued):
        #: the same allocation's end does not end it again at the next tick, only a later allocation's does
        self._requeued: dict[str, int] = {}
        self.started: set[str] = set()  # pending in squeue, started per its journal

    def request(self, own_live: tuple[str, ...], pending: frozenset[str], since: float,
                known: Mapping[str, HistoryEntry | None], done: frozenset[str]) -> JournalRequest | None:
        """A tick to start now, or None while one runs."""
        if not self.inflight.start("tick"):
            return None
        return JournalRequest(own_live, since, pending, dict(known), frozenset(self.ended) | done)

    @staticmethod
    def fetch(open_history: HistoryOpener, board: JournalBoard, request: JournalRequest, *,
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
                        entries[job_id] = history.get(history_key(job_id))
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

    @staticmethod
    def covers(own_active: Iterable[str], followed: Mapping[str, Followed], pending: Container[str], *,
               all_users: bool) -> bool:
        """Whether squeue may go at the idle pace (:attr:`~ntui.core.jobs.queue.PollPolicy.covered`): there are own
        active jobs, in the own-jobs view, and the tick followed each one's journal (found, or a pending job's
        looked for)."""
        own = list(own_active)
        return bool(own) and not all_users and all(
            k in followed and (followed[k].exists or k in pending) for k in own)

    def failed(self) -> None:
        self.inflight.clear()

    def read(self) -> None:
        """A tick's answer came (it is applied next)."""
        self.inflight.clear()

    def new_end(self, job_id: str, state: JournalState) -> bool:
        """The journal says the job ended, and that end is news (not told before, not the allocation squeue showed
        requeued since)."""
        return state.ended and job_id not in self.ended and self._requeued.get(job_id) != state.allocations

    def end(self, job_id: str, allocations: int) -> None:
        self.ended[job_id] = allocations
        self.started.discard(job_id)

    def as_started(self, job: QueueJob) -> QueueJob:
        """A pending job whose journal started: as squeue will list it (running, on the journal's nodes)."""
        state = self.states.get(job.job_id)
        return replace(job, state="RUNNING", reason="", elapsed=job.elapsed or "0:00",
                       nodelist=(state.nodes if state is not None and state.nodes else job.nodelist))

    def correct(self, live: dict[str, QueueJob], rows: dict[str, Row],
                all_users: bool) -> tuple[dict[str, QueueJob], dict[str, Row]]:
        """squeue's answer as the journals correct it: a job whose journal ended stays ended while squeue still
        lists it (slurmctld hears of the end a moment later; it is requeued only when squeue shows it pending
        again or its journal a new allocation); a pending job whose journal started shows as running."""
        self.unconfirmed = set()
        if not self.ended and not self.started:
            return live, rows
        live, rows = dict(live), dict(rows)
        for job_id, allocations in list(self.ended.items()):
            job = live.get(job_id)
            if job is None:
                continue
            state = self.states.get(job_id)
            if job.category is StateCategory.PENDING or (state is not None and state.allocations > allocations):
                del self.ended[job_id]  # requeued: live again
                self._requeued[job_id] = allocations
                continue
            self.unconfirmed.add(job_id)
            del live[job_id]
            rows.pop(job_id, None)
        for job_id in list(self.started):
            job = live.get(job_id)
            if job is None or job.category is not StateCategory.PENDING:
                self.started.discard(job_id)
                continue
            live[job_id] = started = self.as_started(job)
            rows[job_id] = queue_row(started, all_users)
        return live, rows
