"""General mechanisms of the progress reader, round m (issue [progress-real]): forms the sixth fresh set showed that
the reader did not know, each read from the source of the program that prints it; each test names the repository,
the file and the function. Every line here is written for the test, in the layout those sources give, with values
of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import notebook_table_header, notebook_table_row, parse_line, training_loss
from ntui.core.progress.runwords import declared_total
from tests.support.progress_logs import read_text as _read

# ---------------------------------------------------------------- the Trainer's notebook progress, as text


def test_notebook_training_bar_says_step_total_and_epoch() -> None:
    """huggingface/transformers, src/transformers/utils/notebook.py, NotebookProgressBar.update_bar and
    NotebookProgressCallback.on_step_end: the label "[value/total elapsed < remaining, rate it/s, Epoch e/E]", the
    value padded to the total's width, no remaining once at the total."""
    point = parse_line(" [ 37/620 00:41 < 10:52, 0.89 it/s, Epoch 0.12/2]")
    assert point is not None
    assert (point.step, point.total, point.epoch, point.epochs, point.phase) == (37, 620, 0.12, 2, "train")
    assert point.rate == 0.89
    assert point.elapsed == 41.0
    done = parse_line("[620/620 1:12:05, Epoch 2/2]")
    assert done is not None
    assert (done.step, done.total, done.elapsed, done.phase) == (620, 620, 4325.0, "train")


def test_notebook_bar_before_any_time_and_the_evaluation_bar() -> None:
    """huggingface/transformers, src/transformers/utils/notebook.py, NotebookProgressBar.update_bar (": < :" before
    the first time is known) and NotebookProgressCallback.on_prediction_step (the evaluation's bar, a child of the
    training's or alone, has no comment: it is no training step)."""
    first = parse_line("[  1/620 : < :, Epoch 0.01/2]")
    assert first is not None and (first.step, first.total, first.phase) == (1, 620, "train")
    evaluation = parse_line("[19/25 00:03 < 00:01]")
    assert evaluation is not None and evaluation.phase == "evaluation"
    assert parse_line("[3/9 00:02, some words of another program]") is None


def test_notebook_table_header_and_rows() -> None:
    """huggingface/transformers, src/transformers/utils/notebook.py, NotebookProgressCallback.on_train_begin (the
    first column "Step", or "Epoch" where it evaluates each epoch, then "Training Loss" and "Validation Loss"),
    on_evaluate ("No log" before a loss was logged; the other metrics by their names capitalized) and
    text_to_html_table (floats with six decimals): the table's cells as a notebook's text export writes them."""
    names = notebook_table_header("Step\tTraining Loss\tValidation Loss\tAccuracy\tF1")
    assert names == ("Step", "Training Loss", "Validation Loss", "Accuracy", "F1")
    row = notebook_table_row("200\t0.412300\t0.398811\t0.861000\t0.840205", names)
    assert row is not None and row.step == 200
    assert training_loss(row.metrics) == ("loss", 0.4123)
    assert row.metrics["eval_loss"] == 0.398811 and row.metrics["eval_f1"] == 0.840205
    early = notebook_table_row("50\tNo log\t0.702100\t0.511000\t0.498000", names)
    assert early is not None and training_loss(early.metrics) is None
    spaced = notebook_table_header("Epoch   Training Loss   Validation Loss")
    assert spaced == ("Epoch", "Training Loss", "Validation Loss")
    by_epoch = notebook_table_row("2       0.615000        0.644100", spaced)
    assert by_epoch is not None and (by_epoch.step, by_epoch.epoch) == (None, 2.0)
    assert notebook_table_header("epoch  train_loss  valid_loss  time") is None
    assert notebook_table_row("2\tnot a number\t0.6", spaced) is None


