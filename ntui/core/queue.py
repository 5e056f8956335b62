"""The queue's building blocks: polling policy, row diffs, finished jobs and the one row formatter.

Pure and Textual-free so that tests drive it with a fake clock and canned squeue results.
One squeue call per refresh serves every view; refreshes never overlap (the caller re-arms
only after one completes); the interval adapts to whether own jobs are active; controller
errors back off exponentially. :mod:`ntui.core.jobmodel` puts these together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ntui.core.config import QueueSettings
from ntui.core.logtail import inert
from ntui.core.outcome import UNKNOWN, Outcome
from ntui.core.slurm import QueueJob, StateCategory

ACTIVE = frozenset({StateCategory.PENDING, StateCategory.RUNNING, StateCategory.COMPLETING})

#: Row tag of jobs that left the queue (the table dims them and lists them after live rows).
ENDED = "ended"


@dataclass
class PollPolicy:
    """When to poll next. ``now`` requests (after submit/actions) win over everything."""

    settings: QueueSettings = field(default_factory=QueueSettings)
    errors: int = 0
    active: bool = True

    def on_success(self, jobs: Iterable[QueueJob], user: str | None = None) -> float:
        self.errors = 0
        self.active = any(j.category in ACTIVE and (user is None or j.user == user) for j in jobs)
        return self.delay()

    def on_error(self) -> float:
        self.errors += 1
        return self.delay()

    def delay(self) -> float:
        if self.errors:
            base = self.settings.active_interval
            return float(min(self.settings.max_backoff, base * 2 ** (self.errors - 1)))
        return self.settings.active_interval if self.active else self.settings.idle_interval


Row = tuple[str, ...]


@dataclass(frozen=True)
class RowDiff:
    """What changed between two refreshes, keyed by job id."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: Mapping[str, tuple[int, ...]]  # job id -> indices of changed columns

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff_rows(old: Mapping[str, Row], new: Mapping[str, Row]) -> RowDiff:
    added = tuple(k for k in new if k not in old)
    removed = tuple(k for k in old if k not in new)
    changed: dict[str, tuple[int, ...]] = {}
    for key, row in new.items():
        prev = old.get(key)
        if prev is not None and prev != row:
            changed[key] = tuple(i for i, (a, b) in enumerate(zip(prev, row, strict=False)) if a != b)
    return RowDiff(added, removed, changed)


@dataclass(frozen=True)
class FinishedJob:
    """A job of ours that left the queue, kept listed with what became of it."""

    key: str  # the row key (= job id, or "ARRAY_[tasks]" for collapsed array tasks)
    query_id: str  # what sacct/scontrol are asked about
    job: QueueJob  # the last squeue line seen
    outcome: Outcome | None = None  # None while the look-up runs
    tasks: int = 1
    looked_up: bool = True  # False: more jobs left at once than are looked up (not looked up)

    @property
    def state(self) -> str:
        """The final state (``ENDED`` while unknown), as the table's state column shows it."""
        out = self.outcome
        return "ENDED" if out is None or out.state == UNKNOWN else out.state


def _where(job: QueueJob) -> str:
    if job.nodelist:
        return job.nodelist
    return f"({job.reason})" if job.reason else ""


def _ended_where(ended: FinishedJob) -> str:
    out = ended.outcome
    if out is None:
        where = "(looking up the final state…)"
    elif out.state == UNKNOWN:
        where = f"ended (state unknown; last seen {ended.job.state})" if ended.looked_up else "ended (not looked up)"
    else:
        where = f"exit {out.exit_code}" if out.exit_code else "ended"
    return f"{ended.tasks} tasks · {where}" if ended.tasks > 1 else where


def queue_row(job: QueueJob, all_users: bool = False, ended: FinishedJob | None = None) -> Row:
    """The table cells of one job: a queue line, or (``ended``) a job that left the queue, with its final
    state and the exit code where the reason was. Names, users and reasons come from other users: escape
    sequences and control characters in them are dropped (:func:`~ntui.core.logtail.inert`). Pure; runs in
    the poll thread."""
    nodes = "" if job.num_nodes is None else str(job.num_nodes)
    if ended is None:
        key, state, where = job.job_id, job.state, inert(_where(job))
    else:
        key, state, where = ended.key, ended.state, inert(_ended_where(ended))
    head = (key, inert(job.name), inert(job.user)) if all_users else (key, inert(job.name))
    return (*head, state, job.elapsed, job.time_limit, nodes, where, inert(job.partition), inert(job.qos or ""))


def departed(previous: Mapping[str, QueueJob], current: Iterable[QueueJob], user: str | None) -> list[QueueJob]:
    """Own jobs seen last time that are no longer in the queue."""
    now = {j.job_id for j in current}
    return [j for k, j in previous.items() if k not in now and (user is None or j.user == user)]
