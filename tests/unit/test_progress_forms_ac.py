"""General mechanisms of the progress reader, round y (issue [progress-real]): the PyTorch fine-tuning tutorials'
epoch header with a model's name before it and their phase summary's loss; a learning-rate scheduler's parameters
are not the run's length. Every line here is written for the test, in the layout the named program's format strings
give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, trailing_metrics, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- the fine-tuning tutorials' train_model()


def test_a_model_named_before_the_epoch_header_is_the_epoch_header() -> None:
    """A loop that trains several models prints the tutorials' header with the model's name first:
    print(f"{name} - Epoch {epoch}/{num_epochs - 1}"), read as the bare "Epoch e/E"; a sentence is not it."""
    point = parse_line("resnet-50 - Epoch 7/24")
    assert point is not None and point.form == "keras" and (point.step, point.total) == (7, 24)
    assert parse_line("vit_b.16 - Epoch 0/9") is not None
    assert parse_line("we ran it - Epoch 7/24") is None


def test_the_phase_summary_says_the_training_loss_before_its_accuracies() -> None:
    """The tutorials' train_model(): print(f"{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}") once per phase,
    the next metric after a space ("Top-1 Acc" and "Top-5 Acc" where a loop prints both); the val phase's is not
    the training's."""
    metrics = trailing_metrics("train Loss: 0.7315 Acc: 0.6410")
    assert metrics is not None and training_loss(metrics) == ("train_Loss", 0.7315)
    metrics = trailing_metrics("train Loss: 1.0822 Top-1 Acc: 61.2040 Top-5 Acc: 88.9013")
    assert metrics is not None and training_loss(metrics) == ("train_Loss", 1.0822)
    assert trailing_metrics("val Loss: 0.9120 Acc: 0.6002") is None


def test_the_named_headers_run_is_read_in_epochs_from_zero(tmp_path: Path) -> None:
    """The header, its "-" * 10 rule, the two phases' summaries per epoch, cut after the next header: the run's
    epoch the last header's (from 0), its epochs the last index's plus one, its loss the last training summary's."""
    lines = []
    for epoch in range(6):
        lines += [f"convnet-s - Epoch {epoch}/29", "-" * 10,
                  f"train Loss: {2.0 - epoch / 10:.4f} Top-1 Acc: 40.1000 Top-5 Acc: 80.2000",
                  f"test Loss: {2.5 - epoch / 10:.4f} Top-1 Acc: 38.3000 Top-5 Acc: 79.4000"]
    lines += ["convnet-s - Epoch 6/29", "-" * 10]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (6, 30) and "done" not in words
    assert training_loss(series.metrics) == ("train_Loss", 1.5)


# ---------------------------------------------------------------- a scheduler's steps are not the run's


def _steps(last: int) -> list[str]:
    """A hand-written loop over DeepSpeed's engine, rank 0's print(f"step:{step}, loss:{loss}") every 10 steps."""
    return [f"step:{s}, loss:{3.0 - s / 100}" for s in range(0, last + 1, 10)]


def test_deepspeed_config_dumps_scheduler_steps_are_no_total(tmp_path: Path) -> None:
    """deepspeed/runtime/config.py, DeepSpeedConfig.print(): each key padded with dots, "  scheduler_params ....
    {'total_num_steps': N, ...}", then print_user_config()'s json over several lines ("scheduler": {"type":
    "WarmupDecayLR", "params": {"total_num_steps": N, ...}}): WarmupDecayLR's decay, not the loop's steps."""
    head = ["[2025-01-02 10:00:00,001] [INFO] [config.py:1003:print]   scheduler_name ............... WarmupDecayLR",
            "[2025-01-02 10:00:00,001] [INFO] [config.py:1003:print]   scheduler_params ............. "
            "{'total_num_steps': 500, 'warmup_min_lr': 0, 'warmup_max_lr': 3e-05, 'warmup_num_steps': 50}",
            "[2025-01-02 10:00:00,002] [INFO] [config.py:989:print_user_config]   json = {",
            '    "train_batch_size": 16,', '    "scheduler": {', '        "type": "WarmupDecayLR",',
            '        "params": {', '            "total_num_steps": 500,', '            "warmup_num_steps": 50',
            "        }", "    },", '    "zero_optimization": {', '        "stage": 1', "    }", "}"]
    series, _ = _read(tmp_path, head + _steps(120))
    assert series.step == 120 and series.run_total is None
    # the run's own length said after the scheduler's block is still the run's
    series, _ = _read(tmp_path, [*head, "max_steps: 300", *_steps(120)])
    assert (series.step, series.run_total) == (120, 300)
    # a configuration that says its steps beside a scheduler's name, not within its braces, still says them
    series, _ = _read(tmp_path, ["Namespace(lr_scheduler={'name': 'cosine'}, max_steps=300)", *_steps(120)])
    assert (series.step, series.run_total) == (120, 300)
