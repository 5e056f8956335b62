"""General mechanisms of the progress reader, round NN (issue [progress-real], set ii's misses, part 1): the
gradient-boosting libraries' evaluation logs (XGBoost's, LightGBM's) as the run's boosting rounds, and LightGBM's
end words after its last round. Every line here is written for the test, in the layout the named program's format
strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import run_ended
from tests.support.progress_logs import read_lines as _read


def test_an_xgboost_evaluation_line_is_its_boosting_round() -> None:
    """XGBoost's EvaluationMonitor (python-package callback.py) and learner.cc's EvalOneIter: f"[{epoch}]" then
    f"\\t{data}-{metric}:{score:.5f}" for each watched set and metric, rounds from 0 as printed. A metric on a set is
    an evaluation of the model after the round, no training loss."""
    point = parse_line("[42]\tdtrain-logloss:0.31416\tholdout-logloss:0.27183")
    assert point is not None and point.form == "xgboost" and point.step == 42
    assert training_loss(point.metrics) is None
    point = parse_line("[7]\tcv-mae:1.25000+0.01250")
    assert point is not None and point.step == 7


def test_a_lightgbm_evaluation_line_is_its_boosting_round() -> None:
    """LightGBM's log_evaluation callback (callback.py): f"[{env.iteration + 1}]\\t{result}", each result
    "{set}'s {metric}: {score:g}" joined by tabs, rounds from 1. AUC is no loss."""
    point = parse_line("[300]\tfit's auc: 0.91234\tcheck's auc: 0.88765")
    assert point is not None and point.form == "lightgbm" and point.step == 300
    assert training_loss(point.metrics) is None


def test_lightgbm_end_words_end_the_run() -> None:
    """LightGBM's early_stopping callback prints "Did not meet early stopping. Best iteration is:" after the round
    budget's last round, "Early stopping, best iteration is:" when the score stopped improving, each before it raises
    EarlyStopException, which train() catches to return the booster: a normal end. A setting's words are not."""
    assert run_ended("Did not meet early stopping. Best iteration is:")
    assert run_ended("Early stopping, best iteration is:")
    assert not run_ended("Training until validation scores don't improve for 40 rounds")


def test_lightgbm_best_round_restated_after_its_end_is_no_step(tmp_path: Path) -> None:
    """After "Did not meet early stopping. Best iteration is:" LightGBM prints the best round's line again
    ("[%d]\\t%s" of an earlier round): no step back, no restart; the run's step is its last round, and it is done."""
    lines = ["Training until validation scores don't improve for 40 rounds"]
    lines += [f"[{i}]\tfit's auc: {0.8 + i / 10000:g}\tcheck's auc: {0.79 + i / 20000:g}" for i in range(20, 420, 20)]
    lines += ["Did not meet early stopping. Best iteration is:", "[388]\tfit's auc: 0.8388\tcheck's auc: 0.8094",
              "Model written to out/gbm.txt"]
    series, words = _read(tmp_path, lines)
    assert series.step == 400 and not series.restarts
    assert "done" in words


def test_a_cut_lightgbm_log_is_not_done(tmp_path: Path) -> None:
    """The same rounds with no end words after them: the run is not over."""
    lines = [f"[{i}]\tfit's auc: {0.8 + i / 10000:g}" for i in range(20, 420, 20)]
    series, words = _read(tmp_path, lines)
    assert series.step == 400 and "done" not in words
