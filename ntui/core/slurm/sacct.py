"""``sacct``: job records from slurmdbd (``SacctUnavailable`` / ``None`` without accounting).

One ``sacct`` call answers for many jobs (``-j id1,id2,...``) or for the user's jobs since a time (``-S``); never
one call per job. Without slurmdbd sacct prints "Slurm accounting storage is disabled" (rc 1):
:func:`accounting_disabled` recognises it, and callers fall back to ``scontrol`` and the batch log
(:mod:`ntui.core.records.record`). The second half: a job's steps (CPU efficiency, MaxRSS per task) from one more
``sacct`` of its step rows (:func:`step_accounting`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    StateCategory,
    normalize_state,
    parse_exit_code,
    state_category,
    validate_job_id,
)
from ntui.core.slurm.durations import parse_cpu_time, parse_duration
from ntui.core.slurm.runner import CommandRunner, SlurmError, check
from ntui.core.slurm.version import installed_version, sacct_subtracts_128

#: ``sacct --format`` fields, in this order (``-P``: ``|``-separated, never truncated).
RECORD_FIELDS: tuple[str, ...] = ("JobID", "JobName", "State", "ExitCode", "Reason", "Submit", "Start", "End",
                                  "Elapsed", "NodeList", "Account", "QOS", "Partition", "WorkDir")
_DISABLED = re.compile(
    r"accounting storage is disabled|not running a supported accounting_storage plugin", re.IGNORECASE
)
_NO_TIME = {"", "Unknown", "None", "N/A"}


@dataclass(frozen=True)
class SacctRecord:
    """One allocation line of ``sacct -X``. ``state`` is normalized (``CANCELLED``, not ``CANCELLED by 0``);
    ``raw_state`` keeps who cancelled. Times are ISO text or ``None``. ``exit_code`` reads as sacct 25.11+
    and scontrol print it on every version (:func:`same_on_every_version`)."""

    job_id: str
    name: str
    state: str
    raw_state: str
    exit_code: str
    reason: str
    submit: str | None
    start: str | None
    end: str | None
    elapsed_s: int | None
    node_list: str
    account: str
    qos: str
    partition: str
    work_dir: str

    @property
    def category(self) -> StateCategory:
        return state_category(self.state)

    @property
    def base_id(self) -> str:
        """``123`` for ``123``, ``123_4`` and ``123+0`` (array task, het component)."""
        return re.split(r"[_+.]", self.job_id, maxsplit=1)[0]


class SacctUnavailable(Exception):
    """sacct cannot answer: accounting is disabled (``disabled``) or the command failed."""

    def __init__(self, message: str, *, disabled: bool) -> None:
        super().__init__(message)
        self.disabled = disabled


def accounting_disabled(stderr: str) -> bool:
    return bool(_DISABLED.search(stderr))


def _format() -> str:
    return "--format=" + ",".join(RECORD_FIELDS)


def build_sacct_jobs_argv(job_ids: Iterable[str]) -> list[str]:
    """``sacct -j ID1,ID2,... -X -P -n --format=...``: every job in one call. With ``-j`` sacct's default start
    time is the epoch, so old jobs are found too."""
    ids = sorted({validate_job_id(j) for j in job_ids}, key=lambda s: (len(s), s))
    if not ids:
        raise ValueError("no job ids")
    return ["sacct", "-j", ",".join(ids), "-X", "-P", "-n", _format()]


def build_sacct_since_argv(since: str, user: str | None = None) -> list[str]:
    """The user's jobs (default: the caller) that were eligible, running or ended since ``since``
    (``YYYY-MM-DDTHH:MM:SS``): ``sacct -X -P -n -S SINCE [-u USER] --format=...``."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?)?", since):
        raise ValueError(f"not a sacct time: {since!r}")
    argv = ["sacct", "-X", "-P", "-n", "-S", since]
    if user:
        if not re.fullmatch(r"[A-Za-z0-9._-]+", user):
            raise ValueError(f"not a user name: {user!r}")
        argv += ["-u", user]
    return argv + [_format()]


def _time(text: str) -> str | None:
    return None if text.strip() in _NO_TIME else text.strip()


