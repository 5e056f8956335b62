"""The GPU pane's file source: a job's own sample files (:mod:`ntui.core.compose.sampler`) as live per-GPU snapshots.

One responsibility: turning the files of one job into what the pane draws from the watch step (a
:class:`~ntui.core.gpu.smi.GpuView`: per node, per GPU the latest :class:`~ntui.core.gpu.smi.GpuSample`, a sparkline,
issues and a job summary), with no step and no Slurm RPC.

* **Reading.** :class:`~ntui.core.gpu.sampletail.SampleTail` reads each node's file at most once per sampling
  interval, only the new bytes (the shared descriptor budget of the log watcher applies); the first read
  (:meth:`SampleBoard.load`) takes every file whole, so the history starts at the job's first sample.
* **Parsing** is :class:`ntui.core.gpu.usage.NodeSampleReader`'s (the one reader of the format): the same
  accumulators as ``ntui report``, so the pane and the report agree. Memory is the reader's (per GPU a
  101-bin histogram and at most 512 time buckets whose width doubles as the job goes on): a 24 h job costs the
  same as a 10 min one. The sparkline covers the whole run, resampled to the width it is drawn at.
* **States** come from the files: a header with ``status=no-nvidia-smi`` ("no nvidia-smi on NODE"), the end
  line ("sampling ended"; every node ended = the job's work ended), a node whose samples stopped while the others
  go on (stale, measured on the samples' own clock: the nodes' clocks, not this host's, so an ended job read a
  day later is not "stale"), GPUs idle for most of the run (the report's thresholds).

Node files that appear later (a node whose sampler started late) are found by listing the directory at most
every :data:`LIST_EVERY_S` while some node is still sampling. Not thread-safe: one thread polls and reads
(the pane's worker, under the pane's lock).
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from ntui.core.gpu.sampletail import RemoteReads, SampleTail
from ntui.core.gpu.smi import GpuIssue, GpuSample, JobGpuSummary, parse_number
from ntui.core.gpu.usage import (
    IDLE_GPU_FRACTION,
    IDLE_UTIL_PERCENT,
    MIN_SAMPLES,
    NO_TOOL_WORDS,
    NodeSampleReader,
    sample_time,
)
from ntui.core.jobfiles.samplefiles import DEFAULT_INTERVAL_S, SAMPLE_SUFFIX, find_sample_files, sample_prefix
from ntui.core.logs.fdbudget import FdBudget

__all__ = ["HISTORY_POINTS", "LIST_EVERY_S", "RemoteListing", "SampleBoard", "job_sample_files", "remote_sample_files"]

#: sparkline points kept ready (the pane asks for the width it draws)
HISTORY_POINTS = 120
#: how often the log directory is listed for new nodes' files while the job samples
LIST_EVERY_S = 60.0
#: a node whose newest sample is this many intervals behind the newest of the job is stale
STALE_INTERVALS = 3
#: lines held for a node before its first sample (its header); past this the node is read without one
MAX_PENDING = 64


def job_sample_files(log_dir: str, stem: str, job_id: str) -> dict[str, str]:
    """node -> sample file of a job (plain job ids only: an array task's files carry its raw job id)."""
    if not log_dir or not stem or not job_id.isdigit():
        return {}
    return find_sample_files(log_dir, stem, job_id)


class RemoteEntry(Protocol):
    """One entry of a directory of a cluster reached over ssh (:class:`ntui.core.remote.protocol.Entry`)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


class RemoteListing(RemoteReads, Protocol):
    """What a job's sample files on a cluster reached over ssh are listed and read through (its agent)."""

    def listdir(self, path: str) -> Sequence[RemoteEntry]: ...


def remote_sample_files(files: RemoteListing, log_dir: str, stem: str, job_id: str) -> dict[str, str]:
    """node -> sample file of a job on a cluster reached over ssh (one directory listing there); none when the
    directory cannot be listed (the watch step instead)."""
    if not log_dir or not stem or not job_id.isdigit():
        return {}
    prefix = sample_prefix(log_dir, stem, job_id)
    directory, _, head = prefix.rpartition("/")
    try:
        entries = files.listdir(directory or "/")
    except Exception:  # refused, or the link is down: no files known now
        return {}
    out: dict[str, str] = {}
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.kind == "f" and entry.name.startswith(head) and entry.name.endswith(SAMPLE_SUFFIX):
            node = entry.name[len(head): -len(SAMPLE_SUFFIX)]
            if node and "/" not in node:
                out[node] = f"{directory}/{entry.name}"
    return out


class SampleBoard:
    """One job's sample files as a :class:`~ntui.core.gpu.smi.GpuView` (see the module docstring)."""

    source = "samples"

    def __init__(
        self,
        job_id: str,
        log_dir: str,
        stem: str,
        files: Mapping[str, str] | None = None,
        *,
        tick_s: float = 1.0,
        budget: FdBudget | None = None,
        max_per_s: float | None = None,
        history: int = HISTORY_POINTS,
        monotonic: Callable[[], float] = _time.monotonic,
        lock: AbstractContextManager[object] | None = None,
        remote: RemoteListing | None = None,
    ) -> None:
        self.job_id = job_id
        #: held while read lines go into the readers (the UI draws under it); file IO runs outside it
        self.lock: AbstractContextManager[object] = lock if lock is not None else nullcontext()
        self._inbox: list[tuple[str, Sequence[str] | None]] = []
        #: every node ended (the tick stops polling); a plain bool, read without the lock
        self.done = False
        self.log_dir = log_dir
        self.stem = stem
        self.history = history
        self.monotonic = monotonic
        #: the files are on a cluster reached over ssh, listed and read through this (None: here)
        self.remote = remote
        found = dict(files) if files is not None else self._find()
        self._readers: dict[str, NodeSampleReader] = {}
        self._paths: dict[str, str] = dict(sorted(found.items()))
        self._pending: dict[str, list[str]] = {}  # lines before a node's first sample (header, no origin yet)
        self._lineno: dict[str, int] = {}
        self._origin: float | None = None
        self._listed = monotonic()
        self.tail = SampleTail(self._paths, DEFAULT_INTERVAL_S, tick_s=tick_s,
                               on_lines=lambda node, lines: self._inbox.append((node, lines)),
                               on_reset=lambda node: self._inbox.append((node, None)),
                               budget=budget, max_per_s=max_per_s, monotonic=monotonic, remote=remote)

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def files(self) -> dict[str, str]:
        return dict(self._paths)

    def load(self) -> None:
        """Read every file whole (the history from the job's first sample)."""
        now = self.monotonic()
        for node in list(self._paths):  # one file at a time: only one file's lines are in memory at once
            self.tail.read_nodes([node], now)
            self._apply([])
            while self.tail.tails[node].behind:
                self.tail.read_nodes([node], now)
                self._apply([])

    def poll(self, now: float | None = None) -> bool:
        """Read the files that are due (new bytes only); True when a sample or state line arrived."""
        when = self.monotonic() if now is None else now
        found: dict[str, str] = {}
        if not self.done and when - self._listed >= LIST_EVERY_S:
            self._listed = when
            found = self._find()
        for node, path in found.items():
            self.tail.add(node, path)  # the tail's own table: no reader looks at it
        got = self.tail.poll(when)
        new = {n: p for n, p in found.items() if n not in self._paths}
        self._apply(sorted(new.items()))
        return bool(got or new)

    def _find(self) -> dict[str, str]:
        """The job's sample files present now: here, else listed on the cluster."""
        if self.remote is None:
            return job_sample_files(self.log_dir, self.stem, self.job_id)
        return remote_sample_files(self.remote, self.log_dir, self.stem, self.job_id)

    def _apply(self, new_files: Sequence[tuple[str, str]]) -> None:
        """What the last read found, into the readers (under :attr:`lock`: no IO here)."""
        inbox, self._inbox = self._inbox, []
        with self.lock:
            for node, path in new_files:
                self._paths[node] = path
            for node, lines in inbox:
                if lines is None:
                    self._reset(node)
                else:
                    self._feed(node, lines)
            self._retune()
            self.done = self.ended

    def close(self) -> None:
        """Give back the held descriptors; a later read reopens each file where it left off."""
        self.tail.close()

    def _retune(self) -> None:
        """The tail reads each file once per sampling interval (the headers say which)."""
        self.tail.interval_s = max(0.1, self.interval_s)

    def _feed(self, node: str, lines: Sequence[str]) -> None:
        reader = self._readers.get(node)
        if reader is None:
            waiting = self._pending.setdefault(node, [])
            waiting.extend(lines)
            start = next((t for line in waiting if (t := sample_time(line)) is not None), None)
            if start is None and len(waiting) < MAX_PENDING:
                return  # a header only so far (no nvidia-smi, or nothing sampled yet)
            interval = _interval_of(waiting)
            if self._origin is None:
                # time 0 of every node's series: the samplers of one job start within a second or two
                self._origin = (start if start is not None else 0.0) - interval
            reader = NodeSampleReader(node, self._paths[node], interval, self._origin)
            self._readers[node] = reader
            lines = self._pending.pop(node)
        n = self._lineno.get(node, 0)
        for line in lines:
            n += 1
            reader.feed(n, line)
        self._lineno[node] = n

    def _reset(self, node: str) -> None:
        """The file shrank or was replaced: start that node over."""
        self._readers.pop(node, None)
        self._pending.pop(node, None)
        self._lineno[node] = 0

    # -- the view --------------------------------------------------------------------------------------

    def _reader(self, node: str) -> NodeSampleReader | None:
        """The node's reader; before its first sample, one over the lines so far (for the header's status)."""
        r = self._readers.get(node)
        waiting = self._pending.get(node)
        if r is None and waiting:
            r = NodeSampleReader(node, self._paths[node], _interval_of(waiting), 0.0)
            for n, line in enumerate(waiting, 1):
                r.feed(n, line)
        return r

    @property
    def interval_s(self) -> float:
        known = [r.interval for r in self._readers.values()]
        return min(known) if known else float(DEFAULT_INTERVAL_S)

    @property
    def nodes(self) -> list[str]:
        return list(self._paths)

    def tool(self, node: str) -> str:
        """The tool the node's sampler ran (its header's ``tool=``; nvidia-smi when it names none)."""
        r = self._reader(node)
        return "nvidia-smi" if r is None else r.tool

    @property
    def expected(self) -> dict[str, tuple[int, ...]]:
        """The job's GPUs per node as the sampler's header saw them (``visible=``)."""
        out: dict[str, tuple[int, ...]] = {}
        for node in self._paths:
            r = self._reader(node)
            if r is not None and r.visible is not None:
                out[node] = r.visible
        return out

    def node_status(self, node: str) -> str:
        """sampling | ended | no-nvidia-smi | no-samples (the report's words)."""
        r = self._reader(node)
        return "no-samples" if r is None else r.status

    @property
    def ended(self) -> bool:
        """Every node's sampler wrote its end line (or had no nvidia-smi): the job's work ended."""
        states = [self.node_status(n) for n in self._paths]
        return bool(states) and "ended" in states and all(s in ("ended", "no-nvidia-smi") for s in states)

    def _gpus(self, node: str) -> list[int]:
        r = self._readers.get(node)
        if r is None:
            return []
        want = set(r.visible or ())
        accs = dict(sorted(r.gpus.items()))
        if want and want < set(accs):  # no device cgroup: the node's other GPUs are not the job's
            accs = {i: a for i, a in accs.items() if i in want}
        return list(accs)

    def latest(self) -> dict[str, dict[int, GpuSample]]:
        out: dict[str, dict[int, GpuSample]] = {}
        for node in self._paths:
            r = self._readers.get(node)
            if r is None:
                continue
            samples = {i: _sample(node, i, r.gpus[i].uuid, r.gpus[i].last) for i in self._gpus(node)}
            if samples:
                out[node] = samples
        return out

    def _newest(self) -> float | None:
        times = [a.prev_raw for r in self._readers.values() for a in r.gpus.values() if a.prev_raw is not None]
        return max(times) if times else None

    def _span(self) -> float:
        """Seconds covered by the job's samples so far (from time 0 of the series)."""
        ends = [a.eff for r in self._readers.values() for a in r.gpus.values() if a.eff is not None]
        if not ends or self._origin is None:
            return 0.0
        return max(ends) - self._origin

    def util_series(self, node: str, index: int, points: int) -> tuple[float | None, ...]:
        """The whole run's utilisation in ``points`` equal slices (None where no sample)."""
        r = self._readers.get(node)
        acc = r.gpus.get(index) if r is not None else None
        if r is None or acc is None or points < 1:
            return ()
        span = self._span()
        if span <= 0:
            return ()
        n = min(points, max(1, round(span / r.interval)))  # never more points than samples
        return acc.series.points(0.0, span, n)

    def stale_nodes(self) -> list[str]:
        newest = self._newest()
        if newest is None:
            return []
        out = []
        for node in self._paths:
            r = self._readers.get(node)
            if r is None or r.status != "sampling" or not r.gpus:
                continue
            last = max(a.prev_raw or -math.inf for a in r.gpus.values())
            if newest - last > STALE_INTERVALS * r.interval:
                out.append(node)
        return out

    def issues(self, now: float | None = None) -> list[GpuIssue]:
        out: list[GpuIssue] = []
        newest = self._newest()
        all_ended = self.ended
        for node in self._paths:
            status = self.node_status(node)
            if status == "no-nvidia-smi":
                out.append(GpuIssue("no_nvidia_smi", node, f"{node}: {NO_TOOL_WORDS}"))
            elif status == "ended" and not all_ended:
                out.append(GpuIssue("ended", node, f"{node}: sampling ended"))
            elif status == "no-samples":
                out.append(GpuIssue("never_reported", node, f"{node}: no GPU samples yet"))
        if newest is not None:
            for node in self.stale_nodes():
                last = max(a.prev_raw or -math.inf for a in self._readers[node].gpus.values())
                out.append(GpuIssue("stale", node, f"{node}: no samples for {int(newest - last)} s "
                                                   "while the other nodes go on"))
        for node in self._paths:
            rd = self._readers.get(node)
            if rd is None:
                continue
            for i in self._gpus(node):
                acc = rd.gpus[i]
                if acc.util_n < MIN_SAMPLES:
                    continue
                idle = sum(acc.hist[:IDLE_UTIL_PERCENT]) / acc.util_n
                if idle >= IDLE_GPU_FRACTION:
                    out.append(GpuIssue("idle", node, f"{node} GPU {i}: idle (< {IDLE_UTIL_PERCENT} %) "
                                                      f"{100 * idle:.0f} % of the run", i))
        return out

    def summary(self, now: float | None = None) -> JobGpuSummary:
        """Averages over the latest samples of the nodes still reporting (every node once the job ended)."""
        stale = set(self.stale_nodes())
        samples = [s for node, g in self.latest().items() if node not in stale for s in g.values()]
        nodes = len({s.node for s in samples})

        def known(values: list[float | None]) -> list[float]:
            return [v for v in values if v is not None]

        util = known([s.util_gpu for s in samples])
        used = known([s.mem_used_mib for s in samples])
        total = known([s.mem_total_mib for s in samples])
        power = known([s.power_w for s in samples])
        return JobGpuSummary(
            gpus=len(samples),
            nodes=nodes,
            util_gpu_mean=sum(util) / len(util) if util else None,
            util_mem_mean=None,
            mem_used_mib=sum(used) if used else None,
            mem_total_mib=sum(total) if total else None,
            power_w=sum(power) if power else None,
            simulated=any(s.simulated for s in samples),
        )

    def messages(self) -> list[str]:
        """Lines that were not samples (with file and line), and files that could not be read."""
        out = [m for r in self._readers.values() for m in r.messages]
        return out + list(self.tail.errors().values())


def _interval_of(lines: Sequence[str]) -> float:
    for line in lines:
        if line.startswith("# ntui-gpu-samples") and " interval=" in line:
            value = parse_number(line.split(" interval=", 1)[1].split(" ", 1)[0])
            if value is not None and value > 0:
                return value
    return float(DEFAULT_INTERVAL_S)


def _sample(node: str, index: int, uuid: str, fields: Sequence[str]) -> GpuSample:
    """A data line's fields (:data:`~ntui.core.gpu.smi.SAMPLE_FIELDS` order) as the watch step's sample type."""

    def num(i: int) -> float | None:
        return parse_number(fields[i]) if i < len(fields) else None

    return GpuSample(node=node, index=index, uuid=uuid, name="", util_gpu=num(3), util_mem=None,
                     mem_used_mib=num(4), mem_total_mib=num(5), temp_c=num(7), power_w=num(6))
