"""GPU usage report from the in-job sampler's files (:mod:`ntui.core.compose.sampler`), streamed in O(1) memory per GPU.

One responsibility: the sample file format and the per-GPU statistics over it (read, summarised, judged).

**File format** (one file per node, ``<log_dir>/<stem>-<jobid>-gpu-<node>.csv``)::

    # ntui-gpu-samples v1 job=123 node=nid001 interval=10 visible=0,1,2,3 status=sampling fields=timestamp,...
    2026/11/30 09:27:59.123, 0, GPU-3f1..., 97, 61234, 81559, 402.17, 61
    ...
    # ntui-gpu-samples end

The header names node and interval (a second header in the same file is a restart: requeue); ``visible=`` is the
step's visible-devices variable (CUDA, ROCR or ZE: the job's GPUs there; without a device cgroup the tool shows the
node's other GPUs too, and those are left out); ``status=no-gpu-tool`` (``no-nvidia-smi`` in files written before
AMD and Intel GPUs were read) says the node had no GPU tool (no samples follow). ``tool=`` names another vendor's
tool: then each snapshot is a tick, ``@ TOOL TIMESTAMP``, the tool's output and ``@.``, which
:class:`~ntui.core.gpu.vendors.TickLines` turns into data lines before anything else reads them. Data lines are
nvidia-smi's ``--query-gpu=<SAMPLE_FIELDS> --format=csv,noheader,nounits``; ``[N/A]`` and ``[Not Supported]``
values count as unknown for that statistic only. Other lines (a tool's errors, NUL garbage after a crash) are
counted and the first ones kept with their line number. A last line without a newline is still being written:
skipped.

**Time.** Each sample stands for the time since the previous sample of that GPU; a step backwards (clock jump) or
one longer than :data:`GAP_FACTOR` intervals (a gap, or a jump forwards) counts as one interval instead and is
reported. Energy (Wh) and utilisation-weighted GPU-hours integrate over these weights.

**Memory.** Per GPU: a 101-bin utilisation histogram (utilisation is an integer percent, so p50/p90 are exact),
sums and peaks, and a time series of at most ``2 x SERIES_BUCKETS`` buckets whose width doubles as the job goes
on. Nothing grows with the job's length.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from ntui.core.gpu.smi import parse_number
from ntui.core.gpu.vendors import TICK_MARK, TickLines
from ntui.core.jobfiles.samplefiles import HEADER_TAG, NO_TOOL_STATUSES, SAMPLE_FIELDS
from ntui.core.slurm.durations import format_span, format_time_limit

__all__ = [
    "GAP_FACTOR",
    "IDLE_GPU_FRACTION",
    "IDLE_UTIL_PERCENT",
    "LOW_MEMORY_PEAK_FRACTION",
    "SERIES_BUCKETS",
    "SERIES_POINTS",
    "SHORT_RUN_FRACTION",
    "STRAGGLER_DROP",
    "UsageFinding",
    "GpuStats",
    "JobFacts",
    "NodeSampleReader",
    "NO_TOOL_WORDS",
    "NodeStats",
    "UsageReport",
    "build_report",
    "findings",
    "read_node_file",
    "sample_time",
    "suggest_time_limit",
]

# ---------------------------------------------------------------------------------------------------------
# Thresholds: the one place that says what counts as waste.

#: A sample below this utilisation (percent) is idle.
IDLE_UTIL_PERCENT = 5
#: A GPU idle for at least this share of its samples is a finding.
IDLE_GPU_FRACTION = 0.5
#: Peak memory below this share of the GPU's memory, on every GPU, is a finding ("a bigger batch fits").
LOW_MEMORY_PEAK_FRACTION = 0.5
#: An ended job that used less than this share of its time limit gets a shorter ``time`` suggested.
SHORT_RUN_FRACTION = 0.5
#: Suggested time limit = elapsed x this margin, rounded up to :data:`TIME_ROUND_S`.
TIME_MARGIN = 1.5
TIME_ROUND_S = 15 * 60
#: A node whose mean power (or utilisation) is this much below the other nodes' mean is a straggler.
STRAGGLER_DROP = 0.25
#: Findings need at least this many samples per GPU (a job that ran a minute says little).
MIN_SAMPLES = 6
#: A step between samples longer than this many intervals is a gap (or a clock jump forwards).
GAP_FACTOR = 3.0
#: Time-series buckets kept per GPU while reading (at most twice this many), and points in the report.
SERIES_BUCKETS = 256
SERIES_POINTS = 120
#: Non-sample lines kept per file, with their line number (the rest are only counted).
KEEP_MESSAGES = 5

_FIELD_COUNT = len(SAMPLE_FIELDS)
_I_TS, _I_INDEX, _I_UUID, _I_UTIL, _I_MEM, _I_MEMTOT, _I_POWER, _I_TEMP = range(_FIELD_COUNT)


# ---------------------------------------------------------------------------------------------------------
# timestamps


class _Clock:
    """``2026/11/30 09:27:59.123`` -> seconds (the node's local time read as UTC: only differences matter).
    Caches the date (one ``timegm`` per day) and the last stamp (the GPUs of a block share one)."""

    def __init__(self) -> None:
        self._day_text = ""
        self._day_s = 0.0
        self._last_text = ""
        self._last_s: float | None = None

    def parse(self, text: str) -> float | None:
        if text == self._last_text:
            return self._last_s
        value: float | None
        try:
            day, _, clock = text.strip().partition(" ")
            if day != self._day_text:
                y, mo, d = day.split("/")
                self._day_s = float(calendar.timegm((int(y), int(mo), int(d), 0, 0, 0, 0, 0, 0)))
                self._day_text = day
            h, mi, s = clock.split(":")
            value = self._day_s + int(h) * 3600 + int(mi) * 60 + float(s)
            if not math.isfinite(value):
                value = None
        except ValueError:
            value = None
        self._last_text, self._last_s = text, value
        return value


# ---------------------------------------------------------------------------------------------------------
# time series


class _Series:
    """Mean utilisation per time bucket; buckets double in width (pairs merge) to stay under 2 x ``limit``."""

    __slots__ = ("width", "sums", "counts", "limit")

    def __init__(self, width: float, limit: int = SERIES_BUCKETS) -> None:
        self.width = width
        self.sums: list[float] = []
        self.counts: list[int] = []
        self.limit = limit

    def add(self, offset_s: float, value: float) -> None:
        i = int(offset_s // self.width) if offset_s > 0 else 0
        if i < len(self.sums):  # the common case: the current bucket
            self.sums[i] += value
            self.counts[i] += 1
            return
        while i >= 2 * self.limit:
            self._halve()
            i = int(max(0.0, offset_s) // self.width)
        if i >= len(self.sums):
            grow = i + 1 - len(self.sums)
            self.sums.extend([0.0] * grow)
            self.counts.extend([0] * grow)
        self.sums[i] += value
        self.counts[i] += 1

    def _halve(self) -> None:
        n = len(self.sums)
        self.sums = [sum(self.sums[k : k + 2]) for k in range(0, n, 2)]
        self.counts = [sum(self.counts[k : k + 2]) for k in range(0, n, 2)]
        self.width *= 2

    def points(self, start_offset_s: float, span_s: float, n: int) -> tuple[float | None, ...]:
        """``n`` means over equal slices of ``[start_offset_s, start_offset_s + span_s)``; None where no sample."""
        if n < 1 or span_s <= 0:
            return ()
        out: list[float | None] = []
        step = span_s / n
        for k in range(n):
            lo = start_offset_s + k * step
            hi = lo + step
            # the buckets whose middle lies in the slice; the one under the slice's middle when none does
            a = math.ceil(lo / self.width - 0.5)
            b = math.ceil(hi / self.width - 0.5)
            if b <= a:
                a = int((lo + hi) / 2 // self.width)
                b = a + 1
            s = sum(self.sums[a:b])
            c = sum(self.counts[a:b])
            out.append(s / c if c else None)
        return tuple(out)


# ---------------------------------------------------------------------------------------------------------
# per-GPU accumulator


class _GpuAcc:
    __slots__ = (
        "node", "index", "uuid", "samples", "hist", "util_n", "util_sum", "mem_peak", "mem_total", "power_n",
        "power_sum", "energy_ws", "covered_s", "busy_pct_s", "prev_raw", "eff", "series",
        "gaps", "longest_gap_s", "backwards", "last",
    )  # fmt: skip

    def __init__(self, node: str, index: int, uuid: str, interval: float) -> None:
        self.node = node
        self.index = index
        self.uuid = uuid
        self.samples = 0
        self.hist = [0] * 101
        self.util_n = 0
        self.util_sum = 0.0
        self.mem_peak: float | None = None
        self.mem_total: float | None = None
        self.power_n = 0
        self.power_sum = 0.0
        self.energy_ws = 0.0
        self.covered_s = 0.0
        self.busy_pct_s = 0.0  # utilisation (percent) x time
        self.prev_raw: float | None = None
        self.eff: float | None = None  # this GPU's sample clock (raw time, jumps removed)
        self.series = _Series(max(interval, 1.0))
        self.gaps = 0
        self.longest_gap_s = 0.0
        self.backwards = 0
        #: the fields of this GPU's latest data line (the live view shows them; the report does not)
        self.last: list[str] = []

    def restart(self) -> None:
        """A new header (requeue): the next sample starts a new segment."""
        self.prev_raw = None

    def add(self, t: float, interval: float, origin: float, util: float | None, mem: float | None,
            mem_total: float | None, power: float | None) -> None:
        weight = interval
        prev_eff = self.eff
        if self.prev_raw is None or prev_eff is None:
            eff = t if prev_eff is None or t > prev_eff + interval else prev_eff + interval
        else:
            dt = t - self.prev_raw
            if dt <= 0:
                self.backwards += 1
            elif dt > GAP_FACTOR * interval:
                self.gaps += 1
                if dt > self.longest_gap_s:
                    self.longest_gap_s = dt
            else:
                weight = dt
            eff = prev_eff + weight
        self.prev_raw = t
        self.eff = eff
        self.samples += 1
        self.covered_s += weight
        if util is not None:
            u = int(util + 0.5)
            if u > 100:
                u = 100
            elif u < 0:
                u = 0
            self.hist[u] += 1
            self.util_n += 1
            self.util_sum += u
            self.busy_pct_s += u * weight
            self.series.add(eff - weight - origin, u)
        if mem is not None and (self.mem_peak is None or mem > self.mem_peak):
            self.mem_peak = mem
        if mem_total is not None:
            self.mem_total = mem_total
        if power is not None:
            self.power_n += 1
            self.power_sum += power
            self.energy_ws += power * weight

    def percentile(self, q: float) -> int | None:
        if not self.util_n:
            return None
        rank = max(1, math.ceil(q * self.util_n))
        seen = 0
        for value, count in enumerate(self.hist):
            seen += count
            if seen >= rank:
                return value
        return 100


# ---------------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class GpuStats:
    node: str
    index: int
    uuid: str
    samples: int
    covered_s: float
    util_mean: float | None
    util_p50: int | None
    util_p90: int | None
    idle_fraction: float | None
    mem_peak_mib: float | None
    mem_total_mib: float | None
    power_mean_w: float | None
    energy_wh: float | None
    busy_gpu_h: float
    util_series: tuple[float | None, ...]

    @property
    def mem_peak_fraction(self) -> float | None:
        if self.mem_peak_mib is None or not self.mem_total_mib:
            return None
        return self.mem_peak_mib / self.mem_total_mib

    @property
    def simulated(self) -> bool:
        return self.uuid.startswith("GPU-SIM-")


#: What a node without any GPU tool gets, after its name.
NO_TOOL_WORDS = "no GPU tool on the node (nvidia-smi, amd-smi, rocm-smi, xpu-smi): no GPU samples"


@dataclass(frozen=True)
class NodeStats:
    node: str
    path: str
    #: sampling | ended | no-nvidia-smi | no-samples | missing
    status: str
    interval_s: float | None
    gpus: tuple[GpuStats, ...]
    messages: tuple[str, ...] = ()
    bad_lines: int = 0
    gaps: int = 0
    longest_gap_s: float = 0.0
    clock_backwards: int = 0
    restarts: int = 0
    #: GPUs the tool showed that are not the job's (no device cgroup; the header's ``visible=``): not counted
    other_gpus: tuple[int, ...] = ()
    #: the tool that sampled the node: nvidia-smi, amd-smi, rocm-smi or xpu-smi
    tool: str = "nvidia-smi"

    @property
    def util_mean(self) -> float | None:
        known = [g.util_mean for g in self.gpus if g.util_mean is not None]
        return sum(known) / len(known) if known else None

    @property
    def power_mean_w(self) -> float | None:
        """Mean power of the node's GPUs together."""
        known = [g.power_mean_w for g in self.gpus if g.power_mean_w is not None]
        return sum(known) if known else None

    @property
    def energy_wh(self) -> float | None:
        known = [g.energy_wh for g in self.gpus if g.energy_wh is not None]
        return sum(known) if known else None

    def why_no_data(self) -> str | None:
        if self.gpus:
            return None
        if self.status == "missing":
            return f"{self.node}: no sample file ({self.path})"
        if self.status == "no-nvidia-smi":
            return f"{self.node}: {NO_TOOL_WORDS}"
        first = f": {self.messages[0]}" if self.messages else ""
        return f"{self.node}: no GPU samples in {self.path}{first}"


@dataclass(frozen=True)
class UsageFinding:
    kind: str  # idle-gpu | low-memory | short-run | straggler | low-utilisation
    message: str
    numbers: dict[str, float] = field(default_factory=dict)
    #: a preset override (``--set KEY=VALUE``) that fixes it, when there is one
    fix: str | None = None


@dataclass(frozen=True)
class JobFacts:
    """What Slurm says about the job (any may be unknown)."""

    job_id: str
    state: str | None = None
    finished: bool = False
    elapsed_s: float | None = None
    time_limit_s: float | None = None
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class UsageReport:
    job_id: str
    state: str | None
    finished: bool
    nodes: tuple[NodeStats, ...]
    elapsed_s: float | None
    elapsed_source: str  # slurm | samples | none
    time_limit_s: float | None
    gpus: int
    gpu_hours_allocated: float | None
    gpu_hours_busy: float | None
    util_mean: float | None
    energy_wh: float | None
    series_span_s: float
    findings: tuple[UsageFinding, ...]
    simulated: bool

    @property
    def all_gpus(self) -> tuple[GpuStats, ...]:
        return tuple(g for n in self.nodes for g in n.gpus)

    @property
    def no_data_reasons(self) -> tuple[str, ...]:
        return tuple(r for n in self.nodes if (r := n.why_no_data()) is not None)


# ---------------------------------------------------------------------------------------------------------
# reading


def _header_fields(line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in line[len(HEADER_TAG) :].split():
        key, eq, value = word.partition("=")
        if eq:
            out[key] = value
    return out


def sample_time(line: str) -> float | None:
    """The timestamp of one data line or tick (None for a header, an end line or garbage)."""
    if line[:1] == "#":
        return None
    if line.startswith(TICK_MARK):
        words = line[len(TICK_MARK):].strip().split(" ", 1)
        return _Clock().parse(words[1]) if len(words) == 2 else None
    return _Clock().parse(line.split(",", 1)[0])


def first_sample_time(stream: BinaryIO, limit_lines: int = 1000) -> float | None:
    """The timestamp of the first data line (scans at most ``limit_lines``)."""
    clock = _Clock()
    for n, raw in enumerate(stream):
        if n >= limit_lines:
            break
        if raw.startswith(b"#") or not raw.endswith(b"\n"):
            continue
        line = raw.decode("utf-8", "replace")
        t = sample_time(line) if line.startswith(TICK_MARK) else clock.parse(line.split(",", 1)[0])
        if t is not None:
            return t
    return None


class NodeSampleReader:
    """One node's file, line by line (``feed``), into per-GPU accumulators: the one reader of the format, used
    whole by the report and incrementally by the GPU pane's file source (:mod:`ntui.core.gpu.samples`)."""

    def __init__(self, node: str, path: str, interval: float, origin: float) -> None:
        self.node = node
        self.path = path
        self.interval = interval
        self.origin = origin
        self.status = "no-samples"
        self.gpus: dict[int, _GpuAcc] = {}
        self.messages: list[str] = []
        self.bad = 0
        self.restarts = 0
        self.headers = 0
        self.clock = _Clock()
        #: the step's visible-devices variable (the job's GPUs on this node) when it is a list of indices
        self.visible: tuple[int, ...] | None = None
        self.ticks = TickLines(node)
        #: a short line, judged by the next one: damage, unless it is the sampler's end line (the stop cut it)
        self._held: tuple[int, str] | None = None
        #: the tool that samples this node (the header's tool=; nvidia-smi when the header names none)
        self.tool = "nvidia-smi"

    def _bad(self, lineno: int, why: str) -> None:
        self.bad += 1
        if len(self.messages) < KEEP_MESSAGES:
            self.messages.append(f"{self.path}:{lineno}: {why}")

    def feed(self, lineno: int, line: str) -> None:
        """One whole line (with its newline). The hot path: one split, cached timestamps, ``float``."""
        if line[:1] == "@" or self.ticks.inside:  # another vendor's tool: its ticks become data lines
            for data in self.ticks.feed(line):
                self._feed(lineno, data)
            if self.ticks.not_understood is not None:
                tool, first = self.ticks.not_understood
                self.ticks.not_understood = None
                self._bad(lineno, f"{tool}'s output not understood: {first}")
            return
        self._feed(lineno, line)

    def _feed(self, lineno: int, line: str) -> None:
        held, self._held = self._held, None
        if held is not None and not (line.startswith(HEADER_TAG) and line[len(HEADER_TAG):].strip()[:3] == "end"):
            self._bad(*held)  # a short line is damage unless the sampler's stop cut it (its end line follows)
        if line[:1] == "#":
            if line.startswith(HEADER_TAG):
                self._header(line.rstrip("\r\n"))
            return
        parts = line.split(",")
        if len(parts) != _FIELD_COUNT:
            shown = line.strip()
            if shown:
                shown = shown.replace("\x00", "\\0")
                why = (lineno, f"not a sample ({len(parts)} fields, {_FIELD_COUNT} expected): {shown[:120]}")
                if len(parts) < _FIELD_COUNT and self.clock.parse(parts[_I_TS]) is not None:
                    self._held = why  # the start of a sample: cut by the stop if the end line comes next
                else:
                    self._bad(*why)
            return
        t = self.clock.parse(parts[_I_TS])
        if t is None:
            self._bad(lineno, f"field timestamp: {parts[_I_TS].strip()[:40]!r} is not a time")
            return
        try:
            idx = int(parts[_I_INDEX])
        except ValueError:
            idx = -1
        if idx < 0:
            self._bad(lineno, f"field index: {parts[_I_INDEX].strip()[:40]!r} is not a GPU index")
            return
        acc = self.gpus.get(idx)
        if acc is None:
            uuid = parts[_I_UUID].strip()
            acc = _GpuAcc(self.node, idx, "" if uuid.startswith("[") else uuid, self.interval)
            self.gpus[idx] = acc
            if self.status == "no-samples":
                self.status = "sampling"
        acc.last = parts
        try:  # fast path: four plain numbers (parse_number's rule, without its per-field call)
            util, mem, total, power = (float(parts[_I_UTIL]), float(parts[_I_MEM]), float(parts[_I_MEMTOT]),
                                       float(parts[_I_POWER]))
            if not math.isfinite(util + mem + total + power):
                raise ValueError
        except ValueError:  # [N/A], [Not Supported] ...: unknown for that statistic only
            acc.add(t, self.interval, self.origin, parse_number(parts[_I_UTIL]), parse_number(parts[_I_MEM]),
                    parse_number(parts[_I_MEMTOT]), parse_number(parts[_I_POWER]))
            return
        acc.add(t, self.interval, self.origin, util, mem, total, power)

    def _header(self, line: str) -> None:
        fields = _header_fields(line)
        status = fields.get("status", "")
        if line[len(HEADER_TAG) :].strip().startswith("end"):
            if self.status in ("sampling", "no-samples") and self.gpus:
                self.status = "ended"
            return
        self.headers += 1
        if self.headers > 1:
            self.restarts += 1
            for acc in self.gpus.values():
                acc.restart()
        self.tool = fields.get("tool", "nvidia-smi")
        if status in NO_TOOL_STATUSES and not self.gpus:
            self.status = "no-nvidia-smi"
        elif status == "sampling" or self.status == "ended":
            self.status = "sampling"
        visible = fields.get("visible", "").split(",")
        self.visible = tuple(int(v) for v in visible) if all(v.isdigit() for v in visible) else None
        wanted = fields.get("fields")
        if wanted and tuple(wanted.split(",")) != SAMPLE_FIELDS:
            self._bad(0, f"header asks fields {wanted}, this ntui reads {','.join(SAMPLE_FIELDS)}")

    def result(self, points: int, span_s: float) -> NodeStats:
        if self._held is not None:
            self._bad(*self._held)
            self._held = None
        accs = dict(sorted(self.gpus.items()))
        want = set(self.visible or ())
        others: tuple[int, ...] = ()
        if want and want < set(accs):
            # No device cgroup: nvidia-smi showed the node's other GPUs too; count the job's only.
            others = tuple(i for i in accs if i not in want)
            accs = {i: a for i, a in accs.items() if i in want}
        gpus = tuple(_gpu_stats(acc, points, span_s) for acc in accs.values())
        return NodeStats(
            node=self.node,
            path=self.path,
            status=self.status,
            interval_s=self.interval,
            gpus=gpus,
            messages=tuple(self.messages),
            bad_lines=self.bad,
            gaps=sum(a.gaps for a in self.gpus.values()),
            longest_gap_s=max((a.longest_gap_s for a in self.gpus.values()), default=0.0),
            clock_backwards=sum(a.backwards for a in self.gpus.values()),
            restarts=self.restarts,
            other_gpus=others,
            tool=self.tool,
        )


def _gpu_stats(acc: _GpuAcc, points: int, span_s: float) -> GpuStats:
    idle = sum(acc.hist[:IDLE_UTIL_PERCENT])
    return GpuStats(
        node=acc.node,
        index=acc.index,
        uuid=acc.uuid,
        samples=acc.samples,
        covered_s=acc.covered_s,
        util_mean=acc.util_sum / acc.util_n if acc.util_n else None,
        util_p50=acc.percentile(0.5),
        util_p90=acc.percentile(0.9),
        idle_fraction=idle / acc.util_n if acc.util_n else None,
        mem_peak_mib=acc.mem_peak,
        mem_total_mib=acc.mem_total,
        power_mean_w=acc.power_sum / acc.power_n if acc.power_n else None,
        energy_wh=acc.energy_ws / 3600.0 if acc.power_n else None,
        busy_gpu_h=acc.busy_pct_s / 100.0 / 3600.0,
        util_series=acc.series.points(0.0, span_s, points),
    )


def _interval_from_header(stream: BinaryIO) -> float | None:
    for n, raw in enumerate(stream):
        if n > 50:
            break
        if raw.startswith(HEADER_TAG.encode()):
            value = _header_fields(raw.decode("utf-8", "replace")).get("interval", "")
            number = parse_number(value)
            if number is not None and number > 0:
                return number
    return None


def read_node_file(node: str, path: str, *, origin: float | None = None, interval_s: float | None = None,
                   points: int = SERIES_POINTS, span_s: float | None = None) -> NodeStats:
    """One node's file -> its stats. A missing or unreadable file gives ``status="missing"``."""
    return _read_nodes({node: path}, points=points, origin=origin, interval_s=interval_s, span_s=span_s)[0]


def _read_nodes(files: Mapping[str, str], *, points: int, origin: float | None = None,
                interval_s: float | None = None, span_s: float | None = None) -> list[NodeStats]:
    # Pass 1 (cheap: a few lines per file): each file's interval and first timestamp, for one time origin.
    meta: dict[str, tuple[float, float | None]] = {}
    missing: dict[str, str] = {}
    for node, path in files.items():
        try:
            with open(path, "rb") as fh:
                interval = interval_s or _interval_from_header(fh) or 10.0
                fh.seek(0)
                first = first_sample_time(fh)
        except OSError as exc:
            missing[node] = f"{path}: {exc.strerror or exc}"
            continue
        meta[node] = (interval, first)
    firsts = [f for _, f in meta.values() if f is not None]
    step = min((i for i, _ in meta.values()), default=10.0)
    # The series' time 0: the start of the period the earliest first sample stands for.
    t0 = origin if origin is not None else (min(firsts) - step if firsts else 0.0)
    # Pass 2: stream every file once.
    readers: dict[str, NodeSampleReader] = {}
    for node, (interval, _) in meta.items():
        reader = NodeSampleReader(node, files[node], interval, t0)
        try:
            with open(files[node], encoding="utf-8", errors="replace", newline="") as fh:
                for lineno, line in enumerate(fh, 1):
                    if line[-1:] != "\n":
                        break  # being written (or cut by a crash): not a whole sample
                    reader.feed(lineno, line)
        except OSError as exc:
            reader.messages.append(f"{files[node]}: {exc.strerror or exc}")
        readers[node] = reader
    ends = [a.eff for r in readers.values() for a in r.gpus.values() if a.eff is not None]
    span = span_s if span_s is not None else (max(ends) - t0 if ends else 0.0)
    out: list[NodeStats] = []
    for node, path in files.items():
        if node in readers:
            out.append(readers[node].result(points, span))
        else:
            out.append(NodeStats(node, path, "missing", None, (), messages=(missing[node],)))
    return out


# ---------------------------------------------------------------------------------------------------------
# the report


def build_report(
    files: Mapping[str, str],
    facts: JobFacts,
    *,
    expected_nodes: Sequence[str] = (),
    points: int = SERIES_POINTS,
) -> UsageReport:
    """Stats of every node's file, with the job's facts; ``expected_nodes`` without a file show as missing."""
    all_files = dict(files)
    for node in expected_nodes:
        all_files.setdefault(node, "")
    present = {n: p for n, p in all_files.items() if p}
    nodes = _read_nodes(present, points=points)
    by_name = {n.node: n for n in nodes}
    ordered: list[NodeStats] = []
    for node in sorted(all_files):
        if node in by_name:
            ordered.append(by_name[node])
        else:
            ordered.append(NodeStats(node, "", "missing", None, ()))
    gpus = [g for n in ordered for g in n.gpus]
    covered = max((g.covered_s for g in gpus), default=0.0)
    if facts.elapsed_s is not None:
        elapsed: float | None = float(facts.elapsed_s)
        source = "slurm"
    elif gpus:
        elapsed, source = covered, "samples"
    else:
        elapsed, source = None, "none"
    busy = sum(g.busy_gpu_h for g in gpus) if gpus else None
    utils = [g.util_mean for g in gpus if g.util_mean is not None]
    energies = [g.energy_wh for g in gpus if g.energy_wh is not None]
    sampled = [n for n in ordered if n.gpus]
    # Slurm no longer knows the job (no accounting): every node's sampler wrote its end line = the script ended.
    ended = facts.state is None and bool(sampled) and all(n.status == "ended" for n in sampled)
    report = UsageReport(
        job_id=facts.job_id,
        state=facts.state,
        finished=facts.finished or ended,
        nodes=tuple(ordered),
        elapsed_s=elapsed,
        elapsed_source=source,
        time_limit_s=facts.time_limit_s,
        gpus=len(gpus),
        gpu_hours_allocated=len(gpus) * elapsed / 3600.0 if gpus and elapsed is not None else None,
        gpu_hours_busy=busy,
        util_mean=sum(utils) / len(utils) if utils else None,
        energy_wh=sum(energies) if energies else None,
        series_span_s=covered,
        findings=(),
        simulated=any(g.simulated for g in gpus),
    )
    return replace(report, findings=tuple(findings(report)))


def suggest_time_limit(elapsed_s: float) -> int:
    """Elapsed x :data:`TIME_MARGIN`, rounded up to :data:`TIME_ROUND_S` (seconds)."""
    want = max(elapsed_s * TIME_MARGIN, 1.0)
    return int(math.ceil(want / TIME_ROUND_S) * TIME_ROUND_S)


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def findings(report: UsageReport) -> list[UsageFinding]:
    """Plain-words findings with their numbers and, where one exists, the ``--set`` override that fixes it."""
    out: list[UsageFinding] = []
    gpus = [g for g in report.all_gpus if g.samples >= MIN_SAMPLES]
    for g in gpus:
        if g.idle_fraction is not None and g.idle_fraction >= IDLE_GPU_FRACTION:
            out.append(UsageFinding(
                "idle-gpu",
                f"GPU {g.index} on {g.node} idle {_pct(g.idle_fraction)} of the time "
                f"(utilisation below {IDLE_UTIL_PERCENT} %; mean {g.util_mean or 0:.0f} %): "
                "is every process using its own GPU?",
                {"idle_fraction": g.idle_fraction, "util_mean": g.util_mean or 0.0, "gpu": g.index},
            ))
    fractions = [(f, g) for g in gpus if (f := g.mem_peak_fraction) is not None]
    if fractions:
        peak, top = max(fractions, key=lambda x: x[0])
        if peak < LOW_MEMORY_PEAK_FRACTION:
            total_gib = (top.mem_total_mib or 0) / 1024
            out.append(UsageFinding(
                "low-memory",
                f"peak GPU memory {_pct(peak)} of {total_gib:.0f} GiB (highest of {len(fractions)} GPUs): "
                "a bigger batch fits",
                {"peak_fraction": peak, "total_gib": total_gib},
            ))
    if (report.finished and report.elapsed_s is not None and report.time_limit_s
            and report.elapsed_s < SHORT_RUN_FRACTION * report.time_limit_s):
        used = report.elapsed_s / report.time_limit_s
        new = suggest_time_limit(report.elapsed_s)
        if new < report.time_limit_s:
            out.append(UsageFinding(
                "short-run",
                f"used {_pct(used)} of its {format_span(report.time_limit_s)} limit "
                f"({format_span(report.elapsed_s)}): `time: {format_time_limit(new)}` would start sooner (backfill)",
                {"used_fraction": used, "elapsed_s": report.elapsed_s, "time_limit_s": report.time_limit_s,
                 "suggested_s": float(new)},
                fix=f"sbatch.time={format_time_limit(new)}",
            ))
    out.extend(_stragglers(report))
    return out


def _stragglers(report: UsageReport) -> Iterable[UsageFinding]:
    nodes = [n for n in report.nodes if n.gpus and all(g.samples >= MIN_SAMPLES for g in n.gpus)]
    if len(nodes) < 2:
        return
    for metric, label, unit in (("power", "drew", "power"), ("util", "ran at", "utilisation")):
        values = {n.node: (n.power_mean_w if metric == "power" else n.util_mean) for n in nodes}
        if any(v is None for v in values.values()):
            continue
        for node, value in values.items():
            others = [v for k, v in values.items() if k != node and v is not None]
            mean_others = sum(others) / len(others)
            assert value is not None
            if mean_others > 0 and value < (1 - STRAGGLER_DROP) * mean_others:
                drop = 1 - value / mean_others
                yield UsageFinding(
                    "straggler",
                    f"{node} {label} {_pct(drop)} less {unit} than the other nodes: a straggler?",
                    {"drop": drop, "value": value, "others_mean": mean_others},
                )
        return  # power decides when known; utilisation only when power is unknown
