"""General mechanisms of the progress reader, round QQ (issue [progress-real]): YOLOv5's epochs completed after an
early stop, its rows named from 0; Demucs' solver's LogProgress lines of the epoch in progress. Every line here is
written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- YOLOv5: epochs completed after an early stop


def _yolov5_rows(last: int, epochs: int) -> list[str]:
    """YOLOv5 train.py's epoch rows: its bar's description ("%11s" * 2 + "%11.4g" * 5) % (f"{epoch}/{epochs - 1}",
    mem, *mloss, targets, imgsz), the epoch from 0, then its validation's 'all' row."""
    rows = [f"Starting training for {epochs} epochs..."]
    for epoch in range(last + 1):
        rows += ["", "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size",
                 f"{f'{epoch}/{epochs - 1}':>11}      2.05G    0.06{epoch:02d}   0.007711   0.003120         "
                 f"17        416: 100% 9/9 [00:02<00:00,  4.11it/s]",
                 "                 Class     Images  Instances          P          R      mAP50   mAP50-95: 100% "
                 "1/1 [00:00<00:00,  6.02it/s]",
                 "                   all         27         41      0.812      0.774      0.801      0.402"]
    return rows


def test_yolov5_epochs_completed_after_an_early_stop_is_the_step(tmp_path: Path) -> None:
    """YOLOv5 train.py: EarlyStopping's LOGGER.info(f"Stopping training early as no improvement observed in last
    {self.patience} epochs. ...") breaks the loop after its row f"{epoch}/{epochs - 1}" (epoch from 0), then, on the
    normal return after the loop (not in a finally or except), LOGGER.info(f"\\n{epoch - start_epoch + 1} epochs
    completed in {(time.time() - t0) / 3600:.3f} hours."): the epochs done are one more than the last row named,
    short of the run's total."""
    lines = _yolov5_rows(22, 500) + [
        "Stopping training early as no improvement observed in last 10 epochs. Best results observed at epoch 12, "
        "best model saved as best.pt.",
        "To update EarlyStopping(patience=10) pass a new patience value, i.e. `python train.py --patience 300` or use "
        "`--patience 0` to disable EarlyStopping.", "", "23 epochs completed in 0.017 hours."]
    series, words = _read(tmp_path, lines)
    assert series.step == 23 and series.total == 500
    assert "done" in words


def test_yolov5_run_to_its_total_still_ends_at_it(tmp_path: Path) -> None:
    """The same end line after the run's last row ("9/9" of 10 epochs): the step and the total are the 10 epochs."""
    series, words = _read(tmp_path, _yolov5_rows(9, 10) + ["", "10 epochs completed in 0.004 hours."])
    assert series.step == 10 and series.total == 10
    assert "done" in words


def test_yolov5_rows_cut_with_no_end_line_stay_the_last_row_named(tmp_path: Path) -> None:
    """No end line: the run is not said to be done, its step the last row's."""
    series, words = _read(tmp_path, _yolov5_rows(22, 500))
    assert series.step == 22
    assert "done" not in words


# ---------------------------------------------------------------- Demucs' solver: LogProgress lines


def _demucs(epochs_done: int, lines_in: int, prefix: str = "") -> list[str]:
    """Demucs' solver (demucs/solver.py with utils.LogProgress): per epoch the name f"Train | Epoch {epoch + 1}"
    then LogProgress._log's f"{name} | {index}/{total} | {speed} | {infos}" (each info f"{key.capitalize()}
    {value}") num_prints times, logger.info(f"Train Summary | Epoch {epoch + 1} | {_summary(metrics)}") ("Loss=..."
    after the key's capital), 'Cross validation...' and its "Valid | Epoch N | i/n | ..." lines, "Valid Summary"."""
    out: list[str] = []
    for epoch in range(1, epochs_done + 2):
        shown = 4 if epoch <= epochs_done else lines_in
        out.append("Training...")
        for q in range(1, shown + 1):
            out.append(f"Train | Epoch {epoch} | {q * 100}/420 | 2.31 it/sec | Loss {0.3 - epoch / 100 - q / 1000:.4f}"
                       f" | Reco {0.29 - epoch / 100:.4f} | Grad 0.0712")
        if epoch > epochs_done:
            break
        out += [f"Train Summary | Epoch {epoch} | Loss={0.296 - epoch / 100:.4f} | Reco={0.29 - epoch / 100:.4f}",
                "-" * 70, "Cross validation...",
                f"Valid | Epoch {epoch} | 1/2 | 0.41 it/sec | Loss 0.3312 | Reco 0.3312 | Nsdr 2.914",
                f"Valid Summary | Epoch {epoch} | Loss=0.3312 | Reco=0.3312 | Nsdr=2.914 | Best=0.3312",
                "-" * 70]
    return [prefix + line for line in out]


def test_a_demucs_train_line_names_its_epoch_from_one() -> None:
    """LogProgress' line of the training: the epoch named (from 1), its batch of the epoch's, the Loss info."""
    point = parse_line("Train | Epoch 7 | 210/420 | 2.31 it/sec | Loss 0.2170 | Reco 0.2140 | Grad 0.0712")
    assert point is not None and point.epoch == 7
    valid = parse_line("Valid | Epoch 7 | 1/2 | 0.41 it/sec | Loss 0.3312 | Reco 0.3312")
    assert valid is None or valid.format != "demucs"  # the evaluation's line is not the training's


def test_a_demucs_run_cut_inside_an_epoch_is_at_that_epoch_with_its_last_loss(tmp_path: Path) -> None:
    """Cut after the second Train line of epoch 6 (five epochs summed before it): the step is the epoch in progress,
    6, and the loss its last Train line's, not the summary of epoch 5; not done."""
    series, words = _read(tmp_path, _demucs(5, 2))
    assert series.step == 6
    assert training_loss(series.metrics) == ("loss", 0.238)
    assert "done" not in words


def test_a_demucs_log_with_a_dash_before_every_line_reads_the_same(tmp_path: Path) -> None:
    """The same lines each after "- " (the log as a list's items): the same epoch in progress and loss."""
    series, _ = _read(tmp_path, _demucs(5, 2, prefix="- "))
    assert series.step == 6
    assert training_loss(series.metrics) == ("loss", 0.238)
