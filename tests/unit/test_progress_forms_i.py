"""General mechanisms of the progress reader, round i (issue [progress-real]): forms found by reading the programs'
own progress code, not any log: each test names the source file and function whose format strings its lines follow.
Every line here is written for the test, in the layout those format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line
from ntui.core.progress.runwords import declared_total, run_start
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- tqdm's bar_format without the bracketed times


def test_a_bar_format_of_counts_only_is_read_as_a_bar() -> None:
    """tqdm/std.py, tqdm.format_meter: bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt}" (l_bar is "{desc}: {percentage:
    3.0f}%|"), with its "{postfix}" (", key=value") after the counts where the format names it."""
    point = parse_line("Training:  37%|###7      | 370/1000")
    assert point is not None and (point.step, point.total, point.phase) == (370, 1000, "train")
    point = parse_line("fit:  62%|######2   | 620/1000, loss=0.418, lr=2e-4")
    assert point is not None and (point.step, point.total) == (620, 1000)
    assert point.metrics == {"loss": 0.418, "lr": 2e-4}
    # unit_scale's counts ("1.25k/20.0k"), ascii=True's glyphs
    point = parse_line("  6%|6         | 1.25k/20.0k")
    assert point is not None and (point.step, point.total) == (1250, 20000)


def test_a_bare_bar_keeps_what_its_description_says() -> None:
    """tqdm/std.py, tqdm.format_meter, the same bar_format: the description still names an evaluation, a dataset's
    pass, or the epoch of the run's epochs ("Epoch 2/6", the hand-written loops' set_description)."""
    point = parse_line("Evaluating:  50%|#####     | 20/40")
    assert point is not None and point.phase == "evaluation"
    point = parse_line("Tokenizing:  50%|#####     | 500/1000")
    assert point is not None and point.phase == "preparation"
    point = parse_line("Epoch 2/6:  25%|##5       | 75/300, loss=1.07")
    assert point is not None and point.counts_epochs
    assert (point.step, point.total, point.batch, point.batches) == (2, 6, 75, 300)


def test_counts_after_a_pipe_that_disagree_with_the_percentage_are_no_bar() -> None:
    """tqdm/std.py, tqdm.format_meter prints the percentage of n/total: a table's cells with a "NN%" and a "|"
    whose counts say another share are not a bar."""
    assert parse_line("| acc 40%| top | 3/100") is None
    assert parse_line("coverage 90%|ok| 12/100") is None


def test_a_run_drawn_in_bare_bars_reads_its_last_redraw(tmp_path: Path) -> None:
    """tqdm/std.py, tqdm.format_meter and tqdm.refresh: each redraw after a "\\r", the bar_format's counts only."""
    redraws = "".join(f"\rsteps: {n * 100 // 800:3d}%|{'#' * (n * 10 // 800):10}| {n}/800" for n in range(8, 300, 8))
    series, words = _read(tmp_path, [redraws])
    assert (series.step, series.run_total) == (296, 800)
    assert "of 800" in words


# ---------------------------------------------------------------- Megatron's argument dump


def test_the_argument_dumps_dotted_total_is_the_runs_total() -> None:
    """Megatron-LM megatron/training/arguments.py, _print_args: "  {arg} {'.' * (48 - len(arg))} {value}", one line per
    argument, sorted; its train_iters is the run's total (not its eval_iters, lr_decay_iters, or a None)."""
    assert declared_total("  train_iters ..................................... 6000") == 6000
    assert declared_total("  max_steps ....................................... 250") == 250
    assert declared_total("  eval_iters ...................................... 10") is None
    assert declared_total("  lr_decay_iters .................................. 320000") is None
    assert declared_total("  train_iters ..................................... None") is None


