"""Following the in-job GPU sample files (one per node) within the log watcher's metadata budget.

One responsibility: reading the new lines of every node's sample file no more often than the sampling
interval, and only the bytes appended since the last read (one :class:`~ntui.core.logtail.FileTail` per
file, descriptors held within a shared :class:`~ntui.core.logtail.FdBudget`: a read is one ``stat`` and a
``read`` of the new bytes; without a held descriptor ``open`` + ``fstat``). 256 nodes sampled every 10 s cost
25.6 polls per second at most, spread over the interval (``per_poll`` files per call, round robin), not 256
opens in one burst; ``max_per_s`` caps that where the sample files share the log watcher's budget (10/s: each
of 256 files every 25.6 s instead of 10 s).

The lines' meaning is the sample reader's (the in-job sampler's file format is defined next to the sampler):
:class:`SampleTail` hands complete lines to ``on_lines(node, lines)``; the GPU pane or ``ntui report --follow``
plugs its parser in there. No Textual, no threads of its own.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ntui.core.logtail import FdBudget, MultiTail

__all__ = ["SampleTail"]

WINDOW = 64  # lines kept per file (the reader keeps its own aggregates; this is only the tail's window)


class SampleTail:
    """Every node's sample file, each read at most every ``interval_s``, only its new bytes.

    ``poll(now)`` reads the files that are due (their last read at least ``interval_s`` ago), at most
    ``ceil(files / ticks_per_interval)`` of them per call so the reads spread over the interval, and returns
    ``{node: new complete lines}`` (also given to ``on_lines``).
    """

    def __init__(
        self,
        files: Mapping[str, Path | str],
        interval_s: float,
        *,
        tick_s: float = 1.0,
        on_lines: Callable[[str, Sequence[str]], None] | None = None,
        budget: FdBudget | None = None,
        max_per_s: float | None = None,
        monotonic: Callable[[], float] = _time.monotonic,
    ) -> None:
        self.interval_s = max(0.1, float(interval_s))
        self.tick_s = max(0.01, float(tick_s))
        self.on_lines = on_lines
        self.max_per_s = max_per_s
        self.monotonic = monotonic
        self.tails: MultiTail[str] = MultiTail(window=WINDOW, merged_window=1, budget=budget)
        self._last: dict[str, float] = {}
        for node, path in files.items():
            self.tails.add(node, Path(path))

    @property
    def per_poll(self) -> int:
        ticks = max(1.0, self.interval_s / self.tick_s)
        spread = max(1, math.ceil(len(self.tails) / ticks))
        if self.max_per_s is None:
            return spread
        return max(1, min(spread, int(self.max_per_s * self.tick_s)))

    def add(self, node: str, path: Path | str) -> None:
        """A node's file appeared (the caller lists the directory rarely; see the sampler's file names)."""
        if node not in self.tails:
            self.tails.add(node, Path(path))

    def due(self, now: float) -> list[str]:
        waiting = [n for n in self.tails.keys()  # noqa: SIM118 - MultiTail is not iterable
                   if now - self._last.get(n, -math.inf) >= self.interval_s]
        waiting.sort(key=lambda n: self._last.get(n, -math.inf))
        return waiting[: self.per_poll]

    def poll(self, now: float | None = None) -> dict[str, tuple[str, ...]]:
        when = self.monotonic() if now is None else now
        out: dict[str, tuple[str, ...]] = {}
        for node, up in self.tails.poll_all(self.due(when)).items():
            self._last[node] = when
            if up.lines:
                out[node] = up.lines
                if self.on_lines is not None:
                    self.on_lines(node, up.lines)
        return out

    def ops(self) -> tuple[int, int]:
        """File-system metadata operations so far: (opens, stats)."""
        return self.tails.ops()

    def bytes_read(self) -> int:
        return sum(self.tails.tail(k).bytes_read for k in self.tails.keys())  # noqa: SIM118

    def close(self) -> None:
        self.tails.close()
