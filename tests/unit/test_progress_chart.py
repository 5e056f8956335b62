"""The progress series as text and as a chart (``ntui.core.progress.chart``: plotext's figure, its axes, log scale,
evaluations and restarts), the cut notice said once (``ProgressBook.newly_cut``) and ``ntui progress --chart``, on
the real captures of ``tests/data/progress/`` and on series made here."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.jobs.progress import CUT_AFTER_POINTS, ProgressBook
from ntui.core.progress.board import ProgressView
from ntui.core.progress.chart import (
    chart_lines,
    chart_of,
    default_metric,
    eval_metric,
    log_ticks,
    nice_ticks,
    step_label,
    summary_lines,
    thin,
)
from ntui.core.progress.lines import Point
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Sample, Series, estimate
from ntui.core.slurm.squeue import QueueJob
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "progress"
LONG = DATA / "tqdm-4.70.1" / "tqdm-long-partial.out"


def _synthetic(values: list[float], *, steps: list[int] | None = None, segments: list[int] | None = None,
               evals: dict[int, float] | None = None, name: str = "loss", eval_name: str = "eval_loss") -> Series:
    """A series of ``values`` at ``steps`` (default 0, 1, ...), with an evaluation's value at some steps."""
    steps = steps or list(range(len(values)))
    segments = segments or [0] * len(values)
    evals = evals or {}
    out = Series()
    out.samples = [Sample(float(i), st, {name: v, **({eval_name: evals[st]} if st in evals else {})}, seg)
                   for i, (st, v, seg) in enumerate(zip(steps, values, segments, strict=True))]
    out.restarts = [float(i) for i in range(max(segments))]
    out.metrics = {name: values[-1], **({eval_name: list(evals.values())[-1]} if evals else {})}
    return out


def _plot(lines: list[str]) -> list[str]:
    """The figure's rows (from its frame's top), without the legend above it."""
    return lines[next(i for i, x in enumerate(lines) if "┌" in x):]


def _y_ticks(lines: list[str]) -> list[str]:
    return [x.split("┤")[0].strip() for x in _plot(lines) if "┤" in x]


def _x_ticks(lines: list[str]) -> dict[str, int]:
    """Each x tick's label and the column of its mark (``┬`` on the frame's bottom)."""
    plot = _plot(lines)
    bottom = next(i for i, x in enumerate(plot) if "└" in x)
    marks = [i for i, c in enumerate(plot[bottom]) if c == "┬"]
    labels = plot[bottom + 1]
    out = {}
    for m in marks:
        left = m
        while left > 0 and labels[left - 1] != " ":
            left -= 1
        right = m
        while right < len(labels) and labels[right] != " ":
            right += 1
        out[labels[left:right].strip()] = m
    return out


def test_the_loss_is_charted_with_axes_of_round_ticks_from_a_real_run() -> None:
    series = read_progress(DATA / "tqdm-4.70.1" / "tqdm-loop.out")
    lines = chart_lines(series, width=60, height=14)
    assert lines[0] == "loss over 81 points, steps 0 to 80" and lines[1] == "⠤⠤ loss"
    values = [s.metrics["loss"] for s in series.samples]
    ys = [float(t) for t in _y_ticks(lines)]
    assert len(ys) >= 2 and ys == sorted(ys, reverse=True)  # the top row's tick first
    assert all(min(values) <= t <= max(values) for t in ys)
    assert all(abs(t * 2 - round(t * 2)) < 1e-9 for t in ys)  # round values (0.5 apart here), not the data's
    xs = _x_ticks(lines)
    steps = [int(k) for k in xs]
    assert len(steps) >= 3 and steps[0] >= 0 and steps[-1] <= 80 and all(k % 5 == 0 for k in steps)
    assert len({b - a for a, b in zip(steps, steps[1:], strict=False)}) == 1  # evenly apart
    assert "step" in lines[-1].split() and lines[-1].split()[0] == "loss"  # the axes' labels
    assert "log" not in "\n".join(lines)  # 0.1 to 2: one decade and a half
    assert all(len(x) <= 60 for x in lines) and not any("\x1b" in x for x in lines)
    drawn = "".join(_plot(lines)[1:-3])
    assert sum("⠁" <= c <= "⣿" for c in drawn) >= 40  # the line itself, in braille dots
    assert chart_lines(series, width=60, height=14) == lines  # the same text every time


