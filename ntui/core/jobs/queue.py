"""The queue's building blocks: polling policy, row diffs, finished jobs and the one row formatter.

Pure and Textual-free so that tests drive it with a fake clock and canned squeue results.
One squeue call per refresh serves every view; refreshes never overlap (the caller re-arms
only after one completes); the interval adapts to whether own jobs are active; controller
errors back off exponentially. :mod:`ntui.core.jobs.model` puts these together.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ntui.core.config import QueueSettings
from ntui.core.records.outcome import UNKNOWN, Outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.durations import format_elapsed, parse_duration
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import QueueJob, build_squeue_argv, parse_squeue, run_squeue
from ntui.core.textsafe import inert

ACTIVE = frozenset({StateCategory.PENDING, StateCategory.RUNNING, StateCategory.COMPLETING})

#: Row tag of jobs that left the queue (the table dims them and lists them after live rows).
ENDED = "ended"


@dataclass
class PollPolicy:
    """When to poll next. ``now`` requests (after submit/actions) win over everything."""

    settings: QueueSettings = field(default_factory=QueueSettings)
    errors: int = 0
    active: bool = True
    #: every own active job's journal is followed (ntui.core.jobs.journals): its start and end are read from there,
    #: so squeue, which keeps the queue and the other jobs current, runs at the idle pace
    covered: bool = False

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
        return self.settings.active_interval if self.active and not self.covered else self.settings.idle_interval


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


@functools.lru_cache(maxsize=4096)
def _duration_cell(text: str) -> str:
    """squeue's elapsed or limit as the queue cell spells it: parsed and formatted once per distinct text (a
    refresh of 10,000 new lines holds a few hundred distinct times; parsing each line's twice made the refresh
    1.5x slower, ``bench/queue_scale.py``)."""
    seconds = parse_duration(text)
    return text if seconds is None else format_elapsed(seconds)


def queue_row(job: QueueJob, all_users: bool = False, ended: FinishedJob | None = None) -> Row:
    """The table cells of one job: a queue line, or (``ended``) a job that left the queue, with its final
    state and the exit code where the reason was. Names, users and reasons come from other users: escape
    sequences and control characters in them are dropped (:func:`~ntui.core.textsafe.inert`). Pure; runs in
    the poll thread. An ended job's elapsed is its final run time once the look-up gave one (the last poll saw
    it up to one poll interval before its end)."""
    nodes = "" if job.num_nodes is None else str(job.num_nodes)
    elapsed = _duration_cell(job.elapsed)
    if ended is None:
        key, state, where = job.job_id, job.state, inert(_where(job))
    else:
        key, state, where = ended.key, ended.state, inert(_ended_where(ended))
        if ended.outcome is not None and ended.outcome.elapsed_s is not None and ended.tasks == 1:
            elapsed = format_elapsed(ended.outcome.elapsed_s)
    head = (key, inert(job.name), inert(job.user)) if all_users else (key, inert(job.name))
    limit = _duration_cell(job.time_limit)
    return (*head, state, elapsed, limit, nodes, where, inert(job.partition), inert(job.qos or ""))


def departed(previous: Mapping[str, QueueJob], current: Iterable[QueueJob], user: str | None) -> list[QueueJob]:
    """Own jobs seen last time that are no longer in the queue."""
    now = {j.job_id for j in current}
    return [j for k, j in previous.items() if k not in now and (user is None or j.user == user)]


# ---------------------------------------------------------------- squeue with a parse cache (one call per refresh)


@dataclass(frozen=True)
class Fetched:
    """One squeue answer, parsed and formatted (everything here is computed off the UI thread)."""

    jobs: tuple[QueueJob, ...]
    live: dict[str, QueueJob]  # job id -> job
    rows: dict[str, Row]  # job id -> table cells
    counts: dict[str, int]  # "running" / "pending" / "other" -> jobs
    unchanged: bool  # byte-identical to the previous answer (same view)
    squeue_s: float
    parse_s: float  # parse + format of the lines not seen last time


def _count_label(job: QueueJob) -> str:
    cat = job.category
    if cat in (StateCategory.RUNNING, StateCategory.COMPLETING):
        return "running"
    return "pending" if cat is StateCategory.PENDING else "other"


#: a line's table cells and count label: strings only, so the collector stops tracking it once it has seen it (kept
#: apart from the job, which it tracks: a tuple holding both was one more tracked object per line, which brought the
#: collector's full passes sooner in a refresh of 10,000 new lines, bench/queue_scale.py --offline)
_Cells = tuple[Row, str]


def squeue_argv(all_users: bool) -> list[str]:
    """:func:`~ntui.core.slurm.build_squeue_argv`: one line per array task for own jobs only (everyone's
    pending tasks stay folded as ``123_[4-9999]``: a big site's queue would be millions of lines)."""
    return build_squeue_argv(all_users, array_tasks=not all_users)


class QueueFetcher:
    """``squeue`` (one call, :func:`squeue_argv`) with a per-line cache.

    Same command and error semantics as :func:`~ntui.core.slurm.query_queue`, but a line identical to one of
    the previous answer reuses its parsed job and table cells: with 10,000 held array tasks nothing changes
    between refreshes, and re-parsing them would cost more than the squeue call itself. Used from the poll
    worker only (refreshes never overlap), so it needs no lock.
    """

    def __init__(self) -> None:
        self._jobs: dict[str, QueueJob] = {}  # line -> its job
        self._cells: dict[str, _Cells] = {}  # line -> its cells and count label
        self._view: bool | None = None
        self._stdout: str | None = None
        self._last: Fetched | None = None

    def fetch(self, runner: CommandRunner, all_users: bool, timeout: float) -> Fetched:
        t0 = time.perf_counter()
        stdout, _ = run_squeue(runner, squeue_argv(all_users), timeout=timeout)
        squeue_s = time.perf_counter() - t0
        return self.parse(stdout, all_users, squeue_s)

    def parse(self, stdout: str, all_users: bool, squeue_s: float = 0.0) -> Fetched:
        """Parse one squeue answer, reusing the lines of the previous one."""
        t1 = time.perf_counter()
        if all_users != self._view:
            self._jobs, self._cells, self._view, self._stdout, self._last = {}, {}, all_users, None, None
        last = self._last
        if last is not None and stdout == self._stdout:
            return Fetched(last.jobs, last.live, last.rows, last.counts, True, squeue_s, time.perf_counter() - t1)
        lines = [ln for ln in stdout.split("\n") if ln]
        jobs, cells = self._jobs, self._cells
        missing = [ln for ln in lines if ln not in jobs] if jobs else lines
        fresh_jobs: dict[str, QueueJob] = {}
        fresh_cells: dict[str, _Cells] = {}
        if missing:
            parsed = parse_squeue("\n".join(missing))
            pairs: Iterable[tuple[str, QueueJob]] = zip(missing, parsed, strict=False)
            if len(parsed) != len(missing):  # some lines did not parse: pair them one by one
                pairs = ((ln, job) for ln in missing for job in parse_squeue(ln))
            for line, job in pairs:
                fresh_jobs[line] = job
                fresh_cells[line] = (queue_row(job, all_users), _count_label(job))
        keep_jobs: dict[str, QueueJob] = {}
        keep_cells: dict[str, _Cells] = {}
        live: dict[str, QueueJob] = {}
        rows: dict[str, Row] = {}
        counts: dict[str, int] = {}
        for line in lines:
            hit = jobs.get(line) or fresh_jobs.get(line)
            if hit is None:
                continue
            keep_jobs[line] = hit
            keep_cells[line] = row_label = cells.get(line) or fresh_cells[line]
            live[hit.job_id] = hit
            rows[hit.job_id] = row_label[0]
            label = row_label[1]
            counts[label] = counts.get(label, 0) + 1
        got = Fetched(tuple(live.values()), live, rows, counts, False, squeue_s, time.perf_counter() - t1)
        self._jobs, self._cells, self._stdout, self._last = keep_jobs, keep_cells, stdout, got
        return got
