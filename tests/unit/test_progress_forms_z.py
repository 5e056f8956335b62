"""General mechanisms of the progress reader, round V (issue [progress-real]): hand-written loops whose bar's
description says "Epoch e/E" of an epoch's batches (counted in the run's global steps, their "[val]" bar no
training's), a loop's "Epoch: e/E" and "Epoch e of E" headers with their "Train Loss:" summary, and ultralytics'
HUB line printed again at each checkpoint upload. Every line here is written for the test, in the layout the named
program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.read import read_progress
from tests.support.progress_logs import read_lines as _read

BAR = "██████████"



# ---------------------------------------------------------------- a loop's bar described "Epoch e/E [phase]"


def _loop_epoch(e: int, epochs: int, loss: float) -> list[str]:
    return [f"Epoch {e}/{epochs} [train]: 100%|{BAR}| 40/40 [00:20<00:00,  1.98it/s, loss={loss}]",
            f"Epoch {e}/{epochs} [val]: 100%|{BAR}| 6/6 [00:02<00:00,  2.71it/s]",
            f"Epoch {e}/{epochs} - Train Loss: {loss + 0.01:.4f}, Train Accuracy: 61.20%, Validation Loss: 0.9120, "
            "Validation Accuracy: 58.40%"]


def test_a_loop_bar_that_says_its_epoch_of_the_runs_counts_global_steps(tmp_path: Path) -> None:
    """A hand-written loop's tqdm(loader, desc=f"Epoch {epoch}/{epochs} [train]") with set_postfix(loss=...), its
    validation's tqdm(desc=f"Epoch {epoch}/{epochs} [val]") and its print(f"Epoch {epoch}/{epochs} - Train Loss:
    {loss:.4f}, ..."): the line says the epoch of the run's and the batch of the epoch's, so the run counts its
    global steps (the epochs before times the bar's total, plus its count) of the epochs times that total; the
    validation's bar is none of the training's (no restart) and the summary gives its metrics only."""
    lines = [line for e in (1, 2, 3) for line in _loop_epoch(e, 5, 0.5 - e / 10)]
    lines.append("Epoch 4/5 [train]:  25%|██▌       | 10/40 [00:05<00:15,  1.97it/s, loss=0.123]")
    series, words = _read(tmp_path, lines)
    assert words.startswith("step 130 of 200"), words
    assert series.restarts == []
    assert training_loss(series.metrics) == ("loss", 0.123)


def test_a_loop_bar_described_val_in_brackets_is_a_validation() -> None:
    """tqdm(val_loader, desc=f"Epoch {epoch}/{epochs} [val]"), whose brackets are all of its description's words,
    and tqdm(val_loader, desc="val"): the validation's batches, not the run's."""
    point = parse_line(f"Epoch 2/5 [val]: 100%|{BAR}| 6/6 [00:02<00:00,  2.71it/s]")
    assert point is not None and point.phase == "validation"
    point = parse_line(f"val: 100%|{BAR}| 6/6 [00:02<00:00,  2.71it/s]")
    assert point is not None and point.phase == "validation"


def test_pytorch_ignite_bracketed_epoch_bar_still_counts_epochs() -> None:
    """pytorch-ignite's ProgressBar, desc "Epoch [{}/{}]" of its engine's max_epochs: the framework sizes its run in
    epochs, so its bar stays an epoch's (not the loop's "Epoch e/E" of the rule above)."""
    point = parse_line("Epoch [2/6]:  50%|█████     | 20/40 [00:10<00:10,  1.99it/s]")
    assert point is not None and point.counts_epochs and point.step == 2 and point.total == 6


def test_a_loop_bar_from_epoch_zero_naming_its_last_index_takes_the_epochs_said(tmp_path: Path) -> None:
    """A loop that numbers its epochs from 0 and describes its bar f"Epoch {epoch}/{epochs - 1} [Pretrain]" (the
    last epoch's index), after its own "... | epochs 4" line: the run has the 4 epochs said, not 3."""
    lines = ["Pretrain set: 320 | batch size 8 | steps/epoch 40 | epochs 4"]
    lines += [f"Epoch {e}/3 [Pretrain]: 100%|{BAR}| 40/40 [00:20<00:00,  1.98it/s]" for e in (0, 1)]
    lines.append("Epoch 2/3 [Pretrain]:  25%|██▌       | 10/40 [00:05<00:15,  1.97it/s]")
    _, words = _read(tmp_path, lines)
    assert words.startswith("step 90 of 160"), words


# ---------------------------------------------------------------- a loop's epoch header and its summary


def test_a_loop_epoch_colon_header_counts_epochs_and_its_train_loss_line(tmp_path: Path) -> None:
    """A hand-written loop's print(f"Epoch: {epoch}/{epochs}") on a line of its own, its tqdm(loader,
    desc="Training") bar over the epoch's batches, then print(f"Train Loss: {loss:.4f}") and print(f"Test Accuracy:
    {acc:.2f}%"): the run counts epochs (as Keras' "Epoch e/E" header), its loss the last summary's."""
    lines = []
    for e in (1, 2, 3):
        lines += [f"Epoch: {e}/6", f"Training: 100%|{BAR}| 300/300 [00:11<00:00, 26.40it/s]",
                  f"Train Loss: {0.3 / e:.4f}", "Test Accuracy: 95.10%", ""]
    _, words = _read(tmp_path, lines)
    series = read_progress(tmp_path / "run.log")
    assert words.startswith("step 3 of 6"), words
    assert training_loss(series.metrics) == ("Train_Loss", 0.1)


def test_a_loop_epoch_of_header_ends_its_last_epoch_at_its_summary(tmp_path: Path) -> None:
    """A hand-written loop's print(f"Epoch {epoch+1} of {epochs}"), "Training", a bar that ran past its total (its
    count alone: "95it [..]"), "Validating", then print(f"Train Loss: {loss:.4f}, Train Acc: {acc:.2f}"): the run
    counts epochs; the last epoch is over once its summary is said, not at its header."""
    lines = []
    for e in (1, 2, 3):
        lines += [f"Epoch {e} of 3", "Training", "41it [00:30,  1.36it/s]", "Validating", "7it [00:03,  2.10it/s]"]
        if e < 3:
            lines += [f"Train Loss: {0.02 / e:.4f}, Train Acc: {60 + e:.2f}", "Val Loss: 0.0300, Val Acc: 55.00"]
    _, words = _read(tmp_path, lines)
    assert words.startswith("step 3 of 3") and "done" not in words, words
    lines += ["Train Loss: 0.0050, Train Acc: 88.00", "Val Loss: 0.0200, Val Acc: 80.00"]
    series, words = _read(tmp_path, lines)
    assert words.startswith("step 3 of 3: done"), words
    assert training_loss(series.metrics) == ("Train_Loss", 0.005)


def test_an_epoch_of_header_as_a_logger_record_stays_a_period_start() -> None:
    """A loop's print(f"Epoch {epoch+1} of {epochs}") is its header; sd-scripts' accelerator.print(f"\\nepoch
    {epoch+1}/{num_train_epochs}") before its bar over the run's steps is none (no colon, no "of"). (t5x's "Epoch %d
    of %d", logged through absl with a record's header, stays its period's start in read.py: its study entry.)"""
    point = parse_line("Epoch 2 of 9")
    assert point is not None and point.form == "epoch-of-header"
    assert parse_line("epoch 2/9") is None  # (sd-scripts' header before its bar over the run's steps: no colon)


# ---------------------------------------------------------------- ultralytics HUB's checkpoint upload line


def test_ultralytics_hub_uploading_checkpoint_again_is_no_restart(tmp_path: Path) -> None:
    """ultralytics/utils/callbacks/hub.py, on_model_save(): LOGGER.info(f"{PREFIX}Uploading checkpoint
    {HUB_WEB_ROOT}/models/{model_id}") each time its upload timer ran out (every few epochs), so an excerpt of a HUB
    run may start at one: printed again it is no restart."""
    header = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    lines = []
    for e in range(21, 27):
        if e % 3 == 0:
            lines.append("Ultralytics HUB: Uploading checkpoint https://hub.example.org/models/AbCdEf123")
        lines += ["", header, f"      {e}/40      6.02G      1.211     0.8123      1.104         52        640: 100%|"
                  f"{BAR}| 120/120 [00:{40 - e:02d}<00:00,  3.01it/s]"]
    lines.insert(0, "Ultralytics HUB: Uploading checkpoint https://hub.example.org/models/AbCdEf123")
    series, words = _read(tmp_path, lines)
    assert series.restarts == []
    assert words.startswith("step 26 of 40"), words