def test_a_loss_over_decades_gets_a_log_axis_with_powers_of_ten() -> None:
    values = [5.0 * 0.9 ** i for i in range(60)]  # 5 to 0.00998: 2.7 decades
    lines = chart_lines(_synthetic(values), width=70, height=16)
    assert lines[-1].split()[:3] == ["loss", "(log", "scale)"]
    assert "log scale: 0.00998 to 5" in " ".join(lines[:lines.index(_plot(lines)[0])])
    ticks = [float(t) for t in _y_ticks(lines)]
    assert {0.01, 0.1, 1.0} <= set(ticks)
    assert all(f"{t:.0e}"[0] in "1235" for t in ticks)  # 1, 2, 5 or 1, 3 times a power of ten
    rows = {t: next(i for i, x in enumerate(_plot(lines)) if x.split("┤")[0].strip() == f"{t:g}")
            for t in (0.01, 0.1, 1.0)}
    assert rows[0.01] - rows[0.1] == rows[0.1] - rows[1.0]  # a decade is as tall as the next
    flat = chart_lines(_synthetic([5.0 * 0.96 ** i for i in range(60)]), width=70, height=16)  # 1 decade
    assert "log" not in "\n".join(flat)
    negative = chart_lines(_synthetic([-1.0, 50.0, 0.001, 200.0]), width=70, height=16)
    assert "log" not in "\n".join(negative)  # a value at or below zero: a linear axis


def test_the_evaluation_is_drawn_beside_the_training_loss_with_its_own_marker() -> None:
    evals = {10: 2.0, 20: 1.5, 30: 1.2}
    lines = chart_lines(_synthetic([2.5 - i / 40 for i in range(40)], evals=evals), width=70, height=16)
    assert lines[1] == "⠤⠤ loss   ◆ eval_loss (3 evaluations)"
    plot = _plot(lines)
    assert sum(x.count("◆") for x in plot) == 3
    xs = _x_ticks(lines)
    diamonds = sorted(x.index("◆") for x in plot if "◆" in x)
    assert diamonds[0] == xs["10"] and diamonds[-1] == xs["30"]  # at their steps
    rows = [i for i, x in enumerate(plot) if "◆" in x]
    assert rows == sorted(rows)  # 2.0 above 1.5 above 1.2


def test_a_real_runs_validation_loss_is_drawn_once_per_evaluation() -> None:
    """Lightning's bar repeats val_loss on every update until the next validation: three evaluations, not 41."""
    series = read_progress(DATA / "lightning-2.6.6" / "lightning-tqdm.out")
    assert sum("val_loss" in s.metrics for s in series.samples) > 3
    chart = chart_of(series)
    assert chart is not None and (chart.metric, chart.eval_name) == ("train_loss", "val_loss")
    assert len(chart.evals) == 3 and chart.log  # its training loss spans three decades
    lines = chart_lines(series, width=80, height=16)
    assert "◆ val_loss (3 evaluations)" in lines[1]


@pytest.mark.parametrize(("names", "metric", "expected"), [
    (["loss", "eval_loss", "grad_norm"], "loss", "eval_loss"),
    (["train_loss", "val_loss"], "train_loss", "val_loss"),
    (["train/loss", "valid/loss"], "train/loss", "valid/loss"),
    (["lm_loss", "validation lm_loss"], "lm_loss", "validation lm_loss"),
    (["acc", "val_acc", "val_loss"], "acc", "val_acc"),
    (["loss", "val_acc"], "loss", None),  # an evaluation of another metric is not the loss's
    (["loss", "grad_norm"], "loss", None),
])
def test_the_evaluation_metric_is_the_metrics_own(names: list[str], metric: str, expected: str | None) -> None:
    series = Series()
    series.samples = [Sample(0.0, 1, dict.fromkeys(names, 1.0))]
    series.metrics = dict.fromkeys(names, 1.0)
    assert eval_metric(series, metric) == expected


def test_a_restart_is_marked_at_its_step_and_draws_no_line_back() -> None:
    """A run that reached step 600, restarted from its checkpoint at step 500 and went on to 1,000."""
    steps = list(range(0, 601, 10)) + list(range(500, 1001, 10))
    segments = [0] * 61 + [1] * 51
    values = [3.0 - s / 500 for s in steps]
    series = _synthetic(values, steps=steps, segments=segments)
    lines = chart_lines(series, width=60, height=14)
    assert lines[0] == "loss over 112 points, steps 0 to 1,000 (1 restart)" and "┆ restart at step 500" in lines[1]
    plot = _plot(lines)
    columns = {x.index("┆") for x in plot if "┆" in x}
    assert columns == {_x_ticks(lines)["500"]}  # one dotted line, where the tick of step 500 is
    assert sum("┆" in x for x in plot) >= 6  # across the plot's height
    chart = chart_of(series)
    assert chart is not None and chart.restarts == (500,) and [len(s) for s in chart.segments] == [61, 51]


