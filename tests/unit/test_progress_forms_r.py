"""General mechanisms of the progress reader, round r (issue [progress-real]): gaps that spent entries showed, closed
as rules read from the programs that print the lines. Each test names the source file and function whose format
strings its lines follow; every line is written for the test, in that layout, with values of our own."""

from __future__ import annotations

import json
from pathlib import Path

from ntui.core.progress.lines import evaluation_record, parse_line, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a loop's epoch summary that names its stage


def test_an_epoch_summary_naming_its_training_stage_is_read() -> None:
    """A hand-written loop with stages (MeshMAE's pretraining script, train.py: print(f"Epoch {epoch} Pretrain |
    Loss: {loss:.6f} | Best Loss: ... | Best Epoch: ... | Time: ...")): the stage's name between the epoch's number
    and its fields; the loss is the line's first, the best one a record's."""
    point = parse_line("Epoch 7 Pretrain | Loss: 0.512340 | Best Loss: 0.498100 | Best Epoch: 5 | Time: 0.4h")
    assert point is not None and point.counts_epochs and point.step == 7
    assert training_loss(point.metrics) == ("Loss", 0.51234)
    for line in ("Epoch 2 Finetune | Loss: 0.3310", "Epoch 2 Training, loss: 0.3310",
                 "Epoch 2 Fine-tuning - loss: 0.331"):
        point = parse_line(line)
        assert point is not None and point.step == 2 and training_loss(point.metrics) is not None, line


def test_an_epoch_summary_of_an_evaluation_is_not_the_training() -> None:
    """The same loops' evaluation summary ("Epoch 7 Val | Loss: ..."): not the training's loss."""
    assert parse_line("Epoch 7 Val | Loss: 0.640000 | Acc: 0.81") is None
    point = parse_line("Epoch 7 Validation | Loss: 0.640000")
    assert point is None or point.phase != "train"


# ---------------------------------------------------------------- an iteration counter that goes on across epochs


def _stats(epoch: int, epochs: int, it: int, its: int, loss: float) -> str:
    """utils/meters.py, TrainMeter.log_iter_stats of the PySlowFast family, as logging.log_json_stats prints it
    (sort_keys): "epoch": "{cur_epoch + 1}/{MAX_EPOCH}", "iter": "{cur_iter + 1}/{epoch_iters}"."""
    stats = {"_type": "train_iter", "epoch": f"{epoch}/{epochs}", "eta": "1 day, 2:03:04", "iter": f"{it}/{its}",
             "loss": round(loss, 6), "lr": 0.0001, "top1_err": 40.0}
    return "[05/02 10:00:00][INFO] logging.py:  95: json_stats: " + json.dumps(stats, sort_keys=True)


