"""General mechanisms of the progress reader, round g (issue [progress-real]): forms read from the programs' own
logging code (SpeechBrain's epoch counter and train logger, ESPnet2's trainer and reporter, PaddleOCR's loop and its
loader's size, char-rnn's run-wide counter, early stops said in words, Lightning's stop signal, torch_xla's example
trainers' last line) and the rules around them (an evaluation's part of a summary line, a bar's loss beside a loop's
own lines, an end that training goes on past). Every line here is written for the test, in the layouts those
programs' format strings give, with values of our own."""

from __future__ import annotations

import math
from pathlib import Path

from ntui.core.progress.lines import parse_line, unheader
from ntui.core.progress.runwords import declared_epochs, declared_per_epoch, run_end
from ntui.core.progress.series import Series
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- SpeechBrain


def _speechbrain(epochs_done: int, cut_at: int, per: int = 120) -> list[str]:
    lines = ["speechbrain.core - Beginning experiment!"]
    for epoch in range(1, epochs_done + 2):
        lines.append(f"speechbrain.utils.epoch_loop - Going into epoch {epoch}")
        last = per if epoch <= epochs_done else cut_at
        bar = "".join(f"\r{100 * n // per:3d}%|##        | {n}/{per} [00:{n % 60:02d}<00:30,  2.10it/s, "
                      f"train_loss={2.0 - epoch * 0.1 - n / 1000:.3g}]" for n in range(1, last + 1))
        lines.append(bar if epoch > epochs_done else bar + "\n")
        if epoch <= epochs_done:
            lines.append("\r100%|##########| 30/30 [00:05<00:00,  6.00it/s]")
            lines.append(f"speechbrain.utils.train_logger - epoch: {epoch}, lr: 5.00e-01 - train loss: "
                         f"{1.9 - epoch * 0.1:.2f} - valid loss: 2.31, valid error: 4.10e-01")
            lines.append("speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in save/CKPT+x")
    return lines


def test_speechbrain_counts_epochs_and_its_bars_say_the_loss(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _speechbrain(3, 45))
    assert series.step == 4 and series.run_total is None
    assert series.metrics.get("train_loss") == float(f"{2.0 - 4 * 0.1 - 45 / 1000:.3g}")  # the bar's, the latest
    assert len(series.restarts) == 0 and "done" not in words


def test_speechbrain_summary_line_is_an_epochs_end() -> None:
    point = parse_line("epoch: 7, lr: 8.00e-01 - train loss: 7.27e-01 - valid loss: 1.15, valid CER: 13.33")
    assert point is not None and point.counts_epochs and point.step == 7
    assert point.metrics.get("train_loss") == 0.727 and point.metrics.get("valid_loss") == 1.15
    start = parse_line("Going into epoch 8")
    assert start is not None and start.step == 8 and start.counts_epochs and not start.metrics


# ---------------------------------------------------------------- ESPnet2


def test_espnet_trainer_lines() -> None:
    started = parse_line("[node3] 2024-06-01 10:00:00,100 (trainer:184) INFO: 4/40epoch started. Estimated time "
                         "to finish: 2 hours")
    assert started is not None and (started.step, started.total, started.counts_epochs) == (4, 40, True)
    spaced = parse_line("4/40 epoch started")
    assert spaced is not None and spaced.step == 4
    batch = parse_line("[node3] 2024-06-01 10:00:20,100 (trainer:762) INFO: 4epoch:train:201-300batch: "
                       "iter_time=1.2e-04, loss_ctc=50.2, loss_att=20.1, acc=0.41, loss=29.013, grad_norm=30.1")
    assert batch is not None and (batch.step, batch.batch, batch.counts_epochs) == (4, 300, True)
    assert batch.metrics["loss"] == 29.013


def test_an_evaluations_part_of_a_summary_is_not_training() -> None:
    point = parse_line("[node3] 2024-06-01 10:30:00,100 (trainer:338) INFO: 4epoch results: [train] "
                       "iter_time=1.1e-04, loss_ctc=48.0, loss=27.5, grad_norm=30.0, [valid] loss_ctc=40.0, "
                       "loss=22.25, acc=0.5")
    assert point is not None and point.step == 4 and point.counts_epochs and point.batch is None
    assert point.metrics["loss"] == 27.5


