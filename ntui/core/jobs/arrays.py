"""The queue's job arrays as one row each, opening into their tasks (Textual-free).

``squeue --array`` lists every task of an own array (``123_0`` ... and pending ones folded as ``123_[4-9%2]``), and
the jobs view keeps tasks that left the queue as ended rows. :func:`fold` turns those rows into one row per array,
keyed by the array's job id::

    ▸ 123   lr-sweep   RUNNING   0:42   ...   6 tasks: 2 running, 3 pending, 1 failed

with the most active state (running, else pending, else how the tasks ended), the longest elapsed of its running
tasks and the nodes they use. An array in ``expanded`` shows its task rows under it (``▾``; the table keeps a
task under its array whatever the sort, :attr:`Folded.parents`). Folding costs one pass over the rows of a refresh
that changed (a 1,000-task sweep is one row; nothing is re-parsed: the cells are the formatter's,
:func:`~ntui.core.jobs.queue.queue_row`); squeue is asked nothing more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ntui.core.jobfiles.manifest import parse_indices
from ntui.core.jobs.queue import ENDED, FinishedJob, Row, queue_row
from ntui.core.records.sweeps import counts_text
from ntui.core.slurm.common import StateCategory, state_category
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.squeue import QueueJob

__all__ = ["CLOSED", "OPEN", "Folded", "fold", "task_count"]

#: The marks of an array's row: folded, open.
CLOSED = "▸"
OPEN = "▾"
#: The indent of a task row under its array.
INDENT = "  "


@dataclass(frozen=True)
class Folded:
    """The rows to show: arrays folded (or open), everything else as it was."""

    rows: dict[str, Row]
    tags: dict[str, str]
    parents: dict[str, str] = field(default_factory=dict)
    """Task row -> its array's row, for the tasks shown under an open array."""
    arrays: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Array row -> the row keys of its tasks (shown or not)."""

    def array_of(self, key: str | None) -> str | None:
        """The array row of ``key`` (itself for an array row, its array for a task row); None for a plain job."""
        if key is None:
            return None
        if key in self.arrays:
            return key
        for array, tasks in self.arrays.items():
            if key in tasks:
                return array
        return None

    def representative(self, key: str) -> str:
        """The task whose details, logs and GPUs an array's row shows: a running one, else one that failed, else
        the first (``key`` itself for any other row)."""
        return self._rep.get(key, key)

    _rep: dict[str, str] = field(default_factory=dict, repr=False)


def task_count(job: QueueJob) -> int:
    """Tasks one queue line stands for: 1, or a pending range's size (``4-9%2`` -> 6)."""
    task = job.array_task_id or ""
    if task.isdigit() or not task:
        return 1
    try:
        return max(1, len(parse_indices(task)))
    except ValueError:
        return 1


def _array_id(key: str, live: Mapping[str, QueueJob], ended: Mapping[str, FinishedJob]) -> str | None:
    job = live.get(key)
    if job is None:
        fin = ended.get(key)
        job = fin.job if fin is not None else None
    if job is None or job.array_task_id is None or not job.array_job_id:
        return None
    return job.array_job_id


def _aggregate(states: list[tuple[str, int]]) -> str:
    cats = [(state_category(s) if s and s != "ENDED" else StateCategory.OTHER, s) for s, _ in states]
    for want in (StateCategory.RUNNING, StateCategory.COMPLETING, StateCategory.PENDING):
        hit = next((s for c, s in cats if c is want), None)
        if hit:
            return hit
    failed = next((s for c, s in cats if c is StateCategory.FAILED), None)
    if failed:
        return failed
    if cats and all(s == "COMPLETED" for _, s in cats):
        return "COMPLETED"
    return "ENDED"


def fold(
    rows: Mapping[str, Row],
    tags: Mapping[str, str],
    live: Mapping[str, QueueJob],
    ended: Mapping[str, FinishedJob],
    expanded: Collection[str] = (),
    *,
    all_users: bool = False,
) -> Folded:
    """One row per job array (see the module doc); rows keep their first-seen order (an array where its first
    task was)."""
    groups: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []  # ("row", key) | ("array", array id)
    for key in rows:
        array = _array_id(key, live, ended)
        if array is None:
            order.append(("row", key))
            continue
        if array not in groups:
            groups[array] = []
            order.append(("array", array))
        groups[array].append(key)
    if not groups:
        return Folded(dict(rows), dict(tags))
    state_i = 3 if all_users else 2
    where_i = -3
    out_rows: dict[str, Row] = {}
    out_tags: dict[str, str] = {}
    parents: dict[str, str] = {}
    arrays: dict[str, tuple[str, ...]] = {}
    reps: dict[str, str] = {}
    for kind, key in order:
        if kind == "row":
            out_rows[key] = rows[key]
            if key in tags:
                out_tags[key] = tags[key]
            continue
        tasks = groups[key]
        states: list[tuple[str, int]] = []
        running: list[QueueJob] = []
        first_failed: str | None = None
        for t in tasks:
            job = live.get(t)
            if job is not None:
                states.append((job.state, task_count(job)))
                if job.category in (StateCategory.RUNNING, StateCategory.COMPLETING):
                    running.append(job)
            else:
                fin = ended[t]
                states.append((fin.state, fin.tasks))
                if first_failed is None and state_category(fin.state) is StateCategory.FAILED:
                    first_failed = t
        rep_key = running[0].job_id if running else first_failed or tasks[0]
        rep = live.get(rep_key) or ended[rep_key].job
        cells = list(queue_row(rep, all_users))
        is_open = key in expanded
        cells[0] = f"{OPEN if is_open else CLOSED} {key}"
        cells[state_i] = _aggregate(states)
        if running:
            longest = max(running, key=lambda j: j.elapsed_s or 0)
            cells[state_i + 1] = longest.elapsed if longest.elapsed_s is None else format_elapsed(longest.elapsed_s)
            cells[state_i + 3] = str(sum(j.num_nodes or 0 for j in running) or "")
        elif (ran := [f.outcome.elapsed_s for t in tasks if t not in live and (f := ended[t]).outcome is not None
                      and f.outcome.elapsed_s is not None]):
            # none runs now: the longest final run time of the ended tasks (the representative's last squeue line
            # may be from while it was pending: 0:00)
            cells[state_i + 1] = format_elapsed(max(ran))
        cells[where_i] = counts_text(s for s, n in states for _ in range(n))
        out_rows[key] = tuple(cells)
        if not any(t in live for t in tasks):
            out_tags[key] = ENDED
        arrays[key] = tuple(tasks)
        reps[key] = rep_key
        if is_open:
            for t in tasks:
                task_cells = rows[t]
                out_rows[t] = (INDENT + task_cells[0], *task_cells[1:])
                if t in tags:
                    out_tags[t] = tags[t]
                parents[t] = key
    return Folded(out_rows, out_tags, parents, arrays, reps)
