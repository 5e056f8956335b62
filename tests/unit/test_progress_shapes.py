"""The last reader of a log no form reads (``ntui/core/progress/shapes.py``, issue [progress-real]): the shape of the
line a training loop prints at each record, its named counter and its loss. Every line here is written for the test
in the way hand-written loops word their own records (no framework's form: those have readers of their own), with
values of our own; each test checks that the shapes are what read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.progress.board import ProgressBoard
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Series, estimate
from ntui.core.progress.shapes import KEEP, MAX_SHAPES, ShapeReader


def _read(tmp_path: Path, lines: list[str]) -> Series:
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    return read_progress(log)


def _done(iteration: int, loss: float, stamp: int = 0, rank: int | None = None) -> str:
    label = f"{rank}: " if rank is not None else ""
    return (f"{label}2026-03-02 10:{stamp % 60:02d}:11 trainer: done with iteration {iteration} "
            f"({1242.5 + iteration % 7:.1f} samples/s), the loss is now {loss}")


def test_a_loops_own_sentence_is_read_by_its_named_counter_and_its_loss(tmp_path: Path) -> None:
    lines = ["starting the job", "caching the training set ..."]
    lines += [_done(4000 + 25 * k, round(3.1 - k / 100, 4), k) for k in range(40)]
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None
    assert series.step == 4975 and series.run_total is None and not series.restarts
    assert series.metrics["loss"] == pytest.approx(2.71)


def test_the_counter_going_back_in_a_new_process_is_a_restart(tmp_path: Path) -> None:
    first = [_done(1000 + 25 * k, 2.5, k) for k in range(20)]  # up to 1475, saved at 1400
    again = ["caching the training set ...", "going on from the state saved at 1400"]
    again += [_done(1425 + 25 * k, 2.3, k) for k in range(10)]  # 1425 .. 1650
    series = _read(tmp_path, [*first, *again])
    assert series.lines.shapes.taken is not None
    assert series.step == 1650 and len(series.restarts) == 1


def test_a_count_before_its_counters_word_is_read(tmp_path: Path) -> None:
    lines = [f"[worker] {k * 100} updates done | objective (loss) = {2 - k / 50:.4f} | grad norm 1.{k}"
             for k in range(1, 20)]
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None and series.step == 1900
    assert series.metrics["loss"] == pytest.approx(1.62)


def test_an_epoch_counter_with_its_total_counts_the_run_in_epochs(tmp_path: Path) -> None:
    lines = [f"Epoch {e} out of 50 complete. Loss on train set: {2 - e / 50:.4f}" for e in range(1, 20)]
    lines.insert(8, "Epoch 8 out of 50: loss on the validation set 1.9021")
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None and series.lines.shapes.epochs
    assert (series.step, series.run_total) == (19, 50)
    assert series.metrics["loss"] == pytest.approx(1.62)  # the training's, not the validation's line


def test_each_ranks_line_under_sruns_labels_gives_the_lowest_ranks_loss(tmp_path: Path) -> None:
    lines = [_done(100 * k, round(2 - k / 10 + rank / 1000, 4), k, rank) for k in range(1, 7) for rank in (2, 0, 3, 1)]
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None
    assert series.step == 600 and series.metrics["loss"] == pytest.approx(1.4)


def test_an_evaluations_lines_are_not_the_run(tmp_path: Path) -> None:
    lines = [f"Epoch {e} out of 50 on the test set: loss {2 - e / 50:.4f}" for e in range(1, 12)]
    assert _read(tmp_path, lines).step is None
    trained = [f"Epoch {e} out of 50 on the train set: loss {2 - e / 50:.4f}" for e in range(1, 12)]
    series = _read(tmp_path, trained)  # the same words without the evaluation's
    assert series.lines.shapes.taken is not None and series.step == 11


def test_a_count_that_does_not_go_up_is_no_counter(tmp_path: Path) -> None:
    # every batch's line of one epoch: its epoch the same, no other counter named
    lines = [f"Finished epoch 4 batch, mean loss {2 - b / 100:.3f}" for b in range(30)]
    series = _read(tmp_path, lines)
    assert series.step is None and series.lines.shapes.taken is None


def test_a_log_another_reader_reads_is_left_to_it(tmp_path: Path) -> None:
    lines = []
    for k in range(1, 31):
        lines.append(f"train:  {k * 100 // 60:3d}%|#   | {k}/60 [00:{k:02d}<00:30,  1.00it/s]")
        lines.append(_done(9000 + k, 2 - k / 100, k))
    series = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (30, 60)
    assert series.lines.shapes.taken is None


def test_the_live_board_reads_the_same_as_the_file_reader(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    lines = [_done(200 + 25 * k, round(2.0 - k / 1000, 4), k) for k in range(12)]
    log.write_text("\n".join(lines[:2]) + "\n")  # two lines: no shape taken yet
    board = ProgressBoard()
    assert board.poll({"9": str(log)})["9"].step is None
    log.write_text("\n".join(lines) + "\n")
    view = board.poll({"9": str(log)})["9"]
    whole = read_progress(log)
    assert whole.lines.shapes.taken is not None
    assert view.step == whole.step == 475 and view.metrics["loss"] == whole.metrics["loss"]


def test_the_shapes_kept_are_bounded() -> None:
    shapes = ShapeReader()
    for n in range(MAX_SHAPES + 50):  # a new shape each line (the words change): none is ever taken
        shapes.feed(f"note {'x' * n} step 5 loss 0.5", 0.0, None, others_read=False)
    assert len(shapes.shapes) == MAX_SHAPES and shapes.taken is None
    shapes = ShapeReader()
    for _ in range(KEEP + 5):  # one shape whose counter never goes up: dropped after KEEP lines
        shapes.feed("note step 5 loss 0.5", 0.0, None, others_read=False)
    kept = shapes.shapes["note step \x00 loss \x00"]
    assert kept.dead and not kept.lines


def test_a_count_of_its_total_beside_a_changing_time_is_read_without_a_loss(tmp_path: Path) -> None:
    # a loop that prints no training loss (modded-nanogpt's "step:N/T train_time:Tms step_avg:Ams"), its evaluation's
    # line apart; the counter at its total: the run is done
    lines = ["Running python 3.12", "step:0/40 val_loss:10.8258 train_time:0ms step_avg:nanms"]
    lines += [f"step:{k}/40 train_time:{k * 251}ms step_avg:{251 + k % 3}.0{k % 10}ms" for k in range(1, 41)]
    lines += ["step:40/40 val_loss:3.4012 train_time:10040ms step_avg:251.00ms", "peak memory consumption: 31 GiB"]
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None and series.lines.shapes.loss is None
    assert (series.step, series.run_total) == (40, 40)
    assert "done" in estimate(series, now=0.0, time_left_s=None).words


def test_a_count_of_its_total_alone_or_with_fixed_numbers_is_not_a_run(tmp_path: Path) -> None:
    alone = [f"step {k}/12: done" for k in range(1, 13)]  # a setup script's own steps: nothing else changes
    assert _read(tmp_path, alone).step is None
    evaluated = [f"eval step {k}/30 took {k * 1.5:.1f}s" for k in range(1, 31)]  # an evaluation's count
    assert _read(tmp_path, evaluated).step is None


def test_a_dashed_counter_its_total_and_a_loss_named_with_a_dash(tmp_path: Path) -> None:
    # a DDP script's own record under torchrun's --tee prefix: "Epoch - e/E: time - t || loss_train - x || ..."
    lines = ["[default0]:Hello from local_rank 0"]
    lines += [f"[default0]:Epoch - {e}/12: time - 18.{e:02d}s || loss_train - {2 - e / 10:.4f} || acc_train - 0.{e:02d}"
              for e in range(12)]
    lines.append("[default0]:Training took 221.3s")
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None and series.lines.shapes.epochs
    assert (series.step, series.run_total) == (11, 12) and series.metrics["loss"] == pytest.approx(0.9)


def test_a_leading_count_and_a_loss_named_after_its_number(tmp_path: Path) -> None:
    # a trainer's record that says its step first and names each number after it ("  N 3.1 s run, 8.3 loss, 8e-05 LR")
    lines = ["loaded 512 samples"]
    lines += [f"  {k:4d} 3.1{k % 9} s run, {9 - k / 100:.4f} loss, 0.0000{k % 7 + 1}0000 LR, 120.5 GB used"
              for k in range(1, 31)]
    series = _read(tmp_path, lines)
    assert series.lines.shapes.taken is not None
    assert series.step == 30 and series.metrics["loss"] == pytest.approx(8.7)
