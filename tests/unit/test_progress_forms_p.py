"""General mechanisms of the progress reader, round p (issue [progress-real]): forms a fresh set showed the reader
missing, each closed as a rule read from the source of the program that prints it; each test names the repository,
the file and the function. Every line here is written for the test, in the layout those sources give, with values
of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.read import Labels, relabel
from tests.support.progress_logs import read_text as _read

# ------------------------------------------------- the Trainer's log dict glued after its bar's redraw (tqdm.write)


def _hf_bar(n: int, total: int) -> str:
    return f"{n * 100 // total:3d}%|▏         | {n}/{total} [00:{n % 60:02d}<03:10, 1.31it/s]"


def test_trainer_dict_glued_after_its_bar_gives_the_loss(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/trainer_callback.py, ProgressCallback.on_log
    (self.training_bar.write(str(logs))): tqdm.write clears the bar on its stream and writes the dict on stdout; a
    pasted terminal or a merged log shows the dict right after the redraw's bracket. The dict's loss is the run's,
    the bar's count its step."""
    redraws = "\r".join(_hf_bar(n, 240) for n in range(1, 11))
    text = (redraws + "{'loss': 2.4137, 'grad_norm': 1.2, 'learning_rate': 1.9e-05, 'epoch': 0.13}\n"
            + "\r".join(_hf_bar(n, 240) for n in range(10, 16)) + "\n")
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (15, 240)
    assert training_loss(series.metrics) == ("loss", 2.4137)


def test_glued_dicts_under_an_srun_label_and_a_gutter(tmp_path: Path) -> None:
    """UKPLab/sentence-transformers, sentence_transformers/trainer.py, SentenceTransformerTrainer (a Trainer: the
    same ProgressCallback.on_log); hiyouga/LlamaFactory, src/llamafactory/train/callbacks.py (the Trainer's
    callbacks kept): the dict glued after a redraw also under srun -l's label, the last dict's loss the run's."""
    lines = []
    for k in range(1, 4):
        redraws = "\r".join(_hf_bar(n, 500) for n in range(10 * k - 9, 10 * k + 1))
        lines.append(f"0: {redraws}{{'loss': {1.5 - k / 10:.4f}, 'grad_norm': 0.8, 'learning_rate': 2e-05, "
                     f"'epoch': {k / 50:.2f}}}")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (30, 500)
    assert training_loss(series.metrics) == ("loss", 1.2)


