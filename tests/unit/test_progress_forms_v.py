"""General mechanisms of the progress reader, round r (issue [progress-real]): the training loss where a line says
it in forms the reader missed, written from the programs' own logging code (each test names the source file and
function whose format strings its lines follow). Every line here is written for the test, in the layout those format
strings give, with values of our own."""

from __future__ import annotations

import math
from pathlib import Path

from ntui.core.progress.lines import parse_line, rank_label, trailing_metrics, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- Megatron's early fields: a name and its value apart


def test_the_early_megatron_fields_without_a_colon_give_the_loss() -> None:
    """Megatron-LM 2019-20, pretrain_bert.py / pretrain_gpt2.py, train(): ' iteration {:8d}/{:8d} |', ' elapsed time
    per iteration (ms): {:.1f} |', ' learning rate {:.3E} |', ' lm loss {:.6E} |', ' nsp loss {:.6E} |', ' loss scale
    {:.1f} |' (GLM's and CogView's report_iteration_metrics print the same fields)."""
    point = parse_line(" iteration      300/    5000 | elapsed time per iteration (ms): 812.4 | learning rate "
                       "1.250E-04 | lm loss 4.417021E+00 | nsp loss 6.120400E-01 | loss scale 2048.0 |")
    assert point is not None and (point.step, point.total) == (300, 5000)
    assert training_loss(point.metrics) == ("lm_loss", 4.417021)
    assert point.metrics["learning_rate"] == 1.25e-4
    assert not any("scale" in name for name in point.metrics)  # (the loss's scale is a setting, not a loss)
    point = parse_line(" iteration       20/      80 | elapsed time per iteration (ms): 9.0 | learning rate 3.000E-05 |"
                       " lm loss NAN | loss scale 0.5 |")
    assert point is not None and math.isnan(point.metrics["lm_loss"])


def test_the_colon_fields_of_later_megatron_are_read_as_before() -> None:
    """Megatron-LM, megatron/training/training.py, training_log(): ' {}: {:.6E} |'.format(key, avg) and ' learning
    rate: {:.6E} |': the fields with a colon still read, each once."""
    point = parse_line(" [2024-03-01 10:00:00] iteration      120/     900 | consumed samples:        15360 | elapsed "
                       "time per iteration (ms): 401.2 | learning rate: 2.400000E-04 | global batch size:   128 | "
                       "lm loss: 5.203311E+00 | loss scale: 1.0 | grad norm: 0.731 |")
    assert point is not None and (point.step, point.total) == (120, 900)
    assert point.metrics["lm_loss"] == 5.203311 and point.metrics["grad_norm"] == 0.731


def test_an_early_megatron_run_reads_its_last_loss_not_its_validation(tmp_path: Path) -> None:
    """Megatron-LM 2019-20, pretrain_gpt2.py, evaluate_and_print_results(): ' validation loss at iteration {} | LM
    loss: {:.6E} | LM PPL: {:.6E}' between the training's lines: the training's lm loss is the run's."""
    lines = [f" iteration {n:8d}/{600:8d} | elapsed time per iteration (ms): 500.0 | learning rate 1.000E-04 | "
             f"lm loss {7.0 - n / 100:.6E} | loss scale 8.0 |" for n in range(100, 400, 100)]
    lines.insert(2, " validation loss at iteration 200 | LM loss: 9.100000E+00 | LM PPL: 8.955E+03")
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 300 and series.total == 600
    assert training_loss(series.metrics) == ("lm_loss", 4.0)


# ---------------------------------------------------------------- a loss on a line of its own, after the step's


def test_a_loss_said_in_words_after_the_steps_line_is_that_steps() -> None:
    """A loop's own print of its loss in words after the line that says its step (horovod's issue scripts:
    print('Total loss is ', loss, 'ETA is ', eta); MindSpore's LossMonitor's words "loss is"): the message starts
    with the loss, what follows is the script's own."""
    assert trailing_metrics("Total loss is  3.4127 ETA is  2:10:05.118") == {"loss": 3.4127}
    assert trailing_metrics("loss is 0.25") == {"loss": 0.25}
    assert trailing_metrics("Validation loss is 0.25") is None  # (an evaluation's)
    assert trailing_metrics("The loss is going down") is None