def test_espnet_run_counts_its_epochs(tmp_path: Path) -> None:
    lines = []
    for epoch in (1, 2, 3):
        lines.append(f"[h] 2024-06-01 1{epoch}:00:00,000 (trainer:184) INFO: {epoch}/12epoch started")
        for b in range(100, 501, 100):
            lines.append(f"[h] 2024-06-01 1{epoch}:{b // 20:02d}:00,000 (trainer:762) INFO: "
                         f"{epoch}epoch:train:{b - 99}-{b}batch: iter_time=1e-4, loss={60 - epoch - b / 100:.3f}")
        if epoch < 3:
            lines.append(f"[h] 2024-06-01 1{epoch}:40:00,000 (trainer:338) INFO: {epoch}epoch results: [train] "
                         f"loss={58 - epoch:.3f}, [valid] loss=99.000")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (3, 12)
    assert series.metrics["loss"] == 52.0 and len(series.restarts) == 0 and "done" not in words


# ---------------------------------------------------------------- PaddleOCR


def test_paddle_header_and_its_declarations() -> None:
    assert unheader("[2024/11/02 14:30:16] ppocr INFO: train dataloader has 43 iters") \
        == "train dataloader has 43 iters"
    assert declared_per_epoch("train dataloader has 43 iters") == 43
    assert declared_per_epoch("valid dataloader has 58 iters") is None
    assert declared_epochs("    epoch_num : 500") == 500


def test_paddle_run_total_is_its_epochs_times_its_loader(tmp_path: Path) -> None:
    lines = ["[2024/11/02 14:30:11] ppocr INFO:     epoch_num : 20",
             "[2024/11/02 14:30:16] ppocr INFO: train dataloader has 30 iters",
             "[2024/11/02 14:30:16] ppocr INFO: valid dataloader has 8 iters"]
    step = 0
    for epoch in (1, 2, 3):
        for n in list(range(10, 31, 10)):
            step = (epoch - 1) * 30 + n
            lines.append(f"[2024/11/02 14:{30 + step // 10:02d}:{step % 10 * 5:02d}] ppocr INFO: epoch: "
                         f"[{epoch}/20], global_step: {step}, lr: 0.001000, loss: {2 - step / 100:.6f}, "
                         f"avg_reader_cost: 0.01 s, ips: 36.1 samples/s, eta: 1:00:00")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (90, 600)
    assert series.own_times  # the slashed date is the line's own time
    assert "finishes in" in words


# ---------------------------------------------------------------- char-rnn


def test_char_rnn_counts_the_whole_run_from_zero(tmp_path: Path) -> None:
    total = 60
    lines = [f"{i}/{total} (epoch {i // 20}), train_loss = {3 - i / 50:.3f}, time/batch = 0.150"
             for i in range(total)]
    lines.append("model saved to save/model.ckpt")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (total - 1, total)
    assert words.endswith("done")
    cut, cut_words = _read(tmp_path, lines[:40])
    assert cut.step == 39 and "done" not in cut_words


# ---------------------------------------------------------------- ends in words


def test_early_stops_said_in_words() -> None:
    for said in ("Early stopping", "Early stopping!", "early stopping triggered", "Early stopping at epoch 45",
                 "EARLY STOPPING", "Early stopped at step 3000"):
        assert run_end(said) == ("", 0), said
    for other in ("EarlyStopping counter: 3 out of 10", "early stopping patience: 10", "use early stopping: True",
                  "Early stopping is enabled"):
        assert run_end(other) is None, other


def test_lightning_stop_signal_and_torch_xla_last_line() -> None:
    assert run_end("Monitored metric val_loss did not improve in the last 3 records. Best score: 0.412. "
                   "Signaling Trainer to stop.") == ("", 0)
    assert run_end("Time limit reached. Elapsed time is 0:10:00. Signaling Trainer to stop.") == ("", 0)
    assert run_end("Max Accuracy: 98.91%") == ("", 0)
    assert run_end("Max Accuracy: 98.91% so far") is None


