"""The GPU heatmap of a big job: one cell per GPU, rows of nodes, the outliers in words.

One responsibility: layout and outlier logic (no Textual; the GPU pane draws the result). A job with more than
:data:`HEATMAP_OVER` GPUs is drawn as a heatmap instead of one bar row per GPU: each node is a block of one
cell per GPU (the cell's glyph and colour give the utilisation level, :data:`LEVELS`), and as many node
blocks as fit the width share a line, labelled with the line's first node (256 nodes x 4 GPUs: 20 nodes per
line at 120 columns, 13 lines; 12 per line at 80 columns, 22 lines).

The outliers, in words: GPUs idle now (below :data:`IDLE_PERCENT`), GPUs without a reading, and nodes that
lag the rest (over their busy GPUs: mean utilisation :data:`LAG_POINTS` points below the nodes' median, or
mean power below :data:`LAG_POWER_FRACTION` of the median node's power: a straggler holds every rank of a
synchronous job back).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "GLYPHS",
    "HEATMAP_OVER",
    "IDLE_PERCENT",
    "LAG_POINTS",
    "LAG_POWER_FRACTION",
    "LEVELS",
    "HeatCell",
    "HeatLine",
    "Heatmap",
    "Reading",
    "heatmap",
    "level_of",
    "outliers",
    "use_heatmap",
]

HEATMAP_OVER = 16
"""More GPUs than this (more than 4 Perlmutter nodes): the heatmap."""
IDLE_PERCENT = 5.0
LAG_POINTS = 20.0
LAG_POWER_FRACTION = 0.75
NAMES_MAX = 6
"""Outlier lines name at most this many GPUs or nodes, then ``and N more``."""
#: (lowest utilisation %, words) of each level; level -1 is "no reading"
LEVELS: tuple[tuple[float, str], ...] = ((0.0, "idle <5%"), (5.0, "5-30%"), (30.0, "30-60%"), (60.0, "60-85%"),
                                         (85.0, "85%+"))
#: a glyph per level (readable without colour too: taller is busier), then the one for "no reading"
GLYPHS = ("·", "▂", "▄", "▆", "█", "?")


class Reading(Protocol):
    """What the heatmap needs of a sample (:class:`ntui.core.gpu.smi.GpuSample` has it)."""

    @property
    def util_gpu(self) -> float | None: ...

    @property
    def power_w(self) -> float | None: ...


def use_heatmap(gpus: int) -> bool:
    return gpus > HEATMAP_OVER


def level_of(util: float | None) -> int:
    """0 (idle) .. 4 (85 %+), -1 without a reading."""
    if util is None:
        return -1
    level = 0
    for i, (lo, _) in enumerate(LEVELS):
        if util >= lo:
            level = i
    return level


@dataclass(frozen=True)
class HeatCell:
    node: str
    index: int
    util: float | None
    level: int

    @property
    def glyph(self) -> str:
        return GLYPHS[self.level]


@dataclass(frozen=True)
class HeatLine:
    label: str
    """The line's first node."""
    blocks: tuple[tuple[HeatCell, ...], ...]
    """One block of cells per node."""


@dataclass(frozen=True)
class Heatmap:
    lines: tuple[HeatLine, ...]
    nodes_per_line: int
    gpus_per_node: int
    label_width: int
    outliers: tuple[str, ...]

    def text_lines(self) -> list[str]:
        """The map as plain text (tests; the widget adds colour)."""
        out = []
        for line in self.lines:
            blocks = " ".join("".join(c.glyph for c in b).ljust(self.gpus_per_node) for b in line.blocks)
            out.append(f"{line.label.ljust(self.label_width)} {blocks}")
        return out


def heatmap(latest: Mapping[str, Mapping[int, Reading]], width: int) -> Heatmap:
    """Lay ``latest`` (node -> GPU index -> reading, in node order) out in ``width`` columns."""
    nodes = list(latest)
    gpn = max((len(g) for g in latest.values()), default=1) or 1
    label_w = max((len(n) for n in nodes), default=4)
    fit = max(1, (width - label_w - 1 + 1) // (gpn + 1))
    per_line = fit - fit % 4 if fit >= 8 else fit
    lines = []
    for i in range(0, len(nodes), per_line):
        chunk = nodes[i : i + per_line]
        blocks = tuple(
            tuple(HeatCell(n, idx, r.util_gpu, level_of(r.util_gpu)) for idx, r in sorted(latest[n].items()))
            for n in chunk
        )
        lines.append(HeatLine(chunk[0], blocks))
    return Heatmap(tuple(lines), per_line, gpn, label_w, tuple(outliers(latest)))


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:NAMES_MAX])
    more = len(items) - NAMES_MAX
    return shown + (f" and {more} more" if more > 0 else "")


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def outliers(latest: Mapping[str, Mapping[int, Reading]]) -> list[str]:
    """Idle GPUs, GPUs without a reading, and lagging nodes, in words (empty: nothing stands out)."""
    idle = [f"{n} GPU {i}" for n, gpus in latest.items() for i, r in sorted(gpus.items())
            if r.util_gpu is not None and r.util_gpu < IDLE_PERCENT]
    unknown = [f"{n} GPU {i}" for n, gpus in latest.items() for i, r in sorted(gpus.items()) if r.util_gpu is None]
    out = []
    if idle:
        out.append(f"{len(idle)} idle GPU{'s' if len(idle) != 1 else ''} (<{IDLE_PERCENT:g}%): {_names(idle)}")
    if unknown:
        out.append(f"{len(unknown)} GPU{'s' if len(unknown) != 1 else ''} without a reading: {_names(unknown)}")
    # a node's pace over its busy GPUs (an idle GPU is named above, not counted again as its node lagging)
    busy = {n: [r for r in g.values() if r.util_gpu is None or r.util_gpu >= IDLE_PERCENT] for n, g in latest.items()}
    util = {n: _mean([r.util_gpu for r in g]) for n, g in busy.items()}
    power = {n: _mean([r.power_w for r in g]) for n, g in busy.items()}
    known_u = [u for u in util.values() if u is not None]
    known_p = [p for p in power.values() if p is not None]
    if len(known_u) < 3:
        return out
    med_u = statistics.median(known_u)
    med_p = statistics.median(known_p) if len(known_p) >= 3 else None
    lagging = []
    for n in latest:
        u, p = util[n], power[n]
        why = []
        if u is not None and u < med_u - LAG_POINTS:
            why.append(f"util {u:.0f}% vs {med_u:.0f}%")
        if p is not None and med_p is not None and p < LAG_POWER_FRACTION * med_p:
            why.append(f"power {p:.0f} W vs {med_p:.0f} W")
        if why:
            lagging.append(f"{n} ({', '.join(why)})")
    if lagging:
        noun = "node lags" if len(lagging) == 1 else "nodes lag"
        out.append(f"{len(lagging)} {noun} the median node: {_names(lagging)}")
    return out