def test_a_requeued_real_run_is_marked_as_restarted(tmp_path: Path) -> None:
    """A requeued job's log (``--open-mode=append``): the real tqdm run, then the same run again from step 0."""
    run = (DATA / "tqdm-4.70.1" / "tqdm-loop.out").read_bytes().decode()
    log = tmp_path / "requeued.out"
    log.write_text(run + "\n" + run)
    series = read_progress(log)
    assert len(series.restarts) == 1
    lines = chart_lines(series, width=50, height=12)
    points = sum("loss" in s.metrics for s in series.samples)
    assert lines[0] == f"loss over {points} points, steps 0 to 80 (1 restart)" and "┆ restart at step 0" in lines[1]
    assert any("┆" in x for x in _plot(lines))


def test_thinning_keeps_the_extremes_and_the_newest_point() -> None:
    points = [(i, 1.0 + (i % 7) / 100) for i in range(100_000)]
    points[51_234] = (51_234, 9.0)  # a spike
    points[70_001] = (70_001, -3.0)
    thinned = thin(points, 100)
    assert len(thinned) <= 202 and thinned[0] == points[0] and thinned[-1] == points[-1]
    assert (51_234, 9.0) in thinned and (70_001, -3.0) in thinned
    assert [s for s, _ in thinned] == sorted(s for s, _ in thinned)
    assert thin(points[:50], 100) == points[:50]
    chart = chart_of(_synthetic([v for _, v in points]), columns=100)
    assert chart is not None and chart.points == 100_000 and sum(len(s) for s in chart.segments) <= 202
    assert (chart.low, chart.high) == (-3.0, 9.0)


def test_a_tiny_or_empty_series_is_said_in_words() -> None:
    one = chart_lines(_synthetic([0.75], steps=[40]), width=60)
    assert one == ["loss 0.75 at step 40: one point so far, the chart starts at the second"]
    two = chart_lines(_synthetic([0.75, 0.5], steps=[40, 50]), width=60)
    assert two[0] == "loss over 2 points, steps 40 to 50" and any("┤" in x for x in two)
    flat = chart_lines(_synthetic([0.5, 0.5, 0.5]), width=60)  # one value: a band around it, its tick
    assert "0.5" in " ".join(_y_ticks(flat)) or "0.50" in " ".join(_y_ticks(flat))
    nan = chart_lines(_synthetic([math.nan, math.nan]), width=60)
    assert nan == ["loss: no finite value yet (2 not finite): no chart"]
    some = chart_lines(_synthetic([1.0, math.nan, 0.5, 0.4]), width=60)
    assert some[0] == "loss over 4 points, steps 0 to 3 (1 not finite, not drawn)"
    assert chart_lines(Series(), width=60) == [] and chart_of(_synthetic([1.0, 2.0]), metric="acc") is None
    small = chart_lines(_synthetic([3.0, 2.0, 1.0]), width=3, height=2)  # drawn at the least size, not empty
    assert len(_plot(small)) == 8 and max(len(x) for x in small) <= 20 and any("┤" in x for x in small)


def test_steps_far_from_zero_are_told_apart() -> None:
    """A run resumed at step 10^9: its ticks 10 steps apart say each step, not ``1000M`` four times."""
    lines = chart_lines(_synthetic([3.0, 2.0, 1.0, 0.5], steps=[10**9 + 10 * i for i in range(4)]), width=60,
                        height=10)
    labels = list(_x_ticks(lines))
    assert len(labels) >= 2 and len(set(labels)) == len(labels) and labels[0] == "1,000,000,000"


def test_round_ticks() -> None:
    assert nice_ticks(0, 1000, 5) == [0, 250, 500, 750, 1000]
    assert nice_ticks(13, 87, 4) == [20, 40, 60, 80] and nice_ticks(0, 80, 4) == [0, 25, 50, 75]
    assert nice_ticks(0.81, 2.01, 5) == [1.0, 1.25, 1.5, 1.75, 2.0] and nice_ticks(0.81, 2.01, 3) == [1.0, 1.5, 2.0]
    assert log_ticks(0.013, 4.0, 8) == [0.02, 0.05, 0.1, 0.2, 0.5, 1, 2]
    assert log_ticks(1e-5, 10, 4) == [1e-05, 0.001, 0.1, 10]  # every other power where all are too many
    assert [step_label(x) for x in (750, 2500, 40_000, 1_250_000)] == ["750", "2,500", "40k", "1.25M"]