def test_a_rank_label_before_a_message_is_taken_off() -> None:
    """DeepSpeed, deepspeed/utils/logging.py, log_dist(): "[Rank {rank}] {message}" (HelloDeepSpeed's train_bert_ds.py
    logs its loss through its own log_dist the same way: f"Loss: {loss:.4f}"); a script's "rank 3 | "; DeepSpeed's
    rank -1 (no process group yet) is no rank."""
    assert rank_label("[Rank 0] Loss: 8.6814") == (0, "Loss: 8.6814")
    assert rank_label("[Rank 2] Loss: 8.6814") == (2, "Loss: 8.6814")
    assert rank_label("[Rank -1] Loss: 1.5") == (None, "Loss: 1.5")
    assert rank_label("rank 3 | loss: 0.5") == (3, "loss: 0.5")
    assert rank_label("Loss: 0.5") == (None, "Loss: 0.5")
    assert rank_label("Ranking loss: 0.5") == (None, "Ranking loss: 0.5")


def test_deepspeeds_labelled_loss_after_its_step_line_is_the_runs(tmp_path: Path) -> None:
    """DeepSpeed, runtime/engine.py, _take_model_step(): log_dist(f"step={n}, skipped={k}, lr=..., mom=...",
    ranks=[0]) every steps_per_print, then the script's log_dist(f"Loss: {x:.4f}") (loguru's header before it)."""
    lines = []
    for n in range(10, 60, 10):
        lines.append(f"[2025-01-02 10:00:{n:02d},100] [INFO] [logging.py:96:log_dist] [Rank 0] step={n}, skipped=1, "
                     "lr=[5e-05], mom=[(0.9, 0.999)]")
        lines.append(f"2025-01-02 10:00:{n:02d}.101 | INFO     | __main__:log_dist:53 - [Rank 0] "
                     f"Loss: {9 - n / 10:.4f}")
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 50
    assert training_loss(series.metrics) == ("Loss", 4.0)


def test_each_ranks_loss_line_counts_for_its_own_rank_only(tmp_path: Path) -> None:
    """horovod under mpirun --tag-output ("[1,r]<stdout>:"): every rank prints its step's line and then its own loss
    line, in either order; the run's loss is the followed rank's (rank 0's), not the last printed."""
    lines = []
    for n in range(5):
        lines += [f"[1,0]<stdout>:Epoch 0/10, Batch {n}/50", f"[1,1]<stdout>:Epoch 0/10, Batch {n}/50",
                  f"[1,0]<stdout>:Total loss is  {2 + n / 10} ETA is  1:00:00.5",
                  f"[1,1]<stdout>:Total loss is  {7 + n / 10} ETA is  1:00:00.5"]
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 4
    assert training_loss(series.metrics) == ("loss", 2.4)


# ---------------------------------------------------------------- a terminal's session: the shell's prompt back


def _session(steps: range, tail: list[str], prompt: str = "(venv) ada@gpu-box:~/work/bert$") -> list[str]:
    """DeepSpeedExamples, training/HelloDeepSpeed/train_bert_ds.py, train(): log_dist(f"Loss: {loss:.4f}") every
    log_every steps, nothing at the loop's end (it returns the experiment's directory, which __main__ prints); the
    session typed at bash's default prompt."""
    lines = [f"{prompt} python train_bert_ds.py --checkpoint_dir ./exp"]
    for n in steps:
        lines.append(f"[2025-01-02 10:00:00,100] [INFO] [logging.py:96:log_dist] [Rank 0] step={n}, skipped=0, "
                     "lr=[0.0001], mom=[(0.9, 0.999)]")
        lines.append(f"2025-01-02 10:00:00.101 | INFO     | __main__:log_dist:53 - [Rank 0] Loss: {9 - n / 100:.4f}")
    return lines + tail


def test_the_shells_prompt_back_after_the_command_ends_the_run(tmp_path: Path) -> None:
    """The same session's prompt again, alone, after the script returned: its training is over."""
    back = ["exp/bert_pretrain.2025", "(venv) ada@gpu-box:~/work/bert$ "]
    series, words = _read(tmp_path, _session(range(10, 110, 10), back))
    assert series.ended and "done" in words
    assert training_loss(series.metrics) == ("Loss", 8.0)
    # Red Hat's prompt, "[user@host dir]$ "
    series, words = _read(tmp_path, _session(range(10, 60, 10), ["[ada@node7 bert]$"], "[ada@node7 bert]$"))
    assert series.ended


