"""General mechanisms of the progress reader, round s (issue [progress-real]): what sets n and o showed missing, each
closed as a rule of its own, not a case per log. Every line here is written for the test, in the layout of the
program named (its source named with it), with values of our own."""

from __future__ import annotations

import json
from pathlib import Path

from ntui.core.progress.lines import parse_line
from ntui.core.progress.runwords import run_end, run_stop
from ntui.core.progress.series import Series, estimate
from tests.support.progress_logs import read_series as _read

# ---------------------------------------------- a configuration printed whole names its evaluation's settings too


def test_a_configuration_dump_with_validation_settings_still_says_the_runs_total(tmp_path: Path) -> None:
    """facebookresearch/fairseq, fairseq_cli/train.py (main: ``logger.info(cfg)``, Hydra's config as one dict): its
    'validate_interval' and 'max_valid_steps' sit beside 'max_update'; the line is the run's configuration, not a
    message about an evaluation."""
    config = {"common": {"log_interval": 100, "seed": 3}, "dataset": {"validate_interval": 1, "max_valid_steps": None,
                                                                    "valid_subset": "valid"},
              "optimization": {"max_epoch": 0, "max_update": 120000, "clip_norm": 0.0, "update_freq": [1]}}
    lines = [f"[2023-04-01 10:00:00,000][fairseq_cli.train][INFO] - {config!r}"]
    lines += [f'[2023-04-01 10:{k:02d}:00,000][train_inner][INFO] - {{"epoch": 1, "update": 0.{k:03d}, '
              f'"loss": "{7 - k / 10:.3f}", "num_updates": "{k * 100}", "lr": "0.0001"}}' for k in range(1, 21)]
    series = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (2000, 120000)


def test_an_evaluations_own_message_with_a_few_counts_is_still_no_total(tmp_path: Path) -> None:
    """PaddlePaddle/PaddleSeg, paddleseg/core/val.py (evaluate: "Start evaluating (total_samples: {}, total_iters:
    {})..."): two counts of the evaluation's, not a configuration."""
    lines = [f"[2023/01/01 10:00:{k:02d}] INFO: [TRAIN] epoch: 1, iter: {k * 10}/8000, loss: 0.{90 - k}, lr: 0.01"
             for k in range(1, 11)]
    lines.append("[2023/01/01 10:01:00] INFO: Start evaluating (total_samples: 500, total_iters: 500)...")
    series = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (100, 8000)


# --------------------------------------------- the run's total from its epochs and an epoch's updates (fairseq 0.x)


def test_fairseqs_epochs_times_an_epochs_updates_is_the_runs_total(tmp_path: Path) -> None:
    """facebookresearch/fairseq (0.x), fairseq/progress_bar.py (simple_progress_bar.log: "| epoch 001:     50 / 310
    loss=..., num_updates=50"; the bar iterates the epoch's updates, update_freq grouped) and options.py (max_epoch,
    max_update 0: no limit but the epochs): the run is its epochs times an epoch's updates."""
    lines = ["Namespace(arch='transformer', max_epoch=4, max_update=0, lr=[0.0005], optimizer='adam')"]
    lines += [f"| epoch 001:    {b:3d} / 310 loss={9 - b / 100:.3f}, nll_loss=8.1, ppl=270.1, wps=41000, ups=1.2, "
              f"num_updates={b}, lr=0.0001, gnorm=1.02" for b in range(50, 301, 50)]
    series = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (300, 1240)


# -------------------------------------------------- a record's counter named with what it counts so far


def test_a_records_current_steps_is_its_counter(tmp_path: Path) -> None:
    """hiyouga/LLaMA-Factory, src/llamafactory/train/callbacks.py (LogCallback: trainer_log.jsonl's records with
    "current_steps" and "total_steps"; its last record's loss null): the step of the total; the loss the last
    record that said one."""
    records = [{"current_steps": k * 10, "total_steps": 60, "loss": round(1.2 - k / 20, 4), "eval_loss": None,
                "learning_rate": 1e-5, "epoch": round(k / 6, 2), "percentage": round(k * 100 / 6, 2)}
               for k in range(1, 6)]
    records.append({"current_steps": 60, "total_steps": 60, "loss": None, "eval_loss": None, "learning_rate": None,
                    "epoch": 1.0, "percentage": 100.0})
    series = _read(tmp_path, [json.dumps(r) for r in records])
    assert (series.step, series.run_total) == (60, 60) and series.metrics["loss"] == 0.95
    assert "done" in estimate(series, now=0.0, time_left_s=None).words
    point = parse_line('{"completed_steps": 400, "loss": 2.5}', None)  # (accelerate's examples' name for it)
    assert point is not None and point.step == 400
    plain = parse_line('{"total_steps": 400, "steps": 12}', None)  # a bare plural: a count of steps, no counter
    assert plain is None or plain.step is None


# -------------------------------------------------- a batch script's own word of the program's exit code


def test_a_batch_scripts_exit_code_line_ends_or_stops_the_run() -> None:
    """A batch script's own echo after the program (``echo "=== job $SLURM_JOB_ID finished with exit code $? ==="``):
    zero is the run's end, anything else a failure; a line without the sentence's subject and verb is neither."""
    assert run_end("=== job 4211 finished with exit code 0 at Mon Jan  2 10:00:00 UTC 2023 ===") == ("", 0)
    assert run_end("the training process exited with exit status 0") == ("", 0)
    assert run_stop("=== job 4211 finished with exit code 1 ===") == "an error: it exited with a failure"
    assert run_end("exit code 0") is None and run_stop("exit code 3") is None
    assert run_end("job 4211 finished with exit code 10") is None


# -------------------------------------------------- a total the step went past is not the run's


def test_a_total_the_step_went_past_is_never_done() -> None:
    """A total another counter gave (an inner loop's "i/8", a stage's) that the run's step went past: not the run's
    total, so no "done" for reaching it (set q's first scoring said "step 96 of 32: done" of a run at 96 of 3600);
    a run whose program said its training is over keeps it (a run resumed past a smaller new total ends at once)."""
    from ntui.core.progress.lines import Point

    series = Series()
    for i, step in enumerate((30, 60, 96)):
        series.add(Point("log", step, 32, None, {"loss": 1.0}), float(i))
    guess = estimate(series, now=10.0, time_left_s=None)
    assert guess.total is None and "done" not in guess.words
    series.ended = True
    assert estimate(series, now=10.0, time_left_s=None).total == 32
