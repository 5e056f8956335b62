"""General mechanisms of the progress reader, round j (issue [progress-real]): the training loops research code runs
on clusters most, read from their own source, not from any log: each test names the repository, the file and the
function whose format strings its lines follow. Every line here is written for the test, in the layout those format
strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import loss_parts, parse_line, training_loss
from ntui.core.progress.runwords import declared_total, run_start
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- PaddleNLP's example loops


def test_paddlenlps_global_step_is_the_runs_step_not_its_epoch() -> None:
    """PaddlePaddle/PaddleNLP, the examples' and model_zoo's run_pretrain.py / train.py, do_train: "global step
    %d/%d, epoch: %d, batch: %d, rank_id: %s, loss: %f, lr: %.10f, speed: %.4f step/s" (global_step,
    num_training_steps, epoch, step, ...), and the older "global step %d, epoch: %d, batch: %d, loss: %.5f, ..."
    with no total: the optimizer's step is the run's, the epoch's batch counter is not."""
    point = parse_line("global step 340/12000, epoch: 0, batch: 340, rank_id: 0, loss: 6.834120, lr: 0.0000340000, "
                       "speed: 3.1250 step/s")
    assert point is not None and (point.step, point.total, point.counts_epochs) == (340, 12000, False)
    assert training_loss(point.metrics) == ("loss", 6.83412)
    point = parse_line("global step 70, epoch: 2, batch: 12, loss: 0.41322, accu: 0.81250, speed: 4.12 step/s")
    assert point is not None and (point.step, point.total) == (70, None)
    assert "batch" not in point.metrics and "epoch" not in point.metrics