def test_the_prompt_back_is_no_end_after_an_error_an_interrupt_or_short_of_the_total(tmp_path: Path) -> None:
    """The prompt says the program exited, not how: a traceback, a Ctrl-C echoed ("^C"), or a last step far short of
    the total the run said keep it unfinished."""
    prompt = "ada@gpu-box:~/work/bert$"
    crashed = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
               "RuntimeError: boom", prompt]
    series, words = _read(tmp_path, _session(range(10, 60, 10), crashed, prompt))
    assert not series.ended and "done" not in words
    series, words = _read(tmp_path, _session(range(10, 60, 10), ["^C", prompt], prompt))
    assert not series.ended and "done" not in words
    short = _session(range(10, 60, 10), [prompt], prompt)
    short.insert(1, "total_num_steps: 1000")
    series, words = _read(tmp_path, short)
    assert series.run_total == 1000 and not series.ended
    # another prompt than the one the command was typed at says nothing
    series, words = _read(tmp_path, _session(range(10, 60, 10), ["bob@other:~$"], prompt))
    assert not series.ended


# ---------------------------------------------------------------- the first line again from a child, not a new run

_BANNER = "Ultralytics YOLOv8.0.200 🚀 Python-3.10.4 torch-2.1.0 CUDA:0 (Some GPU, 16000MiB)"
_ARGS = "engine/trainer: task=detect, mode=train, model=yolov8n.pt, data=toy.yaml, epochs=3, batch=8, workers=4"


def _redraw(epoch: int, batch: int, seconds: int) -> str:
    """ultralytics/engine/trainer.py, BaseTrainer._do_train(): pbar.set_description(("%11s" * 2 + "%11.4g" * (2 +
    loss_length)) % (f"{epoch + 1}/{self.epochs}", f"{mem}G", *losses, instances, imgsz)) over the epoch's batches."""
    pct = batch * 100 // 4
    return (f"\r{f'{epoch}/3':>11}{'1.20G':>11}{1.5:>11.4g}{2.25:>11.4g}{1.125:>11.4g}{9:>11}{640:>11}: "
            f"{pct:3d}%|{'#' * (pct // 10):10}| {batch}/4 [00:{seconds:02d}<00:03,  1.10it/s]")


def _epochs(children: list[str] | None, second_start: bool = False) -> list[str]:
    lines = [_BANNER, _ARGS, "Starting training for 3 epochs...", ""]
    for epoch in (1, 2, 3):
        lines.append(f"{'Epoch':>11}{'GPU_mem':>11}{'box_loss':>11}")
        first = "\r  0%|          | 0/4 [00:00<?, ?it/s]"  # (tqdm's first draw, before its description is set)
        if epoch == 1 and children is not None:
            lines.append(first + _redraw(1, 1, 0) + children[0])
            lines += children[1:]
            again = first + _redraw(1, 1, 0) if second_start else ""
            lines.append(again + "".join(_redraw(1, b, b) for b in range(2, 5)))
        else:
            lines.append(first + "".join(_redraw(epoch, b, b) for b in range(1, 5)))
    return [*lines, "3 epochs completed in 0.010 hours."]


def test_the_first_line_printed_again_by_spawned_workers_is_no_restart(tmp_path: Path) -> None:
    """Windows' spawn start method runs the main module's top level again in each DataLoader worker: ultralytics'
    banner (utils/torch_utils.py, select_device's LOGGER.info of its "Ultralytics YOLOv8... 🚀 ..." string) and the
    trainer's arguments, once per worker, glued into the epoch's first redraws; the bar then goes on."""
    children = [_BANNER, _ARGS] * 4
    series, words = _read(tmp_path, _epochs(children))
    assert series.restarts == [] and series.samples[-1].step == 3 and "done" in words


def test_the_first_line_printed_again_is_a_restart_where_the_bars_begin_again(tmp_path: Path) -> None:
    """The same reprint followed by the epoch's bar from its first batch again (a program started again, its
    bars drawn anew) is a restart, as before."""
    series, _ = _read(tmp_path, _epochs([_BANNER, _ARGS] * 2, second_start=True))
    assert len(series.restarts) == 1


