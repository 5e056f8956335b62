"""The clusters the jobs view shows besides the local one: one queue per cluster reached over ssh (Textual-free).

The settings' ``clusters:`` are each polled through their own runner (Slurm on that cluster's login node, over one
shared ssh login: :func:`ntui.core.config.cluster_runner`). :class:`ClusterQueue` is one cluster's book: when its next
squeue runs (:class:`~ntui.core.jobs.polling.PollBook`: refreshes never overlap, back-off on errors), what its last
answer said (:class:`~ntui.core.jobs.queue.QueueFetcher`, with its per-line parse cache), the details of its selected
job (:class:`~ntui.core.jobs.details.DetailsBook`), its own jobs that left the queue
(:class:`~ntui.core.jobs.finals.EndedBook`: each keeps an ended row, its final state asked of that cluster's sacct,
or its scontrol where there is no accounting, as the local cluster's are) and what its banner says when the link is
down.
:class:`ClusterQueues` holds them all and merges their rows for the one table.

Keys: the local cluster's jobs keep their job id as the row key (the single-cluster view is unchanged); a job of a
cluster reached over ssh is keyed by ``CLUSTER/JOBID`` (:func:`cluster_key`, :func:`split_key`), so two clusters'
job 1234 never mix. A cluster's name is letters, digits, ``.``, ``_`` and ``-`` (the settings check it), a job id
never holds a ``/``. An ended row of a cluster is keyed the same way (its key on that cluster, a job id or a
collapsed array's ``ID_[RANGE]``, behind the cluster's name), so a remote job that ended never stands for a local
job of the same id.

:class:`ClusterBoard` is what the jobs view decides about its clusters beside their queues: whether this machine's
Slurm is shown too and its name in the Cluster column, which row of a cluster reached over ssh is selected, a row
key's cluster, and the view's words over the local model and every cluster (the banner, the status line, what the
empty queue says). The UI's owner of the clusters (:mod:`ntui.ui.screens.jobs_clusters`) starts the workers and hands
their answers here.

Which jobs count as own when everyone's jobs are listed: the user that cluster's own-jobs answers named (the login
over ssh may not be this machine's user); before any did (the view started on everyone's jobs, or no own job was
listed), the login's name as the cluster's shell says it (:func:`login_user`, asked once, no Slurm call). Until one of
them named it, no departure is recorded in everyone's view.

A cluster whose files are read by its agent has its own active jobs' journals followed too (issue #45), on the local
queue's journal tick and by the same :class:`~ntui.core.jobs.journals.JournalBook` rules
(:meth:`ClusterQueue.journal_request`, :meth:`ClusterQueue.journal_done`): while every one of them is followed its
squeue goes at the idle pace (:attr:`~ntui.core.jobs.queue.PollPolicy.covered`), and a start or an end a journal
tells asks its squeue at once. Without an agent (plain commands) or while the link is down, its squeue keeps the
active pace (:meth:`ClusterQueue.journal_failed`).

Thread-side methods (:meth:`ClusterQueue.fetch`, :meth:`ClusterQueue.fetch_details`) read their arguments only;
everything else runs on the UI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.jobs.details import DetailsBook, DetailsRequest, DetailsResult, DetailsView
from ntui.core.jobs.finals import EndedBook, FinalStateResolver
from ntui.core.jobs.journals import JournalBook, JournalRequest, JournalResult
from ntui.core.jobs.model import CONFIRM_END_S, JobModel
from ntui.core.jobs.polling import PollBook, PollRequest
from ntui.core.jobs.queue import ACTIVE, ENDED, Fetched, FinishedJob, QueueFetcher, Row, departed, queue_row
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import UNKNOWN, Outcome
from ntui.core.records.record import RecentJob
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.squeue import QueueJob
from ntui.core.slurm.ssh import SshError

__all__ = [
    "SEP",
    "ClusterLink",
    "cluster_status",
    "ClusterBoard",
    "ClusterQueue",
    "ClusterQueues",
    "ClusterRow",
    "cluster_key",
    "login_user",
    "split_key",
    "with_cluster",
]

#: Between a cluster's name and a job id in the row key of a job of a cluster reached over ssh.
SEP = "/"


def cluster_key(cluster: str, job_id: str) -> str:
    """The row key of job ``job_id`` of the cluster reached over ssh named ``cluster``."""
    return f"{cluster}{SEP}{job_id}"


def split_key(key: str) -> tuple[str | None, str]:
    """``(cluster, job id)`` of a row key; the cluster is None for the local cluster's jobs (a plain job id)."""
    cluster, sep, job_id = key.partition(SEP)
    return (cluster, job_id) if sep else (None, key)


