"""Comparing a sweep's tasks (``ntui sweep JOBID``, the jobs view's Sweep tab) and resubmitting the failed ones.

:func:`sweep_table` gives one row per task: its values (from the manifest, as written), state, elapsed, mean GPU
utilisation (from the task's own sample files ``<stem>-<array>_<task>-gpu-<node>.csv`` where the sampler ran), how
far its training is (step of total, from the end of its rank-0 log: :mod:`ntui.core.progress`) and
the last value of the sweep's metric (``sweep.metric``, a regex over the tail of the task's rank-0 log: a
:class:`~ntui.core.logs.tail.FileTail` reads only the end of the file, never all of it). Failed tasks are grouped
by their verdict (:mod:`ntui.core.logs.verdict`, numbers ignored, so "rank 0 failed: CUDA OOM at step 812" and "...
step 90" are one group). Slurm is asked once for every task (:func:`~ntui.core.records.sweeps.task_states`:
one sacct, then one squeue for the tasks accounting has not seen end, as it lags the controller); one scan of the
log directory finds every task's files.

:func:`plan_failed` decides what ``ntui resubmit JOBID --failed`` and the jobs view's ``ctrl+r`` on a sweep submit:
the indices of the tasks that ended unsuccessfully (``--array=1,4%P``), with the same manifest (the preset
rendered now must give the same task index -> values, otherwise the indices would mean other runs).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ntui.core.gpu.usage import JobFacts, build_report
from ntui.core.jobfiles.lognames import LOG_EXT, RANK_LOG_SUFFIX, split_task_id
from ntui.core.jobfiles.manifest import format_indices
from ntui.core.jobfiles.samplefiles import GPU_PART, SAMPLE_SUFFIX
from ntui.core.logs.tail import FileTail
from ntui.core.logs.verdict import SlurmFinal
from ntui.core.progress.preset import pattern_of_script
from ntui.core.progress.read import read_progress
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import infer_from_batch_log, verdict_for
from ntui.core.records.sweeps import (
    SweepRef,
    TaskState,
    counts_text,
    failed_indices,
    sweep_of,
    task_states,
)
from ntui.core.slurm.common import DEFAULT_TIMEOUT, StateCategory, state_category
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.runner import CommandRunner

__all__ = [
    "METRIC_TAIL_LINES",
    "SORT_KEYS",
    "FailedPlan",
    "SweepRow",
    "SweepTable",
    "metric_value",
    "plan_failed",
    "same_manifest",
    "sort_rows",
    "sweep_lines",
    "sweep_table",
    "table_cells",
    "table_columns",
]

#: How many lines of a rank-0 log's end the metric is looked for in (the tail only: never the whole file).
METRIC_TAIL_LINES = 2000
#: More tasks than this: GPU utilisation is left out (each task's sample files would be read in full).
GPU_TASKS_MAX = 256
#: How much of each task's rank-0 log's end its progress is read from (the bars and lines of late say the step).
PROGRESS_TAIL_BYTES = 256 * 1024


@dataclass(frozen=True)
class SweepRow:
    index: int
    job_id: str  # 123_4
    values: Mapping[str, str]
    state: str  # "" unknown / not started
    elapsed_s: int | None = None
    gpu_util: float | None = None
    metric: str | None = None
    verdict: str = ""
    exit_code: str | None = None
    step: int | None = None  # how far the task's training is (its rank-0 log: ntui.core.progress)
    total: int | None = None

    @property
    def progress(self) -> str:
        """``40/80``, ``step 60`` (no total printed), or ``-``."""
        if self.step is None:
            return "-"
        return f"{self.step:,}/{self.total:,}" if self.total else f"step {self.step:,}"

    @property
    def metric_number(self) -> float | None:
        try:
            return float(self.metric) if self.metric is not None else None
        except ValueError:
            return None

    @property
    def failed(self) -> bool:
        return bool(self.state) and state_category(self.state) is StateCategory.FAILED


@dataclass(frozen=True)
class SweepTable:
    job_id: str
    names: tuple[str, ...]
    rows: tuple[SweepRow, ...]
    metric: str = ""
    groups: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """(verdict, task indices) of the failed tasks, the largest group first."""
    counts: str = ""
    resubmit_of: str | None = None
    problem: str = ""  # the manifest could not be read: values unknown
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "job_id": self.job_id, "names": list(self.names), "metric": self.metric, "counts": self.counts,
            "resubmit_of": self.resubmit_of, "problem": self.problem or None,
            "tasks": [{"task": r.index, "job_id": r.job_id, "values": dict(r.values), "state": r.state or None,
                       "exit_code": r.exit_code, "elapsed_s": r.elapsed_s, "gpu_util": r.gpu_util,
                       "metric": r.metric, "verdict": r.verdict or None, "step": r.step, "total": r.total}
                      for r in self.rows],
            "failed_groups": [{"verdict": v, "tasks": list(t)} for v, t in self.groups],
            "warnings": list(self.warnings),
        }


def metric_value(pattern: re.Pattern[str], lines: Sequence[str]) -> str | None:
    """The metric of the last line that matches: group ``value`` if named, else group 1, else the match."""
    for line in reversed(lines):
        m = pattern.search(line)
        if m is None:
            continue
        if "value" in pattern.groupindex:
            return m.group("value")
        return m.group(1) if pattern.groups else m.group(0)
    return None


def _task_files(ref: SweepRef) -> tuple[dict[str, dict[str, str]], set[str]]:
    """One scan of the log directory: task job id -> {node: sample file}, and the task ids with a rank-0 log."""
    stem = ref.entry.log_stem
    prefix = f"{stem}-{ref.job_id}_"
    samples: dict[str, dict[str, str]] = {}
    ranks: set[str] = set()
    try:
        entries = list(os.scandir(ref.entry.log_dir))
    except OSError:
        return {}, set()
    for e in entries:
        name = e.name
        if not name.startswith(prefix):
            continue
        rest = name[len(stem) + 1:]
        job_id, sep, tail = rest.partition("-")
        if not sep or split_task_id(job_id)[1] is None:
            continue
        if tail.startswith(GPU_PART[1:]) and name.endswith(SAMPLE_SUFFIX):
            node = tail[len(GPU_PART) - 1:-len(SAMPLE_SUFFIX)]
            if node:
                samples.setdefault(job_id, {})[node] = e.path
        elif tail == f"{RANK_LOG_SUFFIX[1:]}0{LOG_EXT}":
            ranks.add(job_id)
    return samples, ranks


def _group_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.split(": ", 1)[1] if line.startswith("task ") else line)


def sweep_table(
    entry: HistoryEntry,
    runner: CommandRunner | None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    states: Mapping[int, TaskState] | None = None,
    verdict: Callable[[HistoryEntry, str, SlurmFinal | None], str] = verdict_for,
) -> SweepTable | None:
    """*Thread-side*: the sweep ``entry`` submitted, one row per task (None: not a sweep). ``states``: the tasks'
    states when the caller has them (else :func:`~ntui.core.records.sweeps.task_states`, live: sacct, then the
    controller for the tasks accounting has not seen end)."""
    ref = sweep_of(entry)
    if ref is None:
        return None
    warnings: list[str] = []
    if states is None:
        found = task_states(runner, [ref], env=env, timeout=timeout, infer=infer_from_batch_log, live=True)
        states = found.tasks.get(ref.job_id, {})
        warnings.extend(found.warnings)
    names = ref.manifest.names if ref.manifest is not None else ()
    metric = ref.manifest.metric if ref.manifest is not None else ""
    pattern: re.Pattern[str] | None = None
    if metric:
        try:
            pattern = re.compile(metric)
        except re.error:
            warnings.append(f"the metric {metric!r} is not a regular expression")
    samples, ranks = _task_files(ref)
    progress_pattern = pattern_of_script(entry.script)  # the preset's progress: pattern, if any
    rows: list[SweepRow] = []
    failed: dict[str, list[int]] = {}
    shown: dict[str, str] = {}
    gpu_ok = len(ref.job.indices) <= GPU_TASKS_MAX
    for index in ref.job.indices:
        job_id = ref.task_id(index)
        st = states.get(index)
        state = st.state if st is not None else ""
        value: str | None = None
        if pattern is not None and job_id in ranks:
            tail = FileTail(ref.paths.rank(job_id, 0), window=METRIC_TAIL_LINES)
            tail.poll()
            value = metric_value(pattern, tail.window)
        step = total = None
        if job_id in ranks and gpu_ok:
            try:
                series = read_progress(Path(ref.paths.rank(job_id, 0)), pattern=progress_pattern,
                                       tail_bytes=PROGRESS_TAIL_BYTES)
                step, total = series.step, series.total
            except OSError as exc:
                warnings.append(f"progress of task {index}: {exc.strerror or exc}")
        util: float | None = None
        files = samples.get(job_id)
        if files and gpu_ok:
            try:
                report = build_report(files, JobFacts(job_id, state or None, bool(st and st.finished),
                                                      float(st.elapsed_s) if st and st.elapsed_s else None))
                util = report.util_mean
            except (OSError, ValueError) as exc:
                warnings.append(f"GPU samples of task {index}: {exc}")
        line = ""
        if st is not None and st.finished and st.category is StateCategory.FAILED:
            try:
                line = verdict(entry, job_id, SlurmFinal(st.state, st.reason, st.node_list)) or st.state.lower()
            except Exception:  # a triage bug must not hide the table
                line = st.state.lower()
            key = _group_key(line)
            failed.setdefault(key, []).append(index)
            shown.setdefault(key, line)
        rows.append(SweepRow(index, job_id, ref.values(index), state, st.elapsed_s if st else None, util, value,
                             line, st.exit_code if st else None, step, total))
    groups = tuple(sorted(((shown[k], tuple(v)) for k, v in failed.items()), key=lambda g: (-len(g[1]), g[1])))
    counts = counts_text(states[i].state if i in states else "" for i in ref.job.indices)
    return SweepTable(ref.job_id, names, tuple(rows), metric, groups, counts, ref.job.resubmit_of, ref.problem,
                      tuple(warnings))


#: The orders ``ntui sweep --sort`` and the Sweep tab offer (a parameter's name sorts by its values too).
SORT_KEYS = ("task", "state", "elapsed", "gpu", "progress", "metric")


def _number_or_text(text: str) -> tuple[int, float, str]:
    try:
        x = float(text)
        return (0, x if not math.isnan(x) else math.inf, text)
    except ValueError:
        return (1, 0.0, text)


def sort_rows(rows: Sequence[SweepRow], key: str, *, descending: bool = False) -> list[SweepRow]:
    """Rows by ``key`` (:data:`SORT_KEYS` or a parameter name); rows without the value go last either way."""
    def k(r: SweepRow) -> tuple[object, ...]:
        if key == "task":
            return (0, r.index)
        if key == "state":
            return (0 if r.state else 1, r.state, r.index)
        if key == "elapsed":
            return (0 if r.elapsed_s is not None else 1, r.elapsed_s or 0, r.index)
        if key == "gpu":
            return (0 if r.gpu_util is not None else 1, r.gpu_util or 0.0, r.index)
        if key == "progress":  # how far, as a fraction where a total is known, else by the step
            done = r.step / r.total if r.step is not None and r.total else None
            return (0 if r.step is not None else 1, done if done is not None else math.inf, r.step or 0, r.index)
        if key == "metric":
            num = r.metric_number
            return (0 if num is not None else 1 if r.metric is not None else 2, num or 0.0, r.metric or "",
                    r.index)
        if key in r.values:
            return (0, *_number_or_text(r.values[key]), r.index)
        raise ValueError(f"unknown sort key {key!r} (one of {', '.join(SORT_KEYS)} or a parameter)")
    have = [r for r in rows if k(r)[0] == 0]
    rest = [r for r in rows if k(r)[0] != 0]
    return sorted(have, key=k, reverse=descending) + sorted(rest, key=k)


def _cell(value: str) -> str:
    return value if value.isprintable() and "\n" not in value else repr(value)


def table_cells(table: SweepTable, row: SweepRow) -> tuple[str, ...]:
    """One row's cells, in the order of :func:`table_columns`."""
    return (
        str(row.index), *(_cell(row.values.get(n, "?")) for n in table.names), row.state or "?",
        format_elapsed(row.elapsed_s) if row.elapsed_s is not None and row.state not in ("", "PENDING") else "-",
        "-" if row.gpu_util is None else f"{row.gpu_util:.0f}%",
        row.progress,
        row.metric if row.metric is not None else "-",
    )


