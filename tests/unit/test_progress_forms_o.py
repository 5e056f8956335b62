"""General mechanisms of the progress reader, round o (issue [progress-real]): gaps the seventh fresh set showed, each
closed as a rule read from the source of the program that prints the form; each test names the repository, the file
and the function. Every line here is written for the test, in the layout those sources give, with values of our
own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_text as _read

# ---------------------------------------------------------------- a log pasted as a Markdown quote


def _trainer_dict(loss: float, lr: float, epoch: float) -> str:
    return f"{{'loss': {loss}, 'grad_norm': 1.25, 'learning_rate': {lr}, 'epoch': {epoch}}}"


def test_quoted_trainer_dicts_say_the_loss_even_zero(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/trainer.py, Trainer._maybe_log_save_evaluate (logs["loss"] =
    round(mean, 4): a loss that fell to 0 is printed "0.0") and trainer_callback.py, ProgressCallback.on_log (the
    dict written above the bar): pasted in an issue as a Markdown quote, "> " before each line, the dicts are still
    the run's, and the loss 0.0 is a loss, not none."""
    lines = ["I am fine-tuning and the loss goes to zero:", ""]
    lines.append("> " + _trainer_dict(3.1416, 0.0, 0.0) + "      ")
    lines += ["> " + _trainer_dict(0.0, 1e-06 * n, round(0.01 * n, 2)) + "   " for n in range(1, 12)]
    lines.append(">   2%|▏         | 12/600 [01:10<57:20,  5.85s/it]")
    lines += ["", "I stopped it there."]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 12 and series.total == 600
    assert training_loss(series.metrics) == ("loss", 0.0)


def test_trainer_loss_zero_between_bar_redraws(tmp_path: Path) -> None:
    """huggingface/transformers, trainer.py, Trainer._maybe_log_save_evaluate and trainer_callback.py,
    ProgressCallback.on_log (tqdm.write of the dict above the bar, its redraws on "\\r"): a loss of 0.0 is the
    run's latest loss, as any other value is."""
    pieces = []
    for step in range(1, 9):
        pieces.append(f"\r  {step}%|▏         | {step}/100 [00:{step:02d}<01:40,  1.00it/s]")
        if step % 2 == 0:
            pieces.append("\n" + _trainer_dict(0.0 if step > 2 else 1.5, 1e-05, round(step / 100, 2)) + "\n")
    series = _read(tmp_path, "".join(pieces) + "\n")
    assert series.step == 8 and series.total == 100
    assert training_loss(series.metrics) == ("loss", 0.0)


def test_nested_and_bare_quote_marks(tmp_path: Path) -> None:
    """A reply that quotes a quoted log ("> > ", ">> ") and the quote's empty lines (a bare ">"): the marks go, the
    lines are read as printed (here tqdm's bar with a postfix, tqdm/std.py, tqdm.format_meter)."""
    bars = [f"> > train: {n * 10}/200 [00:{n:02d}<00:30, 3.10it/s, loss={1.0 - n / 20:.3f}]" for n in range(1, 6)]
    lines = [">", *bars, ">>", ">> train: 60/200 [00:06<00:29, 3.10it/s, loss=0.650]"]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 60 and series.total == 200
    assert training_loss(series.metrics) == ("loss", 0.65)


# ---------------------------------------------------------------- torchtitan with pipeline parallelism


def _titan(rank: int, step: int, loss: float) -> str:
    return (f"[rank{rank}]:[titan] 2026-03-02 10:00:{step:02d},120 - root - INFO - step: {step:2d}  loss: {loss:7.4f}"
            f"  memory: 41.20GiB(52.08%)  tps: 2,914  tflops: 168.80  mfu: 17.07%")


