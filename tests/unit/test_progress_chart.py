"""The progress series as text (``ntui.core.progress.chart``), the cut notice said once
(``ProgressBook.newly_cut``) and ``ntui progress --chart``, on the real captures of ``tests/data/progress/``."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.jobs.progress import CUT_AFTER_POINTS, ProgressBook
from ntui.core.progress.board import ProgressView
from ntui.core.progress.chart import BLOCKS, chart_lines, column_chart, default_metric, summary_lines
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import estimate
from ntui.core.slurm.squeue import QueueJob
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "progress"
LONG = DATA / "tqdm-4.70.1" / "tqdm-long-partial.out"


def _height(column: list[str]) -> int:
    """A column's height in eighths, from its cells top to bottom."""
    return sum(BLOCKS.index(c) for c in column)


def test_a_rising_series_draws_rising_columns_and_the_extremes_fill_none_and_all() -> None:
    rows = column_chart([float(v) for v in range(10)], width=10, height=4)
    assert len(rows) == 4 and all(len(r) == 10 for r in rows)
    heights = [_height([r[c] for r in rows]) for c in range(10)]
    assert heights == sorted(heights) and heights[0] < heights[-1]
    assert heights[0] == 1 and heights[-1] == 32  # the least a sliver, the most the full height


def test_more_values_than_columns_are_averaged_and_gaps_stay_blank() -> None:
    rows = column_chart([1.0, 1.0, 5.0, 5.0, math.nan, math.nan, 3.0, 3.0], width=4, height=2)
    columns = ["".join(r[c] for r in rows) for c in range(4)]
    assert columns[2] == "  "  # only NaN there: nothing drawn
    assert _height(list(columns[1])) == 16 and _height(list(columns[0])) == 1
    assert column_chart([], width=10, height=3) == [] and column_chart([2.0, 2.0], 5, 3)[0] == "██"


def test_the_loss_is_charted_with_its_range_and_steps_from_a_real_run() -> None:
    series = read_progress(DATA / "transformers-5.24.0" / "hf-trainer.out")
    assert default_metric(series) == "loss"
    lines = chart_lines(series, width=60, height=6)
    assert lines[0] == "loss over 8 points"
    values = [s.metrics["loss"] for s in series.samples if "loss" in s.metrics]
    assert lines[1].split()[0] == f"{max(values):.4g}" and lines[6].split()[0] == f"{min(values):.4g}"
    assert lines[-1].split() == ["step", "10", "step", "80"]


@pytest.mark.parametrize(("capture", "metric"), [
    ("styles-ntui/megatron-style.out", "lm_loss"),  # a loss by another name wins over the learning rate
    ("lightning-2.6.6/lightning-tqdm.out", "train_loss"),
])
def test_the_default_metric_is_the_runs_loss(capture: str, metric: str) -> None:
    assert default_metric(read_progress(DATA / capture)) == metric


def test_a_restart_is_marked_where_the_series_went_back(tmp_path: Path) -> None:
    """A requeued job's log (``--open-mode=append``): the real tqdm run, then the same run again from step 0."""
    run = (DATA / "tqdm-4.70.1" / "tqdm-loop.out").read_bytes().decode()
    log = tmp_path / "requeued.out"
    log.write_text(run + "\n" + run)
    series = read_progress(log)
    assert len(series.restarts) == 1
    lines = chart_lines(series, width=50, height=4)
    points = sum("loss" in s.metrics for s in series.samples)
    assert lines[0] == f"loss over {points} points (1 restart)"
    marks = next(x for x in lines if x.lstrip().startswith("restarts"))
    first = sum("loss" in s.metrics and s.segment == 0 for s in series.samples)
    column = marks.index("┆") - 10  # the chart starts after the labels
    assert marks.count("┆") == 1 and abs(column - first * 40 // points) <= 1


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
                          "--width", "50"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("will be cut at about step") and lines[2].startswith("loss over ")
    assert all(len(x) <= 50 for x in lines[2:])
    missing = subprocess.run([sys.executable, "-m", "ntui", "progress", str(LONG), "--chart", "acc"],
                             capture_output=True, text=True, cwd=REPO, timeout=60)
    assert missing.returncode == 0 and "no chart: no 'acc' values" in missing.stderr
