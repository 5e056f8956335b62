"""A running job gone quiet: no progress and no line for much longer than its own usual interval.

The signs of life are the progress series' points (each with when it was printed, or read) and the rank log's last
write. A job is *quiet* when the last of them is older than :data:`QUIET_FACTOR` times its usual interval between
points (the median of its recent ones), and never before :data:`QUIET_FLOOR_S`: a job that prints a step an hour
is quiet after ten hours, one that printed every second after five minutes. A slow job that still moves is never
quiet (each point is a sign of life); a job with no point yet is judged by its log's writes alone, after twice the
floor. Pure: the caller gives the time.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ntui.core.progress.lines import Pattern
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Series
from ntui.core.slurm.durations import format_span

__all__ = ["QUIET_FACTOR", "QUIET_FLOOR_S", "Quiet", "log_quiet", "quiet", "usual_interval"]

#: Never quiet before this many seconds without a sign of life.
QUIET_FLOOR_S = 300.0
#: Quiet after this many of the job's own usual intervals.
QUIET_FACTOR = 10.0
_RECENT = 30  # the intervals the usual one is the median of


@dataclass(frozen=True)
class Quiet:
    """How long a job has been quiet, against its usual interval, and where it stopped."""

    last: float  # the last sign of life (epoch seconds)
    for_s: float
    usual_s: float | None  # its usual interval between points (None: no progress series)
    step: int | None  # the last step seen

    @property
    def words(self) -> str:
        """``quiet for 12 min: no progress since step 4,210 (it printed one every 4 s)``."""
        head = f"quiet for {format_span(self.for_s)}"
        if self.step is None:
            return f"{head}: no line in its log since then"
        usual = f" (it printed one every {format_span(self.usual_s)})" if self.usual_s else ""
        return f"{head}: no progress since step {self.step:,}{usual}"


def usual_interval(times: Sequence[float]) -> float | None:
    """The median interval between the last distinct times of ``times`` (None: fewer than three)."""
    distinct: list[float] = []
    for t in times:
        if not distinct or t > distinct[-1]:
            distinct.append(t)
    recent = distinct[-_RECENT - 1:]
    if len(recent) < 3:
        return None
    return statistics.median(b - a for a, b in zip(recent, recent[1:], strict=False))


def quiet(series: Series | None, last_write: float | None, now: float, *, floor_s: float = QUIET_FLOOR_S,
          factor: float = QUIET_FACTOR) -> Quiet | None:
    """The job's quiet at ``now``, or None while it shows signs of life (see the module docstring)."""
    times = [s.time for s in series.samples] if series is not None else []
    signs = [t for t in (times[-1] if times else None, last_write) if t is not None]
    if not signs:
        return None
    last = max(signs)
    usual = usual_interval(times)
    limit = max(floor_s, factor * usual) if usual is not None else 2 * floor_s
    idle = now - last
    if idle <= limit:
        return None
    return Quiet(last, idle, usual, series.step if series is not None else None)


def log_quiet(path: Path, pattern: Pattern | None, now: float, *, floor_s: float = QUIET_FLOOR_S) -> Quiet | None:
    """A running job's quiet read from its rank log (its series and its last write), or None: it shows signs of
    life, or the log cannot be read (no log is no evidence)."""
    try:
        return quiet(read_progress(path, pattern=pattern), path.stat().st_mtime, now, floor_s=floor_s)
    except OSError:
        return None
