"""General mechanisms of the progress reader, round BB (issue [progress-real]): a count that reached its total and
then an evaluation that names a later epoch is an epoch's count, not the run's; the early Megatron-DeepSpeed loss
field spelled with a hyphen. Every line here is written for the test, in the layout the named program's format
strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss, unheader
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


# ---------------------------------------------------------------- YOLOX: an epoch's iterations across an elision


def _yolox(epoch: int, it: int, epochs: int = 40, per: int = 300) -> str:
    """YOLOX trainer.py, Trainer.after_iter() through loguru's default format, indented as a README pastes it:
    '{time} | INFO     | yolox.core.trainer:after_iter:261 - epoch: {}/{}, iter: {}/{}, {mem}, {time}, {loss},
    lr: {:.3e}, size: {:d}, {eta}'."""
    return (f"    2024-02-01 08:{it % 60:02d}:10.250 | INFO     | yolox.core.trainer:after_iter:261 - epoch: "
            f"{epoch}/{epochs}, iter: {it}/{per}, mem: 5120Mb, iter_time: 0.210s, data_time: 0.002s, total_loss: "
            f"{3.0 + it / 1000:.1f}, iou_loss: 1.5, l1_loss: 0.0, conf_loss: 0.9, cls_loss: 0.6, lr: 1.250e-04, "
            f"size: 640, ETA: 0:10:00")


def test_an_epochs_iterations_beyond_its_share_of_the_total_are_that_epochs(tmp_path: Path) -> None:
    """YOLOX's lines of epoch 1's iterations 20 to 120 (of 300), an elision ("..."), then epoch 40's last ones:
    the iteration went on across the epochs, short of its total, but epoch 1 alone said more iterations than 300
    over 40 epochs could give it: each epoch's iterations, the run's step 39 x 300 + 280 of 40 x 300."""
    lines = [_yolox(1, i) for i in range(20, 121, 20)] + ["    ..."] + [_yolox(40, i) for i in range(200, 281, 20)]
    series, _ = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (39 * 300 + 280, 40 * 300)


def test_a_counter_within_its_share_of_the_total_stays_the_runs(tmp_path: Path) -> None:
    """The same form where the iterations said in an epoch fit its share (epoch 1's 2 to 6 of 300 over 40 epochs:
    under 7.5 each): a counter of the whole run's going on across the epochs, its total the run's."""
    lines = [_yolox(1, i) for i in range(2, 7, 2)] + [_yolox(9, i) for i in range(62, 67, 2)]
    series, _ = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (66, 300)


def test_yolox_says_its_training_is_done(tmp_path: Path) -> None:
    """YOLOX trainer.py, Trainer.after_train(): 'Training of experiment is done and the best AP is {:.2f}' after
    the last epoch's save: the run is over."""
    lines = [_yolox(40, i) for i in range(240, 281, 20)]
    lines.append("    2024-02-01 09:00:00.100 | INFO     | yolox.core.trainer:after_train:196 - Training of "
                 "experiment is done and the best AP is 37.50")
    _, words = _read(tmp_path, lines)
    assert "done" in words


def test_yolox_says_its_training_is_done_after_a_crash_too(tmp_path: Path) -> None:
    """YOLOX trainer.py, Trainer.train(): after_train() runs in the ``finally`` around train_in_epoch(), so its
    'Training of experiment is done ...' is logged when an epoch's evaluation raises as well, and the error's
    traceback follows it: the run stopped, it is not done."""
    lines = [_yolox(5, i) for i in range(40, 81, 20)]
    lines.append("    2024-02-01 09:00:00.100 | INFO     | yolox.core.trainer:after_train:196 - Training of "
                 "experiment is done and the best AP is 0.00")
    lines += ["Traceback (most recent call last):",
              '  File "tools/train.py", line 141, in <module>',
              "    launch(main, num_gpu)",
              "IndexError: index 3 is out of bounds for axis 0 with size 3"]
    _, words = _read(tmp_path, lines)
    assert "done" not in words and "stopped" in words


# ---------------------------------------------------------------- OLMo's rich handler: its location with the rank


def test_olmos_rich_location_with_its_rank_comes_off() -> None:
    """OLMo's rank-0 console through its rich handler: '[{time}] {LEVEL}  [{logger}:{lineno}, rank={local_rank}]'
    before the message; the record's message is what is read."""
    assert unheader("[2026-03-04 05:06:07] INFO     [olmo.train:903, rank=0] [step=7/40000]") == "[step=7/40000]"
    assert unheader("[2026-03-04 05:06:07] INFO     [olmo.train:903, rank=0] Saving checkpoint") \
        == "Saving checkpoint"


def test_olmo_step_headers_and_their_indented_metrics_give_the_step_and_loss(tmp_path: Path) -> None:
    """OLMo's trainer.log_metrics_to_console() under that handler: the '[step={step}/{max_steps}]' record, then one
    indented '{name}={value}' line per metric (numbers with thousands commas): the step of the total and the
    cross-entropy loss of the last record."""
    lines: list[str] = []
    for step in range(1, 5):
        lines += [f"[2026-03-04 05:06:0{step}] INFO     [olmo.train:903, rank=0] [step={step}/40000]",
                  f"    train/CrossEntropyLoss={9.5 - step / 10:.2f}", "    train/Perplexity=12,345",
                  f"    throughput/total_tokens={step * 1_048_576:,}"]
    series, words = _read(tmp_path, lines)
    assert series.samples[-1].step == 4 and series.total == 40000
    assert training_loss(series.metrics) == ("train/CrossEntropyLoss", 9.1)
