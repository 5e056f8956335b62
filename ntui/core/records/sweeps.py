"""A sweep after (and while) it runs: its tasks' states, the counts the views show, and its record.

An ntui sweep is one history entry (the array's job id) whose script is a sweep; its metadata is in the files next
to the script (:mod:`ntui.core.jobfiles.manifest`): the job file ``<stem>-<jobid>.sweep`` (which manifest, which
task indices ran) and the manifest (task index -> values). :func:`sweep_of` finds both from the entry's log dir and
stem (the script names the manifest, for a job file that was never written).

:func:`task_states` asks Slurm about every task of many sweeps at once: **one** ``sacct -j A,B,... -X`` (pending tasks
come back folded as ``A_[2-5%2]``); for a live view (``live=True``: the Sweep tab, ``ntui sweep``) the tasks accounting
has not seen end are then asked of the controller in **one** ``squeue --array --jobs=A,B,...``, since slurmdbd hears of
a start later than the controller (on a busy 22.05 cluster a task whose log already had its loss lines read PENDING, or
was missing, in sacct for over a minute); else, without accounting, one ``scontrol show job A`` per sweep while the
controller remembers it (every task's record in one answer), else each task's batch log (inferred by the reader the
caller passes: :func:`~ntui.core.records.record.infer_from_batch_log`, as for a job). A sweep whose tasks all ended is
resolved once (:func:`resolve_sweeps`): its record in the history is the whole array's (state COMPLETED only when every
task completed, else the first unsuccessful task's; ``reason`` holds the counts, e.g. ``6 tasks: 5 completed, 1
failed``; the verdict is the first failed task's), and every task's final state goes into the job file, where ``ntui
sweep`` and ``ntui resubmit --failed`` find it after Slurm forgot the tasks. The history's own columns are all it uses:
nothing in its schema is sweep-specific.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime

from ntui.core.jobfiles.lognames import LogPaths, split_task_id, task_job_id
from ntui.core.jobfiles.manifest import (
    Manifest,
    ManifestError,
    SweepJob,
    TaskRecord,
    array_of_script,
    is_sweep_script,
    job_file_path,
    manifest_of_script,
    parse_indices,
    read_job_file,
    read_manifest,
    write_job_file,
)
from ntui.core.logs.verdict import SlurmFinal
from ntui.core.records.history import FinalRecord, History, HistoryEntry
from ntui.core.slurm.common import DEFAULT_TIMEOUT, StateCategory, state_category
from ntui.core.slurm.durations import parse_duration
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.sacct import SacctRecord, SacctUnavailable, sacct_records
from ntui.core.slurm.scontrol import JobDetails, show_jobs
from ntui.core.slurm.squeue import QueueJob, query_queue

__all__ = [
    "SweepRef",
    "SweepStates",
    "TaskState",
    "counts_text",
    "failed_indices",
    "resolve_sweeps",
    "state_counts",
    "sweep_of",
    "sweep_record",
    "task_states",
]


@dataclass(frozen=True)
class SweepRef:
    """A sweep ntui submitted: its history entry, job file, manifest (None when unreadable) and log names."""

    entry: HistoryEntry
    job_id: str
    job: SweepJob
    manifest_path: str
    manifest: Manifest | None
    problem: str = ""  # why the job file or the manifest could not be read

    @property
    def paths(self) -> LogPaths:
        return LogPaths(self.entry.log_dir, self.entry.log_stem, array=True)

    def task_id(self, index: int) -> str:
        return task_job_id(self.job_id, index)

    def values(self, index: int) -> dict[str, str]:
        m = self.manifest
        return m.values(index) if m is not None and 0 <= index < m.size else {}


def sweep_of(entry: HistoryEntry | None) -> SweepRef | None:
    """The sweep ``entry`` submitted; None for a plain job (or an entry without a job id)."""
    if entry is None or not entry.job_id or not is_sweep_script(entry.script):
        return None
    job: SweepJob | None
    problems: list[str] = []
    try:
        job = read_job_file(job_file_path(entry.log_dir, entry.log_stem, entry.job_id))
    except ManifestError as exc:  # damaged: the script says which manifest and tasks, as without one
        job = None
        problems.append(str(exc))
    named = manifest_of_script(entry.script) or ""
    path = os.path.join(entry.log_dir, job.manifest) if job is not None else named
    manifest: Manifest | None = None
    try:
        manifest = read_manifest(path)
    except ManifestError as exc:
        problems.append(str(exc))
    problem = "; ".join(problems)
    if job is None:  # ntui stopped before it wrote the job file: the script says which tasks
        size = manifest.size if manifest is not None else 0
        try:
            indices = parse_indices(array_of_script(entry.script) or "")
        except ValueError:
            indices = tuple(range(size))
        job = SweepJob(os.path.basename(path), size or len(indices), indices, None, entry.resubmit_of)
    return SweepRef(entry, entry.job_id, job, path, manifest, problem)


@dataclass(frozen=True)
class TaskState(TaskRecord):
    """One task of a sweep job: its final (or current) state as the job file keeps it, ``state`` "" while nobody
    knows (not started, or forgotten)."""

    index: int = 0
    job_id: str = ""  # 123_4

    @property
    def category(self) -> StateCategory:
        return state_category(self.state) if self.state else StateCategory.OTHER

    @property
    def finished(self) -> bool:
        return bool(self.state) and self.category.finished

    def record(self) -> TaskRecord:
        return TaskRecord(**{f.name: getattr(self, f.name) for f in fields(TaskRecord)})


@dataclass(frozen=True)
class SweepStates:
    """What :func:`task_states` found: per sweep job id, per task index; plus how it asked."""

    tasks: Mapping[str, Mapping[int, TaskState]] = field(default_factory=dict)
    sacct_calls: int = 0
    scontrol_calls: int = 0
    accounting: bool | None = None
    warnings: tuple[str, ...] = ()
    squeue_calls: int = 0


_PENDING_RANGE = re.compile(r"^(\d+)_\[([0-9,\-:%]+)\]$")


def _from_sacct(index: int, job_id: str, rec: SacctRecord) -> TaskState:
    reason = rec.reason if rec.reason not in ("", "None") else None
    return TaskState(rec.state, rec.exit_code or None, rec.elapsed_s, rec.start, rec.end,
                     rec.node_list if rec.node_list not in ("", "None assigned") else None, reason, "sacct",
                     index=index, job_id=job_id)


def _from_scontrol(index: int, job_id: str, d: JobDetails) -> TaskState:
    reason = d.reason if d.reason and d.reason != "None" else None
    return TaskState(d.state, d.exit_code or None, parse_duration(d.run_time), d.start_time, d.end_time,
                     d.nodelist or None, reason, "scontrol", index=index, job_id=job_id)


def _from_squeue(index: int, job_id: str, job: QueueJob) -> TaskState:
    return TaskState(job.state, job.exit_code, job.elapsed_s, job.start, None, job.nodelist or None,
                     job.reason or None, "squeue", index=index, job_id=job_id)


#: What the controller is asked of a live sweep's tasks (fields every supported squeue knows).
LIVE_FIELDS = ("JobID", "ArrayJobID", "ArrayTaskID", "State", "Reason", "TimeUsed", "StartTime", "NodeList")


def _tasks_of(array_id: str, key: str) -> tuple[int, ...]:
    """The task indices a sacct/scontrol job id names: ``A_4`` -> (4,), ``A_[2-5%2]`` -> (2, 3, 4, 5)."""
    base, index = split_task_id(key)
    if base != array_id:
        return ()
    if index is not None:
        return (index,)
    m = _PENDING_RANGE.match(key)
    if m is None:
        return ()
    try:
        return parse_indices(m.group(2))
    except ValueError:
        return ()


def _all_ended(ref: SweepRef, states: Mapping[int, TaskState]) -> bool:
    """Whether every task of ``ref``'s job has a final state in ``states``."""
    return all(i in states and states[i].finished for i in ref.job.indices)


