"""The progress of own running jobs, followed as their logs grow: one :class:`ProgressBoard` in the jobs view's
progress worker reads, every tick, what each followed log appended (at its first look, the last :data:`START_BYTES`
at once; then at most :data:`TICK_BYTES` a tick, the rest at the next), and keeps each job's
:class:`~ntui.core.progress.series.Series`. A file replaced or truncated is read again from its new end; a log that
grew more than :data:`START_BYTES` since the last tick is read from its last part (progress is about now). The view
gets an immutable :class:`ProgressView` per job. Thread-side; ticks never overlap, so the board needs no lock.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ntui.core.progress.lines import Pattern
from ntui.core.progress.read import Labels, feed_line, relabel
from ntui.core.progress.series import Sample, Series

__all__ = ["MAX_FOLLOWED", "START_BYTES", "TICK_BYTES", "ProgressBoard", "ProgressView"]

#: At most this many logs are followed (an open and a stat each a tick: the newest jobs first).
MAX_FOLLOWED = 16

#: What a log's first read takes: its last bytes (the recent bars say the step and the rate).
START_BYTES = 4 * 1024 * 1024
#: At most this much of a log is read per tick (a log that grows faster is caught up over the next ticks).
TICK_BYTES = 1024 * 1024
#: The points a view carries (the tab's chart); the series keeps more.
VIEW_POINTS = 400


@dataclass(frozen=True)
class ProgressView:
    """A job's progress as of a tick (no reference into the board's series)."""

    job_id: str
    step: int | None
    total: int | None
    epoch: float | None
    metrics: Mapping[str, float]
    samples: tuple[Sample, ...] = ()
    restarts: tuple[float, ...] = ()
    printed_rates: tuple[float, ...] = ()
    last_write: float | None = None  # the log's modification time at the tick (a sign of life: quiet.py)
    evidence: str | None = None  # another reader's word on a quiet job (its GPUs': ntui/core/gpu/quiet.py)
    #: the board's series as of the tick, without its points (what the log said of the run's total, its unit, its
    #: end or stop): the tab, the queue row and ``ntui progress`` read the same run (None: a view made from points)
    state: Series | None = field(default=None, compare=False, repr=False)

    def series(self) -> Series:
        """A series holding this view's points (for :func:`~ntui.core.progress.series.estimate`), and what the log
        said beside them where the view has it."""
        series = copy.copy(self.state) if self.state is not None else Series(total=self.total, epoch=self.epoch)
        series.samples, series.restarts, series.metrics = list(self.samples), list(self.restarts), dict(self.metrics)
        series.printed_rates = list(self.printed_rates)
        return series


@dataclass
class _Follower:
    path: Path
    pattern: Pattern | None
    series: Series = field(default_factory=Series)
    offset: int = -1  # -1: not read yet
    inode: int | None = None
    rest: bytes = b""
    labels: Labels = field(default_factory=Labels)  # the launcher's label of its last line (read.relabel)
    last_write: float | None = None

    def poll(self) -> bool:
        """Read what was appended; True when the series changed."""
        try:
            st = self.path.stat()
        except OSError:
            return False
        if self.inode is not None and (st.st_ino != self.inode or st.st_size < self.offset):
            self.offset, self.rest = -1, b""  # replaced or truncated: from its new end
        self.inode = st.st_ino
        self.last_write = st.st_mtime
        budget = TICK_BYTES
        if self.offset < 0 or st.st_size - self.offset > START_BYTES:
            # the first look, or too far behind (a log growing faster than a tick reads): its last part, at once
            self.offset = max(0, st.st_size - START_BYTES)
            self.rest = b""
            budget = START_BYTES
            first = self.offset > 0  # the first piece of a tail is cut
            if first and self.series.lines.first_line is None:
                self.series.lines.first_line = ""  # a tail's first line is not the program's
        else:
            first = False
        if st.st_size <= self.offset:
            return False
        try:
            with self.path.open("rb") as fh:
                data = os.pread(fh.fileno(), min(budget, st.st_size - self.offset), self.offset)
        except OSError:
            return False
        self.offset += len(data)
        pieces = (self.rest + data).replace(b"\r", b"\n\r").split(b"\n")  # (a redraw starts with its "\r")
        self.rest = pieces.pop()[-TICK_BYTES:]
        if first and pieces:
            pieces = pieces[1:]
        before = (self.series.step, len(self.series.samples), self.series.total)
        at = st.st_mtime
        for piece in pieces:
            if piece and piece != b"\r":
                text, rank = relabel(piece.decode("utf-8", "replace"), self.labels)
                feed_line(self.series, text, self.pattern, at, rank)
        return (self.series.step, len(self.series.samples), self.series.total) != before or bool(pieces)

    def view(self, job_id: str) -> ProgressView:
        s = self.series
        state = copy.copy(s)  # its lists not shared: the view's own go in at series()
        state.samples, state.restarts, state.printed_rates, state.metrics = [], [], [], {}
        # the run's total as the estimate reads it (the bars', else the configuration's)
        return ProgressView(job_id, s.step, s.run_total, s.epoch, dict(s.metrics), tuple(s.samples[-VIEW_POINTS:]),
                            tuple(s.restarts), tuple(s.printed_rates), self.last_write, state=state)


class ProgressBoard:
    """The followed logs (see the module docstring)."""

    def __init__(self) -> None:
        self._followers: dict[str, _Follower] = {}

    def poll(self, wanted: Mapping[str, str], patterns: Mapping[str, Pattern] | None = None
             ) -> dict[str, ProgressView]:
        """Follow exactly the logs of ``wanted`` (job id -> its rank-0 log), read what each appended; the views of
        those that changed."""
        for job_id in [j for j in self._followers if j not in wanted]:
            del self._followers[job_id]
        out: dict[str, ProgressView] = {}
        for job_id, path in list(wanted.items())[:MAX_FOLLOWED]:
            follower = self._followers.get(job_id)
            if follower is None or str(follower.path) != path:
                follower = self._followers[job_id] = _Follower(Path(path), (patterns or {}).get(job_id))
            if follower.poll():
                out[job_id] = follower.view(job_id)
        return out
