"""CPU side of a job's usage from ``sacct`` step rows: CPU efficiency and MaxRSS per step (one sacct call).

``sacct -j J --noconvert -n -P -o <STEP_FIELDS>`` prints the allocation row (``123``) and one row per step
(``123.batch``, ``123.extern``, ``123.0`` ...). How the numbers are counted, so that multi-node, multi-task jobs
come out right:

* **CPU efficiency** = the sum of the *steps'* TotalCPU / (the allocation's elapsed x its allocated CPUs).
  Steps are summed, not the allocation row, which already aggregates them; every CPU of every node is in the
  allocation's AllocCPUS, so a 4-node job is not compared with one node's CPUs. Per step: its TotalCPU / (its
  elapsed x its AllocCPUS). TotalCPU (user + system) is recorded when a step's tasks end: a running step shows 0.
* **MaxRSS** is per task: the largest resident set any one task of the step reached (sacct's MaxRSS, with
  MaxRSSNode and MaxRSSTask saying which). It is *not* the step's total; a node held at most MaxRSS x the
  tasks it ran (``node_rss_bound_kib``: MaxRSS x ceil(NTasks / NNodes)), which is what to compare with the
  memory requested per node. The job's peak is the largest step MaxRSS.

Without slurmdbd sacct says "Slurm accounting storage is disabled": :class:`StepAccounting` then has
``available=False`` and a reason, and callers print that instead of CPU numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.slurm.common import DEFAULT_TIMEOUT, normalize_state, parse_duration, validate_job_id
from ntui.core.slurm.runner import CommandRunner, check
from ntui.core.slurm.sacct import accounting_disabled

__all__ = [
    "STEP_FIELDS",
    "StepAccounting",
    "StepRow",
    "build_sacct_steps_argv",
    "parse_cpu_time",
    "parse_memory_kib",
    "parse_sacct_steps",
    "step_accounting",
    "steps_of",
]

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


def parse_cpu_time(text: str) -> float | None:
    """sacct's TotalCPU: ``[D-][HH:]MM:SS[.mmm]`` -> seconds; empty or garbage -> None."""
    t = text.strip()
    if not t:
        return None
    days = 0
    if "-" in t:
        d, _, t = t.partition("-")
        if not d.isdigit():
            return None
        days = int(d)
    parts = t.split(":")
    if not 2 <= len(parts) <= 3:
        return None
    try:
        sec = float(parts[-1])
        mins = int(parts[-2])
        hours = int(parts[0]) if len(parts) == 3 else 0
    except ValueError:
        return None
    if min(sec, mins, hours) < 0 or not math.isfinite(sec):
        return None
    return ((days * 24 + hours) * 60 + mins) * 60 + sec


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
