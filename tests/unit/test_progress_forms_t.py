"""General mechanisms of the progress reader, round t (issue [progress-real]): what sets p and q showed missing, each
closed as a rule of its own, not a case per log. Every line here is written for the test, in the layout of the
program named (its source named with it), with values of our own."""

from __future__ import annotations

import json
from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.series import estimate
from tests.support.progress_logs import read_series as _read

# ---------------------------------------------- a record that says it is the validation's is not the training's


def _mmcv_train(epoch: int, it: int) -> str:
    return json.dumps({"mode": "train", "epoch": epoch, "iter": it, "lr": 2e-4, "memory": 4100,
                       "data_time": 0.03, "loss": round(0.9 - epoch / 50 - it / 1000, 5), "time": 0.41})


def test_a_json_record_of_mode_val_is_no_training_point() -> None:
    """open-mmlab/mmcv, mmcv/runner/hooks/logger/text.py (TextLoggerHook.log: ``log_dict = OrderedDict(
    mode=self.get_mode(runner), epoch=..., iter=cur_iter)``, dumped to the *.log.json; get_mode says "val" for the
    validation's record, its iter the validation's batches): the record is not a step of the training."""
    val = parse_line(json.dumps({"mode": "val", "epoch": 4, "iter": 7, "lr": 2e-4, "mAP": 0.412, "loss": 1.5}))
    assert val is not None and val.phase != "train" and val.step is None
    train = parse_line(_mmcv_train(4, 7))
    assert train is not None and train.phase == "train" and train.step == 7


def test_a_validation_record_between_epochs_is_no_restart(tmp_path: Path) -> None:
    """open-mmlab/mmcv, mmcv/runner/hooks/logger/text.py (as above; EvalHook runs after every second epoch here):
    the validation's record, its iter lower than the training's last, neither starts the run again nor gives its
    loss."""
    lines = [_mmcv_train(e, i) for e in (1, 2) for i in range(1, 9)]
    lines.append(json.dumps({"mode": "val", "epoch": 2, "iter": 3, "lr": 2e-4, "AP": 0.31, "loss": 5.0}))
    lines += [_mmcv_train(3, i) for i in range(1, 5)]
    series = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.metrics.get("loss") == round(0.9 - 3 / 50 - 4 / 1000, 5)


# ---------------------------------------------- a global count beside an inner loop's is the run's


def _minillm(inner: int, ppo: int, glob: int, loss: float) -> str:
    return (f"train | epoch   0 | inner iter: {inner:3d}/{6:3d} | ppo epoch: {ppo:2d}/{2:2d} | global iter: "
            f"{glob:6d}/{2400:6d}| tot_loss: {loss:.4f} | rl_loss: 0.0312 | pt_loss: {loss - 0.03:.4f} "
            f"| lr: 2.5000e-06 | scale: 512.00 | time: 1.402 | step time: 0.000")


def test_a_global_iter_counter_is_the_runs_beside_an_inner_iter() -> None:
    """microsoft/LMOps, minillm/minillm/trainer.py (PPOTrainer.train, get_log: ``"train | epoch {:3d} | inner iter:
    {:3d}/{:3d} | ppo epoch: {:2d}/{:2d} | global iter: {:6d}/{:6d}"``, then "| key: value" pairs): the global count
    and its total (self.total_steps) are the run's, not the inner loop's batch of its store."""
    point = parse_line(_minillm(4, 2, 41, 2.7113))
    assert point is not None and (point.step, point.total) == (41, 2400)
    assert point.metrics.get("tot_loss") == 2.7113


def test_a_global_iteration_goes_on_as_the_inner_loop_starts_again(tmp_path: Path) -> None:
    """microsoft/LMOps, minillm/minillm/trainer.py (as above: the inner iter counts each store's batches from 0 for
    every ppo epoch, the global iter goes on): no restart, the run's step the global count."""
    lines, g = [], 0
    for ppo in (1, 2):
        for inner in range(6):
            g += 1
            lines.append(_minillm(inner, ppo, g, 2.9 - g / 100))
    series = _read(tmp_path, lines)
    assert (series.step, series.run_total, series.restarts) == (12, 2400, [])



def test_tot_loss_is_the_training_loss_beside_its_parts(tmp_path: Path) -> None:
    """microsoft/LMOps, minillm/minillm/trainer.py (``stats["tot_loss"] = loss.item()``, the rl_loss plus lm_coef times
    pt_loss, printed first of get_log's keys): the summed loss is the run's, not one of its parts."""
    series = _read(tmp_path, [_minillm(i, 1, i + 1, 3.1 - i / 10) for i in range(5)])
    assert training_loss(series.metrics) == ("tot_loss", 2.7)


# ---------------------------------------------- the YOLO family's epoch table without its memory column