def test_torchtitan_pipeline_placeholder_loss_is_no_loss() -> None:
    """pytorch/torchtitan, torchtitan/train.py, Trainer.forward_backward_step under pipeline parallelism (a rank
    without the last stage keeps torch.tensor([-1.0]) as its loss) and components/metrics.py, MetricsProcessor.log
    (its "step: %2d  loss: %7.4f  memory: ..." line): -1.0000 is the placeholder, not a loss; the step holds."""
    point = parse_line(_titan(0, 7, -1.0))
    assert point is not None and point.step == 7
    assert "loss" not in point.metrics and point.metrics["tps"] == 2914
    real = parse_line(_titan(3, 7, 5.8123))
    assert real is not None and training_loss(real.metrics) == ("loss", 5.8123)


def test_torchtitan_pipeline_run_loss_is_the_last_stage(tmp_path: Path) -> None:
    """pytorch/torchtitan, torchtitan/train.py (the loss is the last stage's; the first stage prints -1) with torchrun's
    --local-ranks-filter 0,3 (its "[rankN]:" prefix): rank 0's lines are the run's steps, the last stage's loss is
    the run's, in whichever order the two ranks' lines come."""
    lines = []
    for step in range(1, 9):
        pair = [_titan(0, step, -1.0), _titan(3, step, 9.0 - step / 2)]
        lines += pair if step % 3 else pair[::-1]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 8
    assert series.restarts == []
    assert training_loss(series.metrics) == ("loss", 5.0)