def parse_sacct_records(stdout: str | bytes) -> tuple[SacctRecord, ...]:
    """Parse :data:`RECORD_FIELDS` lines; a job name containing ``|`` is re-joined, other malformed lines dropped."""
    text = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
    n = len(RECORD_FIELDS)
    out: list[SacctRecord] = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) > n:  # the name may hold "|": it is the only free-text field before the fixed ones
            extra = len(parts) - n
            parts = [parts[0], "|".join(parts[1:2 + extra]), *parts[2 + extra:]]
        if len(parts) != n or not parts[0].strip():
            continue
        (job_id, name, state, exit_code, reason, submit, start, end, elapsed, node_list, account, qos, partition,
         work_dir) = parts
        out.append(SacctRecord(
            job_id=job_id.strip(), name=name, state=normalize_state(state), raw_state=state.strip(),
            exit_code=exit_code.strip(), reason=reason.strip(), submit=_time(submit), start=_time(start),
            end=_time(end), elapsed_s=parse_duration(elapsed), node_list=node_list.strip(),
            account=account.strip(), qos=qos.strip(), partition=partition.strip(), work_dir=work_dir.strip(),
        ))
    return tuple(out)


#: Exit statuses that sacct before 25.11 printed with 128 taken off, and that ntui gives back the 128: the
#: signals training jobs end by (a task's SIGABRT, the OOM killer's SIGKILL, SIGSEGV, Slurm's SIGTERM at a
#: cancel or time limit), whose 128 + N is what srun and the batch shell return. A program exiting 6, 9, 11
#: or 15 by itself is rare; one exiting 1, 2 or 3 is not, so those stay as printed (they may have been 129,
#: 130, 131: sacct before 25.11 cannot tell).
_RESTORED_SIGNALS = frozenset({6, 9, 11, 15})


def restore_exit_code(exit_code: str) -> str:
    """An exit code of sacct before 25.11 in the spelling of 25.11+ (and of scontrol on every version):
    ``15:0`` (a cancelled ``srun`` job's 143) -> ``143:0``, ``9:0`` -> ``137:0``; every other code unchanged
    (see :data:`_RESTORED_SIGNALS`)."""
    code = parse_exit_code(exit_code)
    if code is None or code[1] != 0 or code[0] not in _RESTORED_SIGNALS:
        return exit_code
    return f"{code[0] + 128}:0"


def same_on_every_version(records: tuple[SacctRecord, ...], runner: CommandRunner,
                          env: Mapping[str, str] | None, timeout: float) -> tuple[SacctRecord, ...]:
    """``records`` with exit codes that mean the same on every Slurm version: when one could have lost its
    128 (:func:`restore_exit_code` would change it), the installed version is asked (once per process) and,
    before 25.11, the 128 is given back."""
    if not any(restore_exit_code(r.exit_code) != r.exit_code for r in records):
        return records
    if not sacct_subtracts_128(installed_version(runner, env=env, timeout=timeout)):
        return records
    return tuple(replace(r, exit_code=restore_exit_code(r.exit_code)) for r in records)


def _run(runner: CommandRunner, argv: Sequence[str], env: Mapping[str, str] | None,
         timeout: float) -> tuple[SacctRecord, ...]:
    try:
        res = runner.run(argv, timeout=timeout, env=env)
    except SlurmError as exc:  # not installed, timed out
        raise SacctUnavailable(str(exc), disabled=False) from exc
    if accounting_disabled(res.stderr):
        raise SacctUnavailable(res.stderr.strip() or "accounting storage is disabled", disabled=True)
    try:
        check(res)
    except SlurmError as exc:
        raise SacctUnavailable(str(exc), disabled=False) from exc
    return same_on_every_version(parse_sacct_records(res.stdout), runner, env, timeout)