def test_a_paddlenlp_run_reads_its_step_across_epochs(tmp_path: Path) -> None:
    """PaddleNLP do_train, the same line every logging_steps: the step goes on across epochs (its batch counter
    starts again at each), no restart."""
    lines = [f"global step {g}/3000, epoch: {g // 250}, batch: {g % 250}, loss: 1.{g % 97:02d}, speed: 2.1 step/s"
             for g in range(10, 710, 10)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (700, 3000, 0)
    assert "of 3,000" in words


# ---------------------------------------------------------------- flax's examples


def test_flaxs_epoch_line_with_a_padded_number_is_an_epochs_summary() -> None:
    """google/flax, examples/mnist/train.py, train_and_evaluate: "epoch:% 3d, train_loss: %.4f, train_accuracy: %.2f,
    test_loss: %.4f, test_accuracy: %.2f" (the epoch padded to three places: "epoch:  3"); its loss the training's."""
    point = parse_line("epoch:  7, train_loss: 0.0512, train_accuracy: 98.41, test_loss: 0.0633, test_accuracy: 97.96")
    assert point is not None and point.counts_epochs and point.step == 7
    assert training_loss(point.metrics) == ("train_loss", 0.0512)
    point = parse_line("I1205 08:12:44.551203 139872 train.py:151] epoch: 12, train_loss: 0.0105, train_accuracy: "
                       "99.70, test_loss: 0.0301, test_accuracy: 99.02")
    assert point is not None and point.step == 12


# ---------------------------------------------------------------- big_vision's metric writer


def test_big_visions_measure_lines_give_the_step_and_one_metric_each() -> None:
    """google-research/big_vision, big_vision/utils.py, BigVisionMetricWriter.measure: logging.info of
    "\\x1b[35m[{step}]\\x1b[0m {name} = {value}" behind absl's header, one metric a line; Chrono.inform/tick's note
    "Steps:{step}/{total_steps} [{pct:.1%}]" says the run's total."""
    point = parse_line("I1205 09:00:01.000123 140221 utils.py:1050] \x1b[35m[2400]\x1b[0m training_loss = 3.0125")
    assert point is not None and (point.step, point.total) == (2400, None)
    assert training_loss(point.metrics) == ("training_loss", 3.0125)
    point = parse_line("I1205 09:00:01.000123 140221 train.py:520] NOTE: Steps:2400/90000 [2.7%]")
    assert point is not None and (point.step, point.total) == (2400, 90000)
    # an evaluator's metric at its step is a metric of that step, not the training loss
    point = parse_line("I1205 09:00:01.000123 140221 utils.py:1050] [2500] val/prec@1 = 0.4125")
    assert point is not None and point.step == 2500 and training_loss(point.metrics) is None
    # a bracketed number before words that are no "name = number" is not the writer's line
    assert parse_line("[12] loading shard = done") is None


def test_a_big_vision_run_reads_its_steps_total_and_loss(tmp_path: Path) -> None:
    """big_vision/utils.py, BigVisionMetricWriter.measure and Chrono.tick, as big_vision/train.py calls them each
    log_training_steps: the step's metrics one a line, then the note of the steps done of the run's."""
    lines = []
    for step in range(100, 1100, 100):
        head = f"I1205 09:{step // 100:02d}:00.000000 140221 utils.py:1050] \x1b[35m[{step}]\x1b[0m"
        lines += [f"{head} learning_rate = 0.001", f"{head} training_loss = {6 - step / 1000:.4f}",
                  f"{head} progress = {step / 20000}",
                  f"I1205 09:{step // 100:02d}:00.000000 140221 train.py:520] NOTE: Steps:{step}/20000 "
                  f"[{step / 200:.1f}%]"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (1000, 20000, 0)
    assert training_loss(series.metrics) == ("training_loss", 5.0)


# ---------------------------------------------------------------- the MetricLogger's copies


def test_dinos_metriclogger_header_names_the_runs_epochs() -> None:
    """facebookresearch/dino, main_dino.py, train_one_epoch: header 'Epoch: [{}/{}]'.format(epoch, args.epochs)
    (epochs from 0), then utils.py, MetricLogger.log_every's "[{0:4d}/{1}]  eta: ..  {meters}  time: ..  data: ..
    max mem: .." joined by two spaces: the run counts epochs, of the ones the header names."""
    point = parse_line("Epoch: [4/100]  [ 600/1251]  eta: 0:05:01  loss: 9.1020 (9.3311)  lr: 0.000412 (0.000410)  "
                       "wd: 0.041200 (0.041100)  time: 0.4811  data: 0.0019  max mem: 11873")
    assert point is not None and point.counts_epochs
    assert (point.step, point.total, point.batch, point.batches) == (4, 100, 600, 1251)
    assert training_loss(point.metrics) == ("loss", 9.102)
    # the torchvision references' header without the run's epochs is read as before
    point = parse_line("Epoch: [4]  [ 600/5005]  eta: 0:30:12  lr: 0.1  img/s: 611.2  loss: 2.1034 (2.2101)  "
                       "acc1: 51.5625 (49.1120)  time: 0.4011  data: 0.0021  max mem: 9120")
    assert point is not None and point.counts_epochs and (point.step, point.total) == (4, None)


def test_the_metricloggers_test_lines_are_no_training(tmp_path: Path) -> None:
    """pytorch/vision, references/classification/train.py, evaluate: header f"Test: {log_suffix}" through
    utils.py's MetricLogger.log_every ("Test:  [ 50/196]  eta: ..  loss: ..  acc1: .."), its "{header} Total time:"
    and the " * Acc@1 .. Acc@5 .." summary: the training's epoch and loss stay the last training line's."""
    lines = ["Namespace(data_path='/scratch/imnet', model='resnet50', batch_size=64, epochs=40, lr=0.2)"]
    for epoch in range(3):
        lines += [f"Epoch: [{epoch}]  [{b:4d}/2502]  eta: 0:10:00  lr: 0.2  img/s: 700.1  loss: {3 - epoch / 2:.4f} "
                  f"(3.0000)  acc1: 30.0 (29.0)  time: 0.3  data: 0.01  max mem: 8000" for b in range(0, 2502, 500)]
        lines += [f"Epoch: [{epoch}] Total time: 0:12:30"]
        lines += [f"Test:   [{b:3d}/196]  eta: 0:00:30  loss: 0.9000 (0.9500)  acc1: 75.0 (74.0)  time: 0.1  "
                  "data: 0.05  max mem: 8000" for b in range(0, 196, 50)]
        lines += ["Test:  Total time: 0:00:40", "Test:  Acc@1 40.120 Acc@5 66.010"]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (2, 40)
    assert training_loss(series.metrics) == ("loss", 2.0)


# ---------------------------------------------------------------- YOLOv5's epoch table


def _yolo_rows(header: str, first: int, last: int, of: int) -> list[str]:
    rows = []
    for epoch in range(first, last + 1):
        count = f"{epoch}/{of}"
        rows += [header, f"{count:>11}      3.81G    0.04{epoch % 10}12    0.02311    0.01012        96        640: "
                         "100%|##########| 58/58 [00:21<00:00,  2.71it/s]",
                 "                 Class     Images  Instances          P          R      mAP50   mAP50-95: 100%|"
                 "##########| 6/6 [00:02<00:00,  2.90it/s]",
                 "                   all        181       1204      0.612      0.533      0.571      0.322"]
    return rows


def test_yolov5s_header_says_its_rows_number_epochs_from_zero(tmp_path: Path) -> None:
    """ultralytics/yolov5, train.py, train: the header ("%11s" * 7) % ("Epoch", "GPU_mem", "box_loss", "obj_loss",
    "cls_loss", "Instances", "Size") and each row's f"{epoch}/{epochs - 1}": a tail with no "0/299" row and no
    "Starting training for N epochs" still has 300 epochs (its "obj_loss" column is YOLOv3/v5/v7's only), its loss
    given in parts only (none is the run's: no sum is made)."""
    header = "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size"
    series, words = _read(tmp_path, _yolo_rows(header, 40, 42, 299))
    assert series.run_total == 300 and "of 300" in words
    assert training_loss(series.metrics) is None
    # ultralytics 8's header names no objectness loss: its rows count from 1 of the run's epochs
    header = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    series, words = _read(tmp_path, _yolo_rows(header, 40, 42, 299))
    assert series.run_total == 299


# ---------------------------------------------------------------- every rank's own loss


def test_where_every_rank_prints_its_loss_the_runs_is_the_lowest_ranks(tmp_path: Path) -> None:
    """Slurm's srun --label ("3: ") before a loop's print that every rank runs (the PyTorch DDP tutorial's
    multinode.py, Trainer._run_epoch; the hand-written loops without a rank guard): each rank's loss is its own
    batch's; the run's is rank 0's, as the frameworks' loggers report it (rank_zero_only), not the first rank's to
    print. Followed from the step where rank 0 is level with the run: no step goes back, no restart."""
    lines = [f"{rank}: step {step} | loss {2 + rank / 10 - step / 1000:.4f} | lr 0.0003"
             for step in range(10, 110, 10) for rank in (3, 1, 0, 2)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (100, 0)
    assert training_loss(series.metrics) == ("loss", 1.9)
    # where only ranks other than 0 print, the lowest of them
    lines = [f"{rank}: step {step} | loss {2 + rank / 10 - step / 1000:.4f} | lr 0.0003"
             for step in range(10, 110, 10) for rank in (3, 2)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (100, 0)
    assert training_loss(series.metrics) == ("loss", 2.1)


def test_a_loss_under_an_evaluations_path_is_not_the_training_loss() -> None:
    """big_vision/train.py's evaluators, through BigVisionMetricWriter.measure: "[{step}] val/loss = {value}" (the
    evaluator's name, a slash, its metric): a loss under another name's path ("val/", "eval-") is that name's, never
    read as a bare "loss = x" of the training."""
    point = parse_line("I1205 09:00:01.000123 140221 utils.py:1050] [2000] val/loss = 4.11203")
    assert point is not None and point.metrics == {"val/loss": 4.11203}
    assert training_loss(point.metrics) is None
    # a training loop's own "loss = x" is still its loss
    point = parse_line("Iteration 300/5000, loss = 0.51")
    assert point is not None and training_loss(point.metrics) == ("loss", 0.51)


# ---------------------------------------------------------------- CLU's logging writer (flax's examples, JAX loops)


def test_clus_logging_writer_line_gives_the_step_and_its_scalars() -> None:
    """google/CommonLoopUtils, clu/metric_writers/logging_writer.py, LoggingWriter.write_scalars: logging.info("[%d]%s
    %s", step, " collection=NAME" or "", ", ".join of the scalars "k=v" sorted, floats as "{v:.6g}"); behind absl's
    header. An evaluation's scalars at its step say no training loss."""
    head = "I1205 10:11:12.000321 140001 logging_writer.py:48] "
    point = parse_line(head + "[4800] learning_rate=0.0891, steps_per_second=9.4121, train_accuracy=0.41, "
                              "train_loss=2.71843")
    assert point is not None and (point.step, point.total) == (4800, None)
    assert training_loss(point.metrics) == ("train_loss", 2.71843)
    point = parse_line(head + "[4800] collection=train learning_rate=0.0891, loss=2.71843")
    assert point is not None and point.step == 4800 and point.metrics == {"learning_rate": 0.0891, "loss": 2.71843}
    point = parse_line(head + "[5000] eval_accuracy=0.4412, eval_loss=2.5123")
    assert point is not None and point.step == 5000 and training_loss(point.metrics) is None
    # its other writes name no scalars: no step read from them
    assert parse_line(head + "[5000] Got images: {'samples': (4, 64, 64, 3)}.") is None


def test_a_clu_run_reads_its_last_training_loss_past_an_evaluation(tmp_path: Path) -> None:
    """clu LoggingWriter.write_scalars as flax's examples/imagenet/train.py, train_and_evaluate, calls it: the
    training's summary every log_every_steps, the evaluation's at each epoch's end; the run's loss is the training's,
    read from its last summary."""
    head = "I1205 10:11:12.000321 140001 logging_writer.py:48] "
    lines = [head + f"[{s}] learning_rate=0.1, steps_per_second=9.1, train_accuracy=0.3, train_loss={5 - s / 1000:.4f}"
             for s in range(100, 2100, 100)]
    lines.append(head + "[2000] eval_accuracy=0.31, eval_loss=3.8812")
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (2000, 0)
    assert training_loss(series.metrics) == ("train_loss", 3.0)


def test_accelerates_example_prints_each_epochs_evaluation() -> None:
    """huggingface/accelerate, examples/nlp_example.py, training_function: accelerator.print(f"epoch {epoch}:",
    eval_metric) after each epoch's evaluation (epochs from 0), the metric's dict: the run counts epochs."""
    point = parse_line("epoch 1: {'accuracy': 0.8112745098039216, 'f1': 0.8701517706576728}")
    assert point is not None and point.counts_epochs and point.step == 1
    assert point.metrics == {"accuracy": 0.8112745098039216, "f1": 0.8701517706576728}


# ---------------------------------------------------------------- the run's total, said in the programs' words


def test_the_runs_total_in_fairseq2s_regime_and_big_visions_note() -> None:
    """facebookresearch/fairseq2, its recipes' regime config ("max_num_steps: 5000", printed with the run's config);
    google-research/big_vision, big_vision/train.py, main: info("Running for %d steps, that means %f epochs",
    total_steps, ...). Not a loop's own counter ("num_steps")."""
    assert declared_total("  max_num_steps: 5000") == 5000
    assert declared_total("I1205 08:00:00.000001 140001 train.py:181] \x1b[33mNOTE\x1b[0m: Running for 45000 steps, "
                          "that means 71.942446 epochs") == 45000
    assert declared_total("num_steps: 500") is None


def test_fairseq2s_metric_recorder_line_is_read_its_validation_not() -> None:
    """facebookresearch/fairseq2, src/fairseq2/metrics/recorders/log.py, LogMetricRecorder.record_metric_values:
    "{Title} Metrics (step {step_nr}) - {display}: {value} | ..." ("Train", "Validation" for "valid", "Evaluation"
    for "eval"), the loss first (priority 90): the training's line gives the step and its loss; a validation's is no
    training step."""
    point = parse_line("[12/05/26 10:00:00] INFO     fairseq2 - Train Metrics (step 400) - Loss: 2.341 | NLL Loss: "
                       "2.101 | Learning Rate: 1.0e-04 | Elapsed Time: 12s")
    assert point is not None and point.step == 400 and training_loss(point.metrics) == ("Loss", 2.341)
    assert parse_line("[12/05/26 10:00:00] INFO     fairseq2 - Validation Metrics (step 1000) - Loss: 2.9 | NLL "
                      "Loss: 2.7") is None


# ---------------------------------------------------------------- t5x's periods


def test_t5xs_training_for_n_steps_is_a_periods_not_the_runs(tmp_path: Path) -> None:
    """google-research/t5x, t5x/train.py, train: logging.info('Epoch %d of %d', epoch, num_epochs) as each period of
    eval_period steps begins (from 0), then logging.info('Training for %d steps.', num_steps) of that period (the
    last maybe fewer), and the steps' scalars through clu's LoggingWriter ("[%d] collection=train k=v, ..."): the
    run's total is its periods times a period's steps, never the period's (was "step 6,000 of 2,000")."""
    head = "I1205 10:11:12.000321 140001 {}] "
    lines = [head.format("train.py:410") + "Compiling train loop."]
    step = 0
    for period in range(3):
        lines += [head.format("train.py:450") + f"Epoch {period} of 10",
                  head.format("train.py:456") + "BEGIN Train loop.",
                  head.format("train.py:462") + "Training for 2000 steps."]
        for k in range(10):
            step += 200
            lines.append(head.format("logging_writer.py:48") + f"[{step}] collection=train accuracy=0.41, "
                         f"cross_ent_loss=2.{k}1, learning_rate=0.001, loss=2.{k}3, timing/seconds=30.1")
        lines += [head.format("train.py:490") + "END Train loop.", head.format("train.py:503") + "Saving checkpoint."]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (6000, 20000, 0)
    assert training_loss(series.metrics) == ("loss", 2.93)
    assert "of 20,000" in words
    # elsewhere "Training for N steps" still says the run's total
    assert declared_total("Training for 12000 steps") == 12000


def test_the_yolo_tables_loss_is_said_in_its_parts_and_no_sum_is_made(tmp_path: Path) -> None:
    """ultralytics/yolov5, train.py, train: the row's losses are mloss's parts under the header's names ("box_loss",
    "obj_loss", "cls_loss"), their sum never printed: the reader says the parts (loss_parts) and makes no loss of
    them; its first releases' header ('Epoch', 'gpu_mem', 'box', 'obj', 'cls', 'total', 'targets', 'img_size'), as
    YOLOv7's, prints the sum as "total": that is the loss."""
    header = "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size"
    series, _ = _read(tmp_path, _yolo_rows(header, 40, 42, 299))
    assert training_loss(series.metrics) is None
    assert loss_parts(series.metrics) == {"box_loss": 0.04212, "obj_loss": 0.02311, "cls_loss": 0.01012}
    old = "     Epoch   gpu_mem       box       obj       cls     total   targets  img_size"
    rows = [old, "    41/299     3.81G   0.04112   0.02311   0.01012   0.07435        96       640: 100%|##########| "
                 "58/58 [00:21<00:00,  2.71it/s]"]
    series, _ = _read(tmp_path, rows)
    assert training_loss(series.metrics) == ("loss_total", 0.07435)
    assert series.run_total == 300  # its "obj" column: rows from 0 of the last one's index
    assert loss_parts(series.metrics) is None


def test_loss_parts_needs_two_training_parts_and_no_loss() -> None:
    """The rule for a loss printed in parts only (mmdetection's "loss_cls", "loss_bbox" with its "loss" beside them,
    detectron2's parts with its "total_loss"): where the program prints the loss, that is the loss and no parts
    are said; an evaluation's losses are no parts of the training's; one part alone is no set of parts."""
    assert loss_parts({"loss_cls": 0.3, "loss_bbox": 0.2, "loss": 0.5}) is None
    assert loss_parts({"loss_cls": 0.3, "loss_bbox": 0.2, "total_loss": 0.5}) is None
    assert loss_parts({"loss_cls": 0.3, "loss_bbox": 0.2, "lr": 0.01}) == {"loss_cls": 0.3, "loss_bbox": 0.2}
    assert loss_parts({"val_box_loss": 0.2, "val_cls_loss": 0.1}) is None
    assert loss_parts({"loss_scale": 65536.0, "box_loss": 0.3, "cls_loss": 0.1}) == {"box_loss": 0.3, "cls_loss": 0.1}


# ---------------------------------------------------------------- Composer's other units, the resumes' steps


def test_composers_console_in_tokens_or_samples_counts_its_run() -> None:
    """mosaicml/composer, composer/loggers/console_logger.py, ConsoleLogger._get_progress_string: where max_duration
    is not in epochs, f"[{unit.name.lower()}={curr_duration}/{total}]" of max_duration's unit ("token", "sample",
    "batch"), then ":" where metrics follow; its evaluation's "[Eval batch=3/10] Eval on eval data" is not the run's."""
    point = parse_line("[token=52428800/2621440000]:")
    assert point is not None and (point.step, point.total) == (52428800, 2621440000)
    point = parse_line("[sample=12800/1000000]:")
    assert point is not None and (point.step, point.total) == (12800, 1000000)
    assert parse_line("[Eval batch=3/10] Eval on eval data:") is None


def test_the_resume_lines_say_the_step_the_run_goes_on_from() -> None:
    """huggingface/diffusers, examples/*/train_*.py, main: accelerator.print(f"Resuming from checkpoint {path}") where
    path is "checkpoint-{global_step}" (global_step = int(path.split("-")[1])); facebookresearch/detectron2,
    detectron2/engine/train_loop.py, TrainerBase.train: "Starting training from iteration {start_iter}" (0 afresh)."""
    assert run_start("Resuming from checkpoint checkpoint-500") == 500
    assert run_start("12/05/2026 10:00:00 - INFO - __main__ - Resuming from checkpoint out/checkpoint-1500") == 1500
    assert run_start("[12/05 10:00:00 d2.engine.train_loop]: Starting training from iteration 5000") == 5000
    assert run_start("[12/05 10:00:00 d2.engine.train_loop]: Starting training from iteration 0") == 0
    assert run_start("Resuming training from checkpoint") == 0


def test_paddlenlps_rank_id_says_whose_line_it_is(tmp_path: Path) -> None:
    """PaddleNLP's run_pretrain.py, do_train: "global step %d/%d, epoch: %d, batch: %d, rank_id: %s, loss: %f, ..."
    with paddle.distributed.get_rank(), on every rank that logs: the line's rank, not a metric; the run's loss is
    rank 0's."""
    point = parse_line("global step 340/12000, epoch: 0, batch: 340, rank_id: 2, loss: 6.834120, lr: 0.0000340000, "
                       "speed: 3.1250 step/s")
    assert point is not None and point.rank == 2 and "rank_id" not in point.metrics
    lines = [f"global step {g}/3000, epoch: 0, batch: {g}, rank_id: {r}, loss: {5 + r - g / 1000:.6f}, lr: 0.0001, "
             "speed: 2.1 step/s" for g in range(10, 210, 10) for r in (1, 0)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (200, 0)
    assert training_loss(series.metrics) == ("loss", 4.8)


def test_an_evaluations_clu_collection_is_no_training_point() -> None:
    """clu LoggingWriter.write_scalars with its collection (" collection=NAME"), as t5x's MetricsManager names its
    writers: the training's "train" collection is the run's, an evaluation's ("training_eval/<task>", "eval") gives
    no training point, its loss not the training's."""
    head = "I1204 07:00:00.000001 140318 logging_writer.py:48] "
    point = parse_line(head + "[5000] collection=train accuracy=0.6, loss=2.31, z_loss=0.0001")
    assert point is not None and point.step == 5000 and training_loss(point.metrics) == ("loss", 2.31)
    assert parse_line(head + "[5000] collection=training_eval/c4_v220_span_corruption accuracy=0.58, loss=2.4") is None
    assert parse_line(head + "[5000] collection=eval accuracy=0.58, loss=2.4") is None


def test_a_metriclogger_run_that_finished_its_last_epoch_is_at_its_total(tmp_path: Path) -> None:
    """facebookresearch/dino, main_dino.py, train_dino: 'Epoch: [{}/{}]'.format(epoch, args.epochs) for epoch in
    range(start_epoch, epochs), utils.py MetricLogger.log_every's last line of each epoch ("[1250/1251]", i ==
    len(iterable) - 1) and "{header} Total time: ...", then after the loop "Training time {}": the last epoch's
    index from 0 is one short of the run's epochs, which are all done."""
    lines = []
    for epoch in range(3):
        lines += [f"Epoch: [{epoch}/3]  [{b:4d}/1251]  eta: 0:05:01  loss: {9 - epoch - b / 1251:.4f} (9.3311)  "
                  "lr: 0.000412 (0.000410)  time: 0.4811  data: 0.0019  max mem: 11873"
                  for b in [*range(0, 1251, 100), 1250]]
        lines += [f"Epoch: [{epoch}/3] Total time: 0:10:12 (0.4891 s / it)", "Averaged stats: loss: 8.1 (8.1)"]
    series, words = _read(tmp_path, [*lines, "Training time 0:31:02"])
    assert (series.step, series.run_total) == (3, 3) and "done" in words
    series, _ = _read(tmp_path, lines)  # no word of the loop's end yet: the last epoch as named
    assert (series.step, series.run_total) == (2, 3)