def table_columns(table: SweepTable) -> tuple[str, ...]:
    return ("task", *table.names, "state", "elapsed", "gpu", "progress", "metric")


def sweep_lines(table: SweepTable, rows: Sequence[SweepRow] | None = None, *, width: int = 120) -> list[str]:
    """The table for people (``ntui sweep``): a header, one line per task, the failed tasks by verdict."""
    from ntui.core.textsafe import ellipsize, inert

    rows = list(table.rows if rows is None else rows)
    head = table_columns(table)
    body = [tuple(inert(c) for c in table_cells(table, r)) for r in rows]
    widths = [min(32, max(len(h), *(len(b[i]) for b in body))) if body else len(h) for i, h in enumerate(head)]

    def fmt(cells: Sequence[str]) -> str:
        out = []
        for i, (c, w) in enumerate(zip(cells, widths, strict=True)):
            c = ellipsize(c, w)
            out.append(c.rjust(w) if i == 0 or head[i] in ("elapsed", "gpu", "progress", "metric") else c.ljust(w))
        return "  ".join(out).rstrip()[:max(width, 40)]

    metric = f" · metric {table.metric}" if table.metric else ""
    again = f" · resubmit of {table.resubmit_of}" if table.resubmit_of else ""
    lines = [f"sweep {table.job_id}: {table.counts}{metric}{again}", fmt(head)]
    lines += [fmt(b) for b in body]
    if table.groups:
        lines.append("")
        lines.append("failed, by verdict:")
        for line, tasks in table.groups:
            lines.append(f"  tasks {format_indices(tasks)}: {inert(line)}"[:max(width, 40)])
    if table.problem:
        lines.append(f"note: {table.problem}")
    return lines