def test_an_early_stop_ends_an_epoch_counted_run(tmp_path: Path) -> None:
    lines = []
    for epoch in range(1, 8):
        lines.append(f"Epoch: {epoch}/100 | Train loss: {1 / epoch:.6f} | Val loss: {2 / epoch:.6f} | Time: 3.1s")
        lines.append(f"EarlyStopping counter: {epoch} out of 7")
    series, words = _read(tmp_path, [*lines, "Early stopping"])
    assert (series.step, series.run_total) == (7, 100) and "done" in words
    assert series.metrics.get("Train_loss") == float(f"{1 / 7:.6f}")
    _, running = _read(tmp_path, lines)
    assert "done" not in running


def test_an_end_that_training_goes_on_past_was_not_the_runs(tmp_path: Path) -> None:
    lines = [f"step {n}, loss = {5 - n / 100:.3f}" for n in range(1, 11)]
    series, words = _read(tmp_path, [*lines, "Training completed", "step 11, loss = 4.890"])
    assert series.step == 11 and "done" in words  # one step more: the batch under way when the stop came
    series, words = _read(tmp_path, [*lines, "Training completed", "step 11, loss = 4.890", "step 12, loss = 4.880"])
    assert series.step == 12 and "done" not in words


def test_a_lightning_bar_with_the_stop_signal_glued() -> None:
    from ntui.core.progress.read import feed_line

    series = Series()
    for n in range(1, 6):
        feed_line(series, f"Epoch 3:  20%|##        | {n}/100 [00:0{n}<01:00,  1.50it/s, v_num=0, loss=0.3]",
                  None, 1000.0 + n)
    feed_line(series, "Epoch 3:  20%|##        | 6/100 [00:06<01:00,  1.50it/s, v_num=0, loss=0.3]Time limit "
              "reached. Elapsed time is 1:00:00. Signaling Trainer to stop.", None, 1010.0)
    assert series.ended
    assert not math.isnan(series.metrics["loss"])


# ---------------------------------------------------------------- counters and records


def test_a_plural_counter_name_is_a_counter() -> None:
    point = parse_line("iterations:12, train acc:0.512, train loss:83.125, train loss ctc:150.5, train loss att:20.25,")
    assert point is not None and point.step == 12 and point.metrics.get("train_loss") == 83.125
    steps = parse_line("Steps: 300, Loss: 0.4125, LR: 1e-4")
    assert steps is not None and steps.step == 300


def test_a_metric_record_nested_or_named() -> None:
    nested = parse_line('{"name": "loss", "data": {"epoch": 0.5, "step": 41, "value": 2.25, "timestamp": '
                        '"2025-01-01T00:00:00"}}')
    assert nested is not None and (nested.step, nested.metrics.get("loss")) == (41, 2.25)
    keyed = parse_line('{"key": "train_loss", "value": 1.5, "step": 7}')
    assert keyed is not None and (keyed.step, keyed.metrics.get("train_loss")) == (7, 1.5)