def test_a_step_bar_going_on_after_the_first_line_again_keeps_its_clock(tmp_path: Path) -> None:
    """tqdm/std.py, format_meter: a bar's "[elapsed<remaining" clock; a program started again draws a new bar whose
    clock starts from 0 (the Trainer's, resumed at its checkpoint's step, too): a count ahead with its clock behind is a
    restart, a count ahead with its clock going on is the same bar."""
    head = "My trainer v1.0 starting on host gpu-node-3"

    def bar(n: int, seconds: int) -> str:
        return f"\rtrain:  {n}%|{'#' * (n // 10):10}| {n}/100 [00:{seconds:02d}<01:00,  1.00it/s, loss=0.5]"

    going_on = [head, "".join(bar(n, n) for n in range(1, 30)), head, "".join(bar(n, n) for n in range(30, 50))]
    series, _ = _read(tmp_path, going_on)
    assert series.restarts == [] and series.samples[-1].step == 49
    started_again = [head, "".join(bar(n, n) for n in range(1, 30)), head,
                     "".join(bar(n, n - 30) for n in range(30, 50))]
    series, _ = _read(tmp_path, started_again)
    assert len(series.restarts) == 1


# ---------------------------------------------------------------- lit-gpt's counters with no loss, or bracketed


def test_lit_gpts_xla_line_without_a_loss_is_a_step(tmp_path: Path) -> None:
    """lit-gpt, xla/finetune/adapter.py, train(): rank_print(fabric, f"iter {iter_num} step {step_count}:" + f" iter
    time: {(t1 - iter_t0) * 1000:.2f}ms" + " (optimizer.step)") (its loss left out: .item() syncs the TPU); Fabric's
    "[rank: 0]" before it; the run's total its max_iters, so its step the iterations."""
    point = parse_line("[rank: 0] iter 57 step 58: iter time: 2140.11ms (optimizer.step)")
    assert point is not None and (point.step, point.iters, point.metrics) == (58, 57, {})
    lines = ["{'eval_interval': 600, 'log_interval': 1, 'devices': 8, 'max_iters': 900, 'micro_batch_size': 4}"]
    lines += [f"[rank: 0] iter {n} step {n + 1}: iter time: {600 + n:.2f}ms (optimizer.step)" for n in range(40)]
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 39 and series.run_total == 900
    # (its validation's f"step {iter_num}: val loss {val_loss.item():.4f}, val time: ...ms" is no training step)
    assert parse_line("[rank: 0] step 600: val loss 1.2031, val time: 8400.12ms") is None


def test_bracketed_iter_and_step_counters_are_read() -> None:
    """TinyLlama's pretrain/tinyllama.py (a lit-gpt fork), train(): fabric.print(f"[iter {state['iter_num']} step
    {state['step_count']}]: loss {loss.item():.4f}, lr {lr:.10E}, iter time: ...ms (optimizer.step)")."""
    point = parse_line("[iter 128 step 32]: loss 6.2207, lr 3.9999999999E-04, iter time: 812.50ms (optimizer.step)")
    assert point is not None and (point.step, point.iters) == (32, 128)
    assert training_loss(point.metrics) == ("loss", 6.2207)


# ---------------------------------------------------------------- a counter printed as a float; the step's own loss


def test_a_counter_printed_as_a_float_with_a_zero_fraction_is_a_step() -> None:
    """A trainer whose summary formats every value alike, f"{k}={v:.4f}" joined by spaces, its epoch and step too
    ("epoch=3.0000 step=41.0000 dt=0.0031 ..."): the step is the whole number; a fraction that is not zero is no
    count ("step=0.5000" a scheduler's size, not a step)."""
    point = parse_line("[0] [3/10: 512/4096 (12%)] epoch=3.0000 step=41.0000 dt=0.0031 batch_loss=0.2140")
    assert point is not None and point.step == 41
    assert training_loss(point.metrics) == ("batch_loss", 0.214)
    assert parse_line("step=0.5000 loss=0.2140") is None


def test_the_steps_own_loss_is_taken_before_a_running_average() -> None:
    """A loop that prints the batch's loss beside the epoch's running mean of it ("batch_loss=0.0075 ...
    running_loss=0.0064"), as "Batch Loss" / "Current Loss" beside "Average Loss" in words: the step's own is the
    run's loss; two names with no such word stay undecided (neither is taken)."""
    assert training_loss({"batch_loss": 0.0075, "running_loss": 0.0064, "acc": 0.5}) == ("batch_loss", 0.0075)
    assert training_loss({"step_loss": 1.5, "avg_loss": 1.7}) == ("step_loss", 1.5)
    assert training_loss({"mse_loss": 0.3, "kl_loss": 0.1}) is None
