"""General mechanisms of the progress reader, round II (issue [progress-real]): a reinforcement-learning loop's line
of each episode (the run counts episodes as others count epochs), a run of one such unit launched again, and
ms-swift's words after its training is over. Every line here is written for the test, in the layout the named
program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import run_end
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a reinforcement-learning loop's episode line


def test_an_episode_line_says_the_episode_of_the_runs_episodes() -> None:
    """A hand-written DQN loop's print(f"Episode {ep + 1}/{episodes} | Reward: {r:.2f} | Loss: {loss:.4f} | ε:
    {eps:.3f}") as each episode ends: the episode is the run's unit, of the episodes it says, its loss the line's."""
    point = parse_line("Episode 7/40 | Reward: -3.50 | Loss: 2.0817 | ε: 0.310")
    assert point is not None and point.counts_epochs
    assert (point.step, point.total) == (7, 40)
    assert training_loss(point.metrics) == ("Loss", 2.0817)


def test_the_episode_line_in_other_shapes() -> None:
    """The same line as other RL scripts print it: print(f"Episode: {episode + 1}/{episodes}, Reward: {reward}"),
    "[Episode 12/300] reward=4.0 loss=0.125" (key=value fields); not an evaluation's episodes ("Eval Episode 3/10")
    nor a sentence with no field after the count."""
    point = parse_line("Episode: 5/90, Reward: 17.0")
    assert point is not None and (point.step, point.total) == (5, 90)
    point = parse_line("[Episode 12/300] reward=4.0 loss=0.125")
    assert point is not None and (point.step, point.total) == (12, 300)
    assert training_loss(point.metrics) == ("loss", 0.125)
    assert parse_line("Eval Episode 3/10 | Reward: 4.5") is None
    assert parse_line("Episode 3/10 finished") is None


def test_an_episode_loop_run_reads_its_last_episode_and_loss(tmp_path: Path) -> None:
    """A loop of 6 episodes, one line each, its totals block after the last: episode 6 of 6, its loss."""
    lines = ["=" * 40, "Training Session Started: 2026-01-02 08:00:00", "=" * 40, ""]
    lines += [f"Episode {e}/6 | Deliveries: {10 * e} | Collisions: 0 | Loss: {3.0 - e / 10:.4f} | ε: 0.050"
              for e in range(1, 7)]
    lines += ["", "=" * 40, "FINAL RESULTS", "=" * 40, "Total Deliveries: 210"]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total) == (6, 6)
    assert training_loss(series.metrics) == ("Loss", 2.4)


def test_a_run_of_one_episode_launched_again_is_a_restart(tmp_path: Path) -> None:
    """The same script launched three times, its episodes counted from 1 each time, appended to one file: two runs
    of "Episode 1/1", then one of 3 episodes. Nothing comes after a run's last unit: the second "1/1" and the "1/3"
    after it are new launches (two restarts)."""
    lines = ["Episode 1/1 | Reward: 2.00 | Loss: 4.1000 | ε: 0.000",
             "Episode 1/1 | Reward: 3.00 | Loss: 3.9000 | ε: 0.000",
             "Episode 1/3 | Reward: 1.00 | Loss: 5.0000 | ε: 0.000",
             "Episode 2/3 | Reward: 1.50 | Loss: 4.5000 | ε: 0.000"]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total) == (2, 3)
    assert len(series.restarts) == 2


# ---------------------------------------------------------------- ms-swift's words after its training


def test_ms_swift_says_its_end_once_its_main_returned() -> None:
    """ms-swift's swift/utils/run_utils.py x_main (2.x) and SwiftPipeline.main (3.x): logger.info(f'End time of
    running main: {datetime.now()...}') after its run returned, under its "[INFO:swift] " prefix. Its start's words,
    and the checkpoints' lines that 3.x's SwiftSft.train logs in a ``finally:`` (after a crash too:
    logger.info(f'last_model_checkpoint: {...}'), f'best_model_checkpoint: {...}'), are not an end."""
    assert run_end("[INFO:swift] End time of running main: 2026-01-01 10:30:00.123456") == ("", 0)
    assert run_end("[INFO:swift] Start time of running main: 2026-01-01 10:00:00.123456") is None
    assert run_end("[INFO:swift] last_model_checkpoint: /runs/demo/v2-20260101-100000/checkpoint-60") is None
    assert run_end("[INFO:swift] best_model_checkpoint: None") is None
    assert run_end('  "best_model_checkpoint": "/runs/demo/checkpoint-40",') is None


def test_an_ms_swift_run_that_crashed_after_its_checkpoint_lines_is_not_done(tmp_path: Path) -> None:
    """ms-swift 3.x whose training raised at step 40 of 120: its ``finally:`` logs the last and best checkpoints,
    then the traceback comes: not done (the error stops it)."""
    lines = [f"{{'loss': {1.2 - s / 100:.4f}, 'token_acc': 0.61, 'grad_norm': 0.9, 'learning_rate': 1e-05, "
             f"'memory(GiB)': 12.5, 'train_speed(iter/s)': 0.31, 'epoch': {s / 40:.2f}, "
             f"'global_step/max_steps': '{s}/120'}}" for s in range(5, 41, 5)]
    lines += ["Train:  33%|███▎      | 40/120 [02:10<04:20,  3.26s/it]"  # (the logger's line glued to the bar's)
              "[INFO:swift] last_model_checkpoint: /runs/demo/v3-20260101-100000/checkpoint-40",
              "[INFO:swift] best_model_checkpoint: /runs/demo/v3-20260101-100000/checkpoint-40",
              "Traceback (most recent call last):",
              '  File "/opt/swift/cli/sft.py", line 10, in <module>',
              "RuntimeError: CUDA error: an illegal memory access was encountered"]
    series, words = _read(tmp_path, lines)
    assert series.step == 40
    assert "done" not in words


def test_an_ms_swift_run_that_logged_its_end_is_done(tmp_path: Path) -> None:
    """ms-swift's sft log: its trainer's dicts with 'global_step', the Train bar at 100%, the train_runtime dict, the
    bar's last redraw, then its last words: the run is over at its last step."""
    lines = [f"{{'loss': {1.2 - s / 100:.4f}, 'acc': 0.61, 'grad_norm': 0.9, 'learning_rate': 1e-05, "
             f"'memory(GiB)': 12.5, 'train_speed(iter/s)': 0.31, 'epoch': {s / 20:.2f}, 'global_step': {s}}}"
             for s in range(5, 61, 5)]
    lines += ["Train: 100%|██████████| 60/60 [03:10<00:00,  3.17s/it]",
              "{'train_runtime': 190.4, 'train_samples_per_second': 2.5, 'train_steps_per_second': 0.315, "
              "'train_loss': 0.9, 'epoch': 3.0, 'global_step': 60}",
              "Train: 100%|██████████| 60/60 [03:11<00:00,  3.19s/it]",
              "[INFO:swift] last_model_checkpoint: /runs/demo/v2-20260101-100000/checkpoint-60",
              "[INFO:swift] best_model_checkpoint: /runs/demo/v2-20260101-100000/checkpoint-60",
              "[INFO:swift] End time of running main: 2026-01-01 10:30:00.123456"]
    series, words = _read(tmp_path, lines)
    assert series.step == 60
    assert words == "step 60 of 60: done"
