"""General mechanisms of the progress reader, round BB (issue [progress-real]): a count that reached its total and
then an evaluation that names a later epoch is an epoch's count, not the run's; the early Megatron-DeepSpeed loss
field spelled with a hyphen. Every line here is written for the test, in the layout the named program's format
strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- an epoch's count, the epoch said on its evaluation


def _fit_lines(epoch: int, last: int, per_epoch: int = 400, every: int = 40) -> list[str]:
    head = "2024-05-02 11:{:02d}:00,120 - INFO - "
    lines = [head.format(i % 60) + f"MyEncoder.fit() : [Iter {i} / {per_epoch}] loss: {0.5 + i / 10000}"
             for i in range(every, last + 1, every)]
    lines.append(head.format(59) + "sentence_transformers.SentenceTransformer : Save model to out/ckpt/1200")
    lines.append(head.format(59) + f"my.trainer : Epoch {epoch} evaluation <my.evaluation.Evaluator object at "
                 "0x7f00aa11bb22>")
    lines.append(head.format(59) + "my.evaluate : Encoding Batch 3/8...")
    return lines


def test_a_count_at_its_total_then_a_later_epochs_evaluation_counts_epochs(tmp_path: Path) -> None:
    """A SentenceTransformer subclass's fit() logging '[Iter {i} / {steps_per_epoch}] loss: {loss}' every tenth of
    an epoch (no epoch on it: the count starts again each epoch), then after the epoch's last batches the save and
    'Epoch {epoch} evaluation {evaluator}' (epochs from 0). Epoch 2 is evaluated: the count was that epoch's, the
    run has gone on for three epochs and its length is unknown. No finish time of a run that is not finishing."""
    series, words = _read(tmp_path, _fit_lines(2, 400))
    assert series.samples[-1].step == 2
    assert "finishes" not in words and "done" not in words and "of 400" not in words
    assert training_loss(series.metrics) == ("loss", 0.54)


def test_the_first_epochs_evaluation_leaves_the_count_the_runs(tmp_path: Path) -> None:
    """The same lines, evaluated at epoch 0: a one-epoch run's count is the run's own (nothing says more epochs)."""
    _, words = _read(tmp_path, _fit_lines(0, 400))
    assert "of 400" in words


def test_a_later_epochs_evaluation_before_the_count_reached_its_total_changes_nothing(tmp_path: Path) -> None:
    """An evaluation that names epoch 2 while the count is far from its total (an evaluation every N steps, named
    by some other count): the count stays the run's."""
    _, words = _read(tmp_path, _fit_lines(2, 200))
    assert "of 400" in words


# ---------------------------------------------------------------- Megatron-DeepSpeed's "lm-loss"


def test_the_early_megatron_deepspeed_lm_loss_with_a_hyphen_is_the_loss() -> None:
    """Early Megatron-DeepSpeed's training_log() with DeepSpeed's pipeline engine: ' iteration {:8d}/{:8d} |', then
    ' {key}: {:.6E} |' for each entry of its loss dict, here 'lm-loss' (a hyphen), before ' loss scale: {:.1f} |'."""
    point = parse_line(" iteration       12/     800 | consumed samples:         3072 | elapsed time per iteration "
                       "(ms): 2450.1 | learning rate: 4.500E-05 | global batch size:   256 | lm-loss: 8.412345E+00 |"
                       " loss scale: -1.0 | grad norm: 0.000 | number of skipped iterations:   0 |")
    assert point is not None and point.step == 12 and point.total == 800
    assert training_loss(point.metrics) == ("lm-loss", 8.412345)
