"""What a quiet job's GPUs say about it: the evidence beside "no progress, no line" (:mod:`ntui.core.progress.quiet`).

From the in-job sampler's files (:mod:`ntui.core.jobfiles.samplefiles`), the samples since the job's last sign of
life against those before it:

* **spinning**: every GPU at :data:`SPIN_UTIL` % or more since then, drawing at most :data:`LOW_POWER` of the power
  it drew before: a collective that waits (NCCL's kernels poll at full utilisation, at low power);
* **waiting on the host**: every GPU at :data:`IDLE_UTIL` % or less since then: the ranks wait for data, I/O, a lock
  or a rank-0-only step, not for each other on the GPU.

Anything else (busy GPUs at full power, a mix, too few samples) says nothing: a quiet log over busy GPUs is not
called a hang by the GPUs. The power before is the job's own, so no card's limit is needed.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ntui.core.gpu.smi import parse_number
from ntui.core.gpu.usage import sample_time
from ntui.core.gpu.vendors import TickLines
from ntui.core.jobfiles.samplefiles import SAMPLE_FIELDS

__all__ = ["IDLE_UTIL", "LOW_POWER", "SPIN_UTIL", "GpuPoint", "gpu_evidence", "points_of_lines", "read_evidence"]

SPIN_UTIL = 90.0
IDLE_UTIL = 5.0
LOW_POWER = 0.6
#: Samples needed on each side of the quiet's start, per GPU.
MIN_POINTS = 2
#: Bytes read from the end of each node's file: at the default 10 s interval and 8 GPUs, about 20 minutes.
TAIL_BYTES = 256 * 1024
_INDEX, _UTIL, _POWER = (SAMPLE_FIELDS.index(f) for f in ("index", "utilization.gpu", "power.draw"))


@dataclass(frozen=True)
class GpuPoint:
    t: float
    gpu: str  # node:index
    util: float | None
    power: float | None


def points_of_lines(node: str, lines: Iterable[str]) -> list[GpuPoint]:
    """The data lines of one node's sample file (headers, end lines, partial or damaged lines skipped)."""
    out: list[GpuPoint] = []
    ticks = TickLines(node)  # another vendor's ticks as data lines
    for line in (data for raw in lines for data in ticks.feed(raw)):
        parts = line.split(",")
        if len(parts) != len(SAMPLE_FIELDS):
            continue
        t = sample_time(line)
        if t is None:
            continue
        out.append(GpuPoint(t, f"{node}:{parts[_INDEX].strip()}", parse_number(parts[_UTIL]),
                            parse_number(parts[_POWER])))
    return out


def gpu_evidence(points: Iterable[GpuPoint], since: float) -> str | None:
    """The GPUs' word on a job quiet since ``since`` (module docstring), or None."""
    before: dict[str, list[GpuPoint]] = {}
    after: dict[str, list[GpuPoint]] = {}
    for p in points:
        (after if p.t > since else before).setdefault(p.gpu, []).append(p)
    gpus = sorted(after)
    if not gpus or any(len(after[g]) < MIN_POINTS for g in gpus):
        return None
    utils = {g: [p.util for p in after[g] if p.util is not None] for g in gpus}
    if any(not u for u in utils.values()):
        return None
    if all(max(u) <= IDLE_UTIL for u in utils.values()):
        return (f"its {len(gpus)} GPU{'s' * (len(gpus) != 1)} idle since then: the ranks wait on the host (data, "
                "I/O, a lock, a rank-0-only step), not in a collective")
    if not all(min(u) >= SPIN_UTIL for u in utils.values()):
        return None
    shares = []
    for g in gpus:
        was = [p.power for p in before.get(g, []) if p.power is not None]
        now = [p.power for p in after[g] if p.power is not None]
        if len(was) < MIN_POINTS or not now or statistics.median(was) <= 0:
            return None
        shares.append(statistics.median(now) / statistics.median(was))
    if max(shares) > LOW_POWER:
        return None
    return (f"its {len(gpus)} GPU{'s' * (len(gpus) != 1)} at full utilisation on {100 * max(shares):.0f}% or less "
            "of the power they drew before: a collective spinning, waiting for a rank")


def read_evidence(files: Mapping[str, str], since: float, *, tail_bytes: int = TAIL_BYTES) -> str | None:
    """:func:`gpu_evidence` from the end of each node's sample file (node -> path); None when none can be read."""
    points: list[GpuPoint] = []
    for node, path in files.items():
        try:
            with open(path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - tail_bytes))
                data = f.read(tail_bytes)
        except OSError:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        points += points_of_lines(node, lines[1:] if size > tail_bytes else lines)  # the first may be cut
    return gpu_evidence(points, since) if points else None