def task_states(
    runner: CommandRunner | None,
    refs: Sequence[SweepRef],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    infer: Callable[[str], FinalRecord] | None = None,
    live: bool = False,
) -> SweepStates:
    """Every task of every sweep in ``refs`` (see the module doc). A sweep whose job file already holds every
    task's final state asks nothing. ``runner`` None: only what the files say. ``infer``: the batch log reader
    for tasks Slurm no longer knows (:func:`~ntui.core.records.record.infer_from_batch_log`; None: leave them
    unknown). ``live``: the tasks accounting has not seen end take the controller's word where it has one."""
    out: dict[str, dict[int, TaskState]] = {}
    ask: list[SweepRef] = []
    for ref in refs:
        known = {i: TaskState(**vars(r), index=i, job_id=ref.task_id(i)) for i, r in ref.job.states.items()}
        out[ref.job_id] = known
        if not _all_ended(ref, known):
            ask.append(ref)
    sacct_calls = scontrol_calls = squeue_calls = 0
    accounting: bool | None = None
    warnings: list[str] = []
    if ask and runner is not None:
        records: tuple[SacctRecord, ...] = ()
        try:
            sacct_calls += 1
            records = sacct_records(runner, [r.job_id for r in ask], env=env, timeout=timeout)
            accounting = True
        except SacctUnavailable as exc:
            accounting = False if exc.disabled else None
            if not exc.disabled:
                warnings.append(f"sacct: {exc}")
        by_array: dict[str, list[SacctRecord]] = {}
        for rec in records:
            by_array.setdefault(rec.base_id, []).append(rec)
        for ref in ask:
            got = out[ref.job_id]
            for rec in by_array.get(ref.job_id, ()):
                for index in _tasks_of(ref.job_id, rec.job_id):
                    if index not in got or not got[index].finished:
                        got[index] = _from_sacct(index, ref.task_id(index), rec)
            if accounting is not False:
                continue  # accounting answered (a task it does not list yet is asked again next time), or failed
            # no accounting: the controller, while it remembers the array (every task in one answer) ...
            forgotten = False
            try:
                scontrol_calls += 1
                for d in show_jobs(runner, ref.job_id, env=env, timeout=timeout):
                    for index in _tasks_of(ref.job_id, d.job_id):
                        if index not in got or not got[index].finished:
                            got[index] = _from_scontrol(index, ref.task_id(index), d)
                forgotten = True  # the tasks it does not list have left it
            except JobNotFound:
                forgotten = True
            except SlurmError as exc:
                warnings.append(f"scontrol show job {ref.job_id}: {exc}")
            if not forgotten:
                continue
            # ... else each task's batch log
            if infer is None:
                continue
            for index in ref.job.indices:
                path = ref.paths.batch(ref.task_id(index))
                if index in got or not os.path.exists(path):
                    continue
                rec_ = infer(path)
                got[index] = TaskState(rec_.state, rec_.exit_code, rec_.elapsed_s, rec_.start_time, rec_.end_time,
                                       rec_.node_list, rec_.reason, "inferred", index=index,
                                       job_id=ref.task_id(index))
        unended = [ref for ref in ask if not _all_ended(ref, out[ref.job_id])]
        if live and accounting is not False and unended:  # without accounting the controller was asked above
            squeue_calls += 1
            try:
                queue = query_queue(runner, all_users=True, job_ids=[r.job_id for r in unended], fields=LIVE_FIELDS,
                                    env=env, timeout=timeout)
            except SlurmError as exc:
                warnings.append(f"squeue: {exc}")
                queue = ()
            by_id = {ref.job_id: ref for ref in unended}
            for job in queue:
                ref_ = by_id.get(job.array_job_id or "")
                task = job.array_task_id
                if ref_ is None or task is None or not task.isdigit():
                    continue
                got, index = out[ref_.job_id], int(task)
                if index not in got or not got[index].finished:  # accounting lags the controller
                    got[index] = _from_squeue(index, ref_.task_id(index), job)
    return SweepStates({k: dict(sorted(v.items())) for k, v in out.items()}, sacct_calls, scontrol_calls,
                       accounting, tuple(warnings), squeue_calls)


