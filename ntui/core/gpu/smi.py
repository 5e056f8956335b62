"""Per-node GPU sampling: one long-lived overlapping ``srun`` step running ``nvidia-smi -l``, and its parser.

The step (the jobperf pattern, see the monitoring reference section 7) is started once per watched job, not
once per tick, and killed when the pane closes; it also ends with the job or at ``--time``::

    srun --jobid=J --overlap --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=<nodes> --label
         --mem=100M --time=<minutes left> --unbuffered --job-name=ntui-gpu-watch
         nvidia-smi --query-gpu=index,uuid,name,... --format=csv,noheader,nounits -l <interval>

**GRES and ``--overlap`` on 22.05.** No ``--gres``/``--gpus`` is passed, on purpose:

* a step that asks for no GRES is given all of the job's GRES on its nodes (srun(1) of 22.05.8, checked on
  the dev cluster's man page: "By default, a job step is allocated all of the generic resources that have
  been requested by the job, except those implicitly requested when a job is exclusive"), so with
  ``ConstrainDevices`` its cgroup holds the same GPUs as the job and nvidia-smi sees exactly those;
* those GPUs are held by the training step; ``--overlap`` lets the steps share them, and since 22.05 that
  includes GRES ("allows steps to share all resources (CPUs, memory, and GRES) with all other steps";
  before 22.05 only CPUs, so on older versions the watch step pends or gets no GPUs: warn);
* an explicit ``--gres=gpu:4`` would be wrong on nodes with a different count.

The exception is the one the man page names: an ``--exclusive`` job that got its GPUs only implicitly
(whole nodes, no ``--gres``/``--gpus`` request). Its steps get no GPUs by default, the training step
included; pass ``gres="gpu:<per node>"`` to :func:`build_gpu_step_argv` for such jobs.

The environment matters as much: srun reads ``SLURM_GPUS_PER_TASK``, ``SLURM_STEP_GRES``,
``SLURM_TRES_PER_TASK``, ``SLURM_CPUS_PER_TASK`` ... from its environment, and ``SLURM_STEP_GRES=none``
would leave the step without GPUs. Run the step with :func:`ntui.core.slurm.srun.step_env` (drops inherited
``SLURM_*``, ``SRUN_*``, ``SALLOC_*``, ``SBATCH_*`` except ``SLURM_CONF``).

**Which node is task N.** ``--label`` prefixes each line with the task id; with one task per node the ids
follow the step's node order, which is Slurm's node-table order (slurm.conf order, sorted in ordinary
configs), i.e. :func:`task_node_order` (the hostlist order of the compressed ``--nodelist``). A site whose
slurm.conf lists nodes out of order should pass the order from ``SLURM_STEP_NODELIST``/``scontrol``.

**Indices.** Under ``ConstrainDevices`` nvidia-smi numbers the visible GPUs 0..k-1; the physical indices are
in ``scontrol show job -d`` (``GRES=gpu:4(IDX:0-3)``), which is what ``gres_by_node`` carries. The board
compares *counts*; when nvidia-smi shows more GPUs than allocated (devices not constrained) and the indices
match, only the allocated ones enter the job averages.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ntui.core.hosts import compress_nodelist, expand_nodelist

__all__ = [
    "QUERY_FIELDS",
    "GpuBoard",
    "GpuIssue",
    "GpuSample",
    "GpuView",
    "IdleGpu",
    "JobGpuSummary",
    "build_gpu_step_argv",
    "no_gpus_allocated",
    "parse_gpu_csv",
    "parse_gpu_line",
    "parse_number",
    "sparkline",
    "task_node_order",
]

#: The ``--query-gpu`` fields, in the order the parser expects them.
QUERY_FIELDS: tuple[str, ...] = (
    "index",
    "uuid",
    "name",
    "utilization.gpu",
    "utilization.memory",
    "memory.used",
    "memory.total",
    "temperature.gpu",
    "power.draw",
)
STEP_JOB_NAME = "ntui-gpu-watch"


def task_node_order(nodes: Iterable[str]) -> tuple[str, ...]:
    """The order of ``srun --label`` task ids for one task per node: the compressed list, expanded."""
    return expand_nodelist(compress_nodelist(nodes))


def build_gpu_step_argv(
    job_id: str,
    nodes: Sequence[str],
    interval_s: int,
    time_left_min: int | None,
    nvidia_smi: str = "nvidia-smi",
    *,
    gres: str | None = None,
) -> list[str]:
    """argv of the overlapping GPU watch step (see the module docstring for the choice of options).

    ``time_left_min`` caps the step (at least 1 minute); None leaves the job's limit. ``gres`` adds
    ``--gres=`` (only for exclusive jobs with implicit GPUs). Raises ValueError on an empty node list, a
    non-positive interval or a job id that is not ``123`` / ``123_4`` / ``123+1``.
    """
    names = task_node_order(n.strip() for n in nodes)
    if not names:
        raise ValueError("no nodes to watch")
    if interval_s < 1:
        raise ValueError("interval_s must be >= 1")
    jid = job_id.strip()
    if not jid or not all(c.isdigit() or c in "_+" for c in jid):
        raise ValueError(f"bad job id {job_id!r}")
    n = len(names)
    argv = [
        "srun",
        f"--jobid={jid}",
        "--overlap",
        f"--nodes={n}",
        f"--ntasks={n}",
        "--ntasks-per-node=1",
        f"--nodelist={compress_nodelist(names)}",
        "--label",
        "--mem=100M",
    ]
    if time_left_min is not None:
        argv.append(f"--time={max(1, int(time_left_min))}")
    if gres:
        argv.append(f"--gres={gres}")
    argv += [
        "--unbuffered",
        f"--job-name={STEP_JOB_NAME}",
        nvidia_smi,
        "--query-gpu=" + ",".join(QUERY_FIELDS),
        "--format=csv,noheader,nounits",
        "-l",
        str(int(interval_s)),
    ]
    return argv


# ---------------------------------------------------------------------------------------------------------
# parsing


@dataclass(frozen=True)
class GpuSample:
    """One GPU's line. Numbers are None where nvidia-smi printed ``[N/A]``, ``[Not Supported]`` etc."""

    node: str
    index: int
    uuid: str
    name: str
    util_gpu: float | None
    util_mem: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None
    temp_c: float | None
    power_w: float | None
    task: int | None = None

    @property
    def simulated(self) -> bool:
        """True for ``scripts/simulated-nvidia-smi`` output (label the data as simulated)."""
        return "SIMULATED" in self.name or self.uuid.startswith("GPU-SIM-")

    @property
    def mem_fraction(self) -> float | None:
        if self.mem_used_mib is None or not self.mem_total_mib:
            return None
        return self.mem_used_mib / self.mem_total_mib