def with_cluster(rows: Mapping[str, Row], cluster_of: Callable[[str], str]) -> dict[str, Row]:
    """The rows with their cluster's name as first cell (the Cluster column, shown with more than one cluster)."""
    return {key: (cluster_of(key), *row) for key, row in rows.items()}


class ClusterLink(Protocol):
    """A cluster's link state (:class:`ntui.core.remote.link.LinkWatch`): its squeue's answers and ssh failures
    feed it, beside its files' requests; its banner line and status word are the view's while its squeue answers."""

    def answered(self) -> None: ...

    def dropped(self, words: str, *, login: bool = False) -> None: ...

    def banner(self) -> str: ...

    def status(self) -> str | None: ...


@dataclass(frozen=True)
class ClusterRow:
    """A row of a cluster reached over ssh: its cluster, its job id there (an ended row's key there), the last
    squeue line of it; ``ended``: the job left that cluster's queue (its final state, once looked up)."""

    cluster: str
    job_id: str
    job: QueueJob
    ended: FinishedJob | None = None


#: The login's name on a cluster, from its shell (POSIX ``id``): no Slurm call, one channel over the cluster's master.
LOGIN_USER_ARGV = ("id", "-un")


def login_user(runner: CommandRunner, timeout: float) -> str | None:
    """*Thread-side*: the user ``runner`` logs in as on its cluster (None: not said, the link or ``id`` failed; an
    own-jobs answer names it too)."""
    try:
        res = runner.run(LOGIN_USER_ARGV, timeout=timeout)
    except (SlurmError, OSError):
        return None
    name = res.stdout.strip()
    return name if res.returncode == 0 and name and not any(c.isspace() for c in name) else None


def cluster_status(name: str, polls: PollBook, link: ClusterLink | None = None) -> str:
    """A cluster's part of the status line: its counts, or that it has not answered (in words); its link's word
    instead while the link is down or slow (its files' requests say so before a squeue does), after them a while
    once it reconnected."""
    err = polls.error
    if err is not None:
        return f"{name}: " + ("link down" if isinstance(err, SshError) and err.link_down else "no answer")
    said = link.status() if link is not None else None
    if said is not None and said.startswith("link "):
        return f"{name}: {said}"
    if polls.last_update is None:
        return f"{name}: waiting for squeue…"
    counts = " · ".join(f"{n} {label}" for label, n in polls.counts.items() if n) or "none queued"
    return f"{name}: {counts}" + (f" · {said}" if said else "")