# ---------------------------------------------------------------- resubmitting the failed tasks


@dataclass(frozen=True)
class FailedPlan:
    """What ``resubmit --failed`` submits: the failed task indices of ``job_id`` (empty: nothing, see
    ``problem``)."""

    job_id: str
    indices: tuple[int, ...] = ()
    values: tuple[tuple[int, Mapping[str, str]], ...] = ()
    problem: str = ""
    counts: str = ""
    ref: SweepRef | None = field(default=None, compare=False, repr=False)

    @property
    def array(self) -> str:
        return format_indices(self.indices)


def plan_failed(
    entry: HistoryEntry,
    runner: CommandRunner | None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> FailedPlan:
    """*Thread-side*: the tasks of ``entry``'s sweep to run again (one Slurm call; none once the job file holds
    every task's final state)."""
    job_id = entry.job_id or "?"
    ref = sweep_of(entry)
    if ref is None:
        return FailedPlan(job_id, problem=f"job {job_id} is not a sweep: --failed resubmits a sweep's failed tasks")
    if ref.manifest is None:
        return FailedPlan(job_id, problem=f"the manifest of sweep {job_id} cannot be read ({ref.problem}): the "
                          "task indices would mean nothing", ref=ref)
    found = task_states(runner, [ref], env=env, timeout=timeout, infer=infer_from_batch_log)
    states = {i: t for i, t in found.tasks.get(ref.job_id, {}).items() if i in ref.job.indices}
    counts = counts_text(states[i].state if i in states else "" for i in ref.job.indices)
    indices = failed_indices(states)
    if not indices:
        return FailedPlan(job_id, problem=f"sweep {job_id} has no failed or cancelled task ({counts})",
                          counts=counts, ref=ref)
    return FailedPlan(job_id, indices, tuple((i, ref.values(i)) for i in indices), counts=counts, ref=ref)


def same_manifest(plan: FailedPlan, manifest_bytes: bytes) -> str:
    """"" when the preset rendered now gives the sweep's task index -> values again, else why not."""
    from ntui.core.jobfiles.manifest import encode_manifest

    ref = plan.ref
    if ref is None or ref.manifest is None:
        return "the sweep's manifest is unknown"
    if encode_manifest(ref.manifest) == manifest_bytes:
        return ""
    return (f"the sweep's values changed since job {plan.job_id} was submitted, so task indices "
            f"{plan.array} would run other values; resubmit without --failed to run the sweep as it is now")
