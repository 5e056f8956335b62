"""A progress series as text and as a chart: the lines ``ntui progress`` prints and the jobs view's Progress tab shows.

:func:`summary_lines` says where the run is (the estimate's words, the latest metrics, the rate, the time left).

The chart of one metric (the loss unless another is asked for) over the run's steps is drawn by plotext, a plotting
library made for terminals (Textual-free: the tab draws the same figure through textual-plotext's widget).
:func:`chart_of` makes its model (:class:`Chart`): the metric's points thinned to what the width can show (the
least and the most of each column's share, in order, and always the newest point: plotext draws a few hundred
points whatever the run's length, bench/progress_chart.py), one line per segment of the run (a restart does not
draw a line back), the evaluation metric that goes with it (``eval_loss`` beside ``loss``, ``val_loss`` beside
``train_loss``: each evaluation once, not once per bar update that repeats it), each restart's step, and whether
the y axis is logarithmic (the values span :data:`LOG_DECADES` decades or more, all above zero: the axis label says
so). :func:`draw` puts it on a plotext figure with ticks of round numbers on both axes (steps as ``2,500`` or
``40k``); :func:`legend_lines` says what is drawn (the header, the markers); :func:`chart_lines` is both as plain
text (the CLI's ``--chart``), or words when there is nothing to draw yet (one point, none). Deterministic: no
clock, no terminal size, no colour unless given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ntui.core.progress.lines import loss_parts, training_loss
from ntui.core.progress.series import Estimate, Series
from ntui.core.slurm.durations import format_span

__all__ = ["EVAL_MARKER", "LOG_DECADES", "MIN_HEIGHT", "MIN_WIDTH", "RESTART_MARKER", "TRAIN_MARKER", "Canvas",
           "Chart", "Palette", "chart_lines", "chart_of", "default_metric", "draw", "eval_metric", "legend_lines",
           "log_ticks", "nice_ticks", "step_label", "summary_lines", "thin", "too_few_words"]

#: The y axis is logarithmic when the values span this many decades or more (and all are above zero).
LOG_DECADES = 2.0
#: plotext's markers: the training metric a line of braille dots (2x4 dots a cell), each evaluation a diamond, each
#: restart a dotted vertical line across the plot.
TRAIN_MARKER = "braille"
EVAL_MARKER = "◆"
RESTART_MARKER = "┆"
#: The plain chart's smallest size (a narrower or shorter one is drawn at this size): the frame, the ticks and the
#: labels leave room for a few columns and rows of the line.
MIN_WIDTH = 20
MIN_HEIGHT = 8
#: What the legend shows for each (a braille line's look).
TRAIN_SYMBOL = "⠤⠤"
#: An evaluation's name: a prefix that says so, then the training metric's name (or a loss where it names one).
_EVAL_RE = re.compile(r"(?i)^(?:eval|val|valid|validation|test|dev)(?:[_/.\- ]+|(?=[A-Z]))(?P<rest>.+)$")
_TRAIN_PREFIX_RE = re.compile(r"(?i)^(?:train(?:ing)?)[_/.\- ]+")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


class Canvas(Protocol):
    """What :func:`draw` uses of a plotext figure (``plotext``'s own, or textual-plotext's ``Plot``)."""

    def plot(self, *args: Any, **kwargs: Any) -> Any: ...
    def scatter(self, *args: Any, **kwargs: Any) -> Any: ...
    def xlim(self, *args: Any, **kwargs: Any) -> Any: ...
    def ylim(self, *args: Any, **kwargs: Any) -> Any: ...
    def xticks(self, *args: Any, **kwargs: Any) -> Any: ...
    def yticks(self, *args: Any, **kwargs: Any) -> Any: ...
    def xlabel(self, *args: Any, **kwargs: Any) -> Any: ...
    def ylabel(self, *args: Any, **kwargs: Any) -> Any: ...


Color = tuple[int, int, int]


@dataclass(frozen=True)
class Palette:
    """The colours of the training metric, the evaluation metric and the restarts (the tab's theme's)."""

    train: Color
    eval: Color
    restart: Color


@dataclass(frozen=True)
class Chart:
    """What the chart draws (see the module docstring): steps on x, the metric's values on y."""

    metric: str
    points: int  # the metric's points in the series (before thinning), finite or not
    skipped: int  # of them not finite (a nan loss): not drawn
    segments: tuple[tuple[tuple[int, float], ...], ...]  # the thinned (step, value) of each segment of the run
    eval_name: str | None
    evals: tuple[tuple[int, float], ...]  # each evaluation's (step, value)
    restarts: tuple[int, ...]  # the step each new segment starts at
    log: bool
    low: float  # the values' range (over both metrics)
    high: float
    first: int  # the steps' range
    last: int

    @property
    def drawable(self) -> bool:
        """Two points or more to draw a line through."""
        return sum(len(s) for s in self.segments) + len(self.evals) >= 2 and self.high >= self.low


