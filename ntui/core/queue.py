"""The queue model behind the jobs view: polling policy, row diffs, finished jobs.

Pure and Textual-free so that tests drive it with a fake clock and canned squeue results.
One squeue call per refresh serves every view; refreshes never overlap (the caller re-arms
only after one completes); the interval adapts to whether own jobs are active; controller
errors back off exponentially.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ntui.core.config import QueueSettings
from ntui.core.slurm import QueueJob, StateCategory

ACTIVE = frozenset({StateCategory.PENDING, StateCategory.RUNNING, StateCategory.COMPLETING})


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
    """An own job that left the queue, kept listed with what became of it."""

    job: QueueJob
    state: str
    exit_code: str | None
    source: str


def departed(previous: Mapping[str, QueueJob], current: Iterable[QueueJob], user: str | None) -> list[QueueJob]:
    """Own jobs seen last time that are no longer in the queue."""
    now = {j.job_id for j in current}
    return [j for k, j in previous.items() if k not in now and (user is None or j.user == user)]