def parse_number(text: str) -> float | None:
    """A ``nounits`` CSV value: a finite float, or None for ``[N/A]``, ``[Not Supported]``, ``N/A``, garbage.

    ``float`` itself skips the spaces after the commas and rejects the bracketed words; this runs once per field
    of every sample of a long job (:mod:`ntui.core.gpu.usage`), so it stays this short.
    """
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


_LABEL_RE = re.compile(r"^\s*(\d+): ?(.*)$", re.DOTALL)


def _split_label(line: str) -> tuple[int | None, str]:
    """``" 3: rest"`` -> ``(3, "rest")`` (srun ``--label``); no label -> ``(None, line)``."""
    m = _LABEL_RE.match(line)
    if m is None:
        return None, line
    return int(m.group(1)), m.group(2)


def parse_gpu_line(line: str, task_nodes: Sequence[str] = ()) -> GpuSample | None:
    """One line of the step's output -> a sample, or None (srun messages, errors, partial lines).

    ``task_nodes[i]`` names task ``i`` (see :func:`task_node_order`); without it, or for an unknown task,
    the node is ``"task<i>"`` (``""`` for an unlabelled line).
    """
    task, rest = _split_label(line.rstrip("\r\n"))
    fields = [f.strip() for f in rest.split(",")]
    if len(fields) != len(QUERY_FIELDS):
        return None
    idx_text = fields[0]
    if not idx_text.isdigit():
        return None
    uuid = fields[1] if not fields[1].startswith("[") else ""
    name = fields[2] if not fields[2].startswith("[") else ""
    if task is None:
        node = ""
    elif 0 <= task < len(task_nodes):
        node = task_nodes[task]
    else:
        node = f"task{task}"
    return GpuSample(
        node=node,
        index=int(idx_text),
        uuid=uuid,
        name=name,
        util_gpu=parse_number(fields[3]),
        util_mem=parse_number(fields[4]),
        mem_used_mib=parse_number(fields[5]),
        mem_total_mib=parse_number(fields[6]),
        temp_c=parse_number(fields[7]),
        power_w=parse_number(fields[8]),
        task=task,
    )