def test_notebook_cell_output_reads_step_total_last_loss_and_end(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/utils/notebook.py (the bar's label, then its table under it, one
    row per evaluation) and src/transformers/trainer.py, Trainer.train (its return value TrainOutput(global_step,
    training_loss, metrics), which a notebook's cell prints: the end; its training_loss is the run's mean)."""
    text = "\n".join([
        " [620/620 14:02, Epoch 2/2]",
        "Epoch\tTraining Loss\tValidation Loss",
        "1\t0.920400\t0.873300",
        "2\t0.611700\t0.702900",
        "TrainOutput(global_step=620, training_loss=0.7660421, metrics={'train_runtime': 842.3, "
        "'train_loss': 0.7660421, 'epoch': 2.0})",
    ]) + "\n"
    series = _read(tmp_path, text)
    assert (series.step, series.run_total, series.ended) == (620, 620, True)
    assert training_loss(series.metrics) == ("loss", 0.6117)


def test_notebook_step_table_without_its_bar_counts_its_rows(tmp_path: Path) -> None:
    """huggingface/transformers, src/transformers/utils/notebook.py, NotebookProgressCallback.on_log (no evaluation:
    a row per logged loss under "Step"): where the bar's text is lost, the rows' steps are the run's."""
    text = "Step\tTraining Loss\n100\t1.250000\n200\t1.104400\n300\t0.998000\n"
    series = _read(tmp_path, text)
    assert series.step == 300
    assert training_loss(series.metrics) == ("loss", 0.998)
    assert not series.ended


# ---------------------------------------------------------------- a log copied with an editor's line numbers


def _hf_dicts(first: int, count: int) -> list[str]:
    """huggingface/transformers, src/transformers/trainer.py, Trainer.log: the log dict printed alone (no bar: tqdm
    disabled), the epoch rounded to two places."""
    return [f"{{'loss': {2.0 - n / 100:.4f}, 'learning_rate': 1.5e-05, 'epoch': {n / 100:.2f}}}"
            for n in range(first, first + count)]


def test_vim_numbered_lines_read_as_the_log_under_them(tmp_path: Path) -> None:
    """vim/vim, src/drawline.c (the 'number' option: each line's number right-aligned in a column of 'numberwidth'
    less one, then a space), the view copied with the log: the numbers are no part of the program's lines."""
    lines = ["[2026-01-02 10:00:00,120] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.12.1",
             *_hf_dicts(1, 120)]
    text = "\n".join(f"{n:3d} {line}" for n, line in enumerate(lines, 1)) + "\n"
    series = _read(tmp_path, text)
    assert training_loss(series.metrics) == ("loss", 0.8)
    assert series.step is None


def test_cat_n_numbered_lines_read_as_the_log_under_them(tmp_path: Path) -> None:
    """coreutils/coreutils, src/cat.c (-n: each line's number in a column of six, then a tab)."""
    text = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(_hf_dicts(5, 6), 1)) + "\n"
    series = _read(tmp_path, text)
    assert training_loss(series.metrics) == ("loss", 1.9)


def test_counters_and_epoch_rows_are_no_line_numbers(tmp_path: Path) -> None:
    """A loop's own lines that start with their step, one a line ("101 [02:11] loss 2.31"), and a table's rows named by
    their epoch, padded ("  1    0.6931  0.7012"), keep their numbers: neither is an editor's line numbers."""
    steps = _read(tmp_path, "".join(f"{n} [02:{n - 60}] loss {3 - n / 100:.2f}\n" for n in range(101, 111)))
    assert steps.step == 110
    rows = _read(tmp_path, "  epoch  train_loss  valid_loss\n"
                 + "".join(f"{n:7d}  {1 - n / 10:.4f}  {1.1 - n / 10:.4f}\n" for n in range(0, 4)))
    assert rows.step == 3


# ---------------------------------------------------------------- a resumed run's bar over the steps left


def _kohya_banner(total: int) -> list[str]:
    """kohya-ss/sd-scripts, train_network.py, NetworkTrainer.train: the banner, each line in English then " / " and
    its Japanese."""
    return ["running training / 学習開始", "  num batches per epoch / 1epochのバッチ数: 500",
            "  num epochs / epoch数: 6", f"  total optimization steps / 学習ステップ数: {total}"]


def test_kohya_banner_says_the_run_total() -> None:
    """kohya-ss/sd-scripts, train_network.py (accelerator.print of "total optimization steps / ...: N")."""
    assert declared_total("  total optimization steps / 学習ステップ数: 3000") == 3000
    assert declared_total("  total optimization steps / 学習ステップ数 = 3000") == 3000
    assert declared_total("  num epochs / epoch数: 6") is None


def test_kohya_resumed_bar_counts_the_steps_left(tmp_path: Path) -> None:
    """kohya-ss/sd-scripts, train_network.py, NetworkTrainer.train: resumed from a saved state, it logs "skipping N
    steps / ..." and draws its bar, desc "steps", over max_train_steps less the steps skipped: the run is at the
    steps skipped plus the bar's count, of the run's total."""
    first = [*_kohya_banner(3000), "epoch 1/6"]
    first += [f"steps:  {n // 30}%|▍    | {n}/3000 [01:{n % 60:02d}<40:00,  1.21it/s, avr_loss=0.1{n % 7}2]"
              for n in range(10, 1010, 10)]
    second = ["resume training from local state: /scratch/out/run-000002-state", *_kohya_banner(3000),
              "steps:   0%|          | 0/2000 [00:00<?, ?it/s]skipping 1000 steps / 1000ステップをスキップします",
              "skipping epoch 1 because initial_step (multiplied) is 1000", "epoch 3/6"]
    second += [f"steps:  {n // 20}%|▍    | {n}/2000 [00:{n % 60:02d}<30:00,  1.21it/s, avr_loss=0.098]"
               for n in range(10, 460, 10)]
    series = _read(tmp_path, "\n".join(first + second) + "\n")
    assert (series.step, series.run_total, len(series.restarts)) == (1450, 3000, 1)