def test_every_rank_printing_its_loss_keeps_the_followed_rank(tmp_path: Path) -> None:
    """The rule above takes another rank's loss only where the followed rank's lines say none: where each rank
    prints its own loss (data parallel, torchtitan/train.py without pipeline stages), the followed rank's is kept."""
    lines = []
    for step in range(1, 6):
        lines += [_titan(0, step, 4.0 - step / 10), _titan(1, step, 7.0 - step / 10)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 5
    assert training_loss(series.metrics) == ("loss", 3.5)


# ---------------------------------------------------------------- fairseq's tqdm bar without num_updates


def _fairseq_bar(epoch: int, n: int, total: int, loss: float) -> str:
    return (f"| epoch {epoch:03d}:  {100 * n // total:2d}%|▏         | {n}/{total} [00:{n % 60:02d}<1:02:11, "
            f" 2.05it/s, loss={loss:.3f}, nll_loss={loss - 0.1:.3f}, ppl=812.40, wps=4211, ups=2.1, wpb=2044")


def test_fairseq_epoch_prefix_counts_epochs_from_one() -> None:
    """facebookresearch/fairseq, fairseq/progress_bar.py, progress_bar.__init__ (its prefix "| epoch {:03d}", the
    epoch from epoch_itr.epoch, 1 at the first) and tqdm_progress_bar (tqdm with that prefix, its postfix the
    stats cut at the terminal's width, num_updates beyond it): the epoch padded with zeros is numbered from 1."""
    point = parse_line(_fairseq_bar(1, 120, 9000, 9.812))
    assert point is not None and (point.step, point.total, point.epoch) == (120, 9000, 1.0)
    assert point.per_epoch and point.first_epoch == 1


def test_fairseq_first_epoch_bar_is_the_runs_start(tmp_path: Path) -> None:
    """facebookresearch/fairseq, fairseq/progress_bar.py and train.py (the epoch's bar, 1-based, the valid lines
    after): within epoch 001 the run's step is the bar's count, no epoch before it; in epoch 002 one epoch's
    batches are before it."""
    lines = [_fairseq_bar(1, n, 900, 9.0 - n / 300) for n in range(10, 300, 10)]
    series = _read(tmp_path, "\r".join(lines) + "\n")
    assert series.step == 290 and series.total is None
    lines += [_fairseq_bar(2, n, 900, 6.0 - n / 900) for n in range(10, 60, 10)]
    series = _read(tmp_path, "\r".join(lines) + "\n")
    assert series.step == 950 and series.restarts == []


def test_epoch_padded_from_zero_still_counts_from_zero(tmp_path: Path) -> None:
    """A bar whose padded epoch starts at "000" (a script's desc=f"Epoch {epoch:03d}" over range(epochs)): the
    series then numbers its epochs from 0, its second epoch's bar after one epoch's batches."""
    def bar(epoch: int, n: int) -> str:
        return f"Epoch {epoch:03d}:  {n}%|█         | {n}/100 [00:{n:02d}<00:50,  2.00it/s, loss=1.{n:02d}]"

    lines = [bar(0, n) for n in range(5, 100, 5)] + [bar(1, n) for n in range(5, 30, 5)]
    series = _read(tmp_path, "\r".join(lines) + "\n")
    assert series.step == 125


# ---------------------------------------------------------------- nnU-Net v1's trainer


def _nnunet_v1_epoch(epoch: int, loss: float, stamp: bool = True) -> list[str]:
    at = f"2024-05-0{1 + epoch // 100} 1{epoch % 10}:{epoch % 60:02d}:07.514203: " if stamp else ""
    return [f"{at}", f"epoch:  {epoch}", f"{at}train loss : {loss:.4f}", f"{at}validation loss: {loss - 0.02:.4f}",
            f"{at}Average global foreground Dice: [0.8123, 0.4411]",
            f"{at}(interpret this as an estimate for the Dice of the different classes. This is not exact.)",
            f"{at}lr: 0.0097", f"{at}This epoch took 301.551240 s", ""]


def test_nnunet_v1_epochs_and_train_loss(tmp_path: Path) -> None:
    """MIC-DKFZ/nnUNet (v1), nnunet/training/network_training/network_trainer.py, NetworkTrainer.run_training
    (print_to_log_file("\\nepoch: ", self.epoch) at each epoch's start, from 0; "train loss : %.4f" after its
    batches; "validation loss: %.4f", "This epoch took %f s") and print_to_log_file (its timestamp "<date>: " before
    each record in the log file; none on the console): the run counts epochs, the loss is the training one's."""
    lines = [line for e in range(4) for line in _nnunet_v1_epoch(e, 0.4 - e / 10)]
    lines.append("epoch:  4")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 4
    assert series.metrics["train_loss"] == 0.1
    assert training_loss(series.metrics) == ("train_loss", 0.1)
    console = [line for e in range(3) for line in _nnunet_v1_epoch(e, 0.5 - e / 10, stamp=False)]
    series = _read(tmp_path, "\n".join(console) + "\n")
    assert series.step == 2 and training_loss(series.metrics) == ("train_loss", 0.3)


def test_nnunet_v1_continued_run_is_a_restart(tmp_path: Path) -> None:
    """MIC-DKFZ/nnUNet (v1), nnunet/run/run_training.py (-c: load_latest_checkpoint) and network_trainer.py,
    NetworkTrainer.load_checkpoint ("loading checkpoint %s train=%s", then the epochs from the checkpoint's,
    model_latest saved every save_every epochs): the epochs go back to the saved one, a restart."""
    lines = [line for e in range(6) for line in _nnunet_v1_epoch(e, -0.1 - e / 100)]
    lines.append("2024-05-01 19:00:00.000001: loading checkpoint /data/fold_0/model_latest.model train= True")
    lines += [line for e in range(4, 8) for line in _nnunet_v1_epoch(e, -0.2 - e / 100)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 7 and len(series.restarts) == 1
    assert training_loss(series.metrics) == ("train_loss", -0.27)


def test_epoch_header_alone_is_not_a_metric_line() -> None:
    """The epoch header alone ("epoch:  12", "Epoch 12") is an epoch's start; "epoch: 12, loss: 0.3" on one line is
    another form's, not the header's."""
    for text in ("epoch:  12", "Epoch 12", "epoch 12"):
        point = parse_line(text)
        assert point is not None and (point.form, point.step) == ("epoch-header", 12)
    other = parse_line("epoch: 12, loss: 0.3")
    assert other is None or other.form != "epoch-header"


# ---------------------------------------------------------------- Catalyst's bar: "e/E * Epoch (loader)"


def _catalyst_bar(epoch: int, epochs: int, loader: str, n: int, total: int, loss: float) -> str:
    return (f"{epoch}/{epochs} * Epoch ({loader}):  {100 * n // total:2d}% {n}/{total} [00:{n:02d}<00:40,  1.50s/it, "
            f"_fps=11.020, loss={loss:.3f}]")


def test_catalyst_bar_names_the_epoch_of_the_runs() -> None:
    """catalyst-team/catalyst (19.x), catalyst/dl/callbacks/logging.py, VerboseLogger.on_loader_start (tqdm with
    desc f"{state.stage_epoch}/{state.num_epochs} * Epoch ({state.loader_name})", ncols=0: no bar drawn) and
    on_batch_end (its postfix the batch metrics); 21.x's TqdmCallback the same desc of runner.epoch_step: the run
    counts epochs, the bar one epoch's batches; the valid loader's bar is no training's."""
    point = parse_line(_catalyst_bar(3, 12, "train", 9, 40, 0.512))
    assert point is not None and point.counts_epochs
    assert (point.step, point.total, point.batch, point.batches) == (3, 12, 9, 40)
    assert training_loss(point.metrics) == ("loss", 0.512)
    valid = parse_line(_catalyst_bar(3, 12, "valid", 4, 10, 0.611))
    assert valid is None or valid.phase != "train"


def test_catalyst_run_from_epoch_zero(tmp_path: Path) -> None:
    """catalyst-team/catalyst (19.x), VerboseLogger (stage_epoch from 0) and ConsoleLogger (its epoch summaries
    "e/E * Epoch e (loader): k=v | ... | loss=x" between): the epochs done are the epoch the last training bar
    names, its loader's batches no steps; stopped in the middle of epoch 4 of 8, the run is at 4 of 8."""
    lines = []
    for epoch in range(5):
        last = 20 if epoch < 4 else 7
        lines.append("\r".join(_catalyst_bar(epoch, 8, "train", n, 20, 1.0 - epoch / 10 - n / 100)
                               for n in range(1, last + 1)))
        if epoch < 4:
            lines.append("\r".join(_catalyst_bar(epoch, 8, "valid", n, 5, 0.9) for n in range(1, 6)))
            lines.append(f"{epoch}/8 * Epoch {epoch} (train): _base/lr=0.0003 | _timers/_fps=13.1 | loss=0.5")
            lines.append(f"{epoch}/8 * Epoch {epoch} (valid): _base/lr=0.0003 | _timers/_fps=20.1 | loss=0.6")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 4 and series.total == 8
    assert series.restarts == []
    assert training_loss(series.metrics) == ("loss", 0.53)


# ---------------------------------------------------------------- a loop's line that starts with its rank


def test_leading_rank_is_the_lines_rank() -> None:
    """A script under the deepspeed launcher (deepspeed/launcher/launch.py: one process per GPU, each its RANK) that
    prints its own progress on every rank, its rank first: "rank 3 | epoch 0 | step 52 | loss 0.2472",
    "Rank 1: step 10, loss 0.5" — the rank is the line's, not a metric nor a step; a word that only starts with
    "rank" is no rank."""
    point = parse_line("rank 3 | epoch 0 | step 52 | loss 0.2472")
    assert point is not None and (point.rank, point.step) == (3, 52)
    assert training_loss(point.metrics) == ("loss", 0.2472)
    point = parse_line("Rank 1: step 10, loss 0.5")
    assert point is not None and (point.rank, point.step) == (1, 10)
    point = parse_line("ranking 3 | step 5 | loss 0.2")
    assert point is None or point.rank is None


def test_every_rank_prints_its_loss_the_run_is_rank_zero(tmp_path: Path) -> None:
    """deepspeed/utils/logging.py, log_dist (the engine's own lines on ranks=[0]: "[Rank 0] step=60, skipped=0, ...")
    and a loop whose every rank prints "rank r | epoch e | step n | loss x" in whichever order the ranks finish:
    the run's loss is rank 0's, its step the ranks' level."""
    order = [[0, 1, 2, 3], [2, 0, 3, 1], [3, 1, 0, 2], [1, 3, 2, 0]]
    lines = []
    for step in range(1, 13):
        lines += [f"rank {r} | epoch 0 | step {step} | loss {0.5 + r / 10 - step / 100:.4f}" for r in order[step % 4]]
        if step % 6 == 0:
            lines.append(f"[2026-01-04 10:00:{step:02d},100] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, "
                         "skipped=0, lr=[3e-05], mom=[(0.9, 0.999)]")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 12 and series.restarts == []
    assert training_loss(series.metrics) == ("loss", 0.38)


# ---------------------------------------------------------------- ms-swift: its bar between its dicts


def _swift_dict(step: int, total: int, loss: float) -> str:
    return (f"{{'loss': {loss}, 'token_acc': 0.81, 'grad_norm': 3.1, 'learning_rate': 2e-05, 'memory(GiB)': 40.1, "
            f"'train_speed(iter/s)': 0.25, 'epoch': 0.12, 'global_step/max_steps': '{step}/{total}', "
            f"'percentage': '{100 * step / total:.2f}%', 'elapsed_time': '10m 2s', 'remaining_time': '1h 5m 3s'}}")


def _swift_bar(step: int, total: int) -> str:
    return f"Train:  {100 * step // total:2d}%|█         | {step}/{total} [10:{step % 60:02d}<1:05:03,  4.00s/it]"


def test_swift_bar_ahead_of_its_dicts(tmp_path: Path) -> None:
    """modelscope/ms-swift, swift/trainers/callback.py, ProgressCallbackNew (the Trainer's bar with desc "Train",
    total state.max_steps; on_log adds 'global_step/max_steps', 'percentage', 'elapsed_time', 'remaining_time' to
    the dict it writes every logging_steps): the bar counts the same steps as the dicts, drawn at every step; after
    the last dict its count is the run's step, the loss the last dict's."""
    total, lines = 900, []
    for step in range(1, 23):
        lines.append(_swift_bar(step, total))
        if step % 5 == 0:
            lines.append(_swift_dict(step, total, round(1.5 - step / 100, 4)))
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 22 and series.total == 900
    assert series.restarts == []
    assert training_loss(series.metrics) == ("loss", 1.3)


def test_other_bar_beside_dicts_is_not_the_run(tmp_path: Path) -> None:
    """The rule above holds only for a bar of the dicts' own total: an evaluation's or a dataset's bar of another
    total between them (ms-swift's "Val:" bar, a map over rows) says nothing of the run's step."""
    total, lines = 900, []
    for step in range(1, 11):
        lines.append(_swift_bar(step, total))
        if step % 5 == 0:
            lines.append(_swift_dict(step, total, 1.0))
    lines += [f"Map:  {n}%|█         | {n * 10}/1000 [00:01<00:09, 95.00 examples/s]" for n in range(1, 4)]
    lines += [f"Train:  1%|          | 11/{total} [00:{n:02d}<00:09,  9.00it/s]" for n in range(1, 2)]
    lines += [f"Val:  {n * 10}%|█         | {n}/10 [00:0{n}<00:09,  1.00it/s]" for n in range(1, 4)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 11 and series.total == 900


# ---------------------------------------------------------------- an epoch's summary with a unit; a titled rule


def test_epoch_summary_with_a_field_and_its_unit_before_the_loss() -> None:
    """luxonis/luxonis-train, luxonis_train/core (its trainer's log of each epoch: "[Epoch {n}/{epochs}] Duration:
    {s:.2f}s | Train Loss: {loss:.4f}", through Python's logging "<date> [INFO] "): the field before the loss may
    carry its unit ("0.61s", "12ms", "95%"); the run counts epochs, of its epochs."""
    point = parse_line("2026-02-11 08:01:17 [INFO] [Epoch 17/150] Duration: 0.84s | Train Loss: 12.0815")
    assert point is not None and (point.form, point.step, point.total, point.counts_epochs) == \
        ("epoch-summary", 17, 150, True)
    assert training_loss(point.metrics) == ("Train_Loss", 12.0815)
    for text in ("Epoch 4 Time: 12.5ms | loss 0.31", "Epoch 4 | acc: 95% | loss: 0.31"):
        point = parse_line(text)
        assert point is not None and point.step == 4 and training_loss(point.metrics) == ("loss", 0.31)


def test_results_under_a_validation_rule_are_not_the_training_loss(tmp_path: Path) -> None:
    """rich, rich/console.py, Console.rule (a horizontal rule "─" with its title centred) as luxonis-train draws one
    above each validation's results ("Loss: x", then a metrics table): the lines under a rule titled as an
    evaluation say the evaluation's numbers, not the training's loss; the next epoch's line ends the section."""
    lines = [f"2026-02-11 08:01:{e:02d} [INFO] [Epoch {e}/40] Duration: 0.60s | Train Loss: {9.0 - e / 10:.4f}"
             for e in range(1, 21)]
    lines += ["2026-02-11 08:01:30 [INFO] Validation loss: 7.5512", "2026-02-11 08:01:30 [INFO] ",
              "─" * 30 + " Validation " + "─" * 30, "Loss: 7.551203966140747", "Metrics:",
              "┃ Name                 ┃ Value    ┃", "│ map_50               │ 0.61254  │"]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 20 and series.total == 40
    assert training_loss(series.metrics) == ("Train_Loss", 7.0)
    lines += ["2026-02-11 08:01:31 [INFO] [Epoch 21/40] Duration: 0.60s | Train Loss: 6.9000",
              "=" * 10 + " Training " + "=" * 10, "loss: 6.85"]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 21
    assert training_loss(series.metrics) == ("loss", 6.85)


# ---------------------------------------------------------------- an epoch table written as CSV


def test_keras_csv_logger_table(tmp_path: Path) -> None:
    """keras, keras/src/callbacks/csv_logger.py, CSVLogger.on_epoch_end (csv.DictWriter, fieldnames ["epoch"] and the
    logs' keys sorted, separator ","; epochs from 0): a header naming the epoch first and a loss, one row per
    finished epoch: the run counts epochs, the loss is the training's, not val_loss."""
    lines = ["epoch,accuracy,learning_rate,loss,val_accuracy,val_loss"]
    lines += [f"{e},{0.6 + e / 100:.4f},0.001,{1.2 - e / 20:.4f},{0.55 + e / 100:.4f},{1.3 - e / 25:.4f}"
              for e in range(7)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 6
    assert training_loss(series.metrics) == ("loss", 0.9)
    assert series.metrics["val_loss"] == 1.06


def test_padded_csv_table_rerun_is_a_restart(tmp_path: Path) -> None:
    """A training script's own epoch table as CSV with padded cells (each field written with ljust and " ,"
    between, the epoch right-aligned: "    3 ,0.001 , 938.73 ,...,train"), a rerun from a checkpoint appending
    rows from an earlier epoch: the numbered first cells are the epochs, no editor's line numbers; the epoch going
    back is a restart; the loss is the Loss column's."""
    header = "Epoch ,LR       ,RMSE      ,Loss   ,FinishTime     ,Mode"
    row = "{e:5d} ,{lr:<8} ,{rmse:9.4f} ,{loss:<6.4f} ,03.04_1{h}:00:00 ,train"
    lines = [header] + [row.format(e=e, lr="0.002", rmse=900 - 10 * e, loss=3 - e / 10, h=e % 10) for e in range(8)]
    lines += [row.format(e=e, lr="[0.002]", rmse=880 - 10 * e, loss=2.5 - e / 10, h=e % 10) for e in range(6, 12)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 11 and len(series.restarts) == 1
    assert training_loss(series.metrics) == ("Loss", 1.4)
    assert series.metrics["RMSE"] == 770