def sacct_jobs(runner: CommandRunner, job_ids: Iterable[str], *, env: Mapping[str, str] | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> dict[str, SacctRecord]:
    """One ``sacct`` call for all ``job_ids``: ``{job id: record}``. An array job's id maps to its first task's
    record when sacct lists only tasks. Raises :class:`SacctUnavailable`."""
    wanted = list(dict.fromkeys(job_ids))
    if not wanted:
        return {}
    records = _run(runner, build_sacct_jobs_argv(wanted), env, timeout)
    by_id: dict[str, SacctRecord] = {}
    for rec in records:
        if rec.job_id in wanted:
            by_id[rec.job_id] = rec
    for rec in records:
        if rec.base_id in wanted and rec.base_id not in by_id:
            by_id[rec.base_id] = rec
    return by_id


def sacct_records(runner: CommandRunner, job_ids: Iterable[str], *, env: Mapping[str, str] | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> tuple[SacctRecord, ...]:
    """One ``sacct`` call for all ``job_ids``: every allocation line it prints (an array's id gives each of its
    tasks, pending ones folded as ``123_[2-5%2]``). Raises :class:`SacctUnavailable`."""
    wanted = list(dict.fromkeys(job_ids))
    if not wanted:
        return ()
    return _run(runner, build_sacct_jobs_argv(wanted), env, timeout)


def sacct_since(runner: CommandRunner, since: str, *, user: str | None = None,
                env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> tuple[SacctRecord, ...]:
    """One ``sacct`` call: the user's jobs since ``since``. Raises :class:`SacctUnavailable`."""
    return _run(runner, build_sacct_since_argv(since, user), env, timeout)


#: The record of one job, as :func:`final_state` returns it (the same model as the batched calls').
AccountingRecord = SacctRecord


def final_state(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> SacctRecord | None:
    """The accounting record of a job that left the queue; ``None`` when accounting is disabled ("Slurm
    accounting storage is disabled": show "finished (state unknown)") or sacct has no record. Slurm's own
    errors (controller unreachable, not installed, timeout) are raised as they are."""
    try:
        return sacct_jobs(runner, [job_id], env=env, timeout=timeout).get(job_id)
    except SacctUnavailable as exc:
        if exc.disabled:
            return None
        if isinstance(exc.__cause__, SlurmError):
            raise exc.__cause__ from None
        raise


# ---------------------------------------------------------------- steps: CPU efficiency and MaxRSS (one sacct call)
#
# CPU side of a job's usage from ``sacct`` step rows: CPU efficiency and MaxRSS per step (one sacct call).
#
# ``sacct -j J --noconvert -n -P -o <STEP_FIELDS>`` prints the allocation row (``123``) and one row per step
# (``123.batch``, ``123.extern``, ``123.0`` ...). How the numbers are counted, so that multi-node, multi-task jobs
# come out right:
#
# * **CPU efficiency** = the sum of the *steps'* TotalCPU / (the allocation's elapsed x its allocated CPUs).
#   Steps are summed, not the allocation row, which already aggregates them; every CPU of every node is in the
#   allocation's AllocCPUS, so a 4-node job is not compared with one node's CPUs. Per step: its TotalCPU / (its
#   elapsed x its AllocCPUS). TotalCPU (user + system) is recorded when a step's tasks end: a running step shows 0.
# * **MaxRSS** is per task: the largest resident set any one task of the step reached (sacct's MaxRSS, with
#   MaxRSSNode and MaxRSSTask saying which). It is *not* the step's total; a node held at most MaxRSS x the
#   tasks it ran (``node_rss_bound_kib``: MaxRSS x ceil(NTasks / NNodes)), which is what to compare with the
#   memory requested per node. The job's peak is the largest step MaxRSS.
#
# Without slurmdbd sacct says "Slurm accounting storage is disabled": :class:`StepAccounting` then has
# ``available=False`` and a reason, and callers print that instead of CPU numbers.
STEP_FIELDS = (
    "JobID",
    "JobName",
    "State",
    "ExitCode",
    "ElapsedRaw",
    "TotalCPU",
    "AllocCPUS",
    "NNodes",
    "NTasks",
    "MaxRSS",
    "MaxRSSNode",
    "MaxRSSTask",
    "Timelimit",
    "NodeList",
)
_UNITS = {"": 1 / 1024, "K": 1, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}


def build_sacct_steps_argv(job_id: str) -> list[str]:
    return ["sacct", "-j", validate_job_id(job_id), "--noconvert", "-n", "-P", "-o", ",".join(STEP_FIELDS)]


def parse_memory_kib(text: str) -> float | None:
    """``123456K`` / ``1.5G`` / ``2048`` (bytes) -> KiB; empty -> None."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP]?)\s*", text.upper())
    if m is None:
        return None
    return float(m.group(1)) * _UNITS[m.group(2)]


def _int(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.isdigit() else None


@dataclass(frozen=True)
class StepRow:
    job_id: str  # as printed: 123, 123.batch, 123.0
    step: str | None  # None for the allocation row; "batch", "extern", "0" ...
    name: str
    state: str
    exit_code: str
    elapsed_s: int | None
    total_cpu_s: float | None
    alloc_cpus: int | None
    nodes: int | None
    tasks: int | None
    max_rss_kib: float | None
    max_rss_node: str | None
    max_rss_task: int | None
    time_limit_s: int | None
    nodelist: str

    @property
    def cpu_efficiency(self) -> float | None:
        if self.total_cpu_s is None or not self.elapsed_s or not self.alloc_cpus:
            return None
        return self.total_cpu_s / (self.elapsed_s * self.alloc_cpus)

    @property
    def node_rss_bound_kib(self) -> float | None:
        """At most this much resident memory on one node: MaxRSS x the tasks per node (rounded up)."""
        if self.max_rss_kib is None:
            return None
        per_node = math.ceil((self.tasks or 1) / max(1, self.nodes or 1))
        return self.max_rss_kib * per_node


def parse_sacct_steps(stdout: str) -> tuple[StepRow, ...]:
    out: list[StepRow] = []
    for line in stdout.splitlines():
        parts = line.split("|")
        if len(parts) < len(STEP_FIELDS) or not parts[0].strip():
            continue
        (jid, name, state, exit_code, elapsed, total_cpu, cpus, nnodes, ntasks, max_rss, rss_node, rss_task,
         limit, nodelist) = (p.strip() for p in parts[: len(STEP_FIELDS)])
        _, dot, step = jid.partition(".")
        out.append(StepRow(
            job_id=jid,
            step=step if dot else None,
            name=name,
            state=normalize_state(state),
            exit_code=exit_code,
            elapsed_s=_int(elapsed),
            total_cpu_s=parse_cpu_time(total_cpu),
            alloc_cpus=_int(cpus),
            nodes=_int(nnodes),
            tasks=_int(ntasks),
            max_rss_kib=parse_memory_kib(max_rss) if max_rss else None,
            max_rss_node=rss_node or None,
            max_rss_task=_int(rss_task),
            time_limit_s=parse_duration(limit),
            nodelist=nodelist,
        ))
    return tuple(out)


@dataclass(frozen=True)
class StepAccounting:
    available: bool
    reason: str | None = None  # why there are no numbers
    job: StepRow | None = None
    steps: tuple[StepRow, ...] = ()

    @property
    def total_cpu_s(self) -> float | None:
        known = [s.total_cpu_s for s in self.steps if s.total_cpu_s is not None]
        return sum(known) if known else None

    @property
    def cpu_efficiency(self) -> float | None:
        """Sum of the steps' TotalCPU / (the allocation's elapsed x its allocated CPUs)."""
        cpu = self.total_cpu_s
        job = self.job
        if cpu is None or job is None or not job.elapsed_s or not job.alloc_cpus:
            return None
        return cpu / (job.elapsed_s * job.alloc_cpus)

    @property
    def max_rss_kib(self) -> float | None:
        known = [s.max_rss_kib for s in self.steps if s.max_rss_kib is not None]
        return max(known) if known else None


def steps_of(rows: tuple[StepRow, ...], job_id: str) -> StepAccounting:
    """The allocation row of ``job_id`` (or the first one) and its steps."""
    jobs = [r for r in rows if r.step is None]
    job = next((r for r in jobs if r.job_id == job_id), jobs[0] if jobs else None)
    if job is None:
        return StepAccounting(False, f"sacct has no record of job {job_id}")
    steps = tuple(r for r in rows if r.step is not None and r.job_id.partition(".")[0] == job.job_id)
    return StepAccounting(True, None, job, steps)


def step_accounting(
    runner: CommandRunner, job_id: str, *, env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT
) -> StepAccounting:
    """One ``sacct`` call. Accounting disabled -> ``available=False`` with the reason (no exception); other
    sacct failures raise :class:`~ntui.core.slurm.runner.SlurmError`."""
    res = runner.run(build_sacct_steps_argv(job_id), timeout=timeout, env=env)
    if accounting_disabled(res.stderr):
        return StepAccounting(False, "Slurm accounting is disabled on this cluster (no slurmdbd): no CPU numbers")
    check(res)
    return steps_of(parse_sacct_steps(res.stdout), job_id)
