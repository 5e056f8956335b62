"""General mechanisms of the progress reader, round e (issue [progress-real]): a Trainer's dict that holds Python's
``nan``, a script's own ``loss = x`` print, Lightning 2.x's bars (its epoch's bar counts training only), the
Trainer's evaluation at the run's last step, a dataset's truncating bar. Every line here is written for the test, in
the layouts programs use, not taken from any."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line
from tests.support.progress_logs import read_lines as _read


def test_a_dict_with_python_nan_is_read() -> None:
    point = parse_line("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.2e-06, 'epoch': 0.01}" + " " * 20)
    assert point is not None and point.metrics["loss"] == 0.0
    assert parse_line("{'loss': 1.25, 'grad_norm': -inf, 'epoch': 0.5}") is not None
    assert parse_line("{'name': 'nan', 'loss': 1.25}") is not None  # a quoted 'nan' is a string as it was


def test_a_dict_with_nan_gives_the_run_its_loss(tmp_path: Path) -> None:
    lines = []
    for n in range(1, 6):
        lines.append(f"{{'loss': 0.0, 'grad_norm': nan, 'learning_rate': {n}e-06, 'epoch': 0.0}}" + " " * 30)
        lines.append(f"  0%|          | {n}/900 [00:{10 + n}<2:10:00,  8.71s/it]")
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total) == (5, 900)
    assert series.metrics.get("loss") == 0.0


def test_a_scripts_own_loss_assignment_is_the_runs_loss(tmp_path: Path) -> None:
    lines = []
    for step in range(1, 41):
        lines.append(f"loss = {7 - step * 0.05:.4f}")
        if step % 10 == 0:
            lines.append(f"[2025-03-02 11:0{step // 10}:00,100] [INFO] [logging.py:96:log_dist] [Rank 0] "
                         f"step={step}, skipped=2, lr=[0.0004], mom=[(0.9, 0.999)]")
    lines.append("loss = 4.9912")
    series, _ = _read(tmp_path, lines)
    assert series.step == 40
    assert series.metrics.get("loss") == 4.9912 or series.samples[-1].metrics.get("loss") == 4.9912


def test_an_assignment_that_is_not_a_loss_is_no_metric() -> None:
    from ntui.core.progress.lines import trailing_metrics

    assert trailing_metrics("loss = 3.25") == {"loss": 3.25}
    assert trailing_metrics("seed = 42") is None
    assert trailing_metrics("eval loss = 3.25") is None


def _lightning2(epochs: int, per: int, val: int) -> list[str]:
    lines = ["Sanity Checking: |          | 0/? [00:00<?, ?it/s]",
             "Sanity Checking DataLoader 0: 100%|##########| 2/2 [00:01<00:00,  1.70it/s]"]
    for e in range(epochs):
        for part in (per // 3, 2 * per // 3):
            lines.append(f"Epoch {e}:  50%|#####     | {part}/{per} [00:40<00:40,  4.10it/s, v_num=1, "
                         f"train_loss=1.{e}]")
        lines.append("Validation: |          | 0/? [00:00<?, ?it/s]")
        lines.append(f"Validation DataLoader 0: 100%|##########| {val}/{val} [00:09<00:00,  8.20it/s]")
        lines.append(f"Epoch {e}: 100%|##########| {per}/{per} [02:00<00:00,  4.10it/s, v_num=1, train_loss=1.{e}]")
    lines.append(f"`Trainer.fit` stopped: `max_epochs={epochs}` reached.")
    return lines


def test_lightning2_epoch_bar_counts_training_only(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _lightning2(3, 600, 80))
    assert (series.step, series.total) == (1800, 1800)
    assert series.ended and not series.restarts


def test_lightning1_epoch_bar_still_counts_its_validation(tmp_path: Path) -> None:
    lines = []  # Lightning 1.x: tqdm's own "0it" for an unknown total; the epoch's bar counts the validation's batches
    for e in range(2):
        lines.append(f"Epoch {e}:  80%|########  | 400/500 [00:40<00:10,  9.90it/s, loss=0.{e + 3}, v_num=2]")
        lines.append("Validation: 0it [00:00, ?it/s]")
        lines.append("Validating:  50%|#####     | 50/100 [00:05<00:05,  9.90it/s]")
        lines.append(f"Epoch {e}:  90%|######### | 450/500 [00:45<00:05,  9.90it/s, loss=0.{e + 3}, v_num=2]")
        lines.append("Validating: 100%|##########| 100/100 [00:10<00:00,  9.90it/s]")
        lines.append(f"Epoch {e}: 100%|##########| 500/500 [00:50<00:00,  9.90it/s, loss=0.{e + 3}, v_num=2]")
    series, _ = _read(tmp_path, lines)
    assert series.per_epoch == 400


def test_an_evaluation_at_the_runs_last_step_is_no_restart(tmp_path: Path) -> None:
    lines = []
    for step in range(25, 201, 25):
        lines.append(f" {step // 2}%|#         | {step}/200 [00:{step // 10:02d}<01:00,  2.05it/s]")
        lines.append(f"{{'loss': {2 - step / 200:.3f}, 'learning_rate': 1e-05, 'epoch': {step / 100:.2f}}}")
        if step % 100 == 0:
            lines.append(f" {step // 2}%|#         | {step}/200 [00:{step // 10:02d}<01:00,  2.05it/s]")
            for k in (10, 20, 30):
                lines.append(f" 50%|#####     | {k}/30 [00:0{k // 10}<00:02,  6.40it/s]")
            lines.append(f"{{'eval_loss': 1.{step}, 'eval_runtime': 4.2, 'epoch': {step / 100:.2f}}}")
    lines.append("{'train_runtime': 98.1, 'train_samples_per_second': 16.3, 'train_loss': 1.41, 'epoch': 2.0}")
    lines.append("100%|##########| 200/200 [01:38<00:00,  2.04it/s]")
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (200, 200)
    assert not series.restarts and series.ended


def test_a_datasets_truncating_bar_is_preparation() -> None:
    point = parse_line("Truncating train dataset: 100%|##########| 3100/3100 [00:00<00:00, 51022.10 examples/s]")
    assert point is not None and point.phase == "preparation"


def test_a_splits_scanning_bar_is_preparation_and_a_resume_after_it_no_restart(tmp_path: Path) -> None:
    lines = ["train: Scanning /data/bolts/labels.cache... 288 images, 1 backgrounds, 0 corrupt: 100%|##########| "
             "289/289 [00:00<?, ?it/s]",
             "val: Scanning /data/bolts/valid.cache... 61 images, 0 backgrounds, 0 corrupt: 100%|##########| "
             "61/61 [00:00<?, ?it/s]",
             "Resuming training /runs/detect/train7/weights/last.pt from epoch 12 to 30 total epochs",
             "Starting training for 30 epochs...",
             "",
             "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"]
    for epoch in (12, 13):
        lines.append(f"      {epoch}/30      1.90G     1.{epoch}     0.71      1.002         21        640: 100%|"
                     f"##########| 37/37 [00:31<00:00,  1.19it/s]")
        lines.append("                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
                     "100%|##########| 4/4 [00:03<00:00,  1.31it/s]")
        lines.append("                   all         61        204      0.771      0.702      0.794      0.512")
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total) == (13, 30)
    assert not series.restarts
