"""Progress from what training programs print: real captures of tqdm, the Hugging Face Trainer and Lightning (both
of its bars), and Megatron's and torchtitan's line forms printed by a program of ours (tests/data/progress/, made by
its capture.py), read line by line as the log watcher reads them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ntui.core.progress.lines import Pattern, Point, parse_line, pattern_problem
from ntui.core.progress.series import MAX_POINTS, Series, estimate
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "progress"


def _capture(name: str) -> Path:
    found = sorted(DATA.glob(f"*/{name}.out"))
    assert found, f"no capture {name}"
    return found[-1]


def _lines(name: str) -> list[str]:
    # the bars' \r redraws as the watcher sees them: each a line of its own (clean_line keeps the last of a line;
    # a file read as it grows shows every redraw in turn)
    return _capture(name).read_text().replace("\r", "\n").split("\n")


def _series(lines: list[str], *, until: int | None = None, pattern: Pattern | None = None) -> Series:
    series = Series()
    for line in lines:
        point = parse_line(line, pattern)
        if point is not None:
            series.add(point, 1_000.0)
        if until is not None and series.step is not None and series.step >= until:
            break
    return series


@pytest.mark.parametrize(("name", "step", "total", "metric"), [
    ("tqdm-loop", 80, 80, "loss"),
    ("hf-trainer", 80, 80, "loss"),  # the bar gives the steps, the Trainer's dicts the loss
    ("lightning-rich", 60, 60, "train_loss"),  # Rich's final state: "Epoch 2/2 ... 20/20": 3 epochs of 20
    ("lightning-tqdm", 60, None, "train_loss"),  # an epoch's bars, the number of epochs never printed
    ("megatron-style", 40, 40, "lm_loss"),
    ("torchtitan-style", 40, None, "loss"),
])
def test_each_capture_ends_at_its_real_step_with_its_metric(name: str, step: int, total: int | None,
                                                            metric: str) -> None:
    series = _series(_lines(name))
    assert (series.step, series.total) == (step, total)
    assert metric in series.metrics and math.isfinite(series.metrics[metric])
    assert not series.restarts  # Lightning's epoch bars and validation bars are no restart


def test_the_trainers_string_valued_dicts_become_numbers() -> None:
    dicts = [ln for ln in _lines("hf-trainer") if ln.startswith("{'loss'")]
    assert dicts and "'loss': '" in dicts[0]  # transformers 5 formats its floats as strings
    point = parse_line(dicts[0])
    assert point is not None and point.format == "hf" and point.step is None and point.epoch is not None
    assert isinstance(point.metrics["loss"], float) and "epoch" not in point.metrics


def test_lightnings_validation_bar_is_not_the_runs_progress() -> None:
    bars = [parse_line(ln) for ln in _lines("lightning-tqdm") if ln.startswith("Validation DataLoader")]
    assert bars and all(b is not None and b.phase == "validation" for b in bars)


def test_an_eta_made_at_mid_run_is_within_15_percent_of_the_real_end() -> None:
    """The tqdm capture ran at a steady pace (a sleep per step); its times are the bar's own elapsed."""
    lines = _lines("tqdm-loop")
    whole = _series(lines)
    half = _series(lines, until=40)
    guess = estimate(half, now=half.samples[-1].time, time_left_s=None)
    actual = whole.samples[-1].time - half.samples[-1].time
    assert guess.eta_s is not None and actual > 5
    assert abs(guess.eta_s - actual) <= 0.15 * actual, (guess.eta_s, actual)
    assert guess.words.startswith("step 40 of 80: finishes in about")


def test_a_run_that_cannot_meet_its_limit_is_said_to_be_cut_with_the_step() -> None:
    half = _series(_lines("tqdm-loop"), until=40)
    guess = estimate(half, now=half.samples[-1].time, time_left_s=5.0)
    assert guess.rate is not None and guess.cut_at is not None
    assert 40 < guess.cut_at < 80 and abs(guess.cut_at - (40 + guess.rate * 5.0)) <= 1
    assert guess.words.startswith(f"will be cut at about step {guess.cut_at} of 80 ({100 * guess.cut_at // 80} %): "
                                  "add ")
    ok = estimate(half, now=half.samples[-1].time, time_left_s=3600.0)
    assert ok.cut_at is None and ok.words.endswith("before the limit")


def test_a_restart_starts_a_new_segment_and_the_rate_is_the_new_ones() -> None:
    series = Series(total=100)
    for t, step in enumerate(range(0, 50, 5)):  # 5 steps a second
        series.add(Point("pattern", step), float(t))
    for t, step in enumerate(range(20, 60, 2), start=100):  # requeued: back to 20, 2 steps a second
        series.add(Point("pattern", step), float(t))
    assert series.restarts == [100.0] and {s.segment for s in series.samples} == {0, 1}
    guess = estimate(series, now=series.samples[-1].time, time_left_s=None)
    assert guess.rate == pytest.approx(2.0)


def test_a_pause_is_not_rate() -> None:
    series = Series(total=1000)
    times = [float(t) for t in range(20)] + [200.0 + t for t in range(10)]  # an evaluation of 180 s in the middle
    for step, t in enumerate(times):
        series.add(Point("pattern", step * 10), t)
    guess = estimate(series, now=times[-1], time_left_s=None)
    assert guess.rate == pytest.approx(10.0)


def test_garbage_is_shown_as_what_it_is_never_a_crash() -> None:
    series = Series()
    series.add(Point("pattern", 1, metrics={"loss": 2.0}), 0.0)
    series.add(Point("pattern", 2, metrics={"loss": math.nan}), 1.0)
    assert math.isnan(series.metrics["loss"]) and "loss" not in series.samples[-1].metrics
    assert parse_line("{'loss': 'not a number', 'epoch': '1'}") == Point("hf", epoch=1.0)
    assert parse_line("{'loss': [1, 2") is None


def test_a_preset_pattern_reads_plain_prints_and_bad_ones_are_refused() -> None:
    pattern = Pattern(__import__("re").compile(r"step (?P<step>\d+)/(?P<total>\d+) loss (?P<loss>\S+)"))
    point = parse_line("epoch 1 step 12/300 loss 0.25 lr 1e-4", pattern)
    assert point == Point("pattern", 12, 300, None, {"loss": 0.25})
    assert pattern_problem(r"step (\d+") is not None and "regular expression" in str(pattern_problem(r"step (\d+"))
    assert pattern_problem(r"loss (?P<loss>\S+)") == "it names no step: add a group (?P<step>\\d+)"
    assert pattern_problem(r"step (?P<step>\d+)") is None


def test_a_week_of_points_stays_bounded() -> None:
    series = Series(total=10**6)
    for step in range(200_000):
        series.add(Point("pattern", step), float(step))
    assert len(series.samples) <= MAX_POINTS and series.samples[-1].step >= 199_000
    assert all(a.step < b.step for a, b in zip(series.samples, series.samples[1:], strict=False))