def test_glued_eval_dict_is_no_training_loss(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/trainer_callback.py, ProgressCallback.on_log: the evaluation's
    dict (eval_loss, eval_runtime) glued after the training bar's redraw is no training loss."""
    text = ("\r".join(_hf_bar(n, 300) for n in range(1, 21))
            + "{'loss': 0.9121, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
            + _hf_bar(20, 300) + "{'eval_loss': 0.7733, 'eval_runtime': 4.1, 'eval_samples_per_second': 88.0, "
            "'epoch': 0.2}\n")
    series = _read(tmp_path, text)
    assert series.step == 20
    assert training_loss(series.metrics) == ("loss", 0.9121)


# ------------------------------------------------------- moreutils' ts before srun's label; an epoch's "avg train loss"


def test_ts_stamp_before_srun_labels_keeps_each_ranks_lines(tmp_path: Path) -> None:
    """moreutils, ts.c/ts (perl): its default format "%b %d %H:%M:%S" stamped before each line it reads, so
    "srun -l python train.py | ts" writes the stamp before srun's "N: " label. Every rank prints its own epoch
    summary (pytorch/examples' DDP loops, print(f"epoch {epoch} avg train loss: {loss}")): the run's loss is rank 0's
    whatever order the ranks' lines come in."""
    lines = ["Nov 03 19:02:41 1: Namespace(batch_size=32, epochs=9, lr=0.1)",
             "Nov 03 19:02:41 0: Namespace(batch_size=32, epochs=9, lr=0.1)"]
    for epoch in range(4):
        order = (1, 0, 2) if epoch % 2 else (2, 1, 0)
        lines += [f"Nov 03 19:{10 + epoch:02d}:05 {r}: epoch {epoch} avg train loss: {1.0 - epoch / 10 + r / 100!r}"
                  for r in order]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 3
    assert training_loss(series.metrics) == ("avg_train_loss", 0.7)


def test_ts_iso_stamp_before_torchrun_label_is_read_as_the_labels_line() -> None:
    """moreutils, ts: with a format ("ts '[%Y-%m-%d %H:%M:%S]'") its stamp precedes torchrun's "[rankN]:" label."""
    labels = Labels()
    text, _ = relabel("[2026-11-03 19:15:20] [rank3]: epoch 2 train loss: 0.5", labels)
    assert text == "[rank3]: [2026-11-03 19:15:20] epoch 2 train loss: 0.5"
    assert labels.rank == 3
    assert relabel("Nov 03 19:15:20 INFO loading", labels)[0] == "Nov 03 19:15:20 INFO loading"
    assert labels.rank is None


def test_epoch_summary_with_two_qualifiers_before_its_loss() -> None:
    """pytorch/examples' hand-written loops and their kin (print(f"epoch {e} avg train loss: {x}"), "Epoch 4, average
    training loss: x", "epoch 2 mean loss = x"): one or two of avg/average/mean/train before "loss"; an evaluation's
    ("avg val loss") is none."""
    for text, name in (("epoch 7 avg train loss: 0.3001051130539875", "avg_train_loss"),
                       ("Epoch 4, average training loss: 1.25", "average_training_loss"),
                       ("epoch 2 mean loss = 0.5", "mean_loss")):
        point = parse_line(text)
        assert point is not None and point.counts_epochs, text
        assert training_loss(point.metrics) is not None and training_loss(point.metrics)[0] == name, text
    assert parse_line("epoch 2 avg val loss: 0.4") is None


def test_step_lines_loss_is_the_latest_after_an_epochs_average(tmp_path: Path) -> None:
    """A loop that prints each N iterations' loss and each epoch's mean (BiRefNet's train.py: "Epoch[%d/%d]
    Iter[%d/%d]. Training Losses, loss_pix: %.3f" and "@==Final== Epoch[%d/%d]  Average Training Loss: %s"): after
    the summary, the next iteration line's loss is the run's, not the summary's mean kept under its own name."""
    lines = [f"2025-05-03 01:0{i}:00,100 INFO Epoch[1/40] Iter[{i * 50}/200]. Training Losses, loss_pix: {9 - i}.500"
             for i in range(1, 4)]
    lines.append("2025-05-03 01:05:00,100 INFO @==Final== Epoch[1/40]  Average Training Loss: 7.25")
    lines += [f"2025-05-03 01:1{i}:00,100 INFO Epoch[2/40] Iter[{i * 50}/200]. Training Losses, loss_pix: {6 - i}.125"
              for i in range(1, 3)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert training_loss(series.metrics) == ("loss_pix", 4.125)


# ----------------------------------------------------- a bar's description in brackets (ColossalAI's legacy Trainer)


def _colossal_bar(epoch: int, n: int, total: int, phase: str = "Train") -> str:
    return (f"[Epoch {epoch} / {phase}]: {n * 100 // total:3d}%|▌         | {n}/{total} "
            f"[00:{n % 60:02d}<00:30,  2.10it/s, loss={9 - epoch / 2:.2f}, lr=0.0001]")


def test_bracketed_description_names_the_bars_epoch_and_phase() -> None:
    """hpcaitech/ColossalAI, colossalai/legacy/trainer/_trainer.py, Trainer._train_epoch (tqdm(progress,
    desc=f"[Epoch {epoch} / Train]")) and Trainer._eval (desc=f"[Epoch {epoch} / Test]"): the description in
    brackets names the bar's epoch; the test's bar is no training."""
    point = parse_line(_colossal_bar(3, 40, 96))
    assert point is not None and (point.step, point.total, point.epoch, point.phase) == (40, 96, 3.0, "train")
    point = parse_line(_colossal_bar(3, 5, 12, "Test"))
    assert point is not None and point.phase == "test"
    # an earlier redraw's times in brackets are no description
    point = parse_line("0it [00:00, ?it/s]  4%|▍         | 4/96 [00:02<00:50,  1.80it/s]")
    assert point is not None and (point.step, point.epoch, point.phase) == (4, None, "train")


def test_bracketed_epoch_bars_are_no_restarts(tmp_path: Path) -> None:
    """hpcaitech/ColossalAI, colossalai/legacy/trainer/_trainer.py, Trainer.fit: each epoch's bar counts from 0
    again under its own "[Epoch e / Train]": the run goes on (epochs from 0), no restart."""
    lines = ["\r".join(_colossal_bar(e, n, 20) for n in range(0, 21, 5)) for e in range(3)]
    lines.append("\r".join(_colossal_bar(3, n, 20) for n in range(0, 11, 5)))
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.restarts == []
    assert series.step == 3 * 20 + 10


# ------------------------------------------------------------------------------- "loss is x": a loss said in words


def test_bigdl_distri_optimizer_line_says_iteration_and_loss() -> None:
    """intel/BigDL, spark/dl/src/main/scala/com/intel/analytics/bigdl/optim/DistriOptimizer.scala, optimize (logger.info
    of s"${_header} Trained ${n} records in ${t} seconds. Throughput is ${x} records/second. Loss is ${loss}. ", its
    header "[Epoch e r/R][Iteration i][Wall Clock ts]"): the iteration is the run's step, the loss the line's."""
    point = parse_line("2026-02-01 10:00:01 INFO  optim.DistriOptimizer$:427 - [Epoch 3 20480/60000][Iteration 412]"
                       "[Wall Clock 211.53s] Trained 512 records in 0.4012 seconds. Throughput is 1276.17 "
                       "records/second. Loss is 1.2804651. ")
    assert point is not None and (point.step, point.epoch) == (412, 3.0)
    assert training_loss(point.metrics) == ("loss", 1.2804651)


def test_mindspore_loss_monitor_line_says_its_loss() -> None:
    """mindspore-ai/mindspore, mindspore/python/mindspore/train/callback/_loss_monitor.py, LossMonitor.step_end
    (print("epoch: %s step: %s, loss is %s" % ...)): the loss said in words is the line's loss; an evaluation's is
    none."""
    point = parse_line("epoch: 2 step: 150, loss is 0.8112")
    assert point is not None and point.step == 150
    assert training_loss(point.metrics) == ("loss", 0.8112)
    point = parse_line("epoch 4, train loss is 0.52")
    assert point is not None and training_loss(point.metrics) is not None
    assert training_loss(point.metrics)[1] == 0.52


def test_bigdl_resubmitted_job_from_its_snapshot_is_a_restart(tmp_path: Path) -> None:
    """intel/BigDL, DistriOptimizer.scala, optimize: a job resubmitted from a snapshot counts its iterations again
    from the snapshot's (its wall clock from 0): a restart, the run at its last iteration."""
    def line(i: int, wall: float) -> str:
        return (f"2026-02-01 10:{i % 60:02d}:00 INFO  optim.DistriOptimizer$:427 - [Epoch 2 {i * 64}/90000]"
                f"[Iteration {i}][Wall Clock {wall:.3f}s] Trained 64 records in 0.5 seconds. Throughput is 128.0 "
                f"records/second. Loss is {3 - i / 100:.4f}. ")
    lines = [line(i, i * 0.5) for i in range(100, 131, 5)]
    lines += [line(i, (i - 120) * 0.5) for i in range(121, 141, 5)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 136
    assert len(series.restarts) == 1
    assert training_loss(series.metrics) == ("loss", 1.64)


# ----------------------------------- an epoch's results block: "--- epoch N ---" then "%-15s: %.4f" lines (yl4579's)


def test_epoch_banner_without_the_runs_epochs() -> None:
    """yl4579/AuxiliaryASR, train.py, main (logger.info('--- epoch %d ---' % epoch), epochs from 1): the run counts
    epochs; a rule of another name ("=== Step 3 ===") is no epoch."""
    point = parse_line("--- epoch 12 ---")
    assert point is not None and (point.step, point.counts_epochs, point.first_epoch) == (12, True, 1)
    assert parse_line("===== Step 12 =====") is None


def test_epoch_results_block_after_train_and_eval_bars(tmp_path: Path) -> None:
    """yl4579/AuxiliaryASR, train.py, main (after trainer._train_epoch's and _eval_epoch's tqdm bars,
    desc="[train]" and "[eval]", '--- epoch %d ---' then logger.info('%-15s: %.4f' % (key, value)) of each result):
    the run is at the epoch the block names; its loss the block's "train/loss" (its name padded to a column), not
    "eval/loss"."""
    lines = []
    for epoch in range(7, 10):
        lines.append("\r".join(f"[train]: {n * 100 // 40:3d}%|█   | {n}/40 [00:{n:02d}<00:10,  3.9it/s]"
                               for n in range(0, 41, 10)))
        lines.append("\r".join(f"[eval]: {n * 100 // 6:3d}%|█   | {n}/6 [00:0{n}<00:01,  5.1it/s]"
                               for n in range(0, 7, 3)))
        lines.append(f"--- epoch {epoch} ---")
        lines += [f"{'train/loss':<15}: {8 - epoch / 4:.4f}", f"{'train/ctc':<15}: 2.1000",
                  f"{'eval/loss':<15}: {9 - epoch / 4:.4f}", f"{'eval/wer':<15}: 0.4100"]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 9
    assert series.restarts == []
    assert training_loss(series.metrics) == ("train/loss", 5.75)


def test_trainer_summary_glued_after_the_last_redraw_ends_the_run(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/trainer.py, Trainer._inner_training_loop (self.log(metrics) of
    train_runtime, train_loss, ... at the end) through ProgressCallback.on_log: the summary dict glued after the
    bar's last redraw says the training is over; its train_loss is the run's mean, not its last loss."""
    text = ("\r".join(_hf_bar(n, 60) for n in range(50, 61))
            + "{'loss': 0.4012, 'grad_norm': 0.9, 'learning_rate': 0.0, 'epoch': 3.0}\n"
            + _hf_bar(60, 60) + "{'train_runtime': 812.4, 'train_samples_per_second': 9.1, "
            "'train_steps_per_second': 0.07, 'train_loss': 0.8833, 'epoch': 3.0}\n")
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (60, 60)
    assert series.ended
    assert training_loss(series.metrics) == ("loss", 0.4012)


def test_ts_elapsed_stamp_before_srun_label() -> None:
    """moreutils, ts: with -s (the time since it started, "%H:%M:%S") its stamp precedes srun's label as well."""
    labels = Labels()
    text, _ = relabel("00:01:02 3: epoch 2 train loss: 0.5", labels)
    assert text == "3: 00:01:02 epoch 2 train loss: 0.5"
    assert labels.rank == 3


def test_trainer_dicts_pasted_as_a_quote_block(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/trainer_callback.py, ProgressCallback.on_log (str(logs) per
    logging step, the bar's last state after them): pasted into an issue as a Markdown quote ("> " before each line,
    the terminal's padding kept), the dicts' loss is the run's, the bar's count its step."""
    lines = ["I fine-tune with logging_steps 1 and the loss goes to zero:", ""]
    lines += [f"> {{'loss': {2.5 / s:.4f}, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': {s / 100:.2f}}}"
              + " " * 40 for s in range(1, 9)]
    lines.append(">   2%|▏         | 8/400 [00:41<33:51,  5.18s/it]")
    lines.append("> > {'loss': 0.3125, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': 0.08}")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (8, 400)
    assert training_loss(series.metrics) == ("loss", 0.3125)