def parse_gpu_csv(text: str, task_nodes: Sequence[str] = ()) -> list[GpuSample]:
    """Every sample in a block of output (other lines skipped)."""
    out: list[GpuSample] = []
    for line in text.splitlines():
        s = parse_gpu_line(line, task_nodes)
        if s is not None:
            out.append(s)
    return out


# ---------------------------------------------------------------------------------------------------------
# aggregation

IssueKind = Literal["idle", "stale", "never_reported", "fewer_gpus", "more_gpus", "unexpected_node",
                    "no_nvidia_smi", "ended"]


@dataclass(frozen=True)
class IdleGpu:
    node: str
    index: int
    since: float
    duration_s: float

    def describe(self) -> str:
        return f"{self.node} GPU {self.index}: 0% for {int(self.duration_s)} s"


@dataclass(frozen=True)
class GpuIssue:
    kind: IssueKind
    node: str
    message: str
    index: int | None = None


@dataclass(frozen=True)
class JobGpuSummary:
    """Averages over the fresh, allocated GPUs' latest samples (None when nothing is known)."""

    gpus: int
    nodes: int
    util_gpu_mean: float | None
    util_mem_mean: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None
    power_w: float | None
    simulated: bool


class GpuView(Protocol):
    """What the GPU pane draws from: the watch step's :class:`GpuBoard`, or the job's own sample files
    (:class:`ntui.core.gpu.samples.SampleBoard`)."""

    @property
    def interval_s(self) -> float: ...

    @property
    def history(self) -> int: ...

    @property
    def expected(self) -> dict[str, tuple[int, ...]]: ...

    @property
    def nodes(self) -> list[str]: ...

    def latest(self) -> dict[str, dict[int, GpuSample]]: ...

    def util_series(self, node: str, index: int, points: int) -> tuple[float | None, ...]:
        """At most ``points`` utilisation values, oldest first, for the sparkline."""
        ...

    def issues(self, now: float | None = None) -> list[GpuIssue]: ...

    def summary(self, now: float | None = None) -> JobGpuSummary: ...

    def tool(self, node: str) -> str:
        """The GPU tool that reports ``node``: nvidia-smi, amd-smi, rocm-smi or xpu-smi."""
        ...


@dataclass
class _GpuState:
    latest: GpuSample
    last_seen: float
    zero_since: float | None
    util_hist: deque[float | None]
    mem_hist: deque[float | None]