class ClusterQueue:
    """One cluster's queue, reached through its own runner (see the module docstring)."""

    def __init__(self, name: str, settings: Settings, *, clock: Callable[[], datetime] = datetime.now,
                 monotonic: Callable[[], float] = time.monotonic,
                 resolver: FinalStateResolver | None = None, link: ClusterLink | None = None) -> None:
        self.name = name
        self.link = link  # its link state (None: not followed)
        self.slurm_timeout = settings.slurm.timeout
        self.polls = PollBook(settings.queue, clock)
        self.fetcher = QueueFetcher()
        self.details = DetailsBook(timeout=settings.slurm.timeout, recheck_s=settings.queue.idle_interval,
                                   monotonic=monotonic)
        self.live: dict[str, QueueJob] = {}  # job id (on that cluster) -> its last squeue line
        self.rows: dict[str, Row] = {}  # job id -> table cells (without the Cluster column)
        self.finished = EndedBook(resolver)  # own jobs that left this cluster's queue, their final states
        self.user: str | None = None  # the login's user there, as its own-jobs answers name it
        self._live_all_users = False  # the answer ``live`` holds listed everyone's jobs
        self._have_snapshot = False  # an answer was applied since the view (own / everyone's) last changed
        self.asking_user = False  # the login's user is being asked of the cluster's shell (login_user)
        self.journal = JournalBook()  # what its own jobs' journals said, read through its agent
        self.entries: dict[str, HistoryEntry | None] = {}  # job id -> its history entry there (None: not ntui's)
        self.journals_read = True  # False: its files cannot follow journals (plain commands): none asked again

    # ------------------------------------------------------------ polling

    def request(self, all_users: bool) -> PollRequest | None:
        """A refresh to start now, or None while one runs (then one more follows it)."""
        return self.polls.request(all_users)

    def fetch(self, runner: CommandRunner, request: PollRequest) -> Fetched:
        """*Thread-side*: this cluster's squeue (raises :class:`~ntui.core.slurm.runner.SlurmError`, an
        :class:`~ntui.core.slurm.ssh.SshError` when the link is down)."""
        return self.fetcher.fetch(runner, request.all_users, self.slurm_timeout)

    def succeeded(self, request: PollRequest, got: Fetched, *, background: bool = False) -> tuple[bool, float]:
        """Apply a refresh: whether the rows changed, and the delay before the next one."""
        polls = self.polls
        if not polls.current(request):  # own jobs / all users changed during the fetch: another follows at once
            return False, polls.rearm(0.0, background=background)
        polls.applied(got.counts)
        self.finished.refreshed()
        # the journals' book of requeues and of ends squeue has not heard of yet (its rows stay squeue's)
        self.journal.correct(dict(got.live), dict(got.rows), request.all_users)
        changed = not (got.unchanged and self.live)
        if changed:
            self._departures(request.all_users, got)
            self.live, self.rows = dict(got.live), dict(got.rows)
            self._live_all_users, self._have_snapshot = request.all_users, True
        policy = polls.policy
        if policy.covered and any(k not in self.journal.states for k in self.own_active()):
            policy.covered = False  # a job no journal tick has seen yet: squeue keeps its pace until one has
        delay = polls.paced(got.jobs, unchanged=not changed, user=self.user if request.all_users else None)
        if self.journal.unconfirmed:  # ended by its journal, still listed: requeued or not, squeue says so soon
            delay = min(delay, CONFIRM_END_S)
        return changed, polls.rearm(delay, background=background)

    # ------------------------------------------------------------ journals (through its agent)

    def own_active(self) -> list[str]:
        """Its own active jobs in the last answer (only the login's user's in everyone's view)."""
        return [k for k, j in self.live.items()
                if j.category in ACTIVE and (not self._live_all_users or j.user == self.user)]

    def journal_request(self) -> JournalRequest | None:
        """A journal tick to start now: None while one runs, where its files follow no journal, or with no own
        active job (nothing is asked of the cluster then)."""
        own = tuple(self.own_active())
        if not self.journals_read or not own:
            self.polls.policy.covered = False
            return None
        pending = frozenset(k for k in own if self.live[k].category is StateCategory.PENDING)
        return self.journal.request(own, pending, 0.0, self.entries, frozenset(self.finished.ended))

    def journal_done(self, result: JournalResult) -> bool:
        """Apply a journal tick: whether to ask squeue now (a journal told a start of a job squeue lists pending,
        or an end it had not told before)."""
        journal = self.journal
        journal.read()
        for job_id, entry in result.entries.items():
            self.entries.setdefault(job_id, entry)
        wake = False
        for job_id, followed in result.followed.items():
            state = journal.states[job_id] = followed.state
            if journal.new_end(job_id, state):
                if state.final() is not None:  # None: requeued, the job goes on in its next allocation
                    journal.end(job_id, state.allocations)
                    wake = True
            elif state.started and not state.ended and job_id not in journal.started:
                job = self.live.get(job_id)
                if job is not None and job.category is StateCategory.PENDING:
                    journal.started.add(job_id)
                    wake = True
        own = self.own_active()
        pending = {k for k in own if self.live[k].category is StateCategory.PENDING}
        self.polls.policy.covered = JournalBook.covers(own, result.followed, pending,
                                                       all_users=self._live_all_users)
        return wake

    def journal_failed(self, *, unsupported: bool = False) -> None:
        """A journal tick failed (the link dropped, the agent failed): squeue keeps the active pace.
        ``unsupported``: its files follow no journal (plain commands): none is asked again."""
        self.journal.failed()
        self.polls.policy.covered = False
        if unsupported:
            self.journals_read = False

    def _departures(self, all_users: bool, got: Fetched) -> None:
        """Own jobs the last answer listed and this one does not: their ended rows, each looked up there; jobs
        listed again (requeued) lose theirs."""
        if not all_users and got.live:
            self.user = next(iter(got.live.values())).user
        if self._have_snapshot:
            both_own = not (all_users or self._live_all_users)
            if both_own or self.user is not None:
                gone = departed(self.live, got.live.values(), None if both_own else self.user)
                self.finished.announce(self.finished.record(gone))
        self.finished.back_in_queue(got.live)

    def user_request(self, all_users: bool) -> bool:
        """Whether to ask the login's user now (:func:`login_user`): everyone's jobs are listed, no answer has
        named it, it is not being asked."""
        if not all_users or self.user is not None or self.asking_user:
            return False
        self.asking_user = True
        return True

    def user_answered(self, user: str | None) -> None:
        """The login's user as its shell said it (None: not said; asked again after the next answer). An own-jobs
        answer that named it first keeps its name."""
        self.asking_user = False
        if self.user is None and user:
            self.user = user

    def failed(self, error: BaseException, *, background: bool = False) -> float:
        """A refresh failed (a dropped link, the controller): the rows are kept; back off."""
        return self.polls.failed(error, background=background)

    def toggle_all_users(self) -> None:
        """Own jobs <-> everyone's: nothing of the old answer is reused."""
        self.polls.generation += 1
        self.fetcher = QueueFetcher()
        self.live, self.rows = {}, {}
        self._have_snapshot = False

    # ------------------------------------------------------------ rows

    def keyed_rows(self) -> dict[str, Row]:
        """This cluster's rows under their row keys (:func:`cluster_key`): the live ones, then the ended ones."""
        out = {cluster_key(self.name, job_id): row for job_id, row in self.rows.items()}
        for key, ended in self.finished.ended.items():
            out.setdefault(cluster_key(self.name, key), queue_row(ended.job, self._live_all_users, ended))
        return out

    def ended_tags(self) -> dict[str, str]:
        """The ended rows' tags under their row keys."""
        return {cluster_key(self.name, key): ENDED for key in self.finished.ended if key not in self.rows}

    # ------------------------------------------------------------ final states (sacct / scontrol, on that cluster)

    def resolve(self, runner: CommandRunner | None,
                batch: Iterable[tuple[str, str]]) -> tuple[tuple[str, Outcome], ...]:
        """*Thread-side*: the final states of a batch of :meth:`EndedBook.take`, asked through this cluster's
        runner. A look-up that fails (the link dropped, no runner: None) is no final state: it is asked again
        after a refresh (up to :data:`~ntui.core.jobs.finals.MAX_LOOKUP_RETRIES` times), not shown as unknown."""
        out: list[tuple[str, Outcome]] = []
        for key, query_id in batch:
            out.append((key, self._outcome(runner, query_id)))
        return tuple(out)

    def _outcome(self, runner: CommandRunner | None, query_id: str) -> Outcome:
        not_yet = Outcome(query_id, UNKNOWN, None, "none", False)
        if runner is None:
            return not_yet
        try:
            return self.finished.resolver(runner, query_id)
        except Exception:  # this job's look-up alone; the others of the batch are still asked
            return not_yet

    def resolved(self, outcomes: Iterable[tuple[str, Outcome]]) -> bool:
        """Store a batch's final states; whether an ended row changed."""
        return bool(self.finished.resolved(outcomes, all_users=self._live_all_users))

    # ------------------------------------------------------------ details (scontrol show job, on that cluster)

    def details_step(self, job_id: str, *, visible: bool) -> tuple[DetailsView | None, DetailsRequest | None]:
        """The details of the selected job of this cluster: what to show now, and the look-up to start (if any)."""
        book = self.details
        book.selected = job_id
        ended = self.finished.ended.get(job_id) if job_id not in self.live else None
        state = self.live[job_id].state if job_id in self.live else (self.finished.state_of(job_id) or "")
        if book.fresh(job_id, state, visible=visible):
            return self.details_view(job_id), None
        if not book.start(job_id, state):
            return None, None
        cached = book.cache.get(job_id)
        view = self.details_view(job_id, "loading details…") if cached is None or cached.state != state else None
        return view, DetailsRequest(job_id, ended.query_id if ended is not None else job_id, state)

    def fetch_details(self, runner: CommandRunner, request: DetailsRequest) -> DetailsResult:
        """*Thread-side*: ``scontrol show job -d`` of one job, on this cluster."""
        return self.details.fetch(runner, request)

    def details_view(self, job_id: str, note: str = "") -> DetailsView:
        cached = self.details.cache.get(job_id)
        ended = self.finished.ended.get(job_id) if job_id not in self.live else None
        return DetailsView(job_id=job_id, queue=self.live.get(job_id) or (ended.job if ended else None),
                           details=cached.details if cached else None, entry=None,
                           outcome=ended.outcome if ended else None,
                           note=note or (cached.note if cached else ""), node_states=cached.nodes if cached else (),
                           slurm=self.details.slurm_version, cluster=self.name)

    # ------------------------------------------------------------ words

    def banner(self) -> str:
        """What the banner says of this cluster ("" while its last squeue answered)."""
        polls = self.polls
        err = polls.error
        if err is None:  # squeue answers: what the link says (a request of its files dropped, stalled, came back)
            return self.link.banner() if self.link is not None else ""
        if isinstance(err, SshError):
            what = "link down" if err.link_down else "cannot log in"
            words = err.words
        else:
            what, words = "squeue failed", describe_error(err)
        when = "retrying now…" if polls.polling else f"retry in {polls.retry_in()} s"
        return f"⚠ {self.name}: {what}, {when}  ·  {words}  ·  r: retry now"

    def status(self) -> str:
        """This cluster's part of the status line."""
        return cluster_status(self.name, self.polls, self.link)

    def link_answered(self) -> None:
        """*Thread-side*: a command through this cluster's runner was answered (the link holds)."""
        if self.link is not None:
            self.link.answered()

    def link_failed(self, error: BaseException) -> None:
        """*Thread-side*: a command through this cluster's runner failed: ssh's failure is the link's."""
        if self.link is not None and isinstance(error, SshError):
            self.link.dropped(error.words, login=not error.link_down)

    def ticked_seconds(self, job_id: str) -> int | None:
        """A running job's elapsed seconds now: squeue's (as of this cluster's last answer) plus the time since."""
        job = self.live.get(job_id)
        last = self.polls.last_update
        if job is None or last is None or job.category is not StateCategory.RUNNING or job.elapsed_s is None:
            return None
        return job.elapsed_s + max(0, int((self.polls.clock() - last).total_seconds()))