def test_a_megatron_log_cut_before_its_first_iteration_line_knows_its_total(tmp_path: Path) -> None:
    """Megatron-LM megatron/training/arguments.py, _print_args, then megatron/training/training.py,
    training_log: "iteration {N:8d}/{train_iters:8d} |" once training logs; a log whose lines are DeepSpeed's steps
    (Megatron-DeepSpeed) has only the dump to say the total."""
    lines = ["------------------------ arguments ------------------------",
             "  seq_length ...................................... 4096",
             "  train_iters ..................................... 1200",
             "-------------------- end of arguments ---------------------"]
    lines += [f"[2025-03-02 08:1{i // 60}:{i % 60:02d},000] [INFO] [logging.py:128:log_dist] [Rank 0] step={i}, "
              f"skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]" for i in range(10, 90, 10)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (80, 1200)
    assert "of 1,200" in words


# ---------------------------------------------------------------- DeepSpeed's rank label


def test_deepspeeds_rank_label_says_whose_line_it_is() -> None:
    """deepspeed/utils/logging.py, log_dist: "[Rank {my_rank}] {message}" (rank -1 before torch.distributed is set
    up), after the logger's "[date] [LEVEL] [file:line:func]" header; the engine's step line and the pipeline
    engine's "steps: N loss: ..." go through it."""
    point = parse_line("[2025-03-02 08:10:00,000] [INFO] [logging.py:128:log_dist] [Rank 3] step=40, skipped=0, "
                       "lr=[0.0003], mom=[(0.9, 0.95)]")
    assert point is not None and (point.step, point.rank) == (40, 3)
    point = parse_line("[Rank 1] steps: 250 loss: 1.8812 iter time (s): 0.402 samples/sec: 79.600")
    assert point is not None and (point.step, point.rank) == (250, 1)
    point = parse_line("[Rank -1] step=5, skipped=0, lr=[0.001], mom=[(0.9, 0.999)]")
    assert point is not None and point.step == 5 and point.rank is None


def test_ranks_that_each_log_their_steps_are_no_restarts(tmp_path: Path) -> None:
    """deepspeed/utils/logging.py, log_dist with ranks=[-1] (every rank logs): their lines interleave, one rank a
    report behind the others; the run is one rank's series, not a restart at each line of the late one."""
    lines = []
    for i in range(20, 220, 20):
        for rank in (1, 0, 2):
            step = i - 20 if rank == 2 and i > 20 else i
            lines.append(f"[2025-03-02 08:{i // 60:02d}:{i % 60:02d},000] [INFO] [logging.py:128:log_dist] "
                         f"[Rank {rank}] step={step}, skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]")
    series, _ = _read(tmp_path, ["  train_iters ..................................... 400", *lines])
    assert not series.restarts
    assert (series.step, series.run_total) == (200, 400)


# ---------------------------------------------------------------- the Trainer's dicts alone (disable_tqdm)


def _banner(examples: int, epochs: int, batch: int, total: int) -> list[str]:
    # transformers/trainer.py, Trainer._inner_training_loop: its banner, one "  key = value" line each
    return ["***** Running training *****", f"  Num examples = {examples:,}", f"  Num Epochs = {epochs:,}",
            "  Instantaneous batch size per device = 4",
            f"  Total train batch size (w. parallel, distributed & accumulation) = {batch:,}",
            "  Gradient Accumulation steps = 2", f"  Total optimization steps = {total:,}",
            "  Number of trainable parameters = 6,738,415,616"]


def _dict(epoch: float, loss: float) -> str:
    # transformers/trainer_callback.py, PrinterCallback.on_log: print(logs), the dict Trainer.log made (its epoch
    # state.epoch, the epochs done)
    return f"{{'loss': {loss}, 'grad_norm': 0.812, 'learning_rate': 1.9e-05, 'epoch': {epoch}}}"


def test_the_trainers_dicts_alone_say_the_step_through_their_epoch(tmp_path: Path) -> None:
    """transformers/trainer_callback.py, PrinterCallback (disable_tqdm=True: no bar, the dicts printed alone) and
    transformers/trainer.py, Trainer.log (logs["epoch"] = state.epoch): an epoch of 6,400 examples at 64 a step is
    100 steps; the dict at epoch 1.4 is at step 140 of the banner's 400."""
    lines = _banner(6400, 4, 64, 400) + [_dict(round(s / 100, 2), round(3.0 - s / 400, 4)) for s in range(20, 160, 20)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (140, 400)
    assert "step 140 of 400" in words


def test_a_max_steps_run_takes_an_epochs_steps_from_its_examples_not_its_epochs(tmp_path: Path) -> None:
    """transformers/trainer.py, Trainer._inner_training_loop with max_steps: "Num Epochs" is max_steps over an
    epoch's steps rounded up (here 3 for 250 steps of 100 an epoch): the epoch's steps are the examples over the
    total train batch, not the total over the epochs."""
    lines = _banner(6400, 3, 64, 250) + [_dict(e, 2.5) for e in (0.5, 1.0, 1.5, 2.0)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (200, 250)


def test_an_evaluations_banner_does_not_change_an_epochs_steps(tmp_path: Path) -> None:
    """transformers/trainer.py, Trainer.evaluation_loop: "***** Running Evaluation *****", "  Num examples = N",
    "  Batch size = 8" between the training's dicts; then its summary dict at the end (train_runtime, train_loss)."""
    lines = _banner(6400, 2, 64, 200) + [_dict(0.5, 2.9), _dict(1.0, 2.7), "***** Running Evaluation *****",
                                         "  Num examples = 900", "  Batch size = 8",
                                         "{'eval_loss': 2.81, 'eval_runtime': 9.1, 'eval_samples_per_second': 98.9, "
                                         "'eval_steps_per_second': 12.4, 'epoch': 1.0}", _dict(1.5, 2.5)]
    series, _ = _read(tmp_path, lines)
    assert series.step == 150
    done = [*lines, _dict(2.0, 2.4), "{'train_runtime': 812.3, 'train_samples_per_second': 15.8, "
            "'train_steps_per_second': 0.246, 'train_loss': 2.61, 'epoch': 2.0}"]
    series, words = _read(tmp_path, done)
    assert (series.step, series.run_total) == (200, 200)
    assert "done" in words


def test_a_bar_says_the_step_and_the_dicts_epoch_is_not_used(tmp_path: Path) -> None:
    """transformers/trainer_callback.py, ProgressCallback: where the bar is drawn, its count is the step (the dicts'
    epoch only approximates it: logging_first_step's dict at epoch 0.01 is step 1 of the bar)."""
    bar = "\r".join(f"{n * 100 // 400:3d}%|{'#' * (n // 40):10}| {n}/400 [00:{n % 60:02d}<01:00,  3.10it/s]"
                    for n in range(0, 2))
    more = "\r".join(f"{n * 100 // 400:3d}%|{'#' * (n // 40):10}| {n}/400 [00:{n % 60:02d}<01:00,  3.10it/s]"
                     for n in range(2, 31))
    series, _ = _read(tmp_path, [*_banner(6400, 4, 64, 400), bar, _dict(0.01, 3.2), more])
    assert series.step == 30
    assert not series.restarts


# ---------------------------------------------------------------- the programs' own word that they leave early


def _megatron(iterations: range, of: int) -> list[str]:
    # megatron/training/training.py, training_log: " iteration {:8d}/{:8d} |" then its fields, each " key: value |"
    return [f" [2025-03-02 08:{i // 60 % 60:02d}:{i % 60:02d}] iteration {i:8d}/{of:8d} | consumed samples: "
            f"{i * 256:12d} | elapsed time per iteration (ms): 812.4 | learning rate: 2.000000E-04 | global batch "
            f"size:   256 | lm loss: {7.5 - i / 1000:.6E} | loss scale: 1.0 | grad norm: 0.912 | number of skipped "
            f"iterations:   0 | number of nan iterations:   0 |" for i in iterations]


def test_megatrons_exit_before_its_train_iters_is_a_stop_not_an_end(tmp_path: Path) -> None:
    """megatron/training/training.py, train: print_datetime('exiting program at iteration {}') (exit_interval),
    'exiting program after {} minutes' (exit_duration_in_mins), 'exiting program after receiving SIGTERM.'
    (exit_signal_handler); print_datetime writes "[<message>] datetime: <date> ". The run saved its checkpoint and
    left before its train_iters: not finished, not finishing."""
    for said in ("[exiting program at iteration 300] datetime: 2025-03-02 08:05:00 ",
                 "[exiting program after 5.0 minutes] datetime: 2025-03-02 08:05:00 ",
                 "[exiting program after receiving SIGTERM.] datetime: 2025-03-02 08:05:00 "):
        series, words = _read(tmp_path, [*_megatron(range(10, 310, 10), 5000), said])
        assert series.step == 300 and not series.ended
        assert "stopped" in words and "done" not in words


def test_megatrons_end_of_training_is_its_end(tmp_path: Path) -> None:
    """megatron/training/training.py, pretrain: print_datetime('after training is done') once train returns."""
    series, words = _read(tmp_path, [*_megatron(range(50, 1050, 50), 1000),
                                     "[after training is done] datetime: 2025-03-02 08:30:00 "])
    assert series.step == 1000 and "done" in words and "stopped" not in words


def test_lightnings_keyboard_interrupt_is_a_stop(tmp_path: Path) -> None:
    """lightning/pytorch/trainer/call.py, _call_and_handle_interrupt: rank_zero_info("\\nDetected KeyboardInterrupt,
    attempting graceful shutdown ...") (1.x: rank_zero_warn, "...shutdown..."), after the epoch's bar."""
    bar = "\r".join(f"Epoch 2:  {n * 100 // 80:2d}%|###       | {n}/80 [00:{n % 60:02d}<00:20,  3.90it/s, v_num=4, "
                    f"train_loss={1.0 - n / 200:.3f}]" for n in range(1, 41))
    series, words = _read(tmp_path, ["  max_epochs: 6", bar, "", "Detected KeyboardInterrupt, attempting graceful "
                                     "shutdown ..."])
    assert series.step == 200 and series.stopped == "interrupted"
    assert "stopped (interrupted)" in words


# ---------------------------------------------------------------- Keras: evaluate()'s bar after fit()


def _keras_epoch(epoch: int, epochs: int, batches: int) -> list[str]:
    # keras/src/callbacks/progbar_logger.py, ProgbarLogger.on_epoch_begin: "Epoch {epoch + 1}/{epochs}"; then
    # keras/src/utils/progbar.py, Progbar.update: "{current}/{target} [===>...] - ETA: 1s - loss: ..." redrawn
    # after "\r", its last draw "... - 2s 40ms/step - loss: ... - val_loss: ..."
    redraws = "".join(f"\r{b}/{batches} [{'=' * (b * 30 // batches):30}] - ETA: 1s - loss: {2.0 / (epoch + b):.4f}"
                      for b in range(1, batches + 1))
    last = f"\r{batches}/{batches} [{'=' * 30}] - 2s 40ms/step - loss: {0.9 / epoch:.4f} - val_loss: 0.5000"
    return [f"Epoch {epoch}/{epochs}", redraws + last]


def test_kerass_evaluate_bar_after_fit_is_not_the_training(tmp_path: Path) -> None:
    """keras/src/trainers/trainer.py, evaluate (and predict): the same Progbar, with no "Epoch N/M" before it: its
    "loss" is the test set's, not the training's; fit's last epoch's loss stays the run's."""
    fit = [line for e in range(1, 5) for line in _keras_epoch(e, 4, 30)]
    evaluate = "".join(f"\r{b}/12 [{'=' * (b * 30 // 12):30}] - ETA: 0s - loss: 0.0712 - accuracy: 0.9781"
                       for b in range(1, 13)) + f"\r12/12 [{'=' * 30}] - 0s 3ms/step - loss: 0.0712 - accuracy: 0.9781"
    series, words = _read(tmp_path, [*fit, evaluate])
    assert (series.step, series.run_total) == (4, 4) and "done" in words
    assert series.metrics["loss"] == 0.225


def test_kerass_bars_of_each_fit_epoch_stay_the_training(tmp_path: Path) -> None:
    """keras/src/callbacks/progbar_logger.py: each epoch's header before its bar: the bars of the next epoch, back at
    1, are fit's (their loss the training's)."""
    fit = [line for e in range(1, 4) for line in _keras_epoch(e, 6, 30)]
    series, _ = _read(tmp_path, [*fit, "Epoch 4/6", "\r".join(f"{b}/30 [====>.........................] - ETA: 1s - "
                                                             f"loss: 0.{b:04d}" for b in range(1, 9))])
    assert series.step == 4
    assert series.metrics["loss"] == 0.0008


# ---------------------------------------------------------------- a rank named among a line's fields


def test_a_rank_among_the_lines_fields_is_its_rank_not_a_metric() -> None:
    """DeepSpeed-Chat's training/step1_supervised_finetuning/main.py, main: print(f"Epoch: {epoch}, Step: {step},
    Rank: {torch.distributed.get_rank()}, loss = {loss}") on every rank, its loss a tensor's repr."""
    point = parse_line("Epoch: 1, Step: 42, Rank: 5, loss = tensor(1.8125, device='cuda:5', dtype=torch.float16, "
                       "grad_fn=<ToCopyBackward0>)")
    assert point is not None and (point.step, point.rank) == (42, 5)
    assert point.metrics == {"loss": 1.8125}
    # a fraction is no rank: a metric of that name stays a metric
    point = parse_line("step 30 | loss 0.91 | rank 0.25")
    assert point is None or point.rank is None


def test_every_ranks_lines_of_an_epochs_micro_batches_are_one_run(tmp_path: Path) -> None:
    """DeepSpeed-Chat's main.py: print_rank_0(f"Beginning of Epoch {epoch+1}/{args.num_train_epochs}, Total Micro
    Batches {len(train_dataloader)}"), then every rank's "Epoch: {epoch}, Step: {step}, Rank: ..." (step the epoch's
    micro-batch from 0): one rank's series, the run's epochs said by the banner, no restart at each rank's line nor
    at the next epoch's first step."""
    lines = []
    for epoch in range(2):
        lines.append(f"Beginning of Epoch {epoch + 1}/3, Total Micro Batches 80")
        for step in range(0, 80 if epoch == 0 else 30):
            for rank in (2, 0, 3, 1):
                lines.append(f"Epoch: {epoch}, Step: {step}, Rank: {rank}, loss = tensor({2.0 - step / 100:.4f}, "
                             f"device='cuda:{rank}', dtype=torch.bfloat16, grad_fn=<ToCopyBackward0>)")
    series, words = _read(tmp_path, lines)
    assert not series.restarts
    assert (series.step, series.run_total) == (1, 3)
    assert "done" not in words


# ---------------------------------------------------------------- the engines' word that they resumed


def test_the_engines_resume_lines_say_the_step_they_go_on_from() -> None:
    """megatron/training/checkpointing.py, load_checkpoint; fairseq/trainer.py, Trainer.load_checkpoint;
    mmengine/runner/runner.py, Runner.resume; lightning/pytorch/trainer/connectors/checkpoint_connector.py,
    resume_end (as fit resumes; its tuner's restore of its own trial checkpoint is none)."""
    assert run_start("  successfully loaded checkpoint from /lustre/ck/gpt [ t 1/4, p 1/2 ] at iteration 3000") == 3000
    assert run_start(" loading checkpoint from /lustre/ck/gpt at iteration 3000") == 3000
    assert run_start("2025-04-01 09:12:44 | INFO | fairseq.trainer | Loaded checkpoint /ck/checkpoint_last.pt "
                     "(epoch 7 @ 52000 updates)") == 52000
    assert run_start("2025/04/01 09:12:44 - mmengine - INFO - resumed epoch: 4, iter: 9200") == 9200
    assert run_start("Restored all states from the checkpoint at /out/ck/last.ckpt") == 0
    assert run_start("Restored all states from the checkpoint at /out/.lr_find_0c9e1d.ckpt") is None
    assert run_start("  successfully saved checkpoint from iteration    3000 to /lustre/ck/gpt") is None


def test_a_megatron_job_that_goes_on_in_the_same_log_is_a_restart_not_a_stop(tmp_path: Path) -> None:
    """megatron/training/training.py (its exit_interval's exit) then a new job appending to the log:
    checkpointing.load_checkpoint's "successfully loaded checkpoint ... at iteration N", training_log's iterations
    from N on (the step does not go back: only the program's word says a new process started)."""
    first = [*_megatron(range(10, 310, 10), 600), "[exiting program at iteration 300] datetime: 2025-03-02 08:05:00 "]
    second = ["  successfully loaded checkpoint from /lustre/ck/gpt [ t 1/2, p 1/1 ] at iteration 300",
              *_megatron(range(310, 460, 10), 600)]
    series, words = _read(tmp_path, [*first, *second])
    assert series.step == 450 and len(series.restarts) == 1
    assert "stopped" not in words


# ---------------------------------------------------------------- NeMo 2's progress printer


def test_nemos_progress_printer_of_either_release_is_read() -> None:
    """nemo/lightning/pytorch/callbacks/progress_printer.py, ProgressPrinter.on_train_batch_end: prefix
    f"Training epoch {e}, iteration {n-1}/{self.total-1}", then format_string's " | key: value" each (shown as
    printed); its first release printed f"iteration {n}/{self.total}:", a colon after the counts."""
    point = parse_line("Training epoch 0, iteration 249/4999 | lr: 0.0003 | global_step: 249 | reduced_train_loss: "
                       "3.871 | train_step_timing in s: 0.8125 | consumed_samples: 128000")
    assert point is not None and (point.step, point.total) == (249, 4999)
    assert point.metrics["reduced_train_loss"] == 3.871
    point = parse_line("Training epoch 0, iteration 250/5000: | lr: 0.0003 | reduced_train_loss: 3.871")
    assert point is not None and (point.step, point.total) == (250, 5000)
    assert point.metrics == {"reduced_train_loss": 3.871}


def test_nemos_validation_lines_are_not_the_training(tmp_path: Path) -> None:
    """progress_printer.py, on_validation_batch_end: print(self.validation_description + f": iteration {n}/{total}")
    ("Sanity checking Validation" before the training): no point, and the run's last iteration is its end."""
    assert parse_line("Validation: iteration 4/20") is None
    assert parse_line("Sanity checking Validation: iteration 1/2") is None
    lines = ["Sanity checking Validation: iteration 1/2", "Sanity checking Validation: iteration 2/2"]
    lines += [f"Training epoch 0, iteration {n}/999 | lr: 0.0003 | global_step: {n} | reduced_train_loss: "
              f"{4.0 - n / 500:.4}" for n in range(49, 1000, 50)]
    lines += [f"Validation: iteration {n}/20" for n in range(1, 21)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (999, 999) and not series.restarts
    assert "done" in words


# ---------------------------------------------------------------- vLLM's bars inside an online trainer


def test_vllms_generation_bars_are_not_the_runs_steps(tmp_path: Path) -> None:
    """vllm/entrypoints/llm.py, LLM._run_engine: tqdm(total=n, desc="Processed prompts", postfix="est. speed input:
    ... toks/s, output: ... toks/s"); LLM._validate_and_add_requests: desc="Adding requests"; its model runner's
    "Capturing CUDA graph shapes" at start. TRL's GRPOTrainer (use_vllm) generates between the Trainer's steps: those
    bars are generation, the Trainer's bar is the run's."""
    for line in ("Processed prompts: 100%|██████████| 16/16 [00:03<00:00,  4.12it/s, est. speed input: 512.40 toks/s, "
                 "output: 1402.77 toks/s]", "Adding requests: 100%|██████████| 16/16 [00:00<00:00, 2201.50it/s]",
                 "Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:21<00:00,  3.12it/s]"):
        point = parse_line(line)
        assert point is not None and point.phase == "preparation"
    lines = ["Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:21<00:00,  3.12it/s]",
             *_banner(4000, 1, 16, 250)]
    for n in range(1, 41):
        lines.append("Adding requests: 100%|██████████| 16/16 [00:00<00:00, 2201.50it/s]")
        lines.append("Processed prompts: 100%|██████████| 16/16 [00:03<00:00,  4.12it/s, est. speed input: 512.40 "
                     "toks/s, output: 1402.77 toks/s]")
        lines.append(f"{n * 100 // 250:3d}%|{'#' * (n // 25):10}| {n}/250 [{n // 6:02d}:{n * 10 % 60:02d}<20:00, "
                     f" 5.10s/it]")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (40, 250) and not series.restarts
    assert "of 250" in words


def test_kerass_bar_of_an_unknown_length_gives_its_epochs_metrics(tmp_path: Path) -> None:
    """keras/src/utils/progbar.py, Progbar.update with target None (a dataset of unknown cardinality, the first
    epoch): bar = "%7d/Unknown" % current, then the time and the metrics (Keras 2: " - 12s 100ms/step - loss: ...";
    Keras 3: " 12s 100ms/step - loss: ...", in bold escapes)."""
    point = parse_line("    240/Unknown - 31s 129ms/step - loss: 0.7712 - accuracy: 0.7313")
    assert point is not None and point.counts_epochs and point.batch == 240 and point.batches is None
    assert point.metrics == {"loss": 0.7712, "accuracy": 0.7313}
    point = parse_line("\x1b[1m    240/Unknown\x1b[0m \x1b[1m31s\x1b[0m 129ms/step - accuracy: 0.7313 - loss: 0.7712")
    assert point is not None and point.metrics["loss"] == 0.7712
    redraws = "\r".join(f"{b:7d}/Unknown - {b // 8}s 129ms/step - loss: {1.0 - b / 1000:.4f}" for b in range(1, 241))
    series, words = _read(tmp_path, ["Epoch 1/12", redraws])
    assert (series.step, series.run_total) == (1, 12) and "done" not in words
    assert series.metrics["loss"] == 0.76


# ---------------------------------------------------------------- a logger's caller column


def test_a_source_files_line_is_no_metric() -> None:
    """rich/logging.py, RichHandler (rich/_log_render.py, LogRender): "[time] LEVEL    message    path:lineno", the
    caller's file and line after the message; a logger's "%(filename)s:%(lineno)d" likewise: a place, not a metric
    (not a loss where the file's name holds "loss")."""
    point = parse_line("[03/02/25 08:10:00] INFO     step 300 | loss 0.4120                         train_loss.py:88")
    assert point is not None and point.step == 300
    assert point.metrics == {"loss": 0.412}