def _yolov6_row(epoch: int, last: int, n: int, total: int, cut: bool = False) -> str:
    desc = ("%10s" + " %10.4g" + "%10.4g" * 3) % (f"{epoch}/{last}", 0.00125, 1.402 - epoch / 40, 0, 1.733 - epoch / 30)
    bar = "█" * (10 * n // total) + " " * (10 - 10 * n // total)
    tail = "[00:1" if cut else "[00:14<00:00,  3.12it/s]"
    return f"{desc}: {100 * n // total:3d}%|{bar}| {n}/{total} {tail}"


def test_a_yolov6_row_counts_the_runs_epochs_from_zero() -> None:
    """meituan/YOLOv6, yolov6/core/engine.py (Trainer.print_details: ``self.pbar.set_description(('%10s' + ' %10.4g'
    + '%10.4g' * self.loss_num) % (f'{self.epoch}/{self.max_epoch - 1}', lr, *self.mean_loss))``, the bar drawn with
    ncols=NCOLS, so cut at the terminal's width): the row's epoch of the last epoch's index, its bar the epoch's
    batches."""
    point = parse_line(_yolov6_row(3, 19, 25, 48))
    assert point is not None and point.counts_epochs and (point.step, point.total) == (3, 19)
    assert point.batches == 48
    cut = parse_line(_yolov6_row(4, 19, 48, 48, cut=True))
    assert cut is not None and cut.counts_epochs and (cut.step, cut.total) == (4, 19)


def test_a_yolov6_run_that_completed_its_epochs_is_done(tmp_path: Path) -> None:
    """meituan/YOLOv6, tools/train.py (its Namespace with epochs=E) and yolov6/core/engine.py (the header
    "Epoch lr iou_loss dfl_loss cls_loss", one row per epoch "e/E-1", then Trainer.strip_model's "Training completed
    in N hours."): the run is at its E epochs of E, done."""
    lines = ["training args are: Namespace(data_path='data/parts.yaml', batch_size=16, epochs=6, workers=4)",
             "Training start..."]
    for e in range(6):
        lines += ["", ("%10s" * 5) % ("Epoch", "lr", "iou_loss", "dfl_loss", "cls_loss"),
                  _yolov6_row(e, 5, 48, 48, cut=True), f"Epoch: {e} | mAP@0.5: 0.{e + 2}1000 | mAP@0.50:0.95: 0.1"]
    lines += ["", "Training completed in 0.041 hours."]
    series = _read(tmp_path, lines)
    guess = estimate(series, now=1e9, time_left_s=None)
    assert (guess.step, guess.total) == (6, 6) and "done" in guess.words


# ---------------------------------------------- wandb's word of a clean exit ends a run at its total


def _bar_run(upto: int, total: int) -> list[str]:
    lines = []
    for s in range(10, upto + 1, 10):
        lines.append(f"{100 * (s - 1) // total:3d}%|█████     | {s - 1}/{total} [00:{s // 10:02d}<00:10,  9.50it/s]"
                     f"[2024-03-02 10:00:{s // 10:02d}][INFO][trainer:512] - step={s} loss={2.5 - s / 400:.4f} dt=71.2")
    lines.append(f"{100 * upto // total:3d}%|██████████| {upto}/{total} [00:21<00:00,  9.50it/s]")
    return [*lines, "[2024-03-02 10:01:00][INFO][trainer:600] - Saving checkpoint to: /scratch/run7"]


def test_wandbs_success_at_the_runs_total_says_it_is_done(tmp_path: Path) -> None:
    """wandb/wandb, wandb/sdk/wandb_run.py (Run._display_exit_status: "Waiting for W&B process to finish..." then
    "(success)" where the exit code is 0, "(failed N)" else, printed at the process's exit or wandb.finish()): the
    program exited cleanly at its total, so its training is over."""
    series = _read(tmp_path, [*_bar_run(200, 200), "wandb: Waiting for W&B process to finish... (success).",
                              "wandb: Run summary:", "wandb:   train/loss 2.0"])
    guess = estimate(series, now=1e9, time_left_s=None)
    assert (guess.step, guess.total) == (200, 200) and "done" in guess.words


def test_wandbs_failure_or_a_success_short_of_the_total_is_no_end(tmp_path: Path) -> None:
    """wandb/wandb, wandb/sdk/wandb_run.py (as above): "(failed 1)" is no clean exit; and a success said short of the
    run's total (wandb.finish() of one run among several in a process) is not the run's end."""
    failed = _read(tmp_path, [*_bar_run(200, 200), "wandb: Waiting for W&B process to finish... (failed 1). Press "
                                                   "Control-C to abort syncing."])
    assert not failed.ended
    short = _read(tmp_path, [*_bar_run(120, 200), "wandb: Waiting for W&B process to finish... (success)."])
    guess = estimate(short, now=1e9, time_left_s=None)
    assert not short.ended and "done" not in guess.words