_ORDER = ("running", "pending", "completed")


def _label(state: str) -> str:
    if not state:
        return "unknown"
    cat = state_category(state)
    if cat in (StateCategory.RUNNING, StateCategory.COMPLETING):
        return "running"
    if cat is StateCategory.PENDING:
        return "pending"
    return state.lower().replace("_", " ")


def state_counts(states: Iterable[str]) -> dict[str, int]:
    """Task states -> ``{"running": 2, "pending": 3, "failed": 1}`` in the order people read them (running,
    pending, completed, then the unsuccessful ones, unknown last)."""
    counts: dict[str, int] = {}
    for s in states:
        label = _label(s)
        counts[label] = counts.get(label, 0) + 1
    head = [k for k in _ORDER if k in counts]
    rest = sorted(k for k in counts if k not in _ORDER and k != "unknown")
    tail = ["unknown"] if "unknown" in counts else []
    return {k: counts[k] for k in (*head, *rest, *tail)}


def counts_text(states: Iterable[str], total: int | None = None) -> str:
    """``6 tasks: 2 running, 3 pending, 1 failed``; tasks of ``total`` not among ``states`` count as unknown."""
    listed = list(states)
    counts = state_counts(listed)
    n = len(listed) if total is None else max(total, len(listed))
    if n > len(listed):
        counts["unknown"] = counts.get("unknown", 0) + n - len(listed)
    parts = ", ".join(f"{c} {label}" for label, c in counts.items())
    return f"{n} task{'s' if n != 1 else ''}: {parts}" if parts else f"{n} tasks"


