"""General mechanisms of the progress reader, round LL (issue [progress-real]): LLaMA-Factory's trainer_log.jsonl
written by two writers at once and its record of the Trainer's summary at the end; a hand-written loop's epoch line
that names its last epoch after that epoch's step lines. Every line here is written for the test, in the layout the
named program's format strings give, with values of our own."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- LLaMA-Factory's trainer_log.jsonl


def _record(step: int, total: int, loss: float | None, elapsed_s: int, per_epoch: float = 40.0) -> str:
    """LLaMA-Factory src/llamafactory/train/callbacks.py, LogCallback.on_log(): dict(current_steps=, total_steps=,
    loss=, eval_loss=, predict_loss=, reward=, accuracy=, lr=, epoch=, percentage=round(cur / max * 100, 2),
    elapsed_time=, remaining_time=) with the None values left out, json.dumps'd one a line (_write_log)."""
    rec: dict[str, object] = {"current_steps": step, "total_steps": total}
    if loss is not None:
        rec |= {"loss": loss, "lr": 3e-5 * (1 - step / total)}
    rec |= {"epoch": step / per_epoch, "percentage": round(step / total * 100, 2),
            "elapsed_time": f"0:{elapsed_s // 60:02d}:{elapsed_s % 60:02d}", "remaining_time": "0:05:00"}
    return json.dumps(rec)


def test_two_writers_one_record_behind_are_no_restarts(tmp_path: Path) -> None:
    """LogCallback.on_log() in two processes that both append to the same trainer_log.jsonl, one of them a record
    behind: 60, 70, 60, 80, 70, 90, ... Each record of the step before the last one read, one logging interval back,
    is the other writer's copy, not a restart; the run's step is the furthest one."""
    lines = [_record(s, 200, 1.5 - s / 1000, s) for s in (10, 20, 30, 40, 50)]
    for s in range(60, 130, 10):
        lines += [_record(s, 200, 1.5 - s / 1000, s), _record(s - 10, 200, 1.5 - (s - 10) / 1000, s)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (120, 200, 0)


def test_a_resume_from_a_checkpoint_among_copied_records_is_one_restart(tmp_path: Path) -> None:
    """The same file after the job is resumed from checkpoint-100: the records go back to 110 (three intervals
    back), elapsed_time from near zero, each written twice by the two writers: one restart, the copies none."""
    lines = [_record(s, 200, 1.5 - s / 1000, s) for s in range(10, 140, 10)]
    for s in range(110, 160, 10):
        lines += [_record(s, 200, 1.2 - s / 1000, s - 100)] * 2
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (150, 1)


def test_the_trainer_summary_record_ends_the_run(tmp_path: Path) -> None:
    """transformers' Trainer logs its summary (train_runtime, train_loss, epoch) after its loop on a normal return;
    LogCallback.on_log() keeps only its epoch: a record with no loss and no lr, current_steps the Trainer's last
    global step (one short of total_steps where the last epoch's batches fall short). The run is done."""
    lines = [_record(s, 240, 1.0 - s / 1000, s) for s in range(10, 240, 10)]
    series, words = _read(tmp_path, [*lines, _record(239, 240, None, 250)])
    assert (series.step, series.run_total, series.ended) == (239, 240, True)
    assert "done" in words


def test_an_evaluation_record_or_a_cut_file_is_no_end(tmp_path: Path) -> None:
    """An evaluation's record (eval_loss, no loss) and a file cut after a step's record say nothing of the end."""
    lines = [_record(s, 240, 1.0 - s / 1000, s) for s in range(10, 130, 10)]
    evaluation = json.loads(_record(120, 240, None, 125))
    evaluation = {"current_steps": 120, "total_steps": 240, "eval_loss": 0.95, **{
        k: evaluation[k] for k in ("epoch", "percentage", "elapsed_time", "remaining_time")}}
    series, words = _read(tmp_path, [*lines, json.dumps(evaluation)])
    assert not series.ended and "done" not in words
    series, words = _read(tmp_path, lines)
    assert not series.ended and "done" not in words


# ---------------------------------------------------------------- a loop's epoch line of its last epoch


def _finch(epochs: int, steps: int, upto: tuple[int, int] | None = None, summary_last: bool = True) -> list[str]:
    """A hand-written TensorFlow fit loop (zwjyyc/finch, its text classifiers' fit()): print("Epoch %d/%d | Step
    %d/%d | train_loss: %.4f | train_acc: %.4f | lr: %.4f" % ...) every 40 steps, then after the epoch's evaluation
    print("Epoch %d/%d | train_loss: %.4f | train_acc: %.4f | test_loss: %.4f | test_acc: %.4f | lr: %.4f" % ...)."""
    lines = ["Train 9000 samples | Test 3000 samples"]
    for e in range(1, epochs + 1):
        for s in range(40, steps + 1, 40):
            lines.append(f"Epoch {e}/{epochs} | Step {s}/{steps} | train_loss: {0.9 - e / 10 - s / 2000:.4f} | "
                         f"train_acc: 0.7500 | lr: 0.0020")
            if upto == (e, s):
                return lines
        if e < epochs or summary_last:
            lines.append(f"Epoch {e}/{epochs} | train_loss: {0.8 - e / 10:.4f} | train_acc: 0.8000 | test_loss: "
                         f"0.4100 | test_acc: 0.8300 | lr: 0.0020")
    return lines


def test_the_epoch_line_of_the_last_epoch_ends_the_run(tmp_path: Path) -> None:
    """The loop's epoch line "Epoch 3/3 | train_loss ... | test_acc ..." after its last epoch's step lines: that
    epoch's batches and evaluation are over, the run is done, at the last step printed (2 x 141 + 120)."""
    series, words = _read(tmp_path, _finch(3, 141))
    assert (series.step, series.run_total, series.ended) == (2 * 141 + 120, 3 * 141, True)
    assert "done" in words


def test_a_log_cut_in_its_last_epoch_is_not_done(tmp_path: Path) -> None:
    """Cut after a step line of the last epoch, or after the last epoch's step lines before its epoch line (its
    evaluation under way), or at an earlier epoch's line: not done."""
    for lines in (_finch(3, 141, upto=(3, 80)), _finch(3, 141, summary_last=False), _finch(3, 141)[:-5]):
        series, words = _read(tmp_path, lines)
        assert not series.ended and "done" not in words


# ---------------------------------------------------------------- Keras 1.x's epoch line at verbose=2


def test_keras_1_epoch_line_at_verbose_2_gives_the_loss(tmp_path: Path) -> None:
    """keras-team/keras 1.x, keras/utils/generic_utils.py, Progbar.update() at verbose=2, once the epoch reaches its
    target: info = '%ds' % (now - self.start), then ' - %s:' % k and ' %.4f' % avg of each metric, one line after
    the epoch's "Epoch %d/%d" header. Its loss is the run's latest; the run stays at its epoch."""
    lines = ["Train on 48000 samples, validate on 6000 samples"]
    for e in range(1, 5):
        lines += [f"Epoch {e}/9", f"{412 + e}s - loss: {0.9 - e / 10:.4f} - acc: 0.8123 - val_loss: 0.7001 - val_acc: "
                  f"0.7702"]
    series, _ = _read(tmp_path, lines)
    assert series.step == 4 and series.metrics.get("loss") == 0.5
    assert series.metrics.get("val_loss") == 0.7001
