"""The run's model as the progress reader builds it: its unit (steps, or epochs), which bar is training, its total
from what the program says of the whole run, its real restarts and its end (issue [progress-real])."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.progress.board import ProgressBoard
from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.read import read_progress
from ntui.core.progress.runwords import declared_steps_flag, declared_total, run_start
from ntui.core.progress.series import Series, estimate


def _read(tmp_path: Path, lines: list[str], name: str = "run.log") -> tuple[Series, str]:
    log = tmp_path / name
    log.write_text("\n".join(lines) + "\n")
    series = read_progress(log)
    return series, estimate(series, now=0.0, time_left_s=None).words


def _keras_epoch(epoch: int, epochs: int, batches: int, upto: int) -> list[str]:
    bar = "━" * 20
    return [f"Epoch {epoch}/{epochs}", *(f"{b}/{batches} {bar} 1s 9ms/step - loss: 0.{40 + b}" for b in
                                          range(1, upto + 1))]


def test_keras_in_its_last_epoch_is_not_done_until_the_epoch_ends(tmp_path: Path) -> None:
    lines = _keras_epoch(1, 2, 8, 8) + _keras_epoch(2, 2, 8, 3)
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (2, 2)
    assert "done" not in words and "finishes" not in words, words
    series, words = _read(tmp_path, _keras_epoch(1, 2, 8, 8) + _keras_epoch(2, 2, 8, 8))
    assert words == "step 2 of 2: done", words


def test_a_bar_that_names_the_runs_epochs_counts_epochs_not_one_epochs_batches(tmp_path: Path) -> None:
    # pytorch-ignite's ProgressBar: "Epoch [N/T]" over each epoch's batches; the bar's own end is not the run's
    lines = []
    for epoch in (1, 2, 3):
        lines += [f"Epoch [{epoch}/12]: {p:3d}%|##########| {b}/300 [00:{b // 10:02d}<00:00, 9.10it/s, loss=0.{epoch}2]"
                  for p, b in ((33, 100), (67, 200), (100, 300))]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, series.restarts) == (3, 12, []), words
    assert "done" not in words


def test_an_epoch_counted_run_from_0_is_done_at_its_last_epochs_last_batch(tmp_path: Path) -> None:
    # OpenCLIP-like: epochs from 0, samples seen of the epoch's (the last batch short of the epoch's samples)
    lines = []
    for epoch in range(3):
        lines += [f"Train Epoch: {epoch} [  1024/50000 (2%)] Loss: 3.{epoch}1",
                  f"Train Epoch: {epoch} [ 49152/50000 (98%)] Loss: 2.{epoch}5"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (2, None)
    series, words = _read(tmp_path, ["  epochs: 3", *lines])
    assert words.startswith("step 2 of 3: done"), words
    series, words = _read(tmp_path, ["  epochs: 3", *lines[:-1]])
    assert "done" not in words, words


def test_lightning_1_bar_that_counts_validation_batches_too(tmp_path: Path) -> None:
    # each epoch's bar counts 6 training + 3 validation batches; the validation starts at 6
    lines = []
    for epoch in range(2):
        lines += [f"Epoch {epoch}:  {b * 11}%|#    | {b}/9 [00:0{b}<00:05, 1.20it/s, loss=0.{9 - b}, v_num=3]"
                  for b in range(1, 7)]
        lines += ["Validating: 0it [00:00, ?it/s]", "Validating:   0%|     | 0/3 [00:00<?, ?it/s]"]
        lines += [f"Epoch {epoch}:  {b * 11}%|#    | {b}/9 [00:0{b}<00:01, 1.30it/s, loss=0.3, v_num=3]"
                  for b in (7, 8, 9)]
    lines += ["Epoch 2:  11%|#    | 1/9 [00:01<00:09, 1.20it/s, loss=0.2, v_num=3]"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (13, []), words


def test_the_programs_own_word_that_it_resumed_is_a_restart_not_its_end(tmp_path: Path) -> None:
    first = [f"step {s} | train loss 2.{s}" for s in range(1, 6)]
    again = ["Resuming training from checkpoint ckpt/step_4.pt", *(f"step {s} | train loss 1.{s}" for s in (4, 5, 6))]
    series, words = _read(tmp_path, [*first, *again])
    assert (series.step, len(series.restarts)) == (6, 1), words
    # the same word after the run's end, with no step after it (a checkpoint restored for a test): still done
    series, words = _read(tmp_path, [*first, "Training completed.", "Resuming from checkpoint best.pt for testing"])
    assert words == "step 5: done", words


def test_the_programs_first_line_again_after_points_is_a_new_start(tmp_path: Path) -> None:
    first = "Using device cuda:0 with 4 workers"
    lines = [first, *(f"iter {i}: loss 3.{i}" for i in (10, 20, 30)), first, "iter 30: loss 2.9", "iter 40: loss 2.8"]
    series, words = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (40, 1), words
    # a table's header printed at each epoch is not a start
    header = "      Epoch    GPU_mem   box_loss"
    rows = []
    for epoch in (1, 2):
        rows += [header, f"      {epoch}/9      1.10G      1.{epoch}1      0.9  640: 100%|####| 8/8 "
                         "[00:01<00:00, 7.1it/s]"]
    series, words = _read(tmp_path, rows)
    assert (series.step, series.restarts) == (2, []), words


def test_a_resumed_trainer_keeps_the_step_it_resumed_from(tmp_path: Path) -> None:
    lines = ["***** Running training *****", "  Total optimization steps = 900",
             "  Continuing training from global step 600",
             "  0%|          | 0/900 [00:00<?, ?it/s]"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (600, 900), words


def test_a_loop_from_step_0_is_done_at_its_total_less_one_once_it_moved_on(tmp_path: Path) -> None:
    lines = ["epochs: 2", "max_steps_per_epoch: 5", *(f"Step {s} | loss:0.{50 - s}" for s in range(10))]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (9, 10) and "done" not in words, words
    series, words = _read(tmp_path, [*lines, "Model checkpoint saved to out/model_1.pt"])
    assert words == "step 9 of 10: done", words


def test_detectron2s_end_words_are_the_end_unless_an_error_follows(tmp_path: Path) -> None:
    events = [f"[01/02 10:0{i}:00] d2.utils.events INFO:  eta: 0:0{9 - i}:00  iter: {i * 20 + 19}  total_loss: 1.{i}"
              for i in range(4)]
    end = ["[01/02 10:05:00] d2.engine.hooks INFO: Overall training speed: 78 iterations in 0:04:00 (0.31 s / it)",
           "[01/02 10:05:00] d2.engine.hooks INFO: Total training time: 0:04:10 (0:00:10 on hooks)"]
    series, words = _read(tmp_path, [*events, *end])
    assert words == "step 79: done", words
    series, words = _read(tmp_path, [*events, *end, "Traceback (most recent call last):", "RuntimeError: boom"])
    assert "done" not in words and "stopped" in words, words


@pytest.mark.parametrize(("line", "step", "epoch", "loss"), [
    ("Iter 120: Train loss 0.512, Learning Rate 1.000e-05, It/sec 0.9", 120, None, 0.512),
    ("2025-01-02 10:00:00,001 - app - INFO - Training Epoch:[12/400]\t loss=3.25\t lr=0.0001", 12, 12.0, 3.25),
    ("| epoch 004 | loss 7.125 | nll_loss 7.1 | ppl 139.5 | wps 1200 | num_updates 820 | lr 0.05 |", 820, 4.0, 7.125),
    ("0 27 2025-03-04 05:06:07.123456 {'loss': '6.1250', 'avg_loss': '6.5', 'tok/stp': '65,536.0'}", 27, 0.0, 6.125),
    ("2025-01-01 00:00:00,000 INFO [train.py:300] Epoch 2, batch 150, batch avg loss 0.41", 2, 2.0, 0.41),
    ("2025-01-01 00:00:00,000 - INFO: ===> Epoch 40 Complete: Avg. Loss: 0.021500 time: 600.10", 40, 40.0, 0.0215),
    ("Epoch [3/9]: [120/400]  30%|###       , loss=2.50e-01 [00:12<00:28]", 3, 3.0, 0.25),
    ("Train Epoch: 2/40 Step: 300/500 | 0.910s/batch | lr 5.0000e-04 || Mask_Loss 1.2500", 300, 2.0, 1.25),
])
def test_loop_forms(line: str, step: int, epoch: float | None, loss: float) -> None:
    point = parse_line(line)
    assert point is not None and point.step == step and point.epoch == epoch, point
    assert training_loss(point.metrics) is not None and training_loss(point.metrics)[1] == loss, point.metrics


def test_an_evaluation_summary_is_not_a_loop_line() -> None:
    assert parse_line("2025-01-01 | INFO | valid | epoch 004 | loss 7.0 | ppl 128 | num_updates 820 |") is None
    assert parse_line("2025-01-02 10:00:00,001 - app - INFO - Testing Epoch:[12/400]\t mae=60.2\t mse=99.1") is None


def test_lit_gpt_counts_iterations_where_its_total_does(tmp_path: Path) -> None:
    head = "{'name': 'tiny', 'learning_rate': 0.0006, 'micro_batch_size': 4, 'max_iters': 5000}"
    lines = [f"iter {i} step {i // 4}: loss 9.{i}, iter time: 90.00ms" for i in range(1, 9)]
    series, words = _read(tmp_path, [head, *lines])
    assert (series.step, series.run_total) == (8, 5000), words
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (2, None), words


def test_totals_the_programs_say() -> None:
    assert declared_total("Starting training..., iters: 600") == 600
    assert declared_total("Training for 2500 steps") == 2500
    assert declared_total("python train.py --steps 40") is None  # bare: only beside step lines
    assert declared_steps_flag("cmd = python -u train.py -p 2 --steps=200") == 200
    assert declared_steps_flag("train.py --eval-steps 50") is None


def test_a_bare_steps_flag_is_the_total_beside_lines_that_count_steps(tmp_path: Path) -> None:
    lines = ["cmd = python -u train.py --deepspeed_config=ds.json --steps=80",
             *(f"steps: {s} loss: 2.{s} iter time (s): 0.2 samples/sec: 300.1" for s in (10, 20, 30))]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (30, 80), words


def test_a_loss_of_another_name() -> None:
    assert training_loss({"lr": 1e-4, "closs": 1.25, "grad_norm": 0.5}) == ("closs", 1.25)
    assert training_loss({"g_loss": 1.0, "d_loss": 0.5}) is None  # two: none is the loss
    assert training_loss({"val_loss": 1.0, "lr": 0.1}) is None


def test_run_start_words() -> None:
    assert run_start("  Continuing training from global step 1200") == 1200
    assert run_start("=> resuming checkpoint 'logs/ckpt/epoch_3.pt' (epoch 3)") == 0
    assert run_start("Initializing from \tcv/checkpoint_500.t7") == 0
    assert run_start("Loading checkpoint shards: done") is None
    assert run_start("Training started") is None


def test_the_board_view_reads_the_run_as_the_cli_does(tmp_path: Path) -> None:
    log = tmp_path / "slurm-5.out"
    log.write_text("\n".join(["Training for 300 steps", *(f"step {s}, loss: 1.{s}" for s in (100, 200, 300)),
                              "Training completed."]) + "\n")
    views = ProgressBoard().poll({"5": str(log)})
    view = views["5"]
    assert view.total == 300
    assert estimate(view.series(), now=0.0, time_left_s=None).words == \
        estimate(read_progress(log), now=0.0, time_left_s=None).words == "step 300 of 300: done"


def test_lightning_1_validation_every_few_batches_inside_the_epochs_bar(tmp_path: Path) -> None:
    # val_check_interval=0.5: the epoch's bar counts 10 training batches and two validations of 2 batches (14)
    def bar(epoch: int, n: int) -> str:
        return f"Epoch {epoch}:  {100 * n // 14}%|###   | {n}/14 [00:{n:02d}<00:10, 1.00it/s, loss=0.{50 - n}, v_num=1]"

    def val(n: int) -> str:
        return f"Validating:  {50 * n}%|#####     | {n}/2 [00:00<00:00, 9.00it/s]"

    lines = [bar(0, n) for n in range(1, 6)] + ["Validating: 0it [00:00, ?it/s]", val(1), bar(0, 6), val(2), bar(0, 7)]
    lines += [bar(0, n) for n in range(8, 13)] + [val(1), bar(0, 13), val(2), bar(0, 14)]
    lines += [bar(1, n) for n in (1, 2, 3)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, series.restarts) == (13, None, []), words
    assert series.per_epoch == 10


def test_ignites_own_bar_format_counts_epochs_and_its_evaluators_bar_is_no_step(tmp_path: Path) -> None:
    lines = []
    for epoch in (1, 2):
        lines += [f"Epoch [{epoch}/6]: [{n}/300] {n // 3:3d}%|###       , loss=1.{epoch}0e-01 [00:0{n // 100}<00:03]"
                  for n in (100, 200, 300)]
        lines += ["[40/40] 100%|##########  [00:01<00:00]"]  # the evaluator's bar (one epoch: no description)
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, series.restarts) == (2, 6, []), words
    assert "done" not in words


def test_slurms_cancel_and_killed_tasks_stop_the_run_in_every_versions_words() -> None:
    """The cancel and srun's killed task are srunlines' forms: Slurm 26.05's 'DUE to TIME LIMIT' is a time limit too
    (progress had a regex of its own that read it as a plain cancel), and a task list ('tasks 0-3') is read."""
    from ntui.core.progress.runwords import run_stop

    at = "CANCELLED AT 2026-12-05T01:00:00"
    assert run_stop(f"slurmstepd: error: *** JOB 12 ON nid001 {at} DUE to TIME LIMIT ***") == \
        "cancelled at its time limit"
    assert run_stop(f"slurmstepd: error: *** STEP 12.0 ON nid001 {at} DUE TO TIME LIMIT ***") == \
        "cancelled at its time limit"
    assert run_stop(f"slurmstepd: error: *** JOB 12 ON nid001 {at} ***") == "cancelled"
    assert run_stop("srun: error: nid001: tasks 0-3: Killed") == "killed"
    # (srun reports a task's exit only where its code is not 0: the step failed; round l)
    assert run_stop("srun: error: nid001: task 3: Exited with exit code 1") == "an error: a task exited with code 1"