class GpuBoard:
    """Fed the watch step's lines; holds per node per GPU the latest sample and a bounded history.

    Times come from ``clock`` (default ``time.monotonic``) or the ``now`` arguments, so tests drive them.
    ``expected`` is ``gres_by_node``: node -> physical GPU indices allocated there (``scontrol show job -d``).
    """

    def __init__(
        self,
        task_nodes: Sequence[str] = (),
        *,
        expected: Mapping[str, tuple[int, ...]] | None = None,
        interval_s: float = 2.0,
        history: int = 120,
        idle_after_s: float = 60.0,
        stale_after_intervals: int = 3,
        clock: Callable[[], float] = time.monotonic,
        max_messages: int = 50,
    ) -> None:
        if interval_s <= 0 or history < 1 or stale_after_intervals < 1:
            raise ValueError("interval_s, history and stale_after_intervals must be positive")
        self.task_nodes = tuple(task_nodes)
        self.expected: dict[str, tuple[int, ...]] = dict(expected or {})
        self.interval_s = float(interval_s)
        self.history = history
        self.idle_after_s = float(idle_after_s)
        self.stale_after_s = stale_after_intervals * self.interval_s
        self._clock = clock
        self.started = clock()
        self._gpus: dict[str, dict[int, _GpuState]] = {}
        #: non-sample output (srun messages, nvidia-smi errors), newest last
        self.messages: deque[str] = deque(maxlen=max_messages)

    # -- feeding --------------------------------------------------------------------------------------

    def feed(self, line: str, now: float | None = None) -> GpuSample | None:
        sample = parse_gpu_line(line, self.task_nodes)
        if sample is None:
            text = line.strip()
            if text:
                self.messages.append(text)
            return None
        self.add(sample, now)
        return sample

    def feed_many(self, lines: Iterable[str], now: float | None = None) -> list[GpuSample]:
        out: list[GpuSample] = []
        for line in lines:
            s = self.feed(line, now)
            if s is not None:
                out.append(s)
        return out

    def add(self, sample: GpuSample, now: float | None = None) -> None:
        t = self._clock() if now is None else now
        per_node = self._gpus.setdefault(sample.node, {})
        st = per_node.get(sample.index)
        if st is None:
            st = _GpuState(
                latest=sample,
                last_seen=t,
                zero_since=None,
                util_hist=deque(maxlen=self.history),
                mem_hist=deque(maxlen=self.history),
            )
            per_node[sample.index] = st
        st.latest = sample
        st.last_seen = t
        if sample.util_gpu is not None and sample.util_gpu <= 0.0:
            if st.zero_since is None:
                st.zero_since = t
        else:
            st.zero_since = None  # busy, or unknown: not provably idle
        st.util_hist.append(sample.util_gpu)
        frac = sample.mem_fraction
        st.mem_hist.append(None if frac is None else 100.0 * frac)

    # -- queries --------------------------------------------------------------------------------------

    def _now(self, now: float | None) -> float:
        return self._clock() if now is None else now

    def tool(self, node: str) -> str:
        """The watch step runs nvidia-smi on every node."""
        return "nvidia-smi"

    @property
    def nodes(self) -> list[str]:
        """Nodes in task order, then expected ones, then any others that reported."""
        seen: dict[str, None] = dict.fromkeys(self.task_nodes)
        seen.update(dict.fromkeys(self.expected))
        seen.update(dict.fromkeys(self._gpus))
        return list(seen)

    def latest(self) -> dict[str, dict[int, GpuSample]]:
        return {node: {i: st.latest for i, st in sorted(g.items())} for node, g in self._gpus.items()}

    def sample(self, node: str, index: int) -> GpuSample | None:
        st = self._gpus.get(node, {}).get(index)
        return st.latest if st else None

    def util_history(self, node: str, index: int) -> tuple[float | None, ...]:
        st = self._gpus.get(node, {}).get(index)
        return tuple(st.util_hist) if st else ()

    def util_series(self, node: str, index: int, points: int) -> tuple[float | None, ...]:
        """The last ``points`` samples of :meth:`util_history` (the sparkline)."""
        return self.util_history(node, index)[-points:] if points > 0 else ()

    def mem_history(self, node: str, index: int) -> tuple[float | None, ...]:
        """Memory used, percent of total, per sample."""
        st = self._gpus.get(node, {}).get(index)
        return tuple(st.mem_hist) if st else ()

    def _fresh(self, node: str, now: float) -> dict[int, _GpuState]:
        return {i: st for i, st in self._gpus.get(node, {}).items() if now - st.last_seen <= self.stale_after_s}

    def _allocated(self, node: str, fresh: Mapping[int, _GpuState]) -> dict[int, _GpuState]:
        want = self.expected.get(node)
        if want is not None and len(fresh) > len(want) and set(want) <= set(fresh):
            return {i: fresh[i] for i in want}
        return dict(fresh)

    def idle_gpus(self, now: float | None = None) -> list[IdleGpu]:
        """GPUs reporting 0% utilisation continuously for at least ``idle_after_s`` (fresh ones only)."""
        t = self._now(now)
        out: list[IdleGpu] = []
        for node in self.nodes:
            for i, st in sorted(self._allocated(node, self._fresh(node, t)).items()):
                if st.zero_since is not None and t - st.zero_since >= self.idle_after_s:
                    out.append(IdleGpu(node, i, st.zero_since, t - st.zero_since))
        return out

    def stale_nodes(self, now: float | None = None) -> list[str]:
        """Nodes that reported before but not within ``stale_after_intervals`` intervals."""
        t = self._now(now)
        return [n for n in self.nodes if n in self._gpus and not self._fresh(n, t)]

    def missing_nodes(self, now: float | None = None) -> list[str]:
        """Expected / task nodes that never reported, once that has lasted ``stale_after_intervals``."""
        t = self._now(now)
        if t - self.started < self.stale_after_s:
            return []
        return [n for n in self.nodes if n not in self._gpus and (n in self.expected or n in self.task_nodes)]

    def issues(self, now: float | None = None) -> list[GpuIssue]:
        t = self._now(now)
        out: list[GpuIssue] = []
        for node in self.missing_nodes(t):
            out.append(GpuIssue("never_reported", node, f"{node}: no GPU data yet"))
        for node in self.stale_nodes(t):
            ago = min(t - st.last_seen for st in self._gpus[node].values())
            out.append(GpuIssue("stale", node, f"{node}: no GPU data for {int(ago)} s"))
        for node in self.nodes:
            fresh = self._fresh(node, t)
            if not fresh:
                continue
            if self.expected and node not in self.expected:
                out.append(GpuIssue("unexpected_node", node, f"{node}: reports GPUs but has none allocated"))
                continue
            want = self.expected.get(node)
            if want is None:
                continue
            if len(fresh) < len(want):
                out.append(
                    GpuIssue("fewer_gpus", node, f"{node}: {len(fresh)} of {len(want)} allocated GPUs reporting")
                )
            elif not want:  # a job without GPUs: what nvidia-smi shows is not the job's
                out.append(GpuIssue("more_gpus", node,
                                    f"{node}: no GPUs allocated; nvidia-smi shows {len(fresh)}, not the job's"))
            elif len(fresh) > len(want):
                out.append(GpuIssue("more_gpus", node, f"{node}: {len(fresh)} GPUs visible, {len(want)} allocated"))
        for idle in self.idle_gpus(t):
            out.append(GpuIssue("idle", idle.node, idle.describe(), idle.index))
        return out

    def summary(self, now: float | None = None) -> JobGpuSummary:
        t = self._now(now)
        states: list[_GpuState] = []
        nodes = 0
        for node in self.nodes:
            alloc = self._allocated(node, self._fresh(node, t))
            if alloc:
                nodes += 1
                states.extend(alloc.values())
        samples = [st.latest for st in states]

        def mean(values: list[float | None]) -> float | None:
            known = [v for v in values if v is not None]
            return sum(known) / len(known) if known else None

        def total(values: list[float | None]) -> float | None:
            known = [v for v in values if v is not None]
            return sum(known) if known else None

        return JobGpuSummary(
            gpus=len(samples),
            nodes=nodes,
            util_gpu_mean=mean([s.util_gpu for s in samples]),
            util_mem_mean=mean([s.util_mem for s in samples]),
            mem_used_mib=total([s.mem_used_mib for s in samples]),
            mem_total_mib=total([s.mem_total_mib for s in samples]),
            power_w=total([s.power_w for s in samples]),
            simulated=any(s.simulated for s in samples),
        )


def no_gpus_allocated(expected: Mapping[str, tuple[int, ...]] | None) -> bool:
    """True when the allocation is known and holds no GPU on any node (a CPU job): whatever nvidia-smi
    shows on its nodes is not the job's."""
    return expected is not None and bool(expected) and not any(expected.values())


_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Iterable[float | None], lo: float = 0.0, hi: float = 100.0) -> str:
    """``[0, 50, 100, None]`` -> ``"▁▅█ "`` (unknown values are blanks)."""
    span = hi - lo if hi > lo else 1.0
    out: list[str] = []
    for v in values:
        if v is None:
            out.append(" ")
            continue
        x = min(max((v - lo) / span, 0.0), 1.0)
        out.append(_BARS[min(len(_BARS) - 1, int(x * (len(_BARS) - 1) + 0.5))])
    return "".join(out)