class ClusterQueues:
    """Every cluster reached over ssh that the view shows, by name (see the module docstring)."""

    def __init__(self, names: Iterable[str], settings: Settings, *,
                 clock: Callable[[], datetime] = datetime.now,
                 monotonic: Callable[[], float] = time.monotonic,
                 resolver: FinalStateResolver | None = None,
                 links: Callable[[str], ClusterLink] | None = None) -> None:
        self.queues: dict[str, ClusterQueue] = {
            name: ClusterQueue(name, settings, clock=clock, monotonic=monotonic, resolver=resolver,
                               link=links(name) if links is not None else None)
            for name in names}

    def __bool__(self) -> bool:
        return bool(self.queues)

    def __iter__(self) -> Iterator[ClusterQueue]:
        return iter(self.queues.values())

    def __getitem__(self, name: str) -> ClusterQueue:
        return self.queues[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self.queues)

    def row(self, key: str | None) -> ClusterRow | None:
        """The job of a cluster reached over ssh that row ``key`` is, while that cluster's queue lists it (None: a
        local row, or a job no longer listed: nothing to act on)."""
        found = self.shown(key)
        return found if found is not None and found.ended is None else None

    def shown(self, key: str | None) -> ClusterRow | None:
        """As :meth:`row`, an ended row of a cluster reached over ssh too (what the selected job's tabs show)."""
        if key is None:
            return None
        cluster, job_id = split_key(key)
        queue = self.queues.get(cluster) if cluster is not None else None
        if queue is None:
            return None
        job = queue.live.get(job_id)
        if job is not None:
            return ClusterRow(queue.name, job_id, job)
        ended = queue.finished.ended.get(job_id)
        return ClusterRow(queue.name, job_id, ended.job, ended) if ended is not None else None

    def rows(self) -> dict[str, Row]:
        """Every cluster's rows under their row keys, cluster after cluster."""
        out: dict[str, Row] = {}
        for queue in self.queues.values():
            out.update(queue.keyed_rows())
        return out

    def tags(self) -> dict[str, str]:
        """Every cluster's ended rows' tags under their row keys."""
        out: dict[str, str] = {}
        for queue in self.queues.values():
            out.update(queue.ended_tags())
        return out

    def banner(self) -> str:
        """One line per cluster whose link or controller is down ("" when none is)."""
        return "\n".join(b for q in self.queues.values() if (b := q.banner()))

    def status(self) -> str:
        return "  │  ".join(q.status() for q in self.queues.values())

    def ticked_elapsed(self, limit: int = 300) -> dict[str, str]:
        """The elapsed cells of running jobs now, by row key (at most ``limit``), as the local queue's tick."""
        out: dict[str, str] = {}
        for queue in self.queues.values():
            for job_id in queue.live:
                seconds = queue.ticked_seconds(job_id)
                if seconds is not None:
                    out[cluster_key(queue.name, job_id)] = format_elapsed(seconds)
                    if len(out) >= limit:
                        return out
        return out

    def busy(self) -> bool:
        return any(q.polls.polling or q.details.inflight.busy or q.finished.busy or q.asking_user
                   for q in self.queues.values())

    def toggle_all_users(self) -> None:
        for queue in self.queues.values():
            queue.toggle_all_users()