def failed_indices(states: Mapping[int, TaskState]) -> tuple[int, ...]:
    """The tasks to run again: those that ended unsuccessfully (failed, cancelled, timeout, OOM, node failure,
    preempted, ...)."""
    return tuple(i for i, t in sorted(states.items()) if t.finished and t.category is StateCategory.FAILED)


def _iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def sweep_record(ref: SweepRef, states: Mapping[int, TaskState], verdict: str = "") -> FinalRecord | None:
    """The sweep's record once every task it ran has ended (None before): see the module doc."""
    tasks = [states.get(i) for i in ref.job.indices]
    if not tasks or any(t is None or not t.finished for t in tasks):
        return None
    done = [t for t in tasks if t is not None]
    bad = next((t for t in done if t.state != "COMPLETED"), None)
    starts = [d for t in done if (d := _iso(t.start)) is not None]
    ends = [d for t in done if (d := _iso(t.end)) is not None]
    elapsed = int((max(ends) - min(starts)).total_seconds()) if starts and ends else \
        max((t.elapsed_s for t in done if t.elapsed_s is not None), default=None)
    sources = {t.source for t in done}
    source = "inferred" if "inferred" in sources else "scontrol" if "scontrol" in sources else "sacct"
    return FinalRecord(
        state=bad.state if bad is not None else "COMPLETED",
        exit_code=bad.exit_code if bad is not None else "0:0",
        reason=counts_text(t.state for t in done),
        start_time=min(starts).isoformat() if starts else None,
        end_time=max(ends).isoformat() if ends else None,
        elapsed_s=elapsed, node_list=None, verdict=verdict, source=source,
    )


Verdict = Callable[[HistoryEntry, str, "SlurmFinal | None"], str]


def _verdict(ref: SweepRef, task: TaskState, verdict: Verdict) -> str:
    said = SlurmFinal(task.state, task.reason, task.node_list)
    line = verdict(ref.entry, task.job_id, said)
    return f"task {task.index}: {line}" if line else f"task {task.index}: {task.state.lower()}"


def resolve_sweeps(
    history: History,
    runner: CommandRunner,
    refs: Sequence[SweepRef],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    verdict: Verdict,
    infer: Callable[[str], FinalRecord],
) -> tuple[list[tuple[str, FinalRecord]], dict[str, str], SweepStates]:
    """Resolve every sweep of ``refs`` whose tasks all ended: its record in the history (``verdict``: a task's
    verdict line, :func:`~ntui.core.records.record.verdict_for`), each task's final state in its job file.
    Returns (resolved, the counts of every sweep by job id, the states found)."""
    found = task_states(runner, refs, env=env, timeout=timeout, infer=infer)
    resolved: list[tuple[str, FinalRecord]] = []
    counts: dict[str, str] = {}
    for ref in refs:
        states = found.tasks.get(ref.job_id, {})
        counts[ref.job_id] = counts_text(states[i].state if i in states else "" for i in ref.job.indices)
        first_bad = next((states[i] for i in ref.job.indices if i in states and states[i].finished
                          and states[i].state != "COMPLETED"), None)
        try:
            line = _verdict(ref, first_bad, verdict) if first_bad is not None else ""
        except Exception:  # a triage bug must not lose the record
            line = ""
        rec = sweep_record(ref, states, line)
        if rec is None:
            continue
        try:
            path = job_file_path(ref.entry.log_dir, ref.entry.log_stem, ref.job_id)
            write_job_file(path, replace(ref.job, states={i: states[i].record() for i in ref.job.indices}))
        except OSError:
            pass  # the record still says how it ended; the per-task states are asked of Slurm again
        if history.record_final(ref.job_id, rec):
            resolved.append((ref.job_id, rec))
    return resolved, counts, found