def test_an_iteration_counter_that_goes_on_across_epochs_is_the_runs(tmp_path: Path) -> None:
    """HyRSM's runs/train_net_few_shot.py, train_epoch: one pass over NUM_TRAIN_TASKS tasks, cur_epoch =
    cur_iter // STEPS_ITER, and train_meter.log_iter_stats(cur_epoch, cur_iter): its "iter" counts the whole pass
    (of NUM_TRAIN_TASKS), its "epoch" the block of STEPS_ITER tasks the iteration is in. The counter does not start
    again when the epoch goes on: it is the run's step, its total the run's."""
    lines = [_stats(1 + (it - 1) // 500, 8, it, 4000, 2.0 - it / 4000) for it in range(50, 1301, 50)]
    series, _ = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (1300, 4000)
    assert not series.restarts


def test_an_iteration_counter_of_each_epoch_still_counts_the_epochs_before(tmp_path: Path) -> None:
    """PySlowFast's slowfast/utils/meters.py, TrainMeter.log_iter_stats in its own train loop (tools/train_net.py,
    train_epoch: cur_iter from 0 in each epoch, epoch_iters = len(train_loader)): the counter starts again each
    epoch, the run's step is the epochs before times an epoch's iterations, plus this one's."""
    lines = [_stats(epoch, 8, it, 300, 1.0) for epoch in (1, 2, 3) for it in range(50, 301, 50)]
    lines += [_stats(4, 8, 100, 300, 0.9)]
    series, _ = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (3 * 300 + 100, 8 * 300)
    assert not series.restarts


# ---------------------------------------------------------------- an evaluation's record written after later steps


def _absl(clock: str, message: str) -> str:
    return f"I0305 {clock}.123456 140011 logging_writer.py:35] {message}"


def test_an_evaluation_record_is_told_from_a_training_one() -> None:
    """flax's examples/imagenet/train.py, train_and_evaluate: writer.write_scalars(step + 1, {f'eval_{key}': val
    ...}) at each epoch's end (some copies add the epoch, summary["ep"] = ep); clu's LoggingWriter.write_scalars
    prints "[%d] %s" of the step and the scalars "k=v". Every scalar an evaluation's (the epoch's aside): an
    evaluation's record; one training scalar among them makes it the training's."""
    for scalars in ("eval_accuracy=0.41, eval_loss=3.12", "ep=2.0, eval_accuracy=0.41, eval_loss=3.12",
                    "val/loss=3.1, test_acc=0.3"):
        point = parse_line(_absl("10:00:00", f"[2502] {scalars}"))
        assert point is not None and evaluation_record(point.metrics), scalars
    point = parse_line(_absl("10:00:00", "[2600] steps_per_second=3.5, train_accuracy=0.4, train_loss=3.05"))
    assert point is not None and point.step == 2600 and not evaluation_record(point.metrics)
    assert not evaluation_record({"ep": 2.0}) and not evaluation_record({"eval_loss": 3.1, "loss": 2.9})


def test_an_asynchronous_writers_late_evaluation_is_no_restart(tmp_path: Path) -> None:
    """The same loop with clu's default asynchronous writer (metric_writers.create_default_writer(asynchronous=True)):
    the evaluation's scalars at step 1251 may come after the training's of step 1300; the run goes on, no restart."""
    lines = []
    for step in range(100, 2701, 100):
        lines.append(_absl(f"10:{step // 100:02d}:00", f"[{step}] steps_per_second=3.6, train_accuracy=0.3, "
                                                        f"train_learning_rate=0.1, train_loss={6 - step / 1000}"))
        if step in (1300, 2600):
            lines.append(_absl(f"10:{step // 100:02d}:30", f"[{step // 1300 * 1251}] eval_accuracy=0.2, eval_loss=5.1"))
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 2700 and not series.restarts
    assert training_loss(series.metrics) == ("train_loss", 6 - 2700 / 1000)


# ---------------------------------------------------------------- icefall's rank label in its logger's header


def _icefall(clock: str, rank: int, message: str) -> str:
    """icefall/utils.py, setup_logger under torch.distributed: "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d]
    ({rank}/{world_size}) %(message)s"."""
    return f"2025-03-05 {clock},120 INFO [train.py:1011] ({rank}/4) {message}"


def test_icefalls_rank_label_is_no_count() -> None:
    """The rank label "(1/4)" after the header's "[train.py:N]" is the process's, not a step of a total: the params
    dict that train.py's run() logs (logging.info(params)) is no progress line, its training line reads as without
    the label."""
    params = "{'best_train_loss': inf, 'log_interval': 50, 'num_epochs': 12, 'start_epoch': 1, 'world_size': 4}"
    assert parse_line(_icefall("10:00:00", 1, params)) is None
    line = ("Epoch 3, batch 150, loss[loss=0.2011, simple_loss=0.181, pruned_loss=0.1593, over 18211.00 frames. ], "
            "tot_loss[loss=0.2104, simple_loss=0.1893, pruned_loss=0.1667, over 36001.50 frames. ], batch size: 96, "
            "lr: 8.12e-04, ")
    labelled, bare = parse_line(_icefall("10:05:00", 2, line)), parse_line(line)
    assert labelled is not None and bare is not None
    assert (labelled.step, labelled.epoch, labelled.counts_epochs) == (bare.step, bare.epoch, bare.counts_epochs)
    assert labelled.step == 3
    # after another bracket (a time's), a count in parentheses is still the loop's own
    point = parse_line("[2025-03-05 10:00:00] (30/200) loss 0.512")
    assert point is not None and (point.step, point.total) == (30, 200)


def test_an_icefall_run_on_four_ranks_counts_its_epochs_of_the_params(tmp_path: Path) -> None:
    """icefall's pruned_transducer_stateless*/train.py: run() logs the params (num_epochs) on every rank, then
    train_one_epoch's "Epoch {cur_epoch}, batch {batch_idx}, loss[...], tot_loss[...], batch size: n, lr: x" every
    log_interval batches, each rank's line labelled: the run counts epochs, of num_epochs."""
    params = "{'best_train_loss': inf, 'log_interval': 50, 'num_epochs': 12, 'start_epoch': 1, 'world_size': 4}"
    lines = [_icefall("10:00:00", rank, params) for rank in range(4)]
    for minute, (epoch, batch) in enumerate((e, b) for e in (1, 2) for b in range(0, 301, 50)):
        for rank in range(4):
            lines.append(_icefall(f"10:{minute + 1:02d}:{rank:02d}", rank,
                                  f"Epoch {epoch}, batch {batch}, loss[loss={0.3 - minute / 100:.4f}, over "
                                  "9000.00 frames. ], tot_loss[loss=0.3, over 18000.00 frames. ], batch size: 80, "
                                  "lr: 1.00e-03, "))
    series, _ = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (2, 12)
    assert not series.restarts


# ---------------------------------------------------------------- llama2.c's step line, behind ts(1)'s stamp


def test_llama2cs_step_line_is_read() -> None:
    """karpathy/llama2.c, train.py: print(f"{iter_num} | loss {lossf:.4f} | lr {lr:e} | {dt*1000:.2f}ms | mfu
    {running_mfu*100:.2f}%") every log_interval iterations (its copies leave the mfu out, or log it through
    logging.info): the count leading the line is the run's iteration."""
    for line in ("840 | loss 4.1250 | lr 5.120000e-04 | 1203.77ms | mfu 31.20%",
                 "840 | loss 4.1250 | lr 5.120000e-04 | 1203.77ms",
                 "2025-04-02 08:00:00,101 - INFO - 840 | loss 4.1250 | lr 5.120000e-04 | 1203.77ms"):
        point = parse_line(line)
        assert point is not None and point.step == 840, line
        assert training_loss(point.metrics) == ("loss", 4.125), line


def test_a_count_after_ts_stamp_is_no_year(tmp_path: Path) -> None:
    """moreutils' ts(1), default format "%b %d %H:%M:%S": the stamp has no year, and the count after it ("Mar 03
    04:05:06 1230 | loss ...") is the step's, not date(1)'s year (date(1) says its weekday and zone before one:
    "Tue Mar  3 04:05:06 UTC 2026")."""
    point = parse_line("Mar 03 04:05:06 1230 | loss 3.8438 | lr 6.728814e-04 | 6093.23ms")
    assert point is not None and point.step == 1230 and point.time is None
    assert point.clock == (3, 3, 4, 5, 6, 0.0)
    point = parse_line("Tue Mar  3 04:05:06 UTC 2026 step 40, loss 1.25")
    assert point is not None and point.time is not None and point.clock is None
    lines = [f"Mar 03 04:{minute:02d}:06 {minute * 10} | loss {5 - minute / 100:.4f} | lr 1.000000e-04 | 6000.00ms"
             for minute in range(0, 60)]
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 590 and not series.restarts
    assert series.samples[-1].time - series.samples[0].time == 59 * 60


# ---------------------------------------------------------------- the latest loss: an epoch's summary after its bar


def _epoch(epoch: int, running: float, mean: float) -> list[str]:
    """A hand-written loop (the mila-docs examples' main.py and many scripts): tqdm(train_loader, desc=f"Train epoch
    {epoch}") with progress_bar.set_postfix(loss=loss.item(), accuracy=...), then logger.info(f"Epoch {epoch}: Train
    loss: {train_loss:.3f} Val loss: {val_loss:.3f} accuracy: {val_accuracy:.2%}") of the epoch's means."""
    bar = "".join(f"\rTrain epoch {epoch}: {n * 100 // 200:3d}%|#####     | {n}/200 [00:05<00:05,  9.10it/s, "
                  f"loss={running + (200 - n) / 1000:.3f}, accuracy=0.700]" for n in (50, 100, 150, 200))
    return [bar, f"[2025-02-01 10:0{epoch}:00] INFO     Epoch {epoch}: Train loss: {mean:.3f} Val loss: 0.900 "
                 "accuracy: 70.00%"]


def test_an_epoch_summary_after_its_bar_says_the_latest_loss(tmp_path: Path) -> None:
    """The summary's mean, printed after the bar's last redraw, is the latest training loss; the next epoch's bar
    says its running loss again, the latest then."""
    series, _ = _read(tmp_path, _epoch(1, 0.8, 0.85) + _epoch(2, 0.6, 0.65))
    assert training_loss(series.metrics) == ("Train_loss", 0.65)
    series, _ = _read(tmp_path, _epoch(1, 0.8, 0.85) + _epoch(2, 0.6, 0.65)[:1])
    assert training_loss(series.metrics) == ("loss", 0.6)


# ---------------------------------------------------------------- DeepSpeed-Chat's RLHF step: its generation batches


def _ppo(epochs: int, per: int, upto: tuple[int, int]) -> list[str]:
    """DeepSpeed-Chat, training/step3_rlhf_finetuning/main.py: print_rank_0(f"Beginning of Epoch {epoch+1}/
    {args.num_train_epochs}, Total Generation Batches {min(len(prompt_train_dataloader), len(unsupervised_train_
    dataloader))}"), then for step, ... in enumerate(zip(...)): the throughput line, print_rank_0(f'epoch: {epoch}|
    step: {step}|ppo_ep: {ppo_ep+1}|act_loss: ...|cri_loss: ...|unsuper_loss: ...'), the average reward and a rule."""
    lines = []
    for epoch in range(upto[0] + 1):
        lines.append(f"Beginning of Epoch {epoch + 1}/{epochs}, Total Generation Batches {per}")
        for step in range(per if epoch < upto[0] else upto[1] + 1):
            lines += ["|E2E latency=5.10s |Gather latency=0.00s (0.00%) |Generate time=3.90s (76.47%) |Training "
                      "time=1.10s (21.57%) |Others=0.10 (1.96%)|CurSamplesPerSec=3.14 |AvgSamplesPerSec=3.10",
                      f"epoch: {epoch}|step: {step}|ppo_ep: 1|act_loss: 0.0{step % 7}|cri_loss: 0.31|unsuper_loss: 0.0",
                      "average reward score: 0.25", "-" * 85]
    return lines


def test_deepspeed_chats_generation_batches_size_its_run(tmp_path: Path) -> None:
    """An epoch's steps are its generation batches: the run's total is the epochs times them."""
    series, words = _read(tmp_path, _ppo(1, 300, (0, 41)))
    assert (series.samples[-1].step, series.run_total) == (41, 300)
    assert "of 300" in words


def test_deepspeed_chats_steps_go_on_across_its_epochs(tmp_path: Path) -> None:
    """Its step counts from 0 in each epoch: the run's step is the epochs before times the generation batches, plus
    the step, and the run counts steps, not epochs."""
    series, words = _read(tmp_path, _ppo(3, 50, (1, 9)))
    assert (series.samples[-1].step, series.run_total) == (59, 150)
    assert not series.restarts and "of 150" in words


def test_icefalls_rank_label_names_the_lines_rank(tmp_path: Path) -> None:
    """Where every rank logs its own batch's loss under its "(rank/world_size)" label, the run's is rank 0's, as
    the other rank-labelled loggers' are."""
    lines = []
    for minute, batch in enumerate(range(0, 301, 50)):
        for rank in (2, 0, 3, 1):
            lines.append(_icefall(f"10:{minute:02d}:{rank:02d}", rank,
                                  f"Epoch 1, batch {batch}, loss[loss={0.5 + rank / 10 - minute / 100:.4f}, over "
                                  f"9000.00 frames. ], tot_loss[loss={0.6 + rank / 10:.4f}, over 18000.00 frames. ], "
                                  "batch size: 80, lr: 1.00e-03, "))
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 1 and not series.restarts
    # (the batch's loss and the running tot_loss are both named "loss": either, but rank 0's)
    assert training_loss(series.metrics) in (("loss", 0.44), ("loss", 0.6))
