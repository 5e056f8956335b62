"""The run's model, not a bar's: which bar is training (preparation, evaluation and inner bars are not), the run's
total from what the program says of the whole run (its epochs, its max steps), its end said on a bar's line, bars
cut at the terminal's width or printed without a rate, syslog's escaped control characters. Each line is written
here in its program's form (the corpus index names public sources that show it), with our own numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ntui.core.progress.lines import Pattern, parse_line, training_loss
from ntui.core.progress.read import read_progress, unescape
from ntui.core.progress.runwords import declared_epochs, declared_total, run_end
from ntui.core.progress.series import Series, estimate


def _read(tmp_path: Path, lines: list[str]) -> tuple[Series, str]:
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    series = read_progress(log)
    return series, estimate(series, now=0.0, time_left_s=None).words


@pytest.mark.parametrize(("line", "phase"), [
    ("Loading checkpoint shards: 100%|##########| 3/3 [00:05<00:00,  1.70s/it]", "preparation"),
    ("Map (num_proc=4): 100%|##########| 9000/9000 [00:02<00:00, 4100.20 examples/s]", "preparation"),
    ("Generating train split: 7000 examples [00:00, 12011.30 examples/s]", "preparation"),
    ("Evaluating: 40%|####      | 20/50 [00:03<00:04,  6.60it/s]", "evaluation"),
    (" 40%|####      | 20/50 [00:03<00:04,  6.60it/s]\x1b[A", "evaluation"),  # a bar below the run's (position 1)
    ("Epoch 2:  40%|####      | 20/50 [00:03<00:04,  6.60it/s, loss=0.31]", "train"),
    (" 40%|####      | 200/500 [00:30<00:45,  6.60it/s]", "train"),
])
def test_what_a_bar_counts(line: str, phase: str) -> None:
    point = parse_line(line)
    if phase == "preparation" and point is None:
        return  # not read at all is as right
    assert point is not None and point.phase == phase, point


def test_a_preparation_bar_is_never_the_runs_end(tmp_path: Path) -> None:
    # a model's shards loaded, then only the Trainer's dicts (its bar not captured): no step, never "done"
    lines = ["Loading checkpoint shards: 100%|##########| 4/4 [00:06<00:00,  1.52s/it]",
             "{'loss': 1.2031, 'grad_norm': 3.1, 'learning_rate': 2e-05, 'epoch': 0.01}",
             "{'loss': 0.9412, 'grad_norm': 2.7, 'learning_rate': 2e-05, 'epoch': 0.02}"]
    series, words = _read(tmp_path, lines)
    assert series.step is None and "done" not in words, words
    assert training_loss(series.metrics) == ("loss", 0.9412)


def test_an_inner_bar_of_a_smaller_total_is_no_restart(tmp_path: Path) -> None:
    # the Trainer's evaluation bar, pasted without its cursor moves, inside the run's bar
    run = [f" {s // 10}%|#         | {s}/1000 [00:{s // 10:02d}<01:30,  9.90it/s]" for s in range(10, 210, 10)]
    evaluation = [f" {e * 20}%|##        | {e}/5 [00:0{e}<00:02,  1.10it/s]" for e in range(1, 6)]
    series, words = _read(tmp_path, run[:10] + evaluation + run[10:])
    assert (series.step, series.total, series.restarts) == (200, 1000, []), words


def test_the_run_bar_going_back_is_still_a_restart(tmp_path: Path) -> None:
    run = [f" 1%|          | {s}/1000 [00:{s:02d}<01:30,  9.90it/s]" for s in range(1, 30)]
    series, _ = _read(tmp_path, run + run[:5])
    assert len(series.restarts) == 1 and series.step == 5


@pytest.mark.parametrize(("line", "step", "total", "metric"), [
    # cut at the terminal's width: no "]"
    ("Epoch 3: 100% 120/120 [02:41<00:00,  1.35s/it", 120, 120, None),
    ("Epoch 0:  67%|######6   | 16/24 [00:52<00:", 16, 24, None),
    # NeMo's bar prints no rate: the postfix follows the times
    ("Epoch 0: :  40%|####      | 400/1000 [01:40<02:30, reduced_train_loss=1.21, global_step=399.0]", 400, 1000,
     "reduced_train_loss"),
    # the metrics a bar's description says (torchtune: "epoch|step|Loss: X"; its total is one epoch's, not the run's)
    ("1|12|Loss: 0.8123: 100%|##########| 12/12 [01:00<00:00,  5.00s/it]", 12, None, "Loss"),
])
def test_a_bar_cut_or_without_a_rate_is_read(line: str, step: int, total: int | None, metric: str | None) -> None:
    point = parse_line(line)
    assert point is not None and (point.step, point.total) == (step, total), point
    assert metric is None or metric in point.metrics, point


def test_a_capitalised_loss_is_the_training_loss() -> None:
    assert training_loss({"lr": 0.1, "Loss": 0.5}) == ("Loss", 0.5)
    assert training_loss({"train_loss": 0.7, "Loss": 0.5}) == ("train_loss", 0.7)


@pytest.mark.parametrize(("line", "epochs"), [
    ("2026-01-02 10:00:00,001 - mmdet - INFO - workflow: [('train', 1)], max: 24 epochs", 24),
    ("[2026-01-02 10:00:00,001][__main__][INFO] - Start training for 80 epochs", 80),
    ("  Num Epochs = 3", 3), ("trainer: {max_epochs: 40, devices: 4}", 40),
    ("2026-01-02,10:00:00 | INFO |   epochs: 32", 32), ("python train.py --epochs 90 --lr 0.1", 90),
    ("  warmup_epochs: 5", None), ("the epochs before", None), ("max_epochs=-1", None),
])
def test_declared_epochs(line: str, epochs: int | None) -> None:
    assert declared_epochs(line) == epochs


@pytest.mark.parametrize(("line", "total"), [
    ("fairseq-train data-bin --arch lstm --max-update 5000 --lr 0.001", 5000),
    ("torchrun pretrain_gpt.py --train-iters=20000 --lr 1e-4", 20000), ("python train.py --steps 40", None),
])
def test_a_launchers_command_line_states_the_total(line: str, total: int | None) -> None:
    assert declared_total(line) == total


def test_an_epochs_batches_times_the_declared_epochs_is_the_total(tmp_path: Path) -> None:
    lines = ["2026-01-02 10:00:00,001 - mmdet - INFO - workflow: [('train', 1)], max: 12 epochs"]
    lines += [f"2026-01-02 10:0{b // 100}:00,001 - mmdet - INFO - Epoch [2][{b}/800]\tlr: 2.000e-02, eta: 3:00:00, "
              f"time: 0.6, loss: 1.{b // 100}" for b in (100, 200, 300)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (800 + 300, 12 * 800), words
    assert "done" not in words


def test_an_epoch_counted_run_takes_its_declared_epochs(tmp_path: Path) -> None:
    lines = ["2026-01-02,10:00:00 | INFO |   epochs: 6", "2026-01-02,10:00:00 | INFO | Start epoch 0"]
    lines += [f"2026-01-02,10:0{e}:00 | INFO | Train Epoch: {e} [ {b}/51200 ({b * 100 // 51200}%)] Loss: 0.{9 - e}1 "
              "(0.8) LR: 0.000010" for e in (0, 1, 2) for b in (512, 25600)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, series.restarts) == (2, 6, []), words
    assert training_loss(series.metrics) == ("Loss", 0.71)


def test_max_epochs_reached_on_the_bars_line_ends_the_run_with_its_total(tmp_path: Path) -> None:
    bar = "Epoch {e}: 100%|##########| 50/50 [00:05<00:00,  9.80it/s, v_num=1, train_loss=0.{e}2]"
    lines = [bar.format(e=e) for e in range(4)]
    lines[-1] += "`Trainer.fit` stopped: `max_epochs=4` reached."  # glued: the bar never ended its line
    series, words = _read(tmp_path, lines)
    assert words == "step 200 of 200: done", words
    assert run_end("`Trainer.fit` stopped: `max_epochs=4` reached.") == ("epochs", 4)


def test_max_steps_reached_is_the_runs_last_step(tmp_path: Path) -> None:
    # a bar that counts an epoch's batches without a total, then Lightning's word
    lines = [f"Epoch 1: : {n}it [1:00:00,  4.40it/s, loss=2.2, v_num=ab12]" for n in (1000, 5000, 9000)]
    series, words = _read(tmp_path, [*lines, "`Trainer.fit` stopped: `max_steps=30000` reached."])
    assert words == "step 30,000 of 30,000: done", words
    series.new_start()
    assert series.step == 9000  # a new start: the word is the earlier run's


def test_an_epochs_bar_gives_no_run_total_of_its_own(tmp_path: Path) -> None:
    lines = ["Training:   0%|          | 0/30 [00:00<?, ?it/s]"]
    lines += [f"Epoch 0:  {n * 3}%|#         | {n}/30 [00:{n:02d}<00:20,  1.00it/s, loss=1.{n}]" for n in (3, 6, 9)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (9, None), words


@pytest.mark.parametrize(("line", "step", "total", "epoch"), [
    ("Train Epoch: 4 [12800/60000 (21%)]\tLoss: 0.183200", 4, None, 4),
    ("INFO:vits:Train Epoch: 12 [60%]", 12, None, 12),
    ("INFO: eta: 9:10:11  iter: 440  loss: 1.2101 (1.3302)  loss_mask: 0.61 (0.66)  time: 0.41 (0.43)", 440, None,
     None),
    ("INFO:tensorflow:global step 812: loss = 0.7012 (1.101 sec/step)", 812, None, None),
    ("steps: 70 loss: 1.8821 iter time (s): 0.201 samples/sec: 318.400", 70, None, None),
    ("epoch 7  | loss: 0.51234 | val_0_auc: 0.80121 |  0:02:41s", 7, None, 7),
    ("| epoch 004  3000 / 7100 loss=1.02 (1.31), wps=900, wpb=880, bsz=30, lr=0.001", 4, None, 4),
])
def test_more_training_loops_own_lines(line: str, step: int, total: int | None, epoch: int | None) -> None:
    point = parse_line(line)
    assert point is not None and point.format == "log", line
    assert (point.step, point.total) == (step, total), point
    assert (None if point.epoch is None else int(point.epoch)) == epoch, point


def test_syslogs_escaped_control_characters_are_what_they_were(tmp_path: Path) -> None:
    assert unescape("a#011b#015c#033[A") == "a\tb\rc\x1b[A"
    prefix = "[1,mpirank:0,algo-1]<stdout>:"
    lines = [f"{prefix}#015Epoch 0:  {n * 10}% {n}/10 [00:0{n}<00:05,  1.50it/s, loss=0.{n}]" for n in (2, 4, 6)]
    lines.append(f"{prefix}#015Validation DataLoader 0:  50% 1/2 [00:00<00:00, 90.00it/s]#033[A")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (6, []), words


def test_an_epochs_bar_without_a_total_goes_on_from_the_epochs_before(tmp_path: Path) -> None:
    lines = []
    for epoch, last in ((0, 3000), (1, 3000), (2, 1200)):
        lines += [f"Epoch {epoch}: : {n}it [0:{n // 600:02d}:00,  5.00it/s, loss=1.{epoch}, v_num=x1]"
                  for n in range(600, last + 1, 600)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (3000 + 3000 + 1200, []), words


@pytest.mark.parametrize(("line", "epoch", "epochs"), [
    ("2023-02-01 09:00:00,100   INFO  Train:    3/8 ( 37%) [ 150/300 ( 50%)]  Loss: 9.1 (12.2)  LR: 1.0e-03  "
     "Acc_iter 751", 3, 8),
    ("1: [RANK 5] Epoch 6 | Batchsize: 64 | Steps: 118 | Loss: 0.2011", 6, None),
])
def test_epoch_counted_lines(line: str, epoch: int, epochs: int | None) -> None:
    point = parse_line(line)
    assert point is not None and point.counts_epochs, line
    assert (point.step, point.total) == (epoch, epochs), point


def test_an_epoch_counted_run_going_back_within_its_epoch_is_a_restart(tmp_path: Path) -> None:
    # a relaunch that resumes from the epoch's checkpoint and repeats the epoch from its first batch
    first = [f"INFO Train: [7/90][{b}/1000]\teta 0:10:00 lr 0.001\tloss 1.{b // 100} (1.5)" for b in (0, 200, 400, 600)]
    again = [f"INFO Train: [7/90][{b}/1000]\teta 0:10:00 lr 0.001\tloss 1.{b // 100} (1.5)" for b in (0, 200)]
    series, words = _read(tmp_path, first + again)
    assert (series.step, len(series.restarts)) == (7, 1), words
    series, words = _read(tmp_path, first)
    assert series.restarts == [], words


def test_fairseqs_json_lines_give_their_quoted_loss_and_the_epochs_summary_its_step(tmp_path: Path) -> None:
    inner = ('2022-05-06 07:08:09 | INFO | train_inner | {"epoch": 4, "update": 3.91, "loss": "6.102", '
             '"ppl": "68.7", "num_updates": "3900", "lr": "0.0003"}')
    summary = ('2022-05-06 07:09:10 | INFO | train | {"epoch": 4, "train_loss": "6.088", "train_ppl": "68.0", '
               '"train_num_updates": "3988", "train_lr": "0.0003"}')
    point = parse_line(inner)
    assert point is not None and (point.step, point.metrics.get("loss")) == (3900, 6.102), point
    series, words = _read(tmp_path, [inner, summary])
    assert series.step == 3988 and series.metrics.get("train_loss") == 6.088, words


def test_nemos_step_loss_wins_over_the_running_mean_its_bar_adds() -> None:
    point = parse_line("Epoch 0:   1%|          | 30/3000 [01:00<1:39:00,  2.00s/it, loss=3.71, v_num=, "
                       "reduced_train_loss=3.402, global_step=29.0]")
    assert point is not None and training_loss(point.metrics) == ("reduced_train_loss", 3.402)


def test_where_every_rank_prints_one_ranks_lines_are_the_run(tmp_path: Path) -> None:
    # each rank's lines in order, the ranks' interleaved out of order (rank 1 runs ahead of rank 0's printing)
    lines = []
    for step in range(10, 110, 10):
        lines.append(f"[rank1]:2025-01-01 10:00:{step // 10:02d},000 - root - INFO - step: {step + 20}  loss:  3.0000")
        lines.append(f"[rank0]:2025-01-01 10:00:{step // 10:02d},100 - root - INFO - step: {step}  loss:  3.0000")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (120, []), words  # rank 1's, the first that printed
    point = parse_line("3: step: 40  loss: 1.5")
    assert point is not None and point.rank == 3


def test_a_new_start_may_follow_another_rank() -> None:
    series = Series()
    series.add(parse_line("[rank2]:step: 10  loss: 1.0") or pytest.fail("no point"), 0.0)
    series.add(parse_line("[rank0]:step: 11  loss: 1.0") or pytest.fail("no point"), 1.0)
    assert series.step == 10
    series.new_start()
    series.add(parse_line("[rank0]:step: 11  loss: 1.0") or pytest.fail("no point"), 2.0)
    assert series.step == 11


def test_cellposes_epoch_line_with_its_capitalised_loss() -> None:
    point = parse_line("2022-02-18 01:46:44,126 [INFO] Epoch 10, Time 9074.8s, Loss 0.5035, LR 0.2000")
    assert point is not None and point.counts_epochs and point.step == 10, point
    assert point.metrics.get("loss") == 0.5035, point


def _bar(step: int, total: int) -> str:
    return f" {100 * step // total}%|#         | {step}/{total} [00:{step % 60:02d}<00:10,  2.00it/s]"


def test_an_evaluation_bars_closing_redraw_keeps_it_inside_the_run(tmp_path: Path) -> None:
    lines = [_bar(s, 500) for s in range(1, 101)] + [_bar(e, 8) for e in range(1, 9)] + [_bar(8, 8)]
    series, words = _read(tmp_path, lines + [_bar(s, 500) for s in range(101, 121)])
    assert (series.step, series.total, series.restarts) == (120, 500, []), words
    series, words = _read(tmp_path, lines)  # read during the evaluation: the run's step
    assert (series.step, series.total) == (100, 500), words


def test_a_held_bar_that_ends_and_is_followed_by_another_was_the_runs_next(tmp_path: Path) -> None:
    # a run killed at 74 of 10000, then two shorter runs appended to the same log (no header between)
    lines = [_bar(s, 10000) for s in range(1, 75)] + [_bar(s, 80) for s in range(1, 81)]
    lines += [_bar(s, 80) for s in range(1, 81)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, len(series.restarts)) == (80, 80, 2), words


def test_a_held_bar_that_goes_on_and_on_is_the_run() -> None:
    from ntui.core.progress.series import INNER_MAX

    series = Series()
    for s in range(1, 50):
        series.add(parse_line(_bar(s, 100000)) or pytest.fail("no point"), float(s))
    for s in range(1, INNER_MAX + 10):
        series.add(parse_line(_bar(s, 90000)) or pytest.fail("no point"), 100.0 + s)
    assert series.total == 90000 and series.step == INNER_MAX + 9


@pytest.mark.parametrize(("line", "ended"), [
    ("150 epochs completed in 3.812 hours.", True), ("[after training is done] datetime: 2026-01-02 10:00:00 ", True),
    ("Training time: 412.31s", True), ("3 of 5 epochs completed in time", False),
    ("*** Best metric: 80.1 (epoch 12)", False),  # timm prints it after an interrupt too
])
def test_more_words_that_say_the_training_is_over(line: str, ended: bool) -> None:
    assert (run_end(line) is not None) is ended


@pytest.mark.parametrize(("line", "why"), [
    ("slurmstepd: error: *** JOB 4242 ON gpu-a01 CANCELLED AT 2026-01-02T10:00:00 DUE TO TIME LIMIT ***",
     "cancelled at its time limit"),
    ("slurmstepd: error: *** STEP 4242.0 ON gpu-a01 CANCELLED AT 2026-01-02T10:00:00 ***", "cancelled"),
    ("Traceback (most recent call last):", "an error: a traceback"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.", "out of GPU memory"),
    ("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(...)",
     "a collective timed out"),
    ("W0102 10:00:00.000000 4242 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, "
     "shutting down workers", "killed by a signal"),
    ("srun: error: gpu-a01: task 3: Killed", "killed"),
    ("the traceback module", None), ("killed two birds", None),
])
def test_what_says_the_run_was_stopped(line: str, why: str | None) -> None:
    from ntui.core.progress.runwords import run_stop

    assert run_stop(line) == why


def _iters(last: int) -> list[str]:
    return [f"2026-01-02 10:{s // 60:02d}:{s % 60:02d} iter {s}: loss {3 - s / 100:.4f}, time 100.00ms"
            for s in range(1, last + 1)]


def test_a_stopped_run_gets_no_finish_time(tmp_path: Path) -> None:
    lines = ["max_iters = 1000", *_iters(40)]
    _, words = _read(tmp_path, lines)
    assert "finishes in" in words, words
    cancel = "slurmstepd: error: *** JOB 7 ON gpu-b02 CANCELLED AT 2026-01-02T10:01:00 DUE TO TIME LIMIT ***"
    series, words = _read(tmp_path, [*lines, cancel])
    assert words == "step 40 of 1,000: stopped (cancelled at its time limit)", words
    guess = estimate(series, now=0.0, time_left_s=3600.0)
    assert (guess.eta_s, guess.margin_s, guess.cut_at) == (None, None, None)
    # a traceback the program went on after is no stop
    error = ["Traceback (most recent call last):", "ValueError: bad sample"]
    _, words = _read(tmp_path, [*lines, *error, *_iters(41)[-1:]])
    assert "finishes in" in words, words
    # the run said it finished, then failed in its teardown: done
    _, words = _read(tmp_path, ["max_iters = 40", *_iters(40), "Training completed", error[0]])
    assert words == "step 40 of 40: done", words


def test_slurms_cancel_glued_to_a_bars_redraw_stops_the_run(tmp_path: Path) -> None:
    bars = "".join(f"\r 0%|          | {s}/9000 [00:{s:02d}<2:30:00,  1.00it/s]" for s in range(1, 30))
    cancel = "slurmstepd: error: *** JOB 8 ON gpu-c03 CANCELLED AT 2026-01-02T10:01:00 DUE TO TIME LIMIT ***"
    series, words = _read(tmp_path, [bars + cancel])
    assert words == "step 29 of 9,000: stopped (cancelled at its time limit)", words


@pytest.mark.parametrize(("line", "form", "step", "total", "epoch"), [
    ("Epoch: [3][ 120/5005]\tTime  0.301 ( 0.322)\tData  0.001 ( 0.004)\tLoss 5.8812e+00 (6.0101e+00)", "metriclogger",
     3, None, 3),
    ("Train: 12 [ 400/1251 ( 32%)]  Loss: 3.456 (3.51)  Time: 0.312s,  820.10/s  LR: 1.000e-03", "timm", 12, None, 12),
    ("Epoch [2/10], Step [100/600], Loss: 0.2231", "epoch-step", 100, 600, 2),
    ("epoch 3/20 iter 40/500 loss 1.2", "epoch-step", 40, 500, 3),
    ("Iteration 300/5000, loss = 0.5123", "iter-loss", 300, 5000, None),
])
def test_hand_written_and_reference_loops(line: str, form: str, step: int, total: int | None, epoch: int) -> None:
    point = parse_line(line)
    assert point is not None and point.form == form, point
    assert (point.step, point.total) == (step, total), point
    assert (None if point.epoch is None else int(point.epoch)) == epoch, point


@pytest.mark.parametrize("line", [
    "Validation Epoch [1/10], Step [10/60], Loss: 0.3", "Eval iter 3/50, loss 1.0", "Test: [ 10/196]\tLoss 1.2",
])
def test_a_generic_forms_evaluation_is_not_training(line: str) -> None:
    point = parse_line(line)
    assert point is None or point.phase != "train" or point.form not in ("epoch-step", "iter-loss"), point


def test_the_runs_step_over_epochs_numbered_from_one_or_zero(tmp_path: Path) -> None:
    ones = [f"Epoch [{e}/5], Step [{b}/200], Loss: 0.{e}{b}" for e in (1, 2) for b in (100, 200)]
    series, words = _read(tmp_path, [*ones, "Epoch [3/5], Step [100/200], Loss: 0.3"])
    assert (series.step, series.total) == (2 * 200 + 100, 5 * 200), words
    zeros = [f"Epoch [{e}/5], Step [{b}/200], Loss: 0.{e}{b}" for e in (0, 1) for b in (100, 200)]
    series, words = _read(tmp_path, [*zeros, "Epoch [2/5], Step [100/200], Loss: 0.3"])
    assert (series.step, series.total, series.restarts) == (2 * 200 + 100, 5 * 200, []), words


def test_timms_scheduled_epochs_are_the_runs() -> None:
    assert declared_epochs("Scheduled epochs: 300. LR stepped per epoch.") == 300


@pytest.mark.parametrize(("line", "epoch", "loss"), [
    ("Epoch[2] Loss=0.009825, P=0.625461, R=0.082422, F1=0.145650, Speed = 7.2 samples/s, 99.88 %, ETA = 2021-09-12",
     2, 0.009825),
    ("Epoch [3] loss: 0.2101", 3, 0.2101),
    ("01/03 02:18:25 PM epoch 4 lr 9.700000e-02", 4, None),
])
def test_a_loop_that_names_its_epoch(line: str, epoch: int, loss: float | None) -> None:
    point = parse_line(line)
    assert point is not None and point.counts_epochs and point.step == epoch, point
    assert (training_loss(point.metrics) or (None, None))[1] == loss, point


@pytest.mark.parametrize(("line", "form", "step", "total", "loss"), [
    ("Step: 100, Loss: 0.2", "iter-loss", 100, None, 0.2), ("step=100, loss=2.0", "iter-loss", 100, None, 2.0),
    ("Iter: 100, Loss: 0.5", "iter-loss", 100, None, 0.5),
    ("Epoch 5, loss: 0.31", "epoch-summary", 5, None, 0.31),
    ("Epoch: 5/100 - train_loss 0.3", "epoch-summary", 5, 100, 0.3),
    ("epoch 3 | avg loss 0.2", "epoch-summary", 3, None, 0.2),
])
def test_hand_written_step_and_epoch_lines(line: str, form: str, step: int, total: int | None, loss: float) -> None:
    point = parse_line(line)
    assert point is not None and point.form == form, point
    assert (point.step, point.total) == (step, total), point
    assert (training_loss(point.metrics) or (None, None))[1] == loss, point
    assert not [k for k in point.metrics if k.lower() in ("iter", "step", "epoch")], point  # counters, no metrics


@pytest.mark.parametrize("line", ["Epoch 5, val loss: 0.4", "Validation Epoch 5, loss 0.2", "Eval step: 40, loss: 1"])
def test_an_evaluations_hand_written_line_is_not_the_run(line: str) -> None:
    assert parse_line(line) is None


def test_lines_that_count_steps_win_over_the_epoch_summaries_beside_them(tmp_path: Path) -> None:
    inner = "| epoch {e:03d}:   {b} / 900 loss={loss}, nll_loss=5.6, num_updates={u}, lr=0.0003"
    lines = ["| epoch 004 | loss 6.90 | nll_loss 5.8 | num_updates 3600"]  # the summary of an earlier epoch first
    lines += [inner.format(e=5, b=b, loss=f"6.{90 - b // 100}", u=3600 + b) for b in (300, 600, 900)]
    lines += ["| epoch 005 | loss 6.85 | nll_loss 5.7 | num_updates 4500"]
    lines += [inner.format(e=6, b=300, loss="6.80", u=4800)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (4800, []), words
    assert series.metrics.get("loss") == 6.80


def test_the_logs_own_timestamps_give_a_rate_from_two_or_three_points(tmp_path: Path) -> None:
    lines = ["max_iters = 1000"]
    lines += [f"2026-01-02 10:{m:02d}:00 iter {m * 10}: loss 2.0000, time 6000.00ms" for m in (10, 20, 30)]
    series, words = _read(tmp_path, lines)
    guess = estimate(series, now=0.0, time_left_s=None)
    assert guess.rate == pytest.approx(100 / 600), words  # 100 steps every 10 minutes
    assert "finishes in about" in words, words
    # the same points read without times of their own (all at the file's time): no pace can be said
    bare = Series()
    for m in (10, 20, 30):
        bare.add(parse_line(f"iter {m * 10}: loss 2.0000") or pytest.fail("no point"), 5.0)
    assert estimate(bare, now=0.0, time_left_s=None).rate is None


@pytest.mark.parametrize(("line", "clock"), [
    ("08/09 14:02:41 - mmengine - INFO - Epoch(train) [1][10/90]  lr: 1.0e-02  loss: 2.2743", (8, 9, 14, 2, 41, 0.0)),
    ("[04/05 01:29:46] d2.utils.events INFO:  eta: 0:02:48  iter: 19  total_loss: 1.187", (4, 5, 1, 29, 46, 0.0)),
    ("01/03 02:18:25 PM epoch 4 lr 9.700000e-02", (1, 3, 14, 18, 25, 0.0)),
    ("I0611 03:10:01.250000  1804 learning.py:507] global step 12: loss = 0.7 (1.2 sec/step)",
     (6, 11, 3, 10, 1, 0.25)),
])
def test_a_stamp_without_its_year(line: str, clock: tuple[int, int, int, int, int, float]) -> None:
    point = parse_line(line)
    assert point is not None and (point.time, point.clock) == (None, clock), point


def test_a_stamp_with_a_comma_before_its_time() -> None:
    point = parse_line("2024-02-02,11:20:05 | INFO | Train Epoch: 0 [    64/98112 (0%)] Loss: 1.07 (1.07)")
    assert point is not None and point.time is not None and point.clock is None


def test_a_yearless_stamp_takes_the_year_it_was_read_in_or_the_one_before() -> None:
    from datetime import datetime

    series = Series()
    read = datetime(2026, 1, 2, 12, 0, 0).timestamp()
    lines = [f"12/31 23:5{m}:00 - mmengine - INFO - Iter(train) [{m * 10}/900]  loss: 1.{m}" for m in (7, 8, 9)]
    lines.append("01/01 00:00:00 - mmengine - INFO - Iter(train) [100/900]  loss: 1.0")
    for line in lines:
        series.add(parse_line(line) or pytest.fail("no point"), read)
    times = [datetime.fromtimestamp(s.time) for s in series.samples]
    assert [t.year for t in times] == [2025, 2025, 2025, 2026], times
    guess = estimate(series, now=read, time_left_s=None)
    assert guess.rate == pytest.approx(10 / 60), guess  # 10 iterations a minute, across the new year


def _allocation(restart: int, first: int, last: int, total: int, *, saved: int | None) -> list[str]:
    """One allocation's rank-0 log as examples/longrun_train.py and ntui's rank header print it (appended)."""
    said = f"resumed from step {first - 2} (restart {restart})" if restart else f"fresh start (restart {restart})"
    lines = ["ntui: rank 0 on nid001", said, f"rank 0/2 on nid001: run 7, allocation {restart + 1}"]
    lines += [f"step {n}/{total} loss {1.0 / (1 + n / 20):.4f}" for n in range(first, last + 1)]
    lines += [f"checkpoint at step {saved}: saved; exiting"] if saved is not None else [f"done: {total} steps"]
    return lines


@pytest.mark.parametrize("last_steps", [(80, 150, 185), (80, 150, 184)])
def test_every_allocation_after_the_first_is_a_restart_even_one_that_prints_no_step(tmp_path: Path,
                                                                                   last_steps: tuple[int, ...]) -> None:
    # the requeue's signal came during the run's last step: it saved that step, and the next allocation resumed past
    # it, had no step left, and said only that the run is done (a fourth allocation of 185 steps, and 3 restarts)
    pattern = Pattern(re.compile(r"^step (?P<step>\d+)/(?P<total>\d+) loss (?P<loss>\S+)$"))
    total, lines, first = 185, [], 1
    for restart, last in enumerate(last_steps):
        lines += _allocation(restart, first, last, total, saved=last - 1)
        first = last + 1
    lines += _allocation(len(last_steps), first, total, total, saved=None)
    log = tmp_path / "run-rank-0.out"
    log.write_text("\n".join(lines) + "\n")
    series = read_progress(log, pattern=pattern)
    assert len(series.restarts) == len(last_steps), series.restarts
    assert estimate(series, now=0.0, time_left_s=None).words == f"step {total} of {total}: done"
