"""The jobs view's book of ended jobs: own jobs that left the queue stay listed, and their final state is looked up
once per job (Textual-free).

:class:`EndedBook` keeps the rows of jobs that left the queue (:class:`~ntui.core.jobs.queue.FinishedJob`; many tasks
of one array leaving together collapse into one row, :data:`ARRAY_COLLAPSE`) and the look-ups of their final state:
a batch at a time (:meth:`EndedBook.take` / :meth:`EndedBook.resolve`, thread-side / :meth:`EndedBook.resolved`), at
most :data:`MAX_LOOKUPS_PER_REFRESH` per refresh; a look-up that finds no final state yet (accounting lags the
controller) is asked again after the next refresh, at most :data:`MAX_LOOKUP_RETRIES` times. Its in-flight batch
follows the model's one idiom (:class:`~ntui.core.jobs.inflight.InFlight`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from ntui.core.hosts import format_index_ranges
from ntui.core.jobs.inflight import InFlight
from ntui.core.jobs.queue import ENDED, FinishedJob, Row, queue_row
from ntui.core.records.outcome import UNKNOWN, Outcome, finished_outcome
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import QueueJob

__all__ = [
    "ARRAY_COLLAPSE",
    "MAX_ENDED",
    "MAX_LOOKUPS_PER_REFRESH",
    "MAX_LOOKUP_RETRIES",
    "EndedBook",
    "FinalStateResolver",
]

#: At most this many final-state look-ups per refresh; further departures show "not looked up".
MAX_LOOKUPS_PER_REFRESH = 20
#: More tasks of one array than this leaving in one refresh collapse into one ended row (one look-up).
ARRAY_COLLAPSE = 8
#: Ended rows kept (oldest dropped first).
MAX_ENDED = 200
#: A look-up whose sources have no final state yet (accounting lags the controller) is asked again with the
#: next batch, at most this many times; then the row keeps what the last answer said.
MAX_LOOKUP_RETRIES = 30

FinalStateResolver = Callable[[CommandRunner, str], Outcome]
"""What became of a job that left the queue (default :func:`~ntui.core.records.outcome.finished_outcome`: sacct, then
scontrol, then unknown). Runs in a worker thread."""

_BATCH = "batch"


def _task_ranges(tasks: list[str]) -> str:
    nums = sorted(int(t) for t in tasks if t.isdigit())
    return format_index_ranges(nums) if nums else ",".join(tasks)


class EndedBook:
    """The ended jobs and their final states (see the module docstring)."""

    def __init__(self, resolver: FinalStateResolver | None = None) -> None:
        self.resolver: FinalStateResolver = resolver or (lambda runner, job_id: finished_outcome(runner, job_id))
        self.ended: dict[str, FinishedJob] = {}
        self._lookups: list[tuple[str, str]] = []  # (row key, query id) waiting for the resolver
        self._retries: dict[str, int] = {}  # row key -> look-ups that found no final state yet
        self._deferred: list[tuple[str, str]] = []  # those, asked again after the next refresh (not in a loop)
        self.inflight: InFlight[str] = InFlight(exclusive=True)  # the one batch
        self._hooks: list[Callable[[tuple[FinishedJob, ...]], None]] = []

    @property
    def busy(self) -> bool:
        """A batch runs, or look-ups wait for one."""
        return self.inflight.busy or bool(self._lookups)

    @property
    def recent(self) -> tuple[FinishedJob, ...]:
        """The ended jobs still listed, oldest first (at most :data:`MAX_ENDED`)."""
        return tuple(self.ended.values())

    def on_departure(self, hook: Callable[[tuple[FinishedJob, ...]], None]) -> None:
        """Call ``hook`` (UI thread) with the own jobs that just left the queue, as soon as a refresh or a journal
        sees them go (their final state may not be known yet: ``outcome`` None, or "not looked up" beyond the
        cap)."""
        self._hooks.append(hook)

    def announce(self, gone: tuple[FinishedJob, ...]) -> None:
        if gone:
            for hook in self._hooks:
                hook(gone)

    # ------------------------------------------------------------ rows

    def record(self, gone: list[QueueJob]) -> tuple[FinishedJob, ...]:
        """Jobs a refresh no longer lists: their ended rows, each looked up (up to the cap)."""
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
        self.trim()
        return tuple(new)

    def unseen(self, job: QueueJob) -> None:
        """A job no squeue ever listed (it started and ended between two): its row, looked up."""
        self.ended[job.job_id] = FinishedJob(job.job_id, job.job_id, job)
        self._lookups.append((job.job_id, job.job_id))

    def ended_by_journal(self, finished: FinishedJob) -> None:
        """A job whose journal told its end (and final state): no look-up."""
        self.ended[finished.key] = finished
        self._lookups = [(k, q) for k, q in self._lookups if k != finished.key]

    def back_in_queue(self, live: Iterable[str]) -> None:
        """Jobs listed again (requeued): their ended rows go."""
        for key in [k for k in live if k in self.ended]:
            del self.ended[key]

    def trim(self) -> None:
        while len(self.ended) > MAX_ENDED:
            del self.ended[next(iter(self.ended))]

    def rows(self, all_users: bool) -> tuple[dict[str, Row], dict[str, str]]:
        """The ended rows and their tags."""
        rows = {key: queue_row(ended.job, all_users, ended) for key, ended in self.ended.items()}
        return rows, dict.fromkeys(rows, ENDED)

    def state_of(self, key: str) -> str | None:
        """``ENDED:<final state>`` of an ended row (None: not one)."""
        ended = self.ended.get(key)
        if ended is None:
            return None
        return f"ENDED:{ended.outcome.state if ended.outcome else '?'}"

    # ------------------------------------------------------------ final states

    def refreshed(self) -> None:
        """A refresh was applied: the look-ups that found no final state yet are asked again."""
        if self._deferred:
            self._lookups.extend(self._deferred)
            self._deferred.clear()

    def take(self) -> tuple[tuple[str, str], ...] | None:
        """The (row key, job id) pairs to resolve now, or None (nothing waits, or a batch is running)."""
        if not self._lookups or not self.inflight.start(_BATCH):
            return None
        batch, self._lookups = tuple(self._lookups), []
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

    def resolved(self, outcomes: Iterable[tuple[str, Outcome]], *, all_users: bool) -> dict[str, Row]:
        """Store resolved final states; returns the new cells of the ended rows they change."""
        self.inflight.done(_BATCH)
        rows: dict[str, Row] = {}
        for key, outcome in outcomes:
            ended = self.ended.get(key)
            if ended is None:  # back in the queue (requeued) or dropped from the ended rows
                self._retries.pop(key, None)
                continue
            if not outcome.finished:
                tries = self._retries[key] = self._retries.get(key, 0) + 1
                if tries <= MAX_LOOKUP_RETRIES:
                    self._deferred.append((key, ended.query_id))  # not final yet: ask after the next refresh
                    continue
            self._retries.pop(key, None)
            ended = self.ended[key] = replace(ended, outcome=outcome)
            rows[key] = queue_row(ended.job, all_users, ended)
        return rows

    def failed(self) -> None:
        """The resolver's worker died unexpectedly: let the next batch start."""
        self.inflight.clear()