def test_a_skip_that_the_bar_already_counts_adds_nothing(tmp_path: Path) -> None:
    """kohya-ss/sd-scripts, train_network.py (later releases: the bar drawn over the run's whole total after the
    skip) and any bar whose total is the run's: the steps skipped are in its count already."""
    lines = [*_kohya_banner(3000), "skipping 1000 steps / 1000ステップをスキップします"]
    lines += [f"steps:  40%|▍    | {n}/3000 [00:10<30:00,  1.21it/s, avr_loss=0.098]" for n in range(1010, 1100, 10)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (1090, 3000)


# ---------------------------------------------------------------- an epoch's bar at its end beside epoch summaries


def _epoch_loop(epochs_done: int, last_bar_at: int, per: int = 180) -> str:
    """accelerate's examples' custom loops (tqdm over the epoch's dataloader, desc "epoch E", a loss postfix; a
    summary printed after each epoch's evaluation): the bars' redraws on one physical line, the summaries apart."""
    lines = ["training for 8 epochs, 180 batches per epoch"]
    for e in range(1, epochs_done + 2):
        last = per if e <= epochs_done else last_bar_at
        lines.append("\r".join(f"epoch {e}:  40%|████      | {n}/{per} [00:21<00:31,  3.38it/s, loss=3.1{e}]"
                               for n in (0, per // 2, last)))
        if e <= epochs_done:
            lines.append(f"epoch {e} | train loss 3.1{e} | val loss 3.3{e} | val ppl 27.1")
    return "\n".join(lines) + "\n"


def test_epoch_bar_at_its_end_counts_that_epoch_done(tmp_path: Path) -> None:
    """huggingface/accelerate, examples/nlp_example.py and complete_nlp_example.py (the loop's per-epoch bar and its
    print after the evaluation): where the evaluation after an epoch hangs, the bar at its total says the epoch's
    training was done; a bar short of its end does not."""
    done = _read(tmp_path, _epoch_loop(2, 180))
    assert (done.step, done.run_total) == (3, 8)
    assert training_loss(done.metrics) == ("loss", 3.13)
    short = _read(tmp_path, _epoch_loop(2, 179))
    assert short.step == 2


# ---------------------------------------------------------------- pdsh's host labels: the run's node


def _pdsh_run(first: str = "node-a") -> str:
    """deepspeedai/DeepSpeed, deepspeed/launcher/multinode_runner.py, PDSHRunner.get_cmd (pdsh -S -f 1024 -w
    <hosts in the hostfile's order>) and deepspeed/launcher/runner.py, main (logger.info of "cmd = ..."); pdsh labels
    each line of a host's output "host: "; each node's local rank 0 prints the script's own step line, its loss
    its own."""
    lines = ["[2026-03-01 08:00:00,100] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w node-a,node-b export "
             "PYTHONPATH=/work/x; cd /work/x; /usr/bin/python -u -m deepspeed.launcher.launch --world_info=e30= "
             "train.py --epochs 2"]
    for step in range(20, 200, 20):  # (the last step's lines: node-b's after node-a's)
        mine = f"epoch: 0, step: {step}/400, global_step: {step}, loss: {2 - step / 1000:.4f}, lr: 1.0e-05"
        other = f"epoch: 0, step: {step}/400, global_step: {step}, loss: {2.5 - step / 1000:.4f}, lr: 1.0e-05"
        pair = [f"node-a: {mine}", f"node-b: {other}"]
        lines += pair if (step // 20) % 2 else pair[::-1]
    return "\n".join(lines) + "\n"


def test_pdsh_first_host_holds_the_run_loss(tmp_path: Path) -> None:
    """The first host of pdsh's -w list is the node DeepSpeed's launcher numbers 0 (node_rank=0, ranks from 0): its
    lines' loss is the run's, whichever host printed last."""
    series = _read(tmp_path, _pdsh_run())
    assert series.step == 180
    assert training_loss(series.metrics) == ("loss", 1.82)


# ---------------------------------------------------------------- an end word glued after a bar's redraw


def test_early_stopping_glued_to_the_bar_is_the_end(tmp_path: Path) -> None:
    """Lightning-AI/pytorch-lightning 0.5, pytorch_lightning/callbacks/pt_callbacks.py, EarlyStopping.on_train_end
    (Keras' form: print("Epoch %05d: early stopping" % (stopped_epoch + 1))), printed while the trainer's tqdm bar
    is drawn: on the bar's line, after its last redraw. A bar with no such word is not over."""
    bars = [f"Epoch {e}: {n * 100 // 300}%|███       | {n}/300 [00:20<00:00, 14.1batch/s, batch_nb={min(n, 249)}, "
            f"epoch={e - 1}, gpu=0, loss=1.{90 - e}, v_nb=2]" for e in (1, 2, 3) for n in (100, 200, 300)]
    line = "\r".join(bars)
    over = _read(tmp_path, line + "Epoch 00003: early stopping\n")
    assert over.ended
    assert training_loss(over.metrics) == ("loss", 1.87)
    going = _read(tmp_path, line + "\n")
    assert not going.ended
