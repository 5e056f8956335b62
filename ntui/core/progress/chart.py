"""A progress series as text: the lines ``ntui progress`` prints and the jobs view's Progress tab shows.

:func:`summary_lines` says where the run is (the estimate's words, the latest metrics, the rate, the time left);
:func:`chart_lines` draws one metric (the loss unless another is asked for) over the run's steps as a column chart
of eighth blocks, with its range on the left, the first and last step under it and each restart's step marked
(``┆``: the run went on from a checkpoint, in a new allocation of a long run or after a requeue). Pure text: the
tab styles it, the CLI prints it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ntui.core.progress.lines import LOSS_NAMES
from ntui.core.progress.series import Estimate, Series, human_duration

__all__ = ["BLOCKS", "chart_lines", "column_chart", "default_metric", "summary_lines"]

#: The column chart's cells, from empty to full, in eighths.
BLOCKS = " ▁▂▃▄▅▆▇█"
#: The metrics preferred for the chart, in order (the first the series has; else the first that names a loss).
PREFERRED = LOSS_NAMES
_LABEL = 9  # the width of the range labels on the left


def default_metric(series: Series) -> str | None:
    """The metric a chart shows unless told: the loss if the run prints one, else its first metric."""
    names = [n for n in series.metrics if any(n in s.metrics for s in series.samples)]
    losses = [n for n in names if "loss" in n.lower()]
    fallback = (losses or names)[0] if names else None
    return next((n for n in PREFERRED if n in names), fallback)


def column_chart(values: Sequence[float], width: int, height: int) -> list[str]:
    """``values`` as ``height`` rows of ``width`` columns (each column the mean of its share of the values, drawn
    from the bottom in eighths between the smallest and the largest). Fewer values than columns: one column each."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite or width < 1 or height < 1:
        return []
    n = len(values)
    cols = min(width, n)
    means: list[float | None] = []
    for c in range(cols):
        part = [v for v in values[c * n // cols:(c + 1) * n // cols] if math.isfinite(v)]
        means.append(sum(part) / len(part) if part else None)
    lo, hi = min(finite), max(finite)
    span = hi - lo
    eighths = [None if m is None else (height * 8 if span == 0 else round((m - lo) / span * (height * 8 - 1)) + 1)
               for m in means]
    rows = []
    for r in range(height - 1, -1, -1):  # the top row first
        base = r * 8
        rows.append("".join(" " if e is None else BLOCKS[max(0, min(8, e - base))] for e in eighths))
    return rows


def _number(v: float) -> str:
    return f"{v:.4g}"


def chart_lines(series: Series, *, width: int, height: int = 8, metric: str | None = None) -> list[str]:
    """The chart of ``metric`` (default: :func:`default_metric`) over the steps (see the module docstring); [] when
    the series has no such values."""
    name = metric or default_metric(series)
    if name is None:
        return []
    points = [(s.step, s.metrics[name], s.segment) for s in series.samples if name in s.metrics]
    if not points:
        return []
    cols = max(1, width - _LABEL - 1)
    values = [v for _, v, _ in points]
    rows = column_chart(values, cols, height)
    finite = [v for v in values if math.isfinite(v)]
    hi, lo = _number(max(finite)), _number(min(finite))
    out = [f"{name} over {len(points):,} points" + (f" ({len(series.restarts)} restart"
                                                      f"{'s' if len(series.restarts) != 1 else ''})"
                                                      if series.restarts else "")]
    for i, row in enumerate(rows):
        label = hi if i == 0 else lo if i == len(rows) - 1 else ""
        out.append(f"{label:>{_LABEL}} {row}")
    used = len(rows[0]) if rows else 0
    marks = [" "] * used
    n = len(points)
    for i in range(1, n):
        if points[i][2] != points[i - 1][2]:  # a new segment starts here
            marks[min(used - 1, i * used // n)] = "┆"
    if "┆" in marks:
        out.append(f"{'restarts':>{_LABEL}} {''.join(marks)}")
    first, last = f"step {points[0][0]:,}", f"step {points[-1][0]:,}"
    gap = max(1, used - len(first) - len(last))
    out.append(f"{'':>{_LABEL}} {first}{' ' * gap}{last}")
    return out


def summary_lines(series: Series, guess: Estimate, *, time_left_s: float | None) -> list[str]:
    """Where the run is: the estimate's words, then its latest metrics, its rate and the time left."""
    shown = "  ".join(f"{k} {_number(v)}" for k, v in list(series.metrics.items())[:6])
    rate = f"  {guess.rate:.3g} steps/s" if guess.rate else ""
    left = f"  {human_duration(time_left_s)} left" if time_left_s is not None else ""
    detail = f"  {shown}{rate}{left}".rstrip()
    return [guess.words, detail] if detail else [guess.words]