class ClusterBoard:
    """The jobs view's clusters beside their queues (see the module docstring): ``local``: this machine's Slurm is
    shown too (as the model's queue), ``local_name`` its name in the Cluster column ("" without clusters reached
    over ssh)."""

    def __init__(self, queues: ClusterQueues, *, local: bool, local_name: str = "") -> None:
        self.queues = queues
        self.local = local
        self.local_name = local_name
        self.selected: str | None = None  # the row of a cluster reached over ssh under the queue's cursor

    @property
    def several(self) -> bool:
        """More than one cluster shown: the queue has a Cluster column."""
        return len(self.queues.names()) + (1 if self.local else 0) > 1

    def cluster_of(self, key: str) -> str:
        """The cluster of a row (its Cluster cell)."""
        return split_key(key)[0] or self.local_name

    def column(self) -> Callable[[str], str] | None:
        """The Cluster column's cell of a row key, when the queue has that column."""
        return self.cluster_of if self.several else None

    def select(self, key: str | None, model: JobModel) -> bool:
        """The queue's cursor is on row ``key``: whether the selected job changed. A row of a cluster reached over
        ssh is selected here (the local model then selects none), any other row by the model."""
        cluster = split_key(key)[0] if key is not None else None
        if cluster is not None and cluster in self.queues.names():
            changed = self.selected != key
            self.selected = key
            model.details.selected = None
            return changed
        if not model.select(key):
            return False
        self.selected = None
        return True

    @staticmethod
    def submission_key(job_id: str, via: str | None) -> str:
        """The row key of a job just submitted (``via``: the cluster reached over ssh it went to)."""
        return job_id if via is None else cluster_key(via, job_id)

    def record_cluster(self, job: RecentJob) -> str | None:
        """The cluster reached over ssh of a recent job's record (None: a job of this machine's, read here)."""
        return job.cluster if job.cluster is not None and job.cluster in self.queues.names() else None

    # ------------------------------------------------------------ words over the local model and every cluster

    def banner(self, model: JobModel) -> str:
        """The banner: one line per cluster (the local one's first) whose squeue does not answer."""
        return "\n".join(t for t in (model.polls.banner() if self.local else "", self.queues.banner()) if t)

    def ticked_elapsed(self, model: JobModel) -> dict[str, str]:
        """Every running job's elapsed cell now, by row key: the local model's, then the clusters'."""
        ticked = model.ticked_elapsed()
        if self.queues:
            ticked.update(self.queues.ticked_elapsed())
        return ticked

    def status_line(self, model: JobModel, *, filter_text: str, shown: int, slurm_calls: int | None) -> str:
        """The status line: the local model's alone, or with clusters reached over ssh whose jobs, each cluster's
        counts (the local one's first) or that its link is down, the filter, how old the oldest answer is."""
        if not self.queues:
            return model.status_line(filter_text=filter_text, shown=shown, slurm_calls=slurm_calls)
        who = "everyone's jobs" if model.all_users else f"{model.user}'s jobs" if model.user else "my jobs"
        parts = [who]
        if self.local:
            parts.append(cluster_status(self.local_name, model.polls))
        parts.append(self.queues.status())
        if filter_text:
            parts.append(f"filter {filter_text!r}: {shown} shown")
        updated = [q.polls.last_update for q in self.queues if q.polls.last_update is not None]
        if self.local and model.last_update is not None:
            updated.append(model.last_update)
        if updated:
            age = max(0, int((model.clock() - min(updated)).total_seconds()))
            parts.append(f"updated {age} s ago")
        return "  │  ".join(parts)

    def empty_text(self, model: JobModel) -> str:
        """What the empty queue says: the local cluster's words, or with clusters reached over ssh alone, whether
        any answered."""
        if self.local or not self.queues:
            return model.empty_text()
        queues = list(self.queues)
        if any(q.polls.last_update is not None for q in queues):
            return "no jobs in the queue"
        return "no data: every cluster's link is down" if all(q.polls.error for q in queues) else \
            "waiting for squeue…"
