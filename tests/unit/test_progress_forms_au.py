"""General mechanisms of the progress reader, round PP (issue [progress-real]): a script that trains several models
one after another in one process, each model's counter going back to its start right after the previous model's
result line (its test score). That is a new fit, no restart, and the run read is the last fit's; a relaunch (a line
that says a start, a Python warning between) stays a restart. Every line here is written for the test, in the layout
the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import training_loss
from tests.support.progress_logs import read_lines as _read


def _gnn_fit(name: str, losses: list[float], accuracy: float) -> list[str]:
    """A hand-written PyTorch Geometric loop (node classification): print(f'Epoch: {epoch:03d}, Loss: {loss:.4f}')
    every 150 epochs, then print(f'Model: {name}') and print(f'Test Accuracy: {acc:.4f}') after its loop."""
    return [*(f"Epoch: {150 * i:03d}, Loss: {loss:.4f}" for i, loss in enumerate(losses)),
            f"Model: {name}", f"Test Accuracy: {accuracy:.4f}"]


def test_models_fitted_one_after_another_after_their_test_score_are_no_restart(tmp_path: Path) -> None:
    """Three models of the same loop in one process, each 'Epoch: %03d, Loss: %.4f' from 000 after the last one's
    'Model: %s' / 'Test Accuracy: %.4f': no restart; the run is the last fit's (its last epoch, its last loss)."""
    lines = [*_gnn_fit("GCN", [1.61, 0.42, 0.21, 0.12], 0.7315),
             *_gnn_fit("GAT", [1.63, 0.38, 0.19, 0.09], 0.7522),
             *_gnn_fit("SAGE", [1.58, 0.35, 0.17, 0.0731], 0.7410)]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.step == 450
    assert training_loss(series.metrics) == ("Loss", 0.0731)


def test_a_launch_that_says_its_start_after_the_score_is_a_restart(tmp_path: Path) -> None:
    """The same loop's score, then a line that says the program started ("Run started: <date>", a relaunch appending
    to the same file): the count that goes back is a restart, as before."""
    lines = [*_gnn_fit("GCN", [1.61, 0.42, 0.21, 0.12], 0.7315), "Run started: 2026-03-02 10:11:12",
             *_gnn_fit("GCN", [1.60, 0.41, 0.22, 0.11], 0.7330)]
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 1


def test_a_python_warning_after_the_score_is_a_restart(tmp_path: Path) -> None:
    """warnings.showwarning's '<file>:<line>: UserWarning: <message>' between the score and the next count: a
    program's start (its imports warn), not the next fit of the same process."""
    lines = [*_gnn_fit("GCN", [1.61, 0.42, 0.21, 0.12], 0.7315),
             "/opt/env/lib/python3.11/site-packages/torch_geometric/typing.py:68: UserWarning: An issue occurred",
             *_gnn_fit("GCN", [1.60, 0.41, 0.22, 0.11], 0.7330)]
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 1


def test_forecasting_models_after_their_smape_score_are_no_restart(tmp_path: Path) -> None:
    """A forecasting comparison's PyTorch loops, one model after another in one process: print('model: ' + name),
    then print(f'[{e}/{epochs}] Training loss: {train:.4f}\\t Validation loss: {val:.4f}'), then after the loop
    print('smape score: ', score) and a blank line; the next model counts from its own first epoch again."""
    lines = ["model: nn.Linear", *(f"[{e}/6] Training loss: {9.5 - e / 2:.4f}\t Validation loss: {12.0 - e / 3:.4f}"
                                   for e in range(1, 7)),
             "smape score:  41.2034", "",
             "model: GRU", *(f"[{e}/30] Training loss: {7.25 - e / 10:.4f}\t Validation loss: {8.5 - e / 10:.4f}"
                             for e in range(5, 31, 5)),
             "smape score:  30.5561", ""]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.step == 30
    assert training_loss(series.metrics) == ("Training_loss", 4.25)


def test_xgboost_counting_from_zero_again_under_other_eval_names_is_another_fit(tmp_path: Path) -> None:
    """XGBoost's EvaluationMonitor ('[%d]\\t%s-%s:%.5f' per evaluation set and metric): a native xgb.train fit with a
    "train" watchlist, then an XGBRegressor fit in the same process whose eval_set is named "validation_0", from
    [0] again after its learner.cc warning. Other names: another model's fit, not a relaunch and not a late
    evaluation record: the run is the second fit's rounds as printed, no restart, no loss (an eval-set metric)."""
    lines = [*(f"[{i}]\ttrain-rmse:{9.0 - i / 4:.5f}" for i in range(12)),
             "[09:15:02] WARNING: /work/xgboost/src/learner.cc:767: ", 'Parameters: { "silent" } are not used.', "",
             *(f"[{i}]\tvalidation_0-rmse:{7.5 - i / 5:.5f}" for i in range(9))]
    series, _ = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.step == 8
    assert training_loss(series.metrics) is None


def test_xgboost_counting_from_zero_again_under_the_same_names_stays_a_restart(tmp_path: Path) -> None:
    """The same EvaluationMonitor lines, the same "train-rmse" name from [0] again: a launch again of the same
    program (its fit evaluates the same sets), a restart as before."""
    lines = [*(f"[{i}]\ttrain-rmse:{9.0 - i / 4:.5f}" for i in range(12)),
             *(f"[{i}]\ttrain-rmse:{9.1 - i / 4:.5f}" for i in range(5))]
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 1