@pytest.mark.parametrize(("capture", "metric"), [
    ("styles-ntui/megatron-style.out", "lm_loss"),  # a loss by another name wins over the learning rate
    ("lightning-2.6.6/lightning-tqdm.out", "train_loss"),
])
def test_the_default_metric_is_the_runs_loss(capture: str, metric: str) -> None:
    assert default_metric(read_progress(DATA / capture)) == metric


def test_summary_lines_say_the_cut_and_the_numbers() -> None:
    series = read_progress(LONG)
    guess = estimate(series, now=series.samples[-1].time, time_left_s=57 * 60 + 47)
    lines = summary_lines(series, guess, time_left_s=57 * 60 + 47)
    assert guess.cut_at is not None and lines[0].startswith(f"will be cut at about step {guess.cut_at:,} of 10,000")
    assert lines[1].split()[:2] == ["loss", f"{series.metrics['loss']:.4g}"] and lines[1].endswith("58 min left")


def test_the_cut_is_noticed_once_and_only_after_the_first_steps() -> None:
    series = read_progress(LONG)
    job = QueueJob("7", "7", state="RUNNING", elapsed="1:02:13", time_limit="2:00:00")
    now = series.samples[-1].time
    book = ProgressBook()
    early = tuple(series.samples[:CUT_AFTER_POINTS - 1])
    book.views["7"] = ProgressView("7", early[-1].step, series.total, None, {}, early,
                                   printed_rates=tuple(series.printed_rates))
    assert book.newly_cut({"7": job}, now) == []  # the slow first steps: no alarm yet
    book.views["7"] = ProgressView("7", series.step, series.total, None, dict(series.metrics),
                                   tuple(series.samples), printed_rates=tuple(series.printed_rates))
    said = book.newly_cut({"7": job}, now)
    assert len(said) == 1 and said[0][0] == "7" and said[0][1].startswith("will be cut at about step")
    assert book.newly_cut({"7": job}, now) == []  # once
    ends_in_time = QueueJob("7", "7", state="RUNNING", elapsed="1:00", time_limit="2-00:00:00")
    fresh = ProgressBook()
    fresh.views = dict(book.views)
    assert fresh.newly_cut({"7": ends_in_time}, now) == []


def test_the_cli_draws_the_chart_and_exits_1_for_a_cut_run(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "ntui", "progress", str(LONG), "--time-left", "57:47", "--chart",
                          "--width", "50", "--height", "12"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("will be cut at about step") and lines[2].startswith("loss over ")
    assert all(len(x) <= 50 for x in lines[2:]) and "\x1b" not in res.stdout  # plain text, not a terminal here
    assert lines[2:] == chart_lines(read_progress(LONG), width=50, height=12)  # the tab's chart, as text
    assert len(_plot(lines)) == 12 and lines[-1].split() == ["loss", "step"]
    missing = subprocess.run([sys.executable, "-m", "ntui", "progress", str(LONG), "--chart", "acc"],
                             capture_output=True, text=True, cwd=REPO, timeout=60)
    assert missing.returncode == 0 and "no chart: no 'acc' values" in missing.stderr


def test_the_training_loss_or_its_parts_are_said_first_and_charted() -> None:
    # a YOLO-style table row's metrics: the loss in parts only, printed after the learning rate and the GPU memory
    series = Series()
    parts = {"lr": 0.01, "gpu_mem": 3.1, "box_loss": 0.05, "obj_loss": 0.02, "cls_loss": 0.01}
    for step in (1, 2, 3):
        series.add(Point("log", step=step, total=10, metrics=parts), float(step))
    guess = estimate(series, now=3.0, time_left_s=None)
    assert summary_lines(series, guess, time_left_s=None)[1].split()[::2][:3] == ["box_loss", "obj_loss", "cls_loss"]
    assert default_metric(series) == "box_loss"
    # a loss of its own name is said first, ahead of what was printed before it
    named = Series()
    for step in (1, 2):
        named.add(Point("log", step=step, total=10, metrics={"lr": 0.01, "lm_loss": 2.0 / step}), float(step))
    said = summary_lines(named, estimate(named, now=2.0, time_left_s=None), time_left_s=None)[1]
    assert said.split()[:2] == ["lm_loss", "1"] and default_metric(named) == "lm_loss"
