"""General mechanisms of the progress reader, round U (issue [progress-real]): a logger's line it repeats every so
many iterations is no start; the Trainer's dict after what is left of a cleared bar; DeepSpeed-Chat's epoch loss
beside DeepSpeed's step lines; fastprogress' "Total time" as the fit's end; an epoch block's loss the latest only
until the loop's next line; torch_xla's ordinal as the line's rank. Every line here is written for the test, in the
layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a logger's periodic "Exp name" line


def _mmcv_iter(n: int) -> str:
    return (f"2031-04-02 10:{n // 100 % 60:02d}:00,100 - mmseg - INFO - Iter [{n}/40000]  lr: 2.000e-04, eta: 3:10:00, "
            f"time: 0.310, data_time: 0.010, memory: 5120, decode.loss_ce: 0.{n % 97 + 100}")


def test_mmcv_exp_name_printed_every_thousand_iterations_is_no_restart(tmp_path: Path) -> None:
    """mmcv runner/hooks/logger/text.py, TextLoggerHook._log_info(): f'Exp name: {runner.meta["exp_name"]}' every
    ``interval_exp_name`` (1000) iterations, before that iteration's 'Iter [{iter}/{max_iters}]\\t{lr} eta: ...'
    line (mmengine's LoggerHook the same). An excerpt that starts at one has it as its first line: printed again a
    thousand iterations later it is the logger's, not the program started again."""
    lines = []
    for n in range(5100, 8100, 100):
        if n % 1000 == 0:
            lines.append(f"2031-04-02 10:{n // 100 % 60:02d}:00,000 - mmseg - INFO - Exp name: upernet_r18_city_40k")
        lines.append(_mmcv_iter(n))
    lines.insert(0, "2031-04-02 09:00:00,000 - mmseg - INFO - Exp name: upernet_r18_city_40k")
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (8000, 40000)
    assert series.restarts == []


# ---------------------------------------------------------------- the Trainer's dict after a cleared bar's remnant


def test_the_trainer_dict_after_a_cleared_bar_remnant_gives_the_loss(tmp_path: Path) -> None:
    """transformers trainer_callback.py, ProgressCallback.on_log(): self.training_bar.write(str(logs)); tqdm.write
    clears the bar (a carriage return, blanks) before it writes the dict. A terminal's paste that lost the carriage
    returns keeps the bar's "  0%|" and the blanks before each dict (TRL's GRPOTrainer logs through it), the bar's
    next redraw on the line after."""
    pad = " " * 90
    lines = ["  0%|          | 0/40000 [00:00<?, ?it/s]"]
    for n, loss in ((1, 0.0021), (2, 0.0004), (3, 0.0017)):
        lines.append(f"  0%|{pad}{{'loss': {loss}, 'grad_norm': 0.81, 'learning_rate': 9.9e-07, 'reward': -12.5, "
                     f"'kl': 0.0003, 'epoch': 0.0}}")
        lines.append(f"  0%|          | {n}/40000 [00:0{n * 3}<33:20:00,  3.00s/it]")
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (3, 40000)
    assert training_loss(series.metrics) == ("loss", 0.0017)


# ---------------------------------------------------------------- DeepSpeed-Chat's loss of the epoch


def test_deepspeed_chat_epoch_loss_line_is_an_epoch_summary() -> None:
    """DeepSpeed-Chat training/step2_reward_model_finetuning/main.py: print_rank_0(f"Epoch {epoch+1}/
    {args.num_train_epochs} with loss {mean_loss/(step+1)}", global_rank): the epoch's mean loss."""
    point = parse_line("Epoch 2/3 with loss 0.4718806612491608")
    assert point is not None and point.form == "epoch-summary"
    assert training_loss(point.metrics) == ("loss", 0.4718806612491608)


def test_deepspeed_chat_epoch_loss_after_log_dist_steps_keeps_their_step(tmp_path: Path) -> None:
    """The same line after DeepSpeed's engine lines, which count the run's optimizer steps (engine.py's log_dist
    f"step={self.global_steps}, skipped={self.skipped_steps}, lr={lr}, mom={mom}" and the timer's
    "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec=..."): the run stays in their steps, the epoch's
    loss its last training loss."""
    lines = ["Beginning of Epoch 1/1, Total Micro Batches 800"]
    for n in range(10, 400, 10):
        lines.append(f"[2031-05-01 08:00:{n % 60:02d},100] [INFO] [logging.py:96:log_dist] [Rank 0] step={n}, "
                     f"skipped=0, lr=[3.1e-05, 3.1e-05], mom=[(0.9, 0.95), (0.9, 0.95)]")
        lines.append(f"[2031-05-01 08:00:{n % 60:02d},200] [INFO] [timer.py:260:stop] epoch=0/micro_step={2 * n}/"
                     f"global_step={n}, RunningAvgSamplesPerSec=21.5, CurrSamplesPerSec=21.7, MemAllocated=4.1GB")
    lines += ["Epoch 1/1 with loss 0.6230712890625", "saving model ..."]
    series, _ = _read(tmp_path, lines)
    assert series.step == 390
    assert training_loss(series.metrics) == ("loss", 0.6230712890625)


# ---------------------------------------------------------------- fastprogress' "Total time"


def _fastai_table(rows: int) -> list[str]:
    out = ["epoch     train_loss  valid_loss  accuracy"]
    for e in range(1, rows + 1):
        out.append(f"{e:<10}{0.9 / e:<12.6f}{0.3 + e / 100:<12.6f}{0.8 + e / 100:.6f}")
    return out


def test_fastprogress_total_time_after_the_table_is_the_fit_end(tmp_path: Path) -> None:
    """fastprogress' ConsoleMasterBar (fastai v1's fit): the epoch table's rows ("epoch  train_loss  valid_loss ...")
    then f'Total time: {format_time(t)}' ("mm:ss", "h:mm:ss") once the bar over the epochs reached its total. An
    error after it (the script reloading its best checkpoint) comes after the training's end."""
    lines = ["Starting classifier training", *_fastai_table(6), "Total time: 01:42",
             "Traceback (most recent call last):", '  File "run.py", line 9, in <module>',
             "FileNotFoundError: [Errno 2] No such file or directory: 'models/best.pth'"]
    series, words = _read(tmp_path, lines)
    assert series.step == 6 and series.ended
    assert "done" in words
    series, words = _read(tmp_path, ["Starting classifier training", *_fastai_table(6), "Total time: 1:01:42"])
    assert "done" in words


def test_a_total_time_line_without_a_table_ends_nothing(tmp_path: Path) -> None:
    """A loop's own "Total time: 12:00" beside lines that are no fit's table says nothing of its end."""
    lines = [f"step {n}/100 loss 0.{n + 10}" for n in range(10, 60, 10)] + ["Total time: 12:00"]
    series, words = _read(tmp_path, lines)
    assert series.step == 50 and not series.ended and "done" not in words


# ---------------------------------------------------------------- a loss said on a line of its own, then the loop's


def test_the_loop_line_loss_after_an_epoch_block_loss_is_the_latest(tmp_path: Path) -> None:
    """pytorch-template base/base_trainer.py and trainer/trainer.py: the loop's self.logger.debug('Train Epoch: {}
    {} Loss: {:.6f}'.format(epoch, self._progress(batch_idx), loss.item())), '[{}/{} ({:.0f}%)]' its progress; after
    each epoch self.logger.info('    {:15s}: {}'.format(str(key), value)) for each of the epoch's results ("loss", its
    mean, beside "val_loss"). Cut in the next epoch, the loop's last line's "Loss" is the latest training loss, not
    the block's "loss" before it."""
    head = "2031-06-01 12:00:00,000 - trainer - "
    lines = [f"{head}DEBUG - Train Epoch: 1 [{n}/800 ({n * 100 // 800}%)] Loss: 0.{500 - n // 10}"
             for n in range(0, 800, 200)]
    lines += [f"{head}INFO -     {k:15s}: {v}" for k, v in (("epoch", 1), ("loss", 0.4712), ("val_loss", 0.5233))]
    lines += [f"{head}DEBUG - Train Epoch: 2 [{n}/800 ({n * 100 // 800}%)] Loss: 0.{300 - n // 10}"
              for n in range(0, 600, 200)]
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("Loss", 0.26)


# ---------------------------------------------------------------- torch_xla's ordinal after its device


def test_torch_xla_training_update_names_its_rank_by_the_ordinal() -> None:
    """torch_xla test/test_utils.py, print_training_update(): '| Training Device={} Epoch={} Step={} Loss={:.5f}
    Rate={:.2f} GlobalRate={:.2f} Time={}', its device as _get_device_spec(device) gives it, '{}/{}'.format(device,
    ordinal): the process's ordinal is the line's rank."""
    point = parse_line("| Training Device=xla:0/3 Epoch=2 Step=400 Loss=3.21875 Rate=250.10 GlobalRate=248.55 "
                       "Time=01:02:03")
    assert point is not None and point.rank == 3
    point = parse_line("| Training Device=xla:1/0 Epoch=2 Step=400 Loss=3.09375 Rate=251.00 GlobalRate=249.00 "
                       "Time=01:02:03")
    assert point is not None and point.rank == 0


def test_torch_xla_cores_in_any_order_give_ordinal_zero_loss(tmp_path: Path) -> None:
    """Every core's line, in the order the processes flushed them: the run's loss is ordinal 0's, as its rank-zero
    loggers report it, whichever core printed first."""
    lines = []
    for step in (0, 100, 200):
        for ordinal in (5, 2, 0, 7):
            device = "xla:1" if ordinal == 0 else "xla:0"
            loss = 4 + ordinal / 10 - step / 1000
            lines.append(f"| Training Device={device}/{ordinal} Epoch=1 Step={step} Loss={loss:.5f} Rate=300.00 "
                         f"GlobalRate=298.00 Time=00:0{step // 100}:10")
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("Loss", 3.8)
