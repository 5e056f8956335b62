"""Progress from what training programs print: real captures of tqdm, the Hugging Face Trainer and Lightning (both
of its bars), and Megatron's and torchtitan's line forms printed by a program of ours (tests/data/progress/, made by
its capture.py), read line by line as the log watcher reads them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ntui.core.progress.lines import Pattern, Point, parse_line, pattern_problem
from ntui.core.progress.runwords import declared_total, run_ended
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
    assert series.step == 199_999  # thinned, the newest point is still the one shown
    assert all(a.step < b.step for a, b in zip(series.samples, series.samples[1:], strict=False))


@pytest.mark.parametrize("newest", [199_999, 123_457, 3])
def test_the_newest_point_is_kept_whatever_the_stride(newest: int) -> None:
    series = Series()
    for step in range(newest + 1):
        series.add(Point("pattern", step), float(step))
    assert series.step == newest and series.samples[-1].step == newest


# ---------------------------------------------------------------- the training loops' own lines (FORMS)
# Each line is written here in its program's form (the corpus index names the sources that show it), with our
# numbers: (line, step, total, epoch, loss).

@pytest.mark.parametrize(("line", "step", "total", "epoch", "loss"), [
    ("| epoch 003:    120 / 2240 loss=7.912, nll_loss=7.1, ppl=138.2, num_updates=4600, lr=0.0004", 4600, None, 3,
     7.912),
    ("2026-01-02 10:00:00 | INFO | train_inner | epoch 002:   300 / 9000 loss=5.01, ups=2.1, num_updates=9300", 9300,
     None, 2, 5.01),
    ("12/03 10:11:12 - mmengine - INFO - Iter(train) [ 2500/40000]  lr: 1.0e-02  eta: 3:10:00  loss: 0.8123", 2500,
     40000, None, 0.8123),
    ("2026-12-03 10:00:00,001 - mmdet - INFO - Iter [700/20000]\tlr: 1.000e-02, eta: 5:00:00, loss: 1.2345", 700,
     20000, None, 1.2345),
    ("iter 2340: loss 3.1416, time 41.20ms, mfu 33.10%", 2340, None, None, 3.1416),
    ("iter_dt 40.10ms; iter 900: train loss 1.75310", 900, None, None, 1.7531),
    ("step   14/80 | train loss 6.022119 | norm 1.3012 | lr 6.00e-05 | (123.45 ms | 41000 tok/s)", 14, 80, None,
     6.022119),
    ("step 57, loss: 5.912345, norm: 0.9123, dt: 330.12ms", 57, None, None, 5.912345),
    ("Step 33 | loss:0.91823 lr:2e-05 tokens_per_second_per_gpu:1201.5", 33, None, None, 0.91823),
    ("[12/03 10:11:12 d2.utils.events]:  eta: 1:02:03  iter: 419  total_loss: 1.204  loss_cls: 0.3  lr: 0.02", 419,
     None, None, None),
])
def test_a_training_loops_own_line_is_read(line: str, step: int, total: int | None, epoch: int | None,
                                           loss: float | None) -> None:
    point = parse_line(line)
    assert point is not None and point.format == "log", line
    assert (point.step, point.total) == (step, total), point
    assert (None if point.epoch is None else int(point.epoch)) == epoch, point
    if loss is not None:
        assert point.metrics.get("loss") == pytest.approx(loss), point


def _read(tmp_path: Path, lines: list[str]) -> tuple[Series, str]:
    from ntui.core.progress.read import read_progress

    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    series = read_progress(log)
    return series, estimate(series, now=0.0, time_left_s=None).words


def test_an_epoch_counted_run_is_shown_in_epochs_with_its_last_loss(tmp_path: Path) -> None:
    # Keras' fit: "Epoch N/M" on its own line, then the epoch's step bar (epochs from 1)
    lines = []
    for epoch in (1, 2, 3):
        bar = "250/250 [==============================] - 3s 12ms/step"
        lines += [f"Epoch {epoch}/12", f"{bar} - loss: 0.{9 - epoch}12 - accuracy: 0.71 - val_loss: 0.5"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, series.metrics.get("loss")) == (3, 12, 0.612), words
    assert "done" not in words


def test_an_epochs_batches_make_the_runs_step(tmp_path: Path) -> None:
    # mmcv's epoch-based runner: "Epoch [e][b/B]" (epochs from 1): the run's step is the epochs before, plus b
    lines = [f"Epoch [{e}][{b}/500]\tlr: 1.000e-02, eta: 1:00:00, loss: 1.{e}{b // 100}" for e in (1, 2)
             for b in (100, 300, 500)] + ["Epoch [3][200/500]\tlr: 1.000e-02, eta: 0:50:00, loss: 0.98"]
    series, _ = _read(tmp_path, lines)
    assert series.step == 2 * 500 + 200 and series.restarts == []


def test_the_runs_total_from_its_configuration_and_its_end_from_its_words(tmp_path: Path) -> None:
    lines = ["Namespace(arch='transformer', max_update=3000, lr=[0.0005])"]
    lines += [f"| epoch 001:   {b} / 900 loss=6.{b % 7}, num_updates={b}, lr=0.0004" for b in (100, 200, 300)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.declared_total) == (300, 3000) and "of 3,000" in words and "done" not in words
    series, words = _read(tmp_path, [*lines, "| done training in 812.3 seconds"])
    assert words == "step 300 of 3,000: done (before its total: the program said its training is over)", words
    series, words = _read(tmp_path, lines[1:] + ["| done training in 812.3 seconds"])
    assert words == "step 300: done", words  # no total said: done where it stopped, its total not made up


def test_a_loops_own_lines_count_the_run_not_the_bars_beside_them(tmp_path: Path) -> None:
    # ultralytics' epoch table: each epoch's row holds its batches' bar, then a validation bar of its own
    lines = []
    for epoch in (1, 2, 3):
        lines += ["      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
                  f"      {epoch}/50      3.10G      1.{epoch}21      0.9      1.2         12        640: "
                  "100%|##########| 40/40 [00:09<00:00,  4.20it/s]",
                  "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|"
                  "##########| 5/5 [00:01<00:00,  4.90it/s]"]
    series, words = _read(tmp_path, ["Scanning labels... 812 images: 100%|##########| 812/812 [00:02<00:00, 390it/s]",
                                     *lines])
    assert (series.step, series.total, series.restarts) == (3, 50, []), words
    assert "done" not in words


def test_keras_early_stopping_is_the_runs_end(tmp_path: Path) -> None:
    bar = "\x1b[1m20/20\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m0s\x1b[0m 9ms/step - loss: 0.4100"
    series, words = _read(tmp_path, ["Epoch 1/100", bar, "Epoch 2/100", bar, "Epoch 2: early stopping"])
    assert words == "step 2 of 100: done (before its total: the program said its training is over)", words
    assert series.metrics.get("loss") == 0.41


@pytest.mark.parametrize(("line", "total"), [
    ("  Total optimization steps = 1,250", 1250), ("max_steps: 5000", 5000), ("cfg.max_iters = 600000", 600000),
    ("max_steps=-1, num_train_epochs=3", None), ("'train_iters': 0,", None), ("the best total", None),
])
def test_a_declared_total(line: str, total: int | None) -> None:
    assert declared_total(line) == total


@pytest.mark.parametrize(("line", "ended"), [
    ("`Trainer.fit` stopped: `max_epochs=3` reached.", True), ("[titan] 10:09:06 - root - INFO - Training completed",
                                                             True),
    ("Training completed. Do not forget to share your model on huggingface.co/models =)", True),
    ("Validation completed", False), ("training 3 of 5 completed soon", False),
])
def test_what_says_a_run_ended(line: str, ended: bool) -> None:
    assert run_ended(line) is ended
