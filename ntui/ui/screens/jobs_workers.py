"""The jobs view's workers: every thread-side call of :class:`~ntui.core.jobs.model.JobModel`, started when the model
asks for it, its answer posted to the screen as a message of :mod:`ntui.ui.messages`.

:class:`ModelWorkers` is a collaborator of :class:`~ntui.ui.screens.jobs.JobsScreen` (as
:class:`~ntui.ui.screens.job_operations.JobOperations` and :class:`~ntui.ui.screens.jobs_waiting.WaitingWatch` are): the
screen hands each message to the model and draws; this class starts the calls and keeps what they share between
them (the journal worker's history and descriptors, the recent-jobs loads, the squeue timer).

* one squeue per refresh; refreshes never overlap (the next one is armed with ``set_timer`` only after the last one
  ended: :meth:`ModelWorkers.arm`);
* ``scontrol show job -d`` only for the selected job (an exclusive worker: a newer selection cancels the older);
  the history look-up that gives a job's log paths is a worker of its own, so the log pane of ntui's own jobs never
  waits for the controller;
* final states once per job that leaves the queue, a batch at a time;
* every :data:`~ntui.core.jobs.progress.PROGRESS_TICK_S` a progress worker reads own running jobs' rank-0 logs for
  how far they are (files only);
* every :data:`JOURNAL_TICK_S` a journal worker lists the history (a submission from another terminal or host shows
  within a tick) and reads own jobs' journals through held descriptors (a start or an end shows within a tick, no
  Slurm call).

The clusters reached over ssh (:class:`ClusterWorkers`) have the same journal tick: each cluster's own active jobs'
journals read through its agent (its history's entry of each gives the path, then one ``read`` from the offset
reached per journal), no Slurm call.

A worker that raises something unexpected is handed back to the model by its group (:meth:`ModelWorkers.failed`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from textual.message import Message
from textual.timer import Timer

from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.jobs.clusters import ClusterQueues, login_user
from ntui.core.jobs.details import DetailsRequest, EntryBook, HistoryLike
from ntui.core.jobs.journals import (
    JournalBoard,
    JournalBook,
    JournalRequest,
    JournalResult,
    LookupHistory,
    OffsetJournalReader,
)
from ntui.core.jobs.model import JobModel
from ntui.core.jobs.polling import PollRequest
from ntui.core.jobs.progress import ProgressBook, ProgressRequest
from ntui.core.jobs.queue import FinishedJob
from ntui.core.jobs.recent import MAX_RECENT, RecentLoads, RecentRequest, cluster_recent, load_recent
from ntui.core.progress.board import ProgressBoard
from ntui.core.records.outcome import Outcome
from ntui.core.records.record import RecentJob
from ntui.core.remote.files import ClusterFiles, FileRefused, LocalFiles, follows_journals, journal_read_at
from ntui.core.remote.logs import entry_from_dict, remote_entry
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.ssh import SshError
from ntui.ui.messages import (
    ClusterDetailsFetched,
    ClusterQueueFailed,
    ClusterQueueFetched,
    DetailsFetched,
    EntryFound,
    JournalsRead,
    OutcomesResolved,
    ProgressRead,
    QueueFailed,
    QueueFetched,
)
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.widgets.recent_jobs import RecentLoaded

__all__ = ["CLUSTER_GROUP", "JOURNAL_TICK_S", "RECENT_GROUP", "SQUEUE_GROUP", "ClusterHistoryLoaded",
           "ClusterJournalsRead", "ClusterOutcomesResolved", "ClusterUserFound", "ClusterWorkers", "ModelWorkers",
           "WorkersView"]

#: Workers' groups (the screen's error handler and the benchmark tell them apart by these).
SQUEUE_GROUP = "ntui-squeue"
DETAILS_GROUP = "ntui-details"
HISTORY_GROUP = "ntui-history"
OUTCOME_GROUP = "ntui-outcome"
RECENT_GROUP = "ntui-recent"
JOURNAL_GROUP = "ntui-journal"
PROGRESS_GROUP = "ntui-progress"
#: A cluster reached over ssh: its squeue's group is this plus ``-NAME``, its details' this plus ``-details``, its
#: final-state look-ups' this plus ``-final:NAME``, its history's this plus ``-history:NAME``, its login's user's
#: this plus ``-user:NAME`` (no cluster's name holds a ``:``).
CLUSTER_GROUP = "ntui-cluster"
_FINAL = f"{CLUSTER_GROUP}-final:"
_HISTORY = f"{CLUSTER_GROUP}-history:"
_USER = f"{CLUSTER_GROUP}-user:"
_JOURNALS = f"{CLUSTER_GROUP}-journals:"


@dataclass
class ClusterUserFound(Message):
    """The user the login on a cluster reached over ssh is, as its shell said it (None: not said)."""

    cluster: str
    user: str | None


@dataclass
class ClusterHistoryLoaded(Message):
    """The recent jobs of a cluster reached over ssh, from its own history (``jobs`` None: it could not be read,
    ``note`` says why in words)."""

    cluster: str
    jobs: tuple[RecentJob, ...] | None
    note: str = ""


@dataclass
class ClusterJournalsRead(Message):
    """A journal tick of a cluster reached over ssh (``result`` None: it failed, the link or the agent;
    ``unsupported``: its files follow no journal, plain commands)."""

    cluster: str
    result: JournalResult | None
    unsupported: bool = False


@dataclass
class ClusterOutcomesResolved(Message):
    """Final states of jobs that left the queue of a cluster reached over ssh (keys: its ended rows' keys there)."""

    cluster: str
    outcomes: tuple[tuple[str, Outcome], ...]

#: How often the history is listed and own jobs' journals are read (files only, no Slurm call): a start or an end
#: shows within this, and a job submitted from another terminal too.
JOURNAL_TICK_S = 2.0


class WorkersView(Protocol):
    """What the workers read of the jobs view."""

    model: JobModel
    full_settings: Settings

    @property
    def runner(self) -> CommandRunner: ...

    def open_history(self) -> HistoryLike | None:
        """*Thread-side*: the history, or None where there is none."""
        ...


class ModelWorkers:
    """The jobs view's workers (see the module docstring). ``local``: this machine's Slurm is shown (False: only
    clusters reached over ssh; no Slurm is asked here)."""

    def __init__(self, screen: NtuiScreen, view: WorkersView, *, local: bool = True) -> None:
        self.screen = screen
        self.view = view
        self.model = view.model
        self.local = local
        self._poll_timer: Timer | None = None
        self.recent_loads = RecentLoads()  # recent jobs (ntui/core/jobs/recent.py)
        self._journals = JournalBoard()  # own jobs' journals (ntui/core/jobs/journals.py)
        self._journal_store: HistoryLike | None = None  # the history the journal worker keeps open between ticks
        # held by a journal tick while it reads, and by the unmount that closes what it reads (an index connection
        # closed under a running query crashed the interpreter: SQLite's use after free, seen once at app exit)
        self._journal_lock = threading.Lock()
        self._journal_closed = False
        self._progress = ProgressBoard()  # own running jobs' logs, read for their progress (ntui/core/jobs/progress.py)

    def _run(self, fn: Any, *, group: str, description: str, exclusive: bool = False) -> None:
        self.screen.run_worker(fn, thread=True, exit_on_error=False, group=group, description=description,
                               exclusive=exclusive)

    # ------------------------------------------------------------ squeue

    def start_poll(self) -> None:
        """A refresh now, unless one runs (then another follows right after it)."""
        request = self.model.request_poll()
        if request is None:
            return
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._run(partial(self._poll, request), group=SQUEUE_GROUP, description="squeue")

    def arm(self, delay: float) -> None:
        """The next refresh in ``delay`` seconds (the model's pace)."""
        if delay > 0:
            self._poll_timer = self.screen.set_timer(delay, self.start_poll, name="squeue re-arm")
        else:  # (a zero-delay Timer divides by zero in Textual 8.2.8)
            self._poll_timer = None
            self.screen.call_later(self.start_poll)

    def _poll(self, request: PollRequest) -> None:
        recent = self._recent_history()
        if recent:
            self.screen.app.call_from_thread(self.model.history_submissions, recent)
        started = time.perf_counter()
        try:
            got = self.model.fetch(self.view.runner, request)
        except SlurmError as exc:
            self.screen.post_message(QueueFailed(request, exc))
            return
        self.screen.post_message(QueueFetched(request, got, started))

    def _recent_history(self) -> list[Any]:
        """*Thread-side*: the history's latest submissions (record files): jobs submitted from the CLI that may
        start and end between two polls (:meth:`~ntui.core.jobs.model.JobModel.history_submissions`). The journal
        tick lists them too, more often; here each squeue sees the history as it is just before it."""
        try:
            history = self.view.open_history()
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

    def journal_tick(self) -> None:
        request = self.model.journal_request()
        if request is not None:
            self._run(partial(self._read_journals, request), group=JOURNAL_GROUP, description="journals")

    def _read_journals(self, request: JournalRequest) -> None:
        """Ticks never overlap, so the one history kept open here (opening it each tick cost more CPU than the
        tick's reads) is only ever used by one thread at a time; the lock keeps :meth:`close` from closing it (and
        the journals' descriptors) under a tick."""
        with self._journal_lock:
            if self._journal_closed:
                return
            result = JournalBook.fetch(self._journal_history, self._journals, request, close=False)
        self.screen.post_message(JournalsRead(result))

    def _journal_history(self) -> HistoryLike | None:
        """*Thread-side* (the journal worker): the history, opened on the first tick."""
        if self._journal_store is None:
            self._journal_store = self.view.open_history()
        return self._journal_store

    def close(self) -> None:
        """The view is gone: the journals' descriptors and the history closed (a tick in flight finishes its reads
        first: file reads, milliseconds)."""
        with self._journal_lock:
            self._journal_closed = True
            self._journals.close()
            if self._journal_store is not None:
                self._journal_store.close()
                self._journal_store = None

    # ------------------------------------------------------------ progress (ntui/core/jobs/progress.py)

    def progress_tick(self) -> None:
        request = self.model.progress_request()
        if request is not None:
            self._run(partial(self._read_progress, request), group=PROGRESS_GROUP, description="progress")

    def _read_progress(self, request: ProgressRequest) -> None:
        """Ticks never overlap (the model starts one at a time), so the board is one thread's at a time."""
        self.screen.post_message(ProgressRead(ProgressBook.fetch(self._progress, request)))

    # ------------------------------------------------------------ look-ups

    def start_lookups(self) -> None:
        """The final states of jobs that left the queue, a batch at a time."""
        batch = self.model.finished.take()
        if batch is not None:
            self._run(partial(self._resolve, batch), group=OUTCOME_GROUP, description="final state")

    def _resolve(self, batch: tuple[tuple[str, str], ...]) -> None:
        self.screen.post_message(OutcomesResolved(self.model.finished.resolve(self.view.runner, batch)))

    def details(self, request: DetailsRequest) -> None:
        """``scontrol show job -d`` of the selected job (a newer selection's cancels this one)."""
        self._run(partial(self._details, request), group=DETAILS_GROUP, description="job details", exclusive=True)

    def _details(self, request: DetailsRequest) -> None:
        self.screen.post_message(DetailsFetched(self.model.details.fetch(self.view.runner, request)))

    def history(self, key: str) -> None:
        """The history's entry of ``key`` (a local file, no Slurm call): where ntui wrote the job's logs, its
        script."""
        self._run(partial(self._entry, key), group=HISTORY_GROUP, description="history look-up")

    def _entry(self, key: str) -> None:
        self.screen.post_message(EntryFound(key, EntryBook.lookup(self.view.open_history, key)))

    # ------------------------------------------------------------ recent jobs (ntui/core/jobs/recent.py)

    def load_recent(self, *, resolve: bool) -> None:
        """The recent jobs again (``resolve``: the records of jobs that left the queue first); one load at a time,
        a request during one runs after it."""
        request = self.recent_loads.request(resolve=resolve)
        if request is not None:
            self._run(partial(self._recent, request), group=RECENT_GROUP, description="recent jobs")

    def jobs_departed(self, gone: tuple[FinishedJob, ...]) -> None:
        """Jobs left the queue: their records resolved first, then the list loaded again."""
        self.load_recent(resolve=True)

    def recent_done(self) -> None:
        again = self.recent_loads.finished()
        if again is not None:
            self._run(partial(self._recent, again), group=RECENT_GROUP, description="recent jobs")

    def _recent(self, request: RecentRequest) -> None:
        history = self.view.open_history()
        try:
            runner = self.view.runner if self.local else None  # no Slurm here: the records as they are
            got = load_recent(history, runner, request, days=self.view.full_settings.queue.recent_days,
                              now=self.model.clock().timestamp(), timeout=self.model.slurm_timeout)
        finally:
            if history is not None:
                history.close()
        self.screen.post_message(RecentLoaded(got))

    # ------------------------------------------------------------ failures

    def failed(self, group: str | None) -> bool:
        """A look-up worker of ``group`` raised something unexpected (the notification is out): the model forgets
        the call, so the next one can start. False for any other group; a refresh's or a recent-jobs load's failure
        is the screen's to apply (the back-off, the notices)."""
        model = self.model
        if group == DETAILS_GROUP:
            model.details.failed()
        elif group == HISTORY_GROUP:
            model.history.failed()
        elif group == OUTCOME_GROUP:
            model.finished.failed()
        elif group == JOURNAL_GROUP:
            model.journal.failed()
        elif group == PROGRESS_GROUP:
            model.progress.failed()
        else:
            return False
        return True


class ClusterWorkers:
    """The workers of the clusters reached over ssh (:class:`~ntui.core.jobs.clusters.ClusterQueues`): one squeue
    poller per cluster, each through its own runner, re-armed only after its refresh ended; a slow or dropped link
    holds up neither the UI nor the other clusters. ``runner_of``: a cluster's runner (built on first use, in the
    worker: opening its ssh login never waits on the UI thread)."""

    def __init__(self, screen: NtuiScreen, queues: ClusterQueues, runner_of: Callable[[str], CommandRunner],
                 all_users: Callable[[], bool], files_of: Callable[[str], ClusterFiles] | None = None) -> None:
        self.screen = screen
        self.queues = queues
        self.runner_of = runner_of
        self.all_users = all_users
        self.files_of = files_of
        self._timers: dict[str, Timer] = {}
        self._history: dict[str, bool] = {}  # cluster -> a history load runs (True: another follows it)
        self._journals: dict[str, JournalBoard] = {}  # cluster -> its own jobs' journals, read through its agent

    def start_poll(self, name: str) -> None:
        """A refresh of cluster ``name`` now, unless one runs (then another follows right after it)."""
        request = self.queues[name].request(self.all_users())
        if request is None:
            return
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.stop()
        self.screen.run_worker(partial(self._poll, name, request), thread=True, exit_on_error=False,
                               group=f"{CLUSTER_GROUP}-{name}", description=f"squeue on {name}")

    def start_all(self) -> None:
        for name in self.queues.names():
            self.start_poll(name)

    def arm(self, name: str, delay: float) -> None:
        """Cluster ``name``'s next refresh in ``delay`` seconds."""
        if delay > 0:
            self._timers[name] = self.screen.set_timer(delay, partial(self.start_poll, name),
                                                       name=f"squeue re-arm {name}")
        else:
            self.screen.call_later(self.start_poll, name)

    def _poll(self, name: str, request: PollRequest) -> None:
        queue = self.queues[name]
        try:
            got = queue.fetch(self.runner_of(name), request)
        except Exception as exc:  # Slurm's or ssh's failure, or a runner that cannot be built: this cluster's alone
            queue.link_failed(exc)
            self.screen.post_message(ClusterQueueFailed(name, request, exc))
            return
        queue.link_answered()
        self.screen.post_message(ClusterQueueFetched(name, request, got))

    def details(self, name: str, request: DetailsRequest) -> None:
        """``scontrol show job -d`` of the selected job, on its own cluster (a newer selection's cancels it)."""
        self.screen.run_worker(partial(self._details, name, request), thread=True, exit_on_error=False,
                               group=f"{CLUSTER_GROUP}-details", description=f"job details on {name}",
                               exclusive=True)

    def _details(self, name: str, request: DetailsRequest) -> None:
        queue = self.queues[name]
        self.screen.post_message(ClusterDetailsFetched(name, queue.fetch_details(self.runner_of(name), request)))

    def start_lookups(self, name: str) -> None:
        """The final states of cluster ``name``'s jobs that left its queue, a batch at a time, asked there."""
        queue = self.queues[name]
        batch = queue.finished.take()
        if batch is not None:
            self.screen.run_worker(partial(self._resolve, name, batch), thread=True, exit_on_error=False,
                                   group=f"{_FINAL}{name}", description=f"final state on {name}")

    def _resolve(self, name: str, batch: tuple[tuple[str, str], ...]) -> None:
        queue = self.queues[name]
        try:
            runner: CommandRunner | None = self.runner_of(name)
        except Exception:  # its ssh login cannot be built: asked again after a refresh (ClusterQueue.resolve)
            runner = None
        self.screen.post_message(ClusterOutcomesResolved(name, queue.resolve(runner, batch)))

    def ask_user(self, name: str) -> None:
        """The user cluster ``name``'s login is, asked of its shell in a worker (everyone's jobs listed before any
        own-jobs answer named it: :meth:`~ntui.core.jobs.clusters.ClusterQueue.user_request`)."""
        timeout = self.queues[name].slurm_timeout
        self.screen.run_worker(partial(self._ask_user, name, timeout), thread=True, exit_on_error=False,
                               group=f"{_USER}{name}", description=f"login user on {name}")

    def _ask_user(self, name: str, timeout: float) -> None:
        try:
            user = login_user(self.runner_of(name), timeout)
        except Exception:  # its ssh login cannot be built: not said; asked again after the next answer
            user = None
        self.screen.post_message(ClusterUserFound(name, user))

    # ------------------------------------------------------------ journals (through each cluster's agent)

    def journal_tick(self) -> None:
        """Every cluster's journal tick (one in flight per cluster; none where no own job is active or its files
        follow no journal)."""
        if self.files_of is None:
            return
        for queue in self.queues:
            request = queue.journal_request()
            if request is not None:
                self.screen.run_worker(partial(self._read_journals, self.files_of, queue.name, request),
                                       thread=True, exit_on_error=False, group=f"{_JOURNALS}{queue.name}",
                                       description=f"journals on {queue.name}")

    def _read_journals(self, files_of: Callable[[str], ClusterFiles], name: str, request: JournalRequest) -> None:
        """*Thread-side*: ticks of one cluster never overlap, so its board is one thread's at a time."""
        try:
            files = files_of(name)
            if not follows_journals(files):  # plain commands: a channel per read, no follow
                self.screen.post_message(ClusterJournalsRead(name, None, unsupported=True))
                return
            board = self._journals.get(name)
            if board is None:
                read_at = journal_read_at(files)
                board = self._journals[name] = JournalBoard(reader=lambda path, job_id: OffsetJournalReader(
                    path, job_id, read_at, retry_s=JOURNAL_TICK_S))
            result = JournalBook.fetch(lambda: LookupHistory(partial(remote_entry, files)), board, request)
        except Exception:  # the link (its banner says so), or the agent's failure: today's pace until a tick reads
            self.screen.post_message(ClusterJournalsRead(name, None))
            return
        self.screen.post_message(ClusterJournalsRead(name, result))

    # ------------------------------------------------------------ recent jobs (each cluster's own history)

    def load_history(self, name: str, *, days: float, now: Callable[[], float]) -> None:
        """Cluster ``name``'s recent jobs from its history (read there by its agent), in a worker: a slow or dropped
        link holds up nothing. One load per cluster at a time; a request during one makes one more follow it."""
        if self.files_of is None:
            return
        if name in self._history:
            self._history[name] = True
            return
        self._history[name] = False
        self.screen.run_worker(partial(self._read_history, self.files_of, name, days, now()), thread=True,
                               exit_on_error=False,
                               group=f"{_HISTORY}{name}", description=f"history on {name}")

    def history_done(self, name: str, *, days: float, now: Callable[[], float]) -> None:
        """A load of ``name``'s history ended (or failed): the one asked for meanwhile starts."""
        again = self._history.pop(name, False)
        if again:
            self.load_history(name, days=days, now=now)

    def _read_history(self, files_of: Callable[[str], ClusterFiles], name: str, days: float, now: float) -> None:
        try:
            files = files_of(name)
            if isinstance(files, LocalFiles):  # Slurm here: its history is this machine's, listed already
                self.screen.post_message(ClusterHistoryLoaded(name, ()))
                return
            found = files.history(MAX_RECENT)
        except FileRefused as exc:  # no agent there, or one older than the request
            self.screen.post_message(ClusterHistoryLoaded(name, None, f"{name}: history not read ({exc})"))
            return
        except Exception as exc:  # the link (ssh's words), or the agent's failure: said, the list stands
            words = exc.words if isinstance(exc, SshError) else describe_error(exc)
            self.screen.post_message(ClusterHistoryLoaded(name, None, f"{name}: history not read ({words})"))
            return
        entries = [e for e in map(entry_from_dict, found) if e is not None]
        self.screen.post_message(ClusterHistoryLoaded(name, cluster_recent(name, entries, days=days, now=now)))

    def failed(self, group: str | None) -> str | None:
        """The cluster whose squeue worker raised something unexpected (None: not one of these workers)."""
        if group is not None and group.startswith(_FINAL) and group[len(_FINAL):] in self.queues.names():
            self.queues[group[len(_FINAL):]].finished.failed()
            return None
        if group is not None and group.startswith(_JOURNALS) and group[len(_JOURNALS):] in self.queues.names():
            self.queues[group[len(_JOURNALS):]].journal_failed()
            return None
        if group == f"{CLUSTER_GROUP}-details":
            for queue in self.queues:
                queue.details.failed()
            return None
        prefix = f"{CLUSTER_GROUP}-"
        if group is not None and group.startswith(prefix) and group[len(prefix):] in self.queues.names():
            return group[len(prefix):]
        return None