def default_metric(series: Series) -> str | None:
    """The metric a chart shows unless told: the run's training loss as the reader names it (:func:`training_loss`),
    else the first of its parts (:func:`loss_parts`), else the first loss printed, else its first metric."""
    names = [n for n in series.metrics if any(n in s.metrics for s in series.samples)]
    drawn = {n: series.metrics[n] for n in names}
    if (loss := training_loss(drawn)) is not None:
        return loss[0]
    if (parts := loss_parts(drawn)) is not None:
        return next(iter(parts))
    losses = [n for n in names if "loss" in n.lower() and not _EVAL_RE.match(n)]
    return (losses or [n for n in names if not _EVAL_RE.match(n)] or names)[0] if names else None


def _said_first(metrics: dict[str, float]) -> list[tuple[str, float]]:
    """The metrics in the order they are said: the training loss (or its parts) first, the others as printed."""
    loss = training_loss(metrics)
    first = [loss[0]] if loss is not None else list(loss_parts(metrics) or ())
    return [(n, metrics[n]) for n in first] + [(n, v) for n, v in metrics.items() if n not in first]


def eval_metric(series: Series, metric: str) -> str | None:
    """The evaluation metric drawn beside ``metric``: its name with an evaluation's prefix (``eval_loss``,
    ``val_loss`` beside ``train_loss``, ``valid/loss``), else, beside a loss, the first evaluation loss printed."""
    base = _TRAIN_PREFIX_RE.sub("", metric).lower()
    names = [n for n in series.metrics if n != metric and any(n in s.metrics for s in series.samples)]
    evals = [(n, m.group("rest").lower()) for n in names if (m := _EVAL_RE.match(n))]
    same = next((n for n, rest in evals if _TRAIN_PREFIX_RE.sub("", rest) == base), None)
    if same is not None or "loss" not in base:
        return same
    return next((n for n, rest in evals if "loss" in rest), None)


def thin(points: Sequence[tuple[int, float]], columns: int) -> list[tuple[int, float]]:
    """At most about ``2 * columns`` of ``points`` (steps in order): for each column's share of the steps the least
    and the most value, in the order printed, and always the first and the newest point. A spike stays a spike."""
    if columns < 1 or len(points) <= 2 * columns:
        return list(points)
    first, last = points[0][0], points[-1][0]
    span = max(1, last - first)
    out: list[tuple[int, float]] = []
    bucket, lo, hi = -1, -1, -1  # the current column, and the indices of its least and most values
    for i, (step, value) in enumerate(points):
        b = (step - first) * columns // span
        if b != bucket and b < columns:
            if bucket >= 0:
                out.extend(points[j] for j in sorted({lo, hi}))
            bucket, lo, hi = b, i, i
        elif value < points[lo][1]:
            lo = i
        elif value > points[hi][1]:
            hi = i
    out.extend(points[j] for j in sorted({lo, hi}))
    if out[0] != points[0]:
        out.insert(0, points[0])
    if out[-1] != points[-1]:
        out.append(points[-1])
    return out