def test_olmo_console_record(tmp_path: Path) -> None:
    lines = []
    for step in range(10, 101, 10):
        lines.append(f"2024-01-02 03:{step // 10:02d}:00.100\tnode07:0\tolmo.train:900\tINFO\t"
                     f"[step={step}/5000,epoch=0]")
        lines += [f"    train/CrossEntropyLoss={9 - step / 100:.3f}", "    train/Perplexity=1,234",
                  "    throughput/total_tokens=10,485,760", "    System/Peak GPU Memory (MB)=40,123"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (100, 5000) and series.epoch == 0
    assert series.metrics.get("train/CrossEntropyLoss") == 8.0
    assert series.own_times and "finishes in" in words


def test_the_current_loss_before_an_average() -> None:
    point = parse_line("Epoch 3 | Iter 41 | Average Loss 1.250 | Current Loss 1.187500 | 201.5 ms/batch")
    assert point is not None and point.metrics.get("loss") == 1.1875


# ---------------------------------------------------------------- phases


def test_an_evaluation_in_the_training_lines_form_is_not_a_restart(tmp_path: Path) -> None:
    lines = ["Training..."]
    for epoch in (1, 2, 3):
        lines += [f"Epoch {epoch} | Iter {i} | Average Loss 2.000 | Current Loss {3 - epoch / 10 - i / 1000:.6f} | "
                  "200.0 ms/batch" for i in range(1, 52, 10)]
        if epoch < 3:
            lines += ["Train Summary | End of Epoch 1 | Time 65.40s | Train Loss 2.000", "Cross validation..."]
            lines += [f"Epoch {epoch} | Iter {i} | Average Loss 4.000 | Current Loss 4.000000 | 50.0 ms/batch"
                      for i in (1, 11)]
            lines += ["Valid Summary | End of Epoch 1 | Time 9.14s | Valid Loss 4.000", "Training..."]
    series, _ = _read(tmp_path, ["Namespace(epochs=20, lr=0.001)", *lines])
    assert (series.step, series.run_total, len(series.restarts)) == (3, 20, 0)
    assert series.metrics.get("loss") == float(f"{3 - 0.3 - 51 / 1000:.6f}")


def test_evaluation_said_in_a_word() -> None:
    from ntui.core.progress.runwords import eval_start

    for said in ("Cross validation...", "Validating...", "Evaluating", "Running evaluation step..."):
        assert eval_start(said), said
    for other in ("Validation results: acc 0.9", "Validating runs/train/weights/best.pt...", "Evaluation finished"):
        assert not eval_start(other), other


def test_a_bar_over_the_runs_epochs(tmp_path: Path) -> None:
    lines = [f"Epoch {e}: 100%|##########| 500/500 [02:00<00:00,  4.10batch/s, avg_loss=0.5, loss={0.4 - e / 100}]"
             for e in range(4)]
    lines.append("Training: 100%|##########| 4/4 [08:00<00:00, 120.00s/epoch]")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (4, 4, 0) and words.endswith("done")
    assert series.metrics.get("loss") == 0.4 - 3 / 100
    point = parse_line("Training:  50%|#####     | 2/4 [04:00<04:00, 120.00s/epoch]")
    assert point is not None and point.counts_epochs and (point.step, point.total) == (2, 4)
    _, running = _read(tmp_path, lines[:2] + ["Training:  50%|#####     | 2/4 [04:00<04:00, 120.00s/epoch]"])
    assert "done" not in running


def test_a_bar_that_ended_before_another_began_was_another_phase(tmp_path: Path) -> None:
    lines = ["caching latents..."]
    lines += [f"{100 * n // 40:3d}%|#####     | {n}/40 [00:0{n // 10}<00:01, 30.00it/s]" for n in (10, 20, 30, 40)]
    lines += [f"steps:   {n // 10}%|          | {n}/1000 [00:{n // 10:02d}<10:00,  1.50it/s, avr_loss=0.1]"
              for n in range(0, 121, 20)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (120, 1000, 0)
    # a bar that had not ended, then another from its start: still a restart
    cut = [line.replace("40/40", "35/40") for line in lines]
    again, _ = _read(tmp_path, cut)
    assert len(again.restarts) == 1


# ---------------------------------------------------------------- wrapped records, train logs


def test_a_record_hard_wrapped_at_a_width_is_read_whole(tmp_path: Path) -> None:
    lines = ["Namespace(arch='transformer', log_format='simple', max_update=9000, num_cores=8)"]
    for step in (20, 40, 60):
        for device in (0, 1):
            lines += [f"| epoch 001 | training on xla:0/{device}:     {step} / 2400 loss={12 - step / 100:.3f},",
                      "nll_loss=11.5, wps=900, ups=0, wpb=3500.1, bsz=128.000,",
                      f"num_updates={step}, lr=2.5e-06, gnorm=6.1, oom=0.000, wall=180,", "train_wall=21"]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (60, 9000, 0)
    assert series.metrics.get("loss") == 11.4


def test_a_validations_prefix_is_not_the_fairseq_trainings() -> None:
    point = parse_line("| epoch 002 | valid on 'valid' subset:     40 / 100 loss=5.1, num_updates=4000")
    assert point is None or point.step != 40


def test_speechbrain_train_log_counts_epochs_and_its_test_line_ends_it(tmp_path: Path) -> None:
    lines = [f"epoch: {e}, lr: 1.00e-04, steps: {e * 1500}, optimizer: Adam - train loss: {50 - e:.2f} - valid loss: "
             f"{40 - e:.2f}, valid ACC: 9.00e-01" + " " * 30 for e in range(1, 13)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (12, None) and "done" not in words
    assert series.metrics.get("train_loss") == 38.0
    _, ended = _read(tmp_path, [*lines, "Epoch loaded: 12 - test loss: 27.10, test ACC: 9.10e-01"])
    assert "done" in ended


# ---------------------------------------------------------------- the Trainer's evaluation without its escapes


def _trainer(upto: int, eval_at: int, eval_total: int) -> list[str]:
    lines = []
    for n in range(1, upto + 1):
        lines.append(f"{n}%|#         | {n}/100 [00:{n % 60:02d}<01:00,  1.50it/s]")
        if n % 20 == 0:
            lines.append(f"{{'loss': {2 - n / 100:.4f}, 'learning_rate': 1e-05, 'epoch': {n / 100:.2f}}}")
        if n == eval_at:  # its bar copied from a terminal: no cursor moves, nothing says it is nested
            lines += [f"{k * 100 // eval_total}%|#   | {k}/{eval_total} [00:{k % 60:02d}<00:10, 25.0it/s]"
                      for k in range(0, eval_total + 1, 10)]
            lines.append(f"{{'eval_loss': 1.5, 'eval_runtime': 10.0, 'epoch': {n / 100:.2f}}}")
    return lines


def test_an_evaluation_bar_of_a_larger_total_mid_run_is_not_the_run(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _trainer(60, 50, 250))
    assert (series.step, series.run_total, len(series.restarts)) == (60, 100, 0)
    assert "done" not in words
    assert series.metrics.get("loss") == 1.4


def test_an_evaluation_bar_at_the_last_step_is_not_the_run(tmp_path: Path) -> None:
    lines = [*_trainer(100, 100, 250), "{'train_runtime': 70.0, 'train_loss': 1.5, 'epoch': 1.0}"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (100, 100, 0) and "done" in words


def test_a_bar_of_another_total_that_trains_stays_the_runs(tmp_path: Path) -> None:
    lines = [f"{n * 100 // 40}%|#   | {n}/40 [00:0{n // 10}<00:01, 30.00it/s]" for n in (10, 20, 30, 40)]
    for n in range(0, 61, 10):
        lines.append(f"{n // 10}%|          | {n}/1000 [00:{n // 10:02d}<10:00,  1.50it/s]")
        if n and n % 20 == 0:
            lines.append(f"{{'loss': {3 - n / 100:.2f}, 'learning_rate': 1e-05, 'epoch': 0.01}}")
    lines.append("{'eval_loss': 2.5, 'eval_runtime': 3.0, 'epoch': 0.01}")  # (its evaluation, a bar held inside)
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (60, 1000, 0)


# ---------------------------------------------------------------- more programs' own lines


def test_ms_swift_dict_says_its_step_of_its_total() -> None:
    point = parse_line("{'loss': 1.875, 'grad_norm': 2.5, 'learning_rate': 9.5e-05, 'epoch': 0.25, "
                       "'global_step/max_steps': '30/120', 'percentage': '25.00%', 'elapsed_time': '1m 2s', "
                       "'remaining_time': '3m 6s'}")
    assert point is not None and (point.step, point.total, point.epoch) == (30, 120, 0.25)
    assert point.metrics.get("loss") == 1.875


def test_marian_updates_and_cost() -> None:
    point = parse_line("[2024-05-01 09:00:00] [marian] Ep. 2 : Up. 4000 : Sen. 512,000 : Cost 3.25000000 : "
                       "Time 100.00s : 20000.00 words/s")
    assert point is not None and (point.step, point.epoch) == (4000, 2.0) and point.metrics["loss"] == 3.25


def test_nnunet_log_counts_epochs(tmp_path: Path) -> None:
    lines = []
    for epoch in range(0, 4):
        lines += [f"2024-03-01 10:0{epoch}:00.100000: ", f"2024-03-01 10:0{epoch}:00.100000: Epoch {epoch}",
                  f"2024-03-01 10:0{epoch}:00.200000: Current learning rate: 0.00999",
                  f"2024-03-01 10:0{epoch}:50.100000: train_loss {-0.1 * epoch:.4f}",
                  f"2024-03-01 10:0{epoch}:50.200000: val_loss {-0.5:.4f}",
                  f"2024-03-01 10:0{epoch}:50.300000: Pseudo dice [0.5, 0.6]",
                  f"2024-03-01 10:0{epoch}:50.400000: Epoch time: 50.3 s"]
    series, words = _read(tmp_path, lines)
    assert series.step == 3 and series.metrics.get("loss") == -0.3 and "done" not in words
    _, ended = _read(tmp_path, [*lines, "2024-03-01 10:05:00.000000: Training done."])
    assert "done" in ended


def test_keras_verbose_2_ends_each_epoch_with_one_line(tmp_path: Path) -> None:
    lines = []
    for epoch in (1, 2, 3):
        lines += [f"Epoch {epoch}/3",
                  f"469/469 - 2s - loss: {0.3 / epoch:.4f} - accuracy: 0.9148 - 2s/epoch - 4ms/step"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (3, 3) and words.endswith("done")
    assert series.metrics.get("loss") == 0.1
    keras3 = parse_line("469/469 - 2s - 4ms/step - accuracy: 0.9148 - loss: 0.2958")
    assert keras3 is not None and keras3.batch == 469 and keras3.metrics["loss"] == 0.2958


def test_the_vision_references_last_print_ends_the_run() -> None:
    assert run_end("Training time 1 day, 2:03:04") == ("", 0)
    assert run_end("Training time 0:12:34") == ("", 0)
    assert run_end("Training time 0:12:34 for epoch 3") is None


def test_every_ranks_bar_on_one_stream_is_no_restart(tmp_path: Path) -> None:
    redraws = []
    for n in range(1, 151):  # two ranks in step, each drawing its own bar, one a little behind the other
        for behind in (0, 1 if n % 3 else 2):
            k = max(1, n - behind)
            redraws.append(f"\r{k * 100 // 200:3d}%|##   | {k}/200 [00:{k // 2 // 60:02d}:{k // 2 % 60:02d}<01:00, "
                           f"2.00it/s, loss={3 - k / 200:.3f}]")
    series, words = _read(tmp_path, ["".join(redraws)])
    assert (series.step, series.run_total, len(series.restarts)) == (150, 200, 0) and "done" not in words
    # a bar that starts again from its beginning is a restart still
    again = "".join(redraws) + "".join(f"\r{k}%|#   | {k}/200 [00:{k // 2:02d}<01:00, 2.00it/s]" for k in range(1, 20))
    series, _ = _read(tmp_path, [again])
    assert len(series.restarts) == 1 and series.step == 19


# ---------------------------------------------------------------- numbers in their types' reprs, loss spellings


def test_a_tensor_or_numpy_scalar_is_its_number() -> None:
    point = parse_line("step 5 loss tensor(1.2500, device='cuda:0', grad_fn=<NllLossBackward0>)")
    assert point is not None and point.step == 5 and point.metrics == {"loss": 1.25}
    record = parse_line("{'loss': np.float64(0.123), 'grad_norm': np.float32(1.5), 'learning_rate': 1e-05, "
                        "'epoch': 0.5}")
    assert record is not None and record.metrics == {"loss": 0.123, "grad_norm": 1.5, "learning_rate": 1e-05}
    nan = parse_line("{'loss': tensor(nan, device='cuda:0'), 'epoch': 0.5}")
    assert nan is not None and math.isnan(nan.metrics["loss"])


def test_loss_spellings_on_a_line_of_their_own() -> None:
    from ntui.core.progress.lines import trailing_metrics

    assert trailing_metrics("loss=2.31") == {"loss": 2.31}
    assert trailing_metrics("train loss = 2.31") == {"train_loss": 2.31}
    assert trailing_metrics("loss = tensor(2.3100, device='cuda:0')") == {"loss": 2.31}
    assert trailing_metrics("val loss = 2.1") is None and trailing_metrics("best loss = 2.1") is None
    point = parse_line("Step 100: loss = NaN")
    assert point is not None and math.isnan(point.metrics["loss"])


def test_a_postfix_key_of_several_words() -> None:
    point = parse_line("Epoch 0:  10%|#         | 100/1000 [01:40<15:00, reduced_train_loss=3.21, global_step=99.0, "
                       "consumed_samples=3200.0, train_step_timing in s=1.02]")
    assert point is not None and (point.step, point.total) == (100, 1000)
    assert point.metrics.get("train_step_timing_in_s") == 1.02 and point.metrics.get("reduced_train_loss") == 3.21


# ---------------------------------------------------------------- a table under its header


def test_a_table_whose_header_names_the_epoch_and_a_loss(tmp_path: Path) -> None:
    from ntui.core.progress.lines import table_header, table_row

    names = table_header("epoch     train_loss  valid_loss  error_rate  time    ")
    assert names == ("epoch", "train_loss", "valid_loss", "error_rate", "time")
    row = table_row("3         0.412345    0.326789    0.093000    00:25     ", names)
    assert row is not None and row.step == 3 and row.counts_epochs and row.metrics["train_loss"] == 0.412345
    assert "time" not in row.metrics
    assert table_row("3  0.41  0.32", names) is None and table_header("epoch is 3, loss 0.2 now") is None
    stages = ["epoch     train_loss  valid_loss  time    ", "0         0.912345    0.456789    00:21     ",
              "epoch     train_loss  valid_loss  time    "]
    stages += [f"{e}         {0.5 - e / 10:.6f}    0.356789    00:25     " for e in range(3)]
    series, words = _read(tmp_path, stages)
    assert (series.step, len(series.restarts)) == (3, 0) and series.metrics["train_loss"] == 0.3
    assert "done" not in words


def test_preparation_bars_of_the_datasets_library_and_around_training() -> None:
    for bar in ("Casting the dataset: 100%|##########| 1000/1000 [00:00<00:00, 5000.00 examples/s]",
                "Flattening the indices: 100%|##########| 800/800 [00:00<00:00, 9000.00 examples/s]",
                "DDIM Sampler: 100%|##########| 50/50 [00:10<00:00,  5.00it/s]",
                " 50%|#####     | 500/1000 [00:01<00:01, 400.12 examples/s]"):
        point = parse_line(bar)
        assert point is not None and point.phase == "preparation", bar
    train = parse_line(" 45%|####5     | 450/1000 [01:00<01:13,  7.50it/s]")
    assert train is not None and train.phase == "train"


def test_the_estimators_last_word_ends_the_run() -> None:
    assert run_end("Loss for final step: 0.31.") == ("", 0)
    point = parse_line("INFO:tensorflow:loss = 0.5123, step = 100 (12.345 sec)")
    assert point is not None and (point.step, point.metrics.get("loss")) == (100, 0.5123)


def test_a_configurations_count_alone_is_no_point_and_an_evaluations_count_no_total(tmp_path: Path) -> None:
    assert parse_line("iters: 1000") is None and parse_line("steps: 500") is None
    lines = ["iters: 1000"]
    for it in range(10, 301, 10):
        lines.append(f"2024-05-01 10:{it // 60:02d}:{it % 60:02d} [INFO]\t[TRAIN] epoch: {(it - 1) // 120 + 1}, "
                     f"iter: {it}/1000, loss: {2 - it / 1000:.4f}, lr: 0.009000, batch_cost: 0.5000 | ETA 00:08:15")
        if it == 200:
            lines.append("2024-05-01 10:03:20 [INFO]\tStart evaluating (total_samples: 500, total_iters: 500)...")
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (300, 1000, 0)
    assert series.declared_total is None


def test_maxtext_configuration_and_step_lines(tmp_path: Path) -> None:
    lines = ["Config param per_device_batch_size: 4", "Config param steps: 500", "Config param log_period: 100"]
    lines += [f"completed step: {s}, seconds: 1.234, TFLOP/s/device: 150.2, Tokens/s/device: 5000.1, "
              f"total_weights: 100000, loss: {9 - s / 100:.3f}" for s in range(0, 100)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (99, 500) and series.metrics["loss"] == 8.01


def _epochs_of_bars(epochs_done: int, cut: int, per: int = 200, val: int = 50) -> list[str]:
    out = []
    for e in range(epochs_done + 1):
        last = per if e < epochs_done else cut
        out.append("".join(f"\r{n * 100 // per:3d}%|##  | {n}/{per} [00:{n // 4 % 60:02d}<00:30, 4.00it/s, "
                           f"loss={2 - e / 10 - n / 2000:.4f}]" for n in range(0, last + 1, 10)))
        if e < epochs_done:  # the epoch's validation, its own bar of no description
            out.append("".join(f"\r{k * 100 // val:3d}%|##  | {k}/{val} [00:0{k // 10}<00:03, 12.00it/s]"
                               for k in range(0, val + 1, 10)))
    return out


def test_a_loops_bar_drawn_again_each_epoch_counts_on(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _epochs_of_bars(3, 120))
    assert (series.step, series.run_total, len(series.restarts)) == (720, None, 0) and "done" not in words
    series, words = _read(tmp_path, ["Namespace(epochs=10, lr=0.01)", *_epochs_of_bars(3, 120)])
    assert (series.step, series.run_total) == (720, 2000) and "finishes in" in words
    series, words = _read(tmp_path, ["Namespace(epochs=4, lr=0.01)", *_epochs_of_bars(3, 200)])
    assert (series.step, series.run_total) == (800, 800) and words.endswith("done")


def test_nemo_progress_printer(tmp_path: Path) -> None:
    """NeMo 2's ProgressPrinter: '{Training} epoch {E}, iteration {n}/{max_steps}' then ' | key: value' per metric;
    its validation's 'Validation: iteration n/N' lines are not the run's."""
    lines = []
    for n in range(10, 101, 10):
        lines.append(f"Training epoch 0, iteration {n}/400 | lr: 3e-05 | global_batch_size: 8 | global_step: {n - 1} "
                     f"| reduced_train_loss: {8 - n / 100:.4} | train_step_timing in s: 0.4521 | consumed_samples: "
                     f"{n * 8}")
        if n == 50:
            lines += ["Validation: iteration 1/4", "Validation: iteration 2/4", "Validation: iteration 4/4"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (100, 400, 0) and "done" not in words
    assert series.metrics.get("reduced_train_loss") == 7.0


def test_torchtitan_validation_and_its_start_at_a_step(tmp_path: Path) -> None:
    from ntui.core.progress.runwords import run_start

    assert parse_line("[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - \x1b[33mvalidate step: 100  "
                      "\x1b[32mloss:  3.2000  \x1b[38;2;54;234;195mmemory: 10.50GiB(11.05%)  "
                      "\x1b[34mtps: 1,234\x1b[39m") is None
    assert run_start("Training starts at step 501, with local batch size 8, global batch size 64") == 500

    def line(step: int) -> str:
        return (f"[rank0]:[titan] 2025-01-01 10:{step // 60:02d}:{step % 60:02d},000 - root - INFO - step: {step:2}  "
                f"loss: {9 - step / 100:7.4f}  grad_norm:  0.8000  memory: 10.50GiB(11.05%)  tps: 7,282  "
                "tflops: 0.52  mfu: 0.17%")
    lines = ["[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - Training starts at step 1, with local batch "
             "size 8, global batch size 64, sequence length 2048, total steps 300 (warmup 20)"]
    lines += [line(s) for s in range(10, 101, 10)]
    lines.append("[rank0]:[titan] 2025-01-01 10:01:41,000 - root - INFO - validate step: 100  loss:  7.5000  "
                 "memory: 10.50GiB(11.05%)  tps: 1,234")
    lines += [line(s) for s in range(110, 131, 10)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (130, 300, 0)
    assert series.metrics["loss"] == 7.7
    again, _ = _read(tmp_path, [*lines, "[rank0]:[titan] 2025-01-01 11:00:00,000 - root - INFO - Training starts at "
                                "step 101, with local batch size 8", line(110), line(120)])
    assert len(again.restarts) == 1 and again.step == 120
