"""General mechanisms of the progress reader, round h (issue [progress-real]): the gaps the fresh measuring sets
showed, each closed as a rule of its own: a loss read by the phase its name says (an evaluation's word anywhere in
it, a kind after "loss"); an epoch table that names epoch indexes from 0; a command line's flags in dashes; an
epoch's length said by the loader times the epochs the lines name; a counter alone glued after a bar; a checkpoint
at the run's last epoch; a launcher's label carried to a line's redraws; a global step beside an epoch's step, a
record wrapped by Rich's log handler, a header line repeated before each record; Rich's bar drawn in ASCII and an
epoch bar that counts its validation too. Every line here is written for the test, in the layouts those programs'
format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import declared_epochs, declared_per_epoch, declared_total
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a loss by the phase its name says


def test_a_loss_whose_name_holds_an_evaluation_word_is_no_training_loss() -> None:
    # Lightning's ModelCheckpoint names its file from the monitored metric: "dir/ckpts/model--val_loss=2.11-..."
    assert training_loss({"/out/run7/ckpts/model--val_loss": 2.11, "samples_seen": 4.0}) is None
    assert training_loss({"eval/loss": 1.5}) is None
    assert training_loss({"valLoss": 1.5}) is None


def test_a_training_phase_name_with_the_loss_kind_after_it_is_the_loss() -> None:
    # a metrics logger's "train/loss_<objective>" (an SSL method's), beside the learning rate and the step
    assert training_loss({"train/loss_byol": 0.052, "train/lr": 0.3}) == ("train/loss_byol", 0.052)
    # with parts of the loss beside it, the one whose name says the training phase
    assert training_loss({"train/loss_main": 0.4, "aux_loss_weight": 0.1}) == ("train/loss_main", 0.4)
    # a setting of the loss is not its value: fp16's loss scale, a weight
    assert training_loss({"loss_scale": 128.0, "lr": 0.1}) is None
    assert training_loss({"aux_loss_coef": 0.01, "train/loss_ce": 2.5}) == ("train/loss_ce", 2.5)
    # two such names and nothing to choose between them: none
    assert training_loss({"train/loss_a": 0.4, "train/loss_b": 0.1}) is None


def test_a_checkpoint_callbacks_line_is_no_progress_line(tmp_path: Path) -> None:
    # Lightning's ModelCheckpoint (verbose): "Epoch {e}, global step {s}: {monitor!r} reached {v:0.5f} (best ...),
    # saving model to {path!r} as top {k}", between the redraws of the run's bar (NeMo's bar has no rate)
    saved = ("Epoch 0, global step {s}: 'val_loss' reached 3.10000 (best 3.10000), saving model to "
             "'/out/exp3/checkpoints/gpt--val_loss=3.10-step={s}-consumed_samples={c}.0.ckpt' as top 3")
    assert parse_line(saved.format(s=500, c=32000)) is None
    def bar(first: int, last: int) -> str:
        return "".join(f"\rEpoch 0: :   {n // 400}%|          | {n}/40000 [00:{n // 100:02d}<9:00:00, v_num=2, "
                       f"reduced_train_loss={4.0 - n / 1000:.3f}, global_step={n}.0]" for n in range(first, last, 100))
    series, words = _read(tmp_path, ["  max_steps: 40000", bar(100, 600), saved.format(s=500, c=32000),
                                     bar(600, 1300)])
    assert series.step == 1200
    assert not series.restarts
    assert "of 40,000" in words


# ---------------------------------------------------------------- an epoch table of epoch indexes, from 0


def _yolo(first: int, last: int, of: int, header: str) -> list[str]:
    # YOLOv5's and YOLOv3's train.py: the header, then the bar's description f"{epoch}/{epochs - 1}" (ultralytics 8:
    # f"{epoch + 1}/{self.epochs}"), the memory, the losses, the labels and the image size, the epoch's tqdm bar
    lines: list[str] = []
    for e in range(first, last + 1):
        lines += ["", header, f"   {e}/{of}     5.02G   0.02310  0.008120  0.001100        14       640: 100%|"
                  f"##########| 40/40 [00:21<00:00,  1.88it/s]"]
    return lines


def test_the_end_that_counts_one_more_epoch_than_the_rows_last_says_they_count_from_0(tmp_path: Path) -> None:
    header = "     Epoch   gpu_mem       box       obj       cls    labels  img_size"
    series, words = _read(tmp_path, [*_yolo(140, 149, 149, header), "150 epochs completed in 2.301 hours."])
    assert (series.step, series.run_total) == (150, 150)
    assert "done" in words and "before its total" not in words
    # with the run's epochs said before the rows ("Starting training for 150 epochs..."), the same
    series, words = _read(tmp_path, ["Starting training for 150 epochs...", *_yolo(140, 149, 149, header),
                                     "150 epochs completed in 2.301 hours."])
    assert (series.step, series.run_total) == (150, 150)
    assert "before its total" not in words


def test_rows_that_count_epochs_from_1_are_not_moved_by_the_end(tmp_path: Path) -> None:
    header = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    series, _ = _read(tmp_path, [*_yolo(141, 150, 150, header), "150 epochs completed in 2.301 hours."])
    assert (series.step, series.run_total) == (150, 150)
    # a resumed run's process counts the epochs it ran itself: fewer than the rows' total
    series, _ = _read(tmp_path, [*_yolo(141, 150, 150, header), "10 epochs completed in 0.150 hours."])
    assert (series.step, series.run_total) == (150, 150)


# ---------------------------------------------------------------- a command line's flags


def test_an_argparse_flag_in_dashes_says_the_runs_epochs() -> None:
    assert declared_epochs("+ python train.py /data/set --max-epochs 80 --batch-size 512") == 80
    assert declared_epochs("python fit.py --num-epochs=12 --lr 3e-4") == 12
    assert declared_epochs("--num-train-epochs 4") == 4
    assert declared_epochs("--max-epochs-per-stage 4") is None  # another count


def test_a_flag_in_dashes_says_the_runs_steps_as_its_underscored_name_does() -> None:
    # argparse takes "--num-train-steps" and "--num_train_steps" for the same option
    assert declared_total("python run.py --num-train-steps 3000 --lr 1e-4") == 3000
    assert declared_total("python run.py --max-updates 12000") == 12000
    assert declared_total("python run.py --train-steps=700") == 700
    assert declared_total("python sample.py --num-steps 50") is None  # a sampler's steps, not the run's
    assert declared_total("--eval-steps 100 --save-steps 500") is None
    assert declared_per_epoch("python fit.py --steps-per-epoch 250") == 250
    assert declared_per_epoch("--eval-steps-per-epoch 3") is None


def test_a_command_line_with_a_validation_flag_still_says_the_runs_epochs(tmp_path: Path) -> None:
    # a script's echo under "set -x" (its validation data as one flag among the others), then Lightning's epoch bars
    # printed as lines by the script's own logger, an epoch's 400 batches
    lines = ["+ python train.py /data/a.bin --validation-data /data/b.bin --max-epochs 30 --batch-size 256"]
    for epoch in range(3):
        lines += [f"Epoch {epoch}: {25 * q}%|   {100 * q}/400  [00:0{q}<00:03,  70.00it/s, train_loss=0.0{q}1, v_num=3]"
                  for q in range(1, 5 if epoch < 2 else 3)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (1000, 12000)
    assert "of 12,000" in words
    # a line about an evaluation alone keeps its count to itself
    series, _ = _read(tmp_path, ["Start evaluating (total_samples: 500, total_iters: 500)...", *lines[1:]])
    assert series.run_total is None


# ---------------------------------------------------------------- the run's epochs from its lines


def test_an_epochs_steps_said_by_its_loader_times_the_epochs_its_lines_name_is_the_total(tmp_path: Path) -> None:
    # PaddleOCR's program.py and its forks: "train dataloader has {} iters", then "epoch: [{}/{}], global_step: {},
    # lr: ..., loss: ..., avg_reader_cost: ..." every print_batch_step steps (the global step counts the run's)
    lines = ["[2025/01/02 10:00:00] ppocr INFO: train dataloader has 1200 iters"]
    lines += [f"[2025/01/02 10:{n // 100:02d}:00] ppocr INFO: epoch: [{1 + n // 1200}/4], global_step: {n}, "
              f"lr: 0.001000, loss: {9.0 - n / 1000:.6f}, avg_reader_cost: 0.01 s, ips: 300.1 samples/s"
              for n in range(20, 1500, 20)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (1480, 4800)
    # without the loader's length, no total
    series, _ = _read(tmp_path, lines[1:])
    assert series.run_total is None


# ---------------------------------------------------------------- text glued after a bar's redraw


def test_a_counter_alone_glued_after_a_bars_redraw_is_not_the_runs_step(tmp_path: Path) -> None:
    # a UI that prints its own count (its micro-batches) in colour after each of the Trainer's redraws, no newline
    glued = " 25%|##5       | 5/20 [01:40<05:00, 20.10s/it]\x1b[1;30;40mStep: 79 \x1b[0;37;0m"
    point = parse_line(glued)
    assert point is not None and (point.step, point.total) == (5, 20)
    lines = ["".join(f"\r {5 * n}%|#         | {n}/20 [00:{n:02d}<05:00, 20.10s/it]" for n in range(1, 6)), glued,
             "{'loss': 1.812, 'learning_rate': 0.0002, 'epoch': 0.5}"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (5, 20)
    # the loop's own line glued after the bar, with its loss, still counts the run (torchtune's "Step 25 | loss:0.8")
    point = parse_line(" 40%|####      | 8/20 [00:16<00:24,  2.00s/it]Step 33 | loss:0.8123")
    assert point is not None and point.step == 33


# ---------------------------------------------------------------- a checkpoint at the run's last epoch


def _mmengine(epochs: int, saved: list[int], per: int = 205) -> list[str]:
    # mmengine's LoggerHook every 10 iterations of the run ("Iter(train) [  N/T]" of an epoch-based loop's
    # iterations), its CheckpointHook's f"Saving checkpoint at {runner.epoch + 1} epochs" after each epoch
    lines = ["max_epochs = 3", "train_cfg = dict(by_epoch=True, max_epochs=3, val_interval=1)"]
    for epoch in range(1, epochs + 1):
        lines += [f"01/02 10:{n % 60:02d}:00 - mmengine - INFO - Iter(train) [{n:4d}/{3 * per}]  lr: 1.0e-04  "
                  f"eta: 0:10:00  time: 1.2000  data_time: 0.0100  memory: 9000  loss: {1.5 - n / 1000:.4f}"
                  for n in range(per * (epoch - 1) + 10, per * epoch + 1, 10)]
        if epoch in saved:
            lines.append(f"01/02 11:00:00 - mmengine - INFO - Saving checkpoint at {epoch} epochs")
    return lines


def test_a_checkpoint_saved_at_the_runs_last_epoch_ends_it(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _mmengine(3, [1, 2, 3]))
    assert (series.step, series.run_total) == (610, 615)
    assert "done" in words
    # an earlier epoch's checkpoint is not the end
    _, words = _read(tmp_path, _mmengine(2, [1, 2]))
    assert "done" not in words
    # an error after it is the run's end: not done
    _, words = _read(tmp_path, [*_mmengine(3, [1, 2, 3]), "Traceback (most recent call last):", "RuntimeError: x"])
    assert "done" not in words


# ---------------------------------------------------------------- labelled lines of redraws


def _labelled_chunks(total: int = 900) -> list[str]:
    # srun -l writes its task's label once at a physical line's start; the bar's redraws after the line's carriage
    # returns carry none. Two nodes' bars (each node's rank 0 draws the whole run's), in chunks that alternate, one
    # node a few steps behind the other, after each task's first lines
    lines = ["1: 01/02/2025 10:00:00 - INFO - __main__ - Process index: 4",
             "0: 01/02/2025 10:00:00 - INFO - __main__ - Process index: 0"]
    for chunk in range(6):
        for task, lag in ((1, 0), (0, 2)):
            first, last = chunk * 20 + 1 - lag, chunk * 20 + 20 - lag
            lines.append(f"{task}: " + "".join(f"\r  {n * 100 // total}%|          | {n}/{total} "
                                              f"[00:{n % 60:02d}<20:00,  1.50s/it]" for n in range(max(first, 1),
                                                                                                   last + 1)))
    return lines


def test_every_redraw_of_a_labelled_line_is_that_tasks(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _labelled_chunks())
    assert not series.restarts
    assert series.step in (118, 120) and series.run_total == 900
    assert "of 900" in words


def test_labels_padded_to_one_width_are_carried_too(tmp_path: Path) -> None:
    # srun pads its labels to the width of the largest task number (" 1: " among "12: ")
    lines = [(" " + line if line[:1] in "01" else line) for line in _labelled_chunks()]
    series, _ = _read(tmp_path, ["12: starting", *lines])
    assert not series.restarts and series.step in (118, 120)


def test_the_followed_log_reads_labelled_redraws_the_same(tmp_path: Path) -> None:
    from ntui.core.progress.board import ProgressBoard

    log = tmp_path / "run.log"
    log.write_text("\n".join(_labelled_chunks()) + "\n")
    view = ProgressBoard().poll({"7": str(log)})["7"]
    assert not view.restarts and view.step in (118, 120)


def test_a_single_tasks_labelled_redraws_are_read_as_they_are(tmp_path: Path) -> None:
    # one task's log (torch's "[rank0]:" on each physical line): its redraws are its own, no label carried
    bar = "[rank0]:" + "".join(f"\rtrain:  {n}%|          | {n}/100 [00:{n:02d}<01:00,  2.00it/s, "
                               f"loss={3 - n / 50:.3f}]" for n in range(1, 41))
    series, words = _read(tmp_path, ["[rank0]:starting", bar])
    assert (series.step, series.run_total) == (40, 100) and not series.restarts


# ---------------------------------------------------------------- the run's global step; a record wrapped by Rich


def test_a_global_step_beside_an_epochs_step_is_the_runs() -> None:
    point = parse_line("Train, Epoch: 2, Step: 40, Global_Step: 940, Loss: 1.25")
    assert point is not None and point.step == 940
    point = parse_line("epoch 2 step 40 global step: 940 loss 1.25")
    assert point is not None and point.step == 940


def test_a_record_wrapped_by_richs_log_handler_is_read_whole(tmp_path: Path) -> None:
    # Rich's RichHandler: the time column blank where it repeats, the message wrapped at the console's width and
    # its rest indented to the message's column; the loop prints "key=value" parts of its loss, the total last
    lines = []
    for g in range(1, 31):
        lines += [f"[03/04/24 10:{g:02d}:00] INFO     trainer - INFO: train.py:88 main" if g % 2 else
                  "                    INFO     trainer - INFO: train.py:88 main",
                  f"                    INFO     trainer - INFO: Training, Epoch: {g // 20}, Step: {g % 20}, "
                  f"Global_Step: {g}, Loss: part_a=1.{g:02d}",
                  f"                             part_b=0.5 part_c=2.{g:02d} aux_loss=0.1 loss={90 - g}.5 "
                  "metric_x=0.3"]
    series, words = _read(tmp_path, lines)
    assert series.step == 30 and not series.restarts
    assert training_loss(series.metrics) == ("loss", 60.5)


# ---------------------------------------------------------------- Rich's bars on a console that is not UTF-8


def test_richs_bar_drawn_in_dashes_is_read() -> None:
    # rich.progress_bar draws "-" and a space for its glyphs where the console is ASCII-only; Lightning 1.6's
    # RichProgressBar describes its epoch as "Epoch N" (no "/last"), then its M-of-N, elapsed, remaining, rate
    point = parse_line("Epoch 3    ---------- ----- 120/250 0:00:20 • 0:00:22 6.01it/s loss: 0.512 v_num: 2 ")
    assert point is not None and (point.step, point.total, point.epoch, point.phase) == (120, 250, 3.0, "train")
    assert point.metrics == {"loss": 0.512}
    point = parse_line("Validation  -------- ----------- 9/50 0:00:01 • 0:00:05 8.00it/s ")
    assert point is not None and point.phase == "validation"
    # a rule of dashes before a fraction, no elapsed time after it, is no bar
    assert parse_line("------------ 3/10 passed") is None


def _rich_epochs(epochs: int, train: int = 200, val: int = 50, cut: int = 120) -> list[str]:
    # a console that prints each render of the live display on its own lines: the epoch's bar (its total the
    # training batches and the validation's, Lightning 1.x) and, during the validation, its bar too, drawn together
    lines = ["config: max_epochs=6"]
    for epoch in range(epochs + 1):
        for n in range(1, (train if epoch < epochs else cut) + 1, 3):
            lines.append(f"Epoch {epoch}    ------------ {n}/{train + val} 0:00:10 • 0:00:30 6.00it/s "
                         f"loss: {1 - n / 1000:.3f} v_num: 1 ")
        if epoch == epochs:
            break
        for k in range(2, val + 1, 2):
            lines.append(f"Epoch {epoch}    ------------ {train + k - 1}/{train + val} 0:00:40 • 0:00:01 6.00it/s "
                         "loss: 0.800 v_num: 1 ")
            lines.append(f"Validation ------- ------- {k}/{val} 0:00:01 • 0:00:02 9.00it/s ")
        lines.append(f"Epoch {epoch}    ------------ {train + val}/{train + val} 0:00:42 • 0:00:00 6.00it/s "
                     "loss: 0.800 v_num: 1 ")
    return lines


def test_an_epoch_bar_that_counts_its_validation_too_is_read_without_restarts(tmp_path: Path) -> None:
    series, words = _read(tmp_path, _rich_epochs(2))
    assert not series.restarts
    assert (series.step, series.run_total) == (2 * 200 + 118, 6 * 200)


def test_tqdms_bars_redraw_apart_and_keep_the_epochs_count_where_a_validation_is_first_seen_late(
        tmp_path: Path) -> None:
    # Lightning 1.x's tqdm bars: the epoch's (training and validation batches) and the validation's, each redrawn
    # at its own pace: the validation's first count seen (5) says nothing of where the epoch's bar was drawn last
    lines = [f"Epoch 0:  {n * 100 // 250}%|####      | {n}/250 [00:{n // 10:02d}<00:30,  6.00it/s, loss=0.9, v_num=1]"
             for n in range(10, 201, 10)]
    lines.append("Validation DataLoader 0:  10%|#         | 5/50 [00:01<00:09,  5.00it/s]")
    series, _ = _read(tmp_path, lines)
    assert series.step == 200


# ---------------------------------------------------------------- several ranks' bars: one rank's series, all phases


def _ranks_epochs_with_validation(train: int = 200, val: int = 40, epochs: int = 2, cut: int = 100) -> list[str]:
    # Lightning 1.x under srun -l, every node's rank drawing its bars: the epoch's bar (its total the training batches
    # and the validation's) redrawn after carriage returns on one labelled physical line; then the nested validation
    # bar on lines of its own (newline, bar, cursor up), each of its redraws followed by the epoch bar's. The ranks'
    # lines interleave, the second rank's validation first, its epoch bar a little ahead
    total = train + val
    lines = ["0: Namespace(batch_size=32, max_epochs=3, seed=1)", "1: Namespace(batch_size=32, max_epochs=3, seed=1)"]

    def bar(epoch: int, n: int, rank: int) -> str:
        return (f"\rEpoch {epoch}:  {n * 100 // total}%|#         | {n}/{total} [00:{n % 60:02d}<00:40,  "
                f"{5 + rank}.00it/s, loss={2 - epoch / 4 - n / 1000 - rank / 10:.3f}, v_num=3]")

    for epoch in range(epochs + 1):
        last = train if epoch < epochs else cut
        for rank in (0, 1):
            lines.append(f"{rank}: " + "".join(bar(epoch, n, rank) for n in range(0, last + 1, 20)))
        if epoch == epochs:
            break
        for k in range(0, val + 1, 10):
            for rank in (1, 0):
                lines.append(f"{rank}: \rValidating:  {k * 100 // val}%|#         | {k}/{val} [00:01<00:03, "
                             f"9.00it/s]\x1b[A" + (bar(epoch, train + k + 5 * rank, rank) if k else ""))
        lines += ["0: \r                    \r\x1b[A", "1: \r                    \r\x1b[A"]
    return lines


def test_the_followed_ranks_series_takes_no_other_ranks_validation(tmp_path: Path) -> None:
    # the run's series is the first rank's that printed a training point, in every phase: the other rank's validation
    # counts (drawn before the followed rank's, further on) do not move the followed rank's epoch bar's training part
    series, words = _read(tmp_path, _ranks_epochs_with_validation())
    assert not series.restarts
    assert (series.step, series.run_total) == (2 * 200 + 100, 3 * 200)
    assert series.metrics["loss"] == 2 - 2 / 4 - 100 / 1000


# ---------------------------------------------------------------- a loop's step of an epoch's total


def _epoch_steps_lines(epochs: int = 3, per: int = 120, first: int = 1, engine: bool = True) -> list[str]:
    # a hand-written loop's logger line every 40 steps and at the epoch's end ("epoch E/N | step S/T | loss X", its
    # step counting the epoch's batches), between an engine's own lines of the run's global step every 25 (DeepSpeed's
    # "[Rank 0] step=N, skipped=0, lr=[...], mom=[...]")
    lines = []
    for epoch in range(epochs):
        for s in range(1, per + 1):
            run_step = epoch * per + s
            if engine and run_step % 25 == 0:
                lines.append(f"[2025-03-04 08:{run_step // 60 % 60:02d}:{run_step % 60:02d},100] [INFO] "
                             f"[logging.py:96:log_dist] [Rank 0] step={run_step}, skipped=0, lr=[0.0002], "
                             "mom=[(0.9, 0.99)]")
            if s % 40 == 0 or s == per:
                lines.append(f"2025-03-04 08:{run_step // 60 % 60:02d}:{run_step % 60:02d}.500 | INFO     | "
                             f"__main__:fit:77 - epoch {epoch + first}/{epochs} | step {s}/{per} | "
                             f"loss {3 - run_step / 200:.4f}")
    return lines


def test_a_line_of_its_epoch_and_a_step_of_an_epochs_total_counts_the_runs_steps(tmp_path: Path) -> None:
    point = parse_line("epoch 2/3 | step 40/120 | loss 2.1000")
    assert point is not None and (point.epoch, point.epochs, point.step, point.total) == (2.0, 3, 40, 120)
    series, words = _read(tmp_path, _epoch_steps_lines())
    assert not series.restarts
    assert (series.step, series.run_total) == (360, 360)
    assert series.metrics["loss"] == 3 - 360 / 200


def test_epochs_named_from_0_and_no_engine_lines_count_the_same(tmp_path: Path) -> None:
    series, _ = _read(tmp_path, _epoch_steps_lines(first=0, engine=False)[:-1])
    assert not series.restarts and (series.step, series.run_total) == (2 * 120 + 80, 360)


def test_a_step_of_a_total_that_goes_back_in_the_same_epoch_is_still_a_restart(tmp_path: Path) -> None:
    lines = _epoch_steps_lines(epochs=2, engine=False)
    series, _ = _read(tmp_path, [*lines, *lines[:2]])  # the run again from its start, appended to its log
    assert len(series.restarts) == 1 and series.step == 80


# ---------------------------------------------------------------- a loop stopped early at a step it names


def test_a_loop_that_says_it_stopped_early_at_a_step_ended_there() -> None:
    from ntui.core.progress.runwords import run_end

    # the nanoGPT speedrun loops' last word at a time budget's cap: f"stopping_early: wallclock_cap
    # train_time:{ms:.0f}ms step:{step}/{iterations}"
    assert run_end("stopping_early: wallclock_cap train_time:412345ms step:3071/9000") == ("at", 3071)
    assert run_end("Stopped early at step 480 (no improvement)") == ("at", 480)
    assert run_end("early stopping patience: 10") is None
    assert run_end("stopping_early: disabled") is None


def test_a_run_stopped_early_at_its_cap_ends_at_that_step_short_of_its_total(tmp_path: Path) -> None:
    lines = ["iterations:9000", "max_wallclock_seconds:300.000"]
    lines += [f"step:{n}/9000 train_loss:{4 - n / 2000:.4f} train_time:{n * 97}ms step_avg:97.00ms"
              for n in range(100, 3001, 100)]
    lines += ["step:3071/9000 val_loss:2.4567 val_bpb:1.4012 train_time:297887ms step_avg:97.00ms",
              "stopping_early: wallclock_cap train_time:297887ms step:3071/9000",
              "peak memory allocated: 9001 MiB reserved: 9400 MiB"]
    series, words = _read(tmp_path, lines)
    assert series.ended and not series.restarts
    assert (series.step, series.run_total) == (3071, 9000)
    assert series.metrics["train_loss"] == 4 - 3000 / 2000
    series, _ = _read(tmp_path, lines[:-2])  # cut before its word: the evaluation's step, going on
    assert not series.ended and series.step == 3071
    series, _ = _read(tmp_path, lines[:-3])  # and before that: the last training line's step
    assert not series.ended and series.step == 3000


def _speedrun_lines(last: int, total: int = 9000) -> list[str]:
    # a nanoGPT-style loop: its training line every 100 steps, an evaluation every 1000 and at its last step, after
    # which it stops (its training line of that step never printed)
    lines = []
    for n in range(100, last + 1, 100):
        if n % 1000 == 0:
            lines.append(f"step:{n}/{total} val_loss:{3 - n / 5000:.4f} val_bpb:1.5000 train_time:{n * 90}ms "
                         "step_avg:90.00ms")
        if n < last:
            lines.append(f"step:{n}/{total} train_loss:{4 - n / 4000:.4f} train_time:{n * 90}ms step_avg:90.00ms")
    return lines


def test_the_loops_evaluation_at_its_last_step_is_its_last_step(tmp_path: Path) -> None:
    series, words = _read(tmp_path, [*_speedrun_lines(9000), "peak memory allocated: 9001 MiB"])
    assert (series.step, series.run_total) == (9000, 9000) and "done" in words
    assert series.metrics["train_loss"] == 4 - 8900 / 4000  # an evaluation's loss is not the training's


def test_an_evaluation_line_behind_or_of_another_total_moves_nothing(tmp_path: Path) -> None:
    lines = _speedrun_lines(4050)
    series, _ = _read(tmp_path, [*lines, "step:3000/9000 val_loss:2.1000 val_bpb:1.2"])
    assert series.step == 4000 and not series.restarts
    series, _ = _read(tmp_path, [*lines, "step:4500/5000 val_loss:2.1000"])
    assert series.step == 4000


def test_rank_zeros_lines_are_the_runs_where_another_rank_printed_first(tmp_path: Path) -> None:
    # the same log, each epoch's first bar line of rank 1 before rank 0's: the series is rank 0's all the same
    lines = _ranks_epochs_with_validation()
    first = next(i for i, line in enumerate(lines) if line.startswith("0: \rEpoch 0"))
    lines[first], lines[first + 1] = lines[first + 1], lines[first]
    series, _ = _read(tmp_path, lines)
    assert not series.restarts
    assert (series.step, series.run_total) == (2 * 200 + 100, 3 * 200)
    assert series.metrics["loss"] == 2 - 2 / 4 - 100 / 1000