def chart_of(series: Series, *, columns: int = 80, metric: str | None = None) -> Chart | None:
    """The chart of ``metric`` (default: :func:`default_metric`) over the steps, thinned to ``columns`` (see the
    module docstring); None when the series has no such values."""
    name = metric or default_metric(series)
    if name is None:
        return None
    raw: list[tuple[int, float, int]] = [(s.step, s.metrics[name], s.segment) for s in series.samples
                                         if name in s.metrics]
    if not raw:
        return None
    finite = [(step, v, seg) for step, v, seg in raw if math.isfinite(v)]
    segments: list[list[tuple[int, float]]] = []
    restarts: list[int] = []
    current: int | None = None
    for step, v, seg in finite:
        if seg != current:
            if current is not None:
                restarts.append(step)
            current = seg
            segments.append([])
        segments[-1].append((step, v))
    ename = eval_metric(series, name)
    evals: list[tuple[int, float]] = []
    if ename is not None:
        last: tuple[int, float] | None = None
        for s in series.samples:
            got = s.metrics.get(ename)
            if got is None or not math.isfinite(got):
                continue
            if last is None or got != last[1] or s.step < last[0]:
                evals.append((s.step, got))  # a value a bar repeats until the next evaluation is one evaluation
            last = (s.step, got)
    values = [v for seg in segments for _, v in seg] + [v for _, v in evals]
    steps = [st for seg in segments for st, _ in seg] + [st for st, _ in evals]
    low, high = (min(values), max(values)) if values else (0.0, -1.0)
    log = low > 0 and math.log10(high / low) >= LOG_DECADES
    total = max(1, sum(len(seg) for seg in segments))
    thinned = tuple(tuple(thin(seg, max(1, columns * len(seg) // total))) for seg in segments)
    return Chart(metric=name, points=len(raw), skipped=len(raw) - len(finite), segments=thinned, eval_name=ename,
                 evals=tuple(thin(evals, columns)), restarts=tuple(restarts), log=log, low=low, high=high,
                 first=min(steps, default=0), last=max(steps, default=0))


def nice_ticks(low: float, high: float, most: int) -> list[float]:
    """At most ``most`` round values (1, 2, 2.5 or 5 times a power of ten apart) from ``low`` to ``high``: the most
    that fit."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low or most < 2:
        return [low] if math.isfinite(low) else []
    power = 10.0 ** math.floor(math.log10((high - low) / (most - 1)))
    for step in (m * power for m in (1, 2, 2.5, 5, 10, 20)):  # the finest step whose ticks fit
        start = math.ceil(low / step - 1e-9) * step
        n = int(math.floor((high - start) / step + 1e-9)) + 1
        if n <= most:
            return [round(start + i * step, 12) for i in range(max(0, n))]
    return [low, high]


def log_ticks(low: float, high: float, most: int) -> list[float]:
    """Round values for a logarithmic axis from ``low`` to ``high`` (both above zero): each power of ten, and 2 and 5
    times it where at most ``most`` fit; every other power where even the powers are too many."""
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for mults in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0 ** e for e in range(lo, hi + 1) for m in mults if low <= m * 10.0 ** e <= high * (1 + 1e-9)]
        if len(ticks) <= most:
            return ticks
    every = math.ceil(len(ticks) / max(1, most))
    return ticks[::every]


def step_label(step: float) -> str:
    """A step as the x axis says it: ``750``, ``2,500``, ``40k``, ``1.2M``."""
    n = abs(step)
    if n >= 1_000_000:
        return f"{step / 1_000_000:.4g}M"
    if n >= 10_000:
        return f"{step / 1000:.4g}k"
    return f"{round(step):,}"


def _step_ticks(first: float, last: float, room: int) -> tuple[list[float], list[str]]:
    """Round steps from ``first`` to ``last`` and their labels, as many as fit in ``room`` columns with two spaces
    between labels (at most 8); each label says its own step (``1,000,000,010``, where ``1000M`` would be all)."""
    most = max(2, min(8, room // 12))
    while True:
        xs = nice_ticks(first, last, most)
        labels = [step_label(x) for x in xs]
        if len(set(labels)) < len(labels):
            labels = [f"{round(x):,}" for x in xs]
        if most == 2 or sum(len(x) + 2 for x in labels) <= room:
            return xs, labels
        most -= 1


def _value_labels(ticks: Sequence[float]) -> list[str]:
    """Value ticks in one form: the fewest decimals that say each (``0.25``, ``0.50``), else ``:.3g``."""
    if len(ticks) < 2:
        return [f"{t:.4g}" for t in ticks]
    if max(abs(t) for t in ticks) >= 1e6:
        return [f"{t:.3g}" for t in ticks]
    gap = min(b - a for a, b in zip(ticks, ticks[1:], strict=False))
    decimals = next((d for d in range(7) if all(abs(round(t, d) - t) < gap * 1e-6 for t in ticks)), None)
    if decimals is None:
        return [f"{t:.3g}" for t in ticks]
    return [f"{t:.{decimals}f}" for t in ticks]


def _log_label(t: float) -> str:
    return f"{t:g}"


def draw(canvas: Canvas, chart: Chart, *, width: int, height: int, palette: Palette | None = None) -> None:
    """Put ``chart`` on a plotext figure of ``width`` x ``height`` cells (its size is the caller's to set): the
    restarts first (the lines over them), each segment's line, the evaluations' diamonds, the axes' limits and round
    ticks, and their labels (``step``; the metric, ``(log scale)`` when it is)."""
    def y(v: float) -> float:
        return math.log10(v) if chart.log else v

    low, high = y(chart.low), y(chart.high)
    if high - low < 1e-12:  # one value: a band around it
        pad = abs(high) * 0.05 or 1.0
        low, high = low - pad, high + pad
    first, last = chart.first, chart.last
    if last <= first:
        first, last = first - 1, last + 1
    colors: dict[str, Any] = {"train": None, "eval": None, "restart": None} if palette is None else \
        {"train": palette.train, "eval": palette.eval, "restart": palette.restart}
    rows = max(1, height - 4)  # the frame, the x ticks and the labels take four rows
    for step in chart.restarts:
        n = 4 * rows  # a mark in every row
        canvas.scatter([step] * n, [low + (high - low) * i / (n - 1) for i in range(n)], marker=RESTART_MARKER,
                       color=colors["restart"])
    for seg in chart.segments:
        if len(seg) == 1:
            canvas.scatter([seg[0][0]], [y(seg[0][1])], marker=TRAIN_MARKER, color=colors["train"])
        elif seg:
            canvas.plot([s for s, _ in seg], [y(v) for _, v in seg], marker=TRAIN_MARKER, color=colors["train"])
    if chart.evals:
        canvas.scatter([s for s, _ in chart.evals], [y(v) for _, v in chart.evals], marker=EVAL_MARKER,
                       color=colors["eval"])
    canvas.xlim(first, last)
    canvas.ylim(low, high)
    xs, labels = _step_ticks(first, last, width - 8)
    canvas.xticks(xs, labels)
    most = max(2, min(8, (rows + 1) // 2))
    if chart.log:
        ys = log_ticks(chart.low, chart.high, most)
        canvas.yticks([math.log10(t) for t in ys], [_log_label(t) for t in ys])
    else:
        ys = nice_ticks(low, high, most)
        canvas.yticks(ys, _value_labels(ys))
    canvas.xlabel("step")
    canvas.ylabel(f"{chart.metric} (log scale)" if chart.log else chart.metric)


def legend_lines(chart: Chart, width: int = 80) -> list[str]:
    """What the chart shows, above it: the metric, its points and their first and last steps (the round ticks need
    not be either; the restarts, the points not drawn), then each marker and what it stands for, in lines of at most
    ``width`` columns where its parts fit."""
    head = f"{chart.metric} over {chart.points:,} points, steps {chart.first:,} to {chart.last:,}"
    notes = []
    if chart.restarts:
        notes.append(f"{len(chart.restarts)} restart{'s' if len(chart.restarts) != 1 else ''}")
    if chart.skipped:
        notes.append(f"{chart.skipped:,} not finite, not drawn")
    if notes:
        head += f" ({', '.join(notes)})"
    if len(head) > width:  # a narrow chart: the steps on a line of their own
        first, _, rest = head.partition(", steps ")
        head = first + rest[rest.find(" ("):] if " (" in rest else first
        heads = [head, f"steps {chart.first:,} to {chart.last:,}"]
    else:
        heads = [head]
    keys = [f"{TRAIN_SYMBOL} {chart.metric}"]
    if chart.eval_name is not None and chart.evals:
        keys.append(f"{EVAL_MARKER} {chart.eval_name} ({len(chart.evals):,} evaluation"
                    f"{'s' if len(chart.evals) != 1 else ''})")
    if chart.restarts:
        keys.append(f"{RESTART_MARKER} restart at step " + ", ".join(f"{s:,}" for s in chart.restarts[:3])
                    + (", …" if len(chart.restarts) > 3 else ""))
    if chart.log:
        keys.append(f"log scale: {chart.low:.3g} to {chart.high:.3g}")
    lines = heads
    line = ""
    for key in keys:
        if line and len(line) + 3 + len(key) > width:
            lines.append(line)
            line = key
        else:
            line = f"{line}   {key}" if line else key
    return [*lines, line]


def too_few_words(chart: Chart) -> str:
    """A chart with nothing to draw a line through, in words (one point, or none finite)."""
    seg = [p for s in chart.segments for p in s]
    if not seg:
        return f"{chart.metric}: no finite value yet ({chart.points:,} not finite): no chart"
    step, value = seg[-1]
    return f"{chart.metric} {value:.4g} at step {step:,}: one point so far, the chart starts at the second"


def chart_lines(series: Series, *, width: int, height: int = 16, metric: str | None = None) -> list[str]:
    """The chart of ``metric`` (default: :func:`default_metric`) over the steps as plain text, ``width`` columns by
    ``height`` rows (at least :data:`MIN_WIDTH` by :data:`MIN_HEIGHT`) under its legend (see the module docstring);
    [] when the series has no such values, words when it has too few to draw."""
    import plotext._figure as figure  # only where a chart is drawn: the CLI's other commands do not load it

    width, height = max(MIN_WIDTH, width), max(MIN_HEIGHT, height)
    chart = chart_of(series, columns=width - 8, metric=metric)
    if chart is None:
        return []
    if not chart.drawable:
        return [too_few_words(chart)]
    fig = figure._figure_class()
    fig.plotsize(width, height)
    fig.theme("clear")
    draw(fig, chart, width=width, height=height)
    text = _ANSI_RE.sub("", str(fig.build()))
    return legend_lines(chart, width) + [line.rstrip() for line in text.splitlines()]


def _number(v: float) -> str:
    return f"{v:.4g}"


def summary_lines(series: Series, guess: Estimate, *, time_left_s: float | None) -> list[str]:
    """Where the run is: the estimate's words, then its latest metrics, its rate and the time left."""
    shown = "  ".join(f"{k} {_number(v)}" for k, v in _said_first(series.metrics)[:6])
    rate = f"  {guess.rate:.3g} steps/s" if guess.rate else ""
    left = f"  {format_span(time_left_s)} left" if time_left_s is not None else ""
    detail = f"  {shown}{rate}{left}".rstrip()
    return [guess.words, detail] if detail else [guess.words]
