"""General mechanisms of the progress reader, round Z (issue [progress-real]): Ray's deduplicated lines, a dataset's
download bar before Lightning's epoch bars, and unsloth_zoo's step loss written after its bar. Every line here is
written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines as _read


def _epoch_bar(epoch: int, n: int, total: int = 60) -> str:
    """Lightning 2.x's training bar (TQDMProgressBar: "Epoch {e}: {p}%|{bar}| {n}/{total} [{elapsed}<{remaining},
    {rate}it/s, v_num=0]"), as a notebook's output shows each redraw on a line of its own."""
    pct = 100 * n // total
    return f"Epoch {epoch}:  {pct:>2}%|####      | {n}/{total} [00:01<00:01, 41.20it/s, v_num=0]"


# ---------------------------------------------------------------- Ray's log deduplicator


def test_a_bar_ray_printed_again_as_repeated_across_the_cluster_is_no_point(tmp_path: Path) -> None:
    """ray/_private/ray_logging LogDeduplicator: lines that several workers print alike are printed once, and their
    repeats summed up when its buffer flushes, as the line again with f" [repeated {count}x across cluster]" after it
    (the first time with a note on RAY_DEDUP_LOGS). An epoch's bar printed so during the next epoch is an earlier
    redraw, not the run going back: no restart, the step where the run is."""
    lines = [_epoch_bar(0, n) for n in (10, 30, 60)] + [_epoch_bar(1, n) for n in (12, 24)]
    lines.append(_epoch_bar(0, 60) + " [repeated 3x across cluster] (Ray deduplicates logs by default. Set "
                 "RAY_DEDUP_LOGS=0 to disable log deduplication.)")
    lines += [_epoch_bar(1, n) for n in (36, 48)]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.samples[-1].step == 60 + 48


def test_a_download_bar_ray_printed_again_is_no_point(tmp_path: Path) -> None:
    """A worker's dataset download (a bar of no words, its counts in bytes) summed up by Ray's deduplicator after the
    fit's end ('100%|...| 7302/7302 [...] [repeated 4x across cluster]'): the run's last step stays the last one."""
    lines = [_epoch_bar(0, n) for n in (20, 40, 60)]
    lines.append("100%|##########| 7302/7302 [00:00<00:00, 41283910.12it/s] [repeated 4x across cluster]")
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 60
    assert series.restarts == []


# ---------------------------------------------------------------- a download's bar before the epoch's bar


def test_a_download_bar_that_ended_before_lightnings_epoch_bar_is_no_restart(tmp_path: Path) -> None:
    """torchvision's dataset download draws a tqdm bar of no words over the file's bytes (two workers' redraws
    interleaved: one at its end, the other still going, then at its end), before Lightning 2.x's first "Epoch 0:"
    bar: that bar was another phase's, over before the training began, so the epoch's bar counting from 0 is no
    restart."""
    lines = ["  0%|          | 0/9276541 [00:00<?, ?it/s]",
             "100%|##########| 9276541/9276541 [00:00<00:00, 61203411.25it/s]",
             "  9%|9         | 851968/9276541 [00:00<00:01, 8411026.30it/s]",
             "100%|##########| 9276541/9276541 [00:00<00:00, 70114092.81it/s]"]
    lines += [_epoch_bar(0, n) for n in (6, 30, 60)] + [_epoch_bar(1, n) for n in (15, 45)]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.samples[-1].step == 60 + 45
    assert all(s.step <= 105 for s in series.samples)


# ---------------------------------------------------------------- unsloth_zoo's step loss after its bar


def test_unsloth_trains_step_loss_glued_after_its_bar_is_the_loss() -> None:
    """unsloth_zoo training_utils.unsloth_train(): every logging_steps steps, before the bar's update,
    progress_bar.write(f"{step}, {round(loss, 4)}"): the step's index from 0 and its loss, which a notebook's output
    shows glued after the bar's last redraw (the bar at 51/300 then "50, 1.8821")."""
    point = parse_line(" 17%|#7        | 51/300 [04:10<20:21,  4.91s/it]50, 1.8821")
    assert point is not None and point.step == 51 and point.total == 300
    assert training_loss(point.metrics) == ("loss", 1.8821)


def test_a_number_pair_after_a_bar_that_is_not_the_steps_index_is_no_loss() -> None:
    """Only the pair whose first number is the bar's count less one (the index unsloth_train writes) is its loss:
    another pair glued after a bar says something else."""
    point = parse_line(" 17%|#7        | 51/300 [04:10<20:21,  4.91s/it]7, 0.25")
    assert point is not None and point.step == 51
    assert training_loss(point.metrics) is None


def test_the_unsloth_run_shows_its_last_written_loss(tmp_path: Path) -> None:
    """unsloth_train's lines in turn (its banner's "Total steps = 300", a bar every 10 steps with the write after
    it), cut inside the next bar before its write: the loss is the last one written, the step the bar's."""
    lines = [f"{100 * (i + 1) // 300:>3}%|#         | {i + 1}/300 [01:00<10:00,  4.90s/it]{i}, {2.5 - i / 100:.4f}"
             for i in range(0, 120, 10)]
    lines.append(" 40%|####      | 121/300 [10:00<14:40,  4.92s/it")
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 121
    assert training_loss(series.metrics) == ("loss", 1.4)


# ---------------------------------------------------------------- a loop's bar description "epoch:e loss:x"


def test_a_bar_description_with_the_epoch_and_loss_glued_to_their_colons_is_read() -> None:
    """A horovod example loop's bar: tqdm(loader, desc=f"epoch:{epoch} loss:{loss.item()}"), no space after either
    colon: the bar counts that epoch's batches (an epoch's bar), and its loss is the loss."""
    point = parse_line("epoch:3 loss:0.6172839403152466:  40%|####  | 84/210 [00:12<00:18,  6.71it/s]")
    assert point is not None and point.epoch == 3.0 and point.per_epoch
    assert training_loss(point.metrics) == ("loss", 0.6172839403152466)
    assert "epoch" not in point.metrics


def test_the_glued_description_counts_the_run_in_global_steps(tmp_path: Path) -> None:
    """Such bars over epochs 0 and 1 (each 210 batches): the run's step is the epochs before times the bar's total
    plus its count, never a restart as the bar of the next epoch starts again."""
    lines = [f"epoch:{e} loss:{1.5 - e / 10 - n / 1000:.4f}:  {100 * n // 210:>2}%|#   | {n}/210 [00:10<00:10,  "
             "6.70it/s]" for e in (0, 1) for n in (50, 150, 210) if not (e == 1 and n == 210)]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.samples[-1].step == 210 + 150
    assert training_loss(series.metrics) == ("loss", 1.25)


# ---------------------------------------------------------------- a dict printed by pprint over several lines


def test_a_metrics_dict_pretty_printed_over_lines_gives_its_training_loss(tmp_path: Path) -> None:
    """raster-vision's Learner (pytorch_learner/learner.py): log.info(f'metrics:\\n{pformat(metrics)}') after each
    epoch; pprint breaks a dict wider than 80 columns into "{'epoch': 2," then one " 'key': value," a line, the last
    closing it: read as the one dict it is, its train_loss the loss."""
    lines = ["2025-02-03 10:00:00:rastervision.pytorch_learner.learner: INFO - metrics:",
             "{'epoch': 2,",
             " 'train_loss': 0.4321987654,",
             " 'train_time': '0:00:31.120044',",
             " 'val_loss': 0.5123456789,",
             " 'avg_f1': 0.7012345678}"]
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("train_loss", 0.4321987654)
