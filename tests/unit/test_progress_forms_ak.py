"""General mechanisms of the progress reader, round FF (issue [progress-real]): the end of a run where the program
says it in its own words (skorch's EarlyStopping, verl's trainers' last record) and verl's SFT banner of the run's
steps. Every line here is written for the test, in the layout the named program's format strings give, with values
of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.runwords import declared_total, run_end
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- skorch's EarlyStopping


def _skorch_rows(epochs: int) -> list[str]:
    """skorch's PrintLog table (skorch/callbacks/logging.py, tabulate's "simple" format): a header, its dashes, one
    row per epoch."""
    lines = ["  epoch    train_loss    valid_loss    cp     dur",
             "-------  ------------  ------------  ----  ------"]
    for e in range(1, epochs + 1):
        lines.append(f"{e:>7}  {0.9 - e / 50:>12.4f}  {0.8 - e / 90:>12.4f}  {'+' if e < 9 else '':>4}  "
                     f"{1.2 + e / 100:.4f}")
    return lines


def test_skorch_early_stopping_message_ends_the_fit(tmp_path: Path) -> None:
    """skorch/callbacks/training.py, EarlyStopping.on_epoch_end(): "Stopping since {} has not improved in the last {}
    epochs.".format(self.monitor, self.patience), then a KeyboardInterrupt the net's partial_fit() catches: the fit
    is over after the epoch it follows."""
    assert run_end("Stopping since valid_loss has not improved in the last 4 epochs.") == ("", 0)
    series, words = _read(tmp_path, [*_skorch_rows(12),
                                     "Stopping since valid_loss has not improved in the last 4 epochs."])
    assert series.samples[-1].step == 12
    assert "done" in words


def test_skorch_table_without_the_message_is_not_done(tmp_path: Path) -> None:
    """The same table cut after a row (no EarlyStopping message, no max_epochs said): not a finished run; nor a
    configuration that names a patience."""
    assert run_end("EarlyStopping(monitor=valid_loss, patience=4)") is None
    _, words = _read(tmp_path, _skorch_rows(12))
    assert "done" not in words


# ---------------------------------------------------------------- verl's trainers


def _verl_sft(steps_per_epoch: int, epochs: int, last: int) -> list[str]:
    """verl/trainer/fsdp_sft_trainer.py: its banner (rank 0's print), then one tqdm bar per epoch, desc
    f"Epoch {epoch + 1}/{total_epochs}", total the steps per epoch, with the console tracker's "step:{step} - k:v - ..."
    after each redraw."""
    lines = [f"Number of steps/epoch {steps_per_epoch}, number of epochs {epochs}, total number of steps "
             f"{steps_per_epoch * epochs}"]
    for g in range(1, last + 1):
        e, i = (g - 1) // steps_per_epoch + 1, (g - 1) % steps_per_epoch
        pct = round(100 * i / steps_per_epoch)
        lines.append(f"Epoch {e}/{epochs}:  {pct:>2}%|#####     | {i}/{steps_per_epoch} [00:{10 + i:02d}<00:30,  "
                     f"2.10s/it]step:{g} - train/loss:{0.8 - g / 100:.6f} - train/lr(1e-3):{0.05 - g / 1000:.6f}")
    return lines


def test_verl_sft_banner_gives_the_run_total() -> None:
    """fsdp_sft_trainer.py's banner: f"Number of steps/epoch {steps_per_epoch}, number of epochs {total_epochs},
    total number of steps {total_steps}": the run's steps."""
    assert declared_total("Number of steps/epoch 12, number of epochs 3, total number of steps 36") == 36


def test_verl_final_validation_metrics_end_the_run(tmp_path: Path) -> None:
    """fsdp_sft_trainer.py (and ppo/ray_trainer.py) at is_last_step: the val loss, the checkpoint, then
    print(f"Final validation metrics: {last_valid_metric}") and return: the run is over at its total."""
    assert run_end("Final validation metrics: {'val/loss': 0.4215}") == ("", 0)
    assert run_end("Final validation metrics: None") == ("", 0)
    series, words = _read(tmp_path, [*_verl_sft(12, 3, 36), "step:36 - val/loss:0.4215",
                                     "Saving checkpoint to: ./out/global_step_36",
                                     "Final validation metrics: {'val/loss': 0.4215}"])
    assert series.samples[-1].step == 36
    assert "of 36" in words and "done" in words


def test_verl_run_cut_before_its_last_step_is_not_done(tmp_path: Path) -> None:
    """The same run cut at step 20 of 36 (a periodic validation and checkpoint, no final metrics): not done; the
    "Initial validation metrics" of the PPO trainer's start are no end either."""
    assert run_end("Initial validation metrics: {'val/score': 0.1}") is None
    series, words = _read(tmp_path, [*_verl_sft(12, 3, 20), "step:20 - val/loss:0.5012",
                                     "Saving checkpoint to: ./out/global_step_20"])
    assert series.samples[-1].step == 20
    assert "of 36" in words and "done" not in words


# ---------------------------------------------------------------- ignite's trainer of one epoch


def _ignite_one_epoch() -> list[str]:
    """ignite/engine/engine.py's records through setup_logger's "%(asctime)s %(name)s %(levelname)s: %(message)s":
    "Engine run starting with max_epochs={}.", "Epoch[{}] Complete. Time taken: {}", "Engine run complete. Time taken:
    {}"; between them the notebook's ProgressBar (contrib/handlers/tqdm_logger.py: no "Epoch [e/E]" desc where
    max_epochs is 1, bar_format "[{n_fmt}/{total_fmt}] {percentage:3.0f}%|{bar}{postfix} [{elapsed}<{remaining}]")
    frozen at its first redraw."""
    return ["2026-01-05 10:00:01,100 Translate INFO: Engine run starting with max_epochs=1.",
            "[1/450]   0%|           [00:00<?]",
            "2026-01-05 10:06:12,400 Translate INFO: Epoch[1] Complete. Time taken: 00:06:11"]


def test_ignite_one_epoch_trainer_counts_its_epoch_not_the_frozen_bar(tmp_path: Path) -> None:
    """The trainer's only epoch complete while the bar sits at 1 of 450: the bar counted that epoch's iterations;
    the run is 1 epoch of 1, not iteration 1 of 450 (and no end yet: the engine's run is not said over)."""
    series, words = _read(tmp_path, _ignite_one_epoch())
    assert series.samples[-1].step == 1
    assert words.startswith("step 1 of 1") and "done" not in words


def test_ignite_outermost_engine_of_one_epoch_ending_ends_the_run(tmp_path: Path) -> None:
    """The same trainer's "Engine run complete": the outermost engine's run, whose epoch was the run's point, is
    over, whatever its max_epochs."""
    _, words = _read(tmp_path, [*_ignite_one_epoch(),
                                "2026-01-05 10:06:15,900 Translate INFO: Engine run complete. Time taken: 00:06:14"])
    assert "of 1" in words and "done" in words


def test_ignite_evaluator_of_one_epoch_inside_the_trainer_ends_nothing(tmp_path: Path) -> None:
    """An evaluator's run (max_epochs=1) inside a trainer's of 4 epochs: its end is not the run's."""
    lines = ["2026-01-05 10:00:01,100 Train INFO: Engine run starting with max_epochs=4.",
             "2026-01-05 10:03:01,100 Train INFO: Epoch[1] Complete. Time taken: 00:03:00",
             "2026-01-05 10:03:01,200 Train INFO: Engine run starting with max_epochs=1.",
             "2026-01-05 10:03:09,200 Train INFO: Epoch[1] Complete. Time taken: 00:00:08",
             "2026-01-05 10:03:09,300 Train INFO: Engine run complete. Time taken: 00:00:08"]
    _, words = _read(tmp_path, lines)
    assert "done" not in words


def test_ignite_standalone_evaluator_before_the_trainer_ends_nothing(tmp_path: Path) -> None:
    """An evaluator's run of one epoch on its own, before the trainer's starts (no training count inside it): its
    end is not the run's, nor after the trainer's start."""
    lines = ["2026-01-05 10:00:01,100 Train INFO: Engine run starting with max_epochs=1.",
             "2026-01-05 10:00:09,100 Train INFO: Epoch[1] Complete. Time taken: 00:00:08",
             "2026-01-05 10:00:09,200 Train INFO: Engine run complete. Time taken: 00:00:08"]
    assert "done" not in _read(tmp_path, lines)[1]
    assert "done" not in _read(tmp_path, [*lines, "2026-01-05 10:00:10,100 Train INFO: Engine run starting with "
                                                  "max_epochs=6."])[1]
