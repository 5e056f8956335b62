"""General mechanisms of the progress reader, round k (issue [progress-real]): the gaps a fresh measuring set showed,
each closed as a rule read from the programs' source, not from any log: each test names the repository, the file and
the function whose format strings its lines follow. Every line here is written for the test, in the layout those
format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import declared_epochs, run_end
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- the YOLO family's early stop, a log indented whole


def test_the_yolo_familys_early_stop_message_ends_the_training() -> None:
    """ultralytics/ultralytics, ultralytics/utils/torch_utils.py, EarlyStopping.__call__: f"{prefix}Training stopped
    early as no improvement observed in last {self.patience} epochs. ..." (prefix "EarlyStopping: "); ultralytics/
    yolov5, utils/torch_utils.py, EarlyStopping.__call__: "Stopping training early as no improvement observed in last
    {self.patience} epochs. ...": the loop breaks after it. Not its advice line, nor a configuration's patience."""
    assert run_end("EarlyStopping: Training stopped early as no improvement observed in last 15 epochs. Best results "
                   "observed at epoch 9, best model saved as best.pt.") is not None
    assert run_end("Stopping training early as no improvement observed in last 30 epochs. Best results observed at "
                   "epoch 12, best model saved as best.pt.") is not None
    assert run_end("To update EarlyStopping(patience=15) pass a new patience value, i.e. `patience=300` or use "
                   "`patience=0` to disable EarlyStopping.") is None
    assert run_end("engine/trainer: task=detect, mode=train, epochs=40, patience=15, batch=8") is None


def _ultralytics_rows(epochs: int, done: int, indent: str) -> list[str]:
    """ultralytics/engine/trainer.py, BaseTrainer._do_train: the epoch's bar row (its description "%11s" * 2 +
    "%11.4g" * (2 + loss_len) of epoch/epochs, GPU memory, the losses, instances, size), then the validator's rows."""
    rows = [f"{indent}Starting training for {epochs} epochs...", ""]
    for e in range(1, done + 1):
        rows += [f"{indent}  {e:>5}/{epochs}     2.41G      1.{e % 9}07      2.{e % 7}11      1.3{e % 5}2        "
                 f"57        640: 100% ━━━━━━━━━━━━ 12/12 3.2it/s 3.8s",
                 f"{indent}             Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
                 "100% ━━━━━━━━━━━━ 2/2 4.1it/s 0.5s",
                 f"{indent}               all         40        180      0.51{e % 10}      0.433      0.402      0.21"]
    return rows


def test_an_ultralytics_run_stopped_early_is_done_short_of_its_epochs(tmp_path: Path) -> None:
    """ultralytics/engine/trainer.py, BaseTrainer._do_train: after the EarlyStopping line the loop breaks and logs
    f"\\n{epoch - self.start_epoch + 1} epochs completed in {hours:.3f} hours.": the run is over at the epochs it ran,
    short of its total."""
    lines = [*_ultralytics_rows(50, 14, ""),
             "EarlyStopping: Training stopped early as no improvement observed in last 5 epochs. Best results "
             "observed at epoch 9, best model saved as best.pt.", "", "14 epochs completed in 0.052 hours."]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (14, 50)
    assert "done" in words


def test_an_indented_log_says_its_end_as_it_would_unindented(tmp_path: Path) -> None:
    """The same ultralytics run (engine/trainer.py, BaseTrainer._do_train's end lines) as a notebook's output pasted
    into a markdown code block, every line indented four spaces: the words that end the run are read from their first
    word all the same; the early stop's line alone says it too."""
    lines = [*_ultralytics_rows(50, 14, "    "),
             "    EarlyStopping: Training stopped early as no improvement observed in last 5 epochs. Best results "
             "observed at epoch 9, best model saved as best.pt.", "", "    14 epochs completed in 0.052 hours."]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (14, 50)
    assert "done" in words
    series, words = _read(tmp_path, lines[:-1])  # the early stop's line alone
    assert "done" in words
    series, words = _read(tmp_path, [*_ultralytics_rows(50, 14, "    "), "", lines[-1]])  # its count alone
    assert (series.step, series.run_total) == (14, 50)
    assert "done" in words
    series, words = _read(tmp_path, _ultralytics_rows(50, 14, "    "))  # cut mid-run: not done
    assert series.step == 14 and "done" not in words


# ---------------------------------------------------------------- H2O LLM Studio's train loop


def test_an_epoch_header_as_the_whole_message_says_the_runs_epochs() -> None:
    """h2oai/h2o-llmstudio, train.py, its epoch loop: logger.info(f"Training Epoch: {epoch + 1} /
    {cfg.training.epochs}"), spaced around its slash; other loops' "Starting epoch 3/10": the run's epochs. Not a
    line that goes on past the header (an epoch's summary, a progress line)."""
    assert declared_epochs("Training Epoch: 1 / 4") == 4
    assert declared_epochs("Starting epoch 3/10") == 10
    assert declared_epochs("Train epoch [2 / 6]") == 6
    assert declared_epochs("Training Epoch: 1 / 4, loss 2.31") is None
    assert declared_epochs("Epoch 2 / 5 done") is None


def _llmstudio_epoch(epoch: int, epochs: int, upto: int, *, mid_eval: bool, closed: bool) -> list[str]:
    """h2o-llmstudio train.py: the header, then tqdm(total=epoch_steps, file=TqdmToLogger(logger), ascii=True,
    desc="train loss", mininterval=0) whose set_description(f"train loss: {loss:.2f}") redraws go through the logger
    as whole lines; its run_eval's own bar ("validation progress") at each evaluation step and at the epoch's end,
    then progress_bar.close() redraws the train bar's last state."""
    head = "2024-03-02 10:{:02d}:{:02d},{:03d} - INFO: "
    out = [head.format(epoch, 0, 5) + f"Training Epoch: {epoch} / {epochs}"]
    steps, per = 240, 40

    def val(t: int) -> list[str]:
        return [head.format(epoch, t, 100) + "Starting validation inference"] + [
            head.format(epoch, t, 200 + v) + f"validation progress: {v * 25:3d}%|{'#' * (v * 2):<10}| {v * 5}/20 "
            f"[00:0{v}<00:0{4 - v},  1.30it/s]" for v in range(5)] + [
            head.format(epoch, t, 300) + "Validation Perplexity: 5.4120",
            head.format(epoch, t, 310) + "Mean validation loss: 1.6886"]

    for n in range(0, upto + 1, per):
        pct = 100 * n // steps
        out.append(head.format(epoch, 1 + n // per, 0) + f"train loss: 1.{80 - n // per:02d}: {pct:3d}%|"
                   f"{'#' * (pct // 10):<10}| {n}/{steps} [00:{n // per:02d}<00:{(steps - n) // per:02d},  1.52it/s]")
        if mid_eval and n == 120:
            out += val(30)
    if upto == steps:
        out += val(50)
        if closed:
            out.append(head.format(epoch, 55, 0) + f"train loss: 1.61: 100%|##########| {steps}/{steps} "
                       "[00:59<00:00,  1.41it/s]")
        out.append(head.format(epoch, 56, 0) + "Saving last model checkpoint to /scratch/out/run-7/")
    return out


def test_an_epochs_bar_again_after_its_validation_is_the_next_epoch(tmp_path: Path) -> None:
    """h2o-llmstudio train.py: each epoch's bar counts that epoch's steps, from 0; between two epochs' bars its
    validation's own bar and the train bar's close() redraw: the next epoch, no restart. The run's step is the epochs
    before times an epoch's steps, its total the header's epochs times those."""
    lines = [*_llmstudio_epoch(1, 3, 240, mid_eval=True, closed=True),
             *_llmstudio_epoch(2, 3, 240, mid_eval=True, closed=True),
             *_llmstudio_epoch(3, 3, 160, mid_eval=True, closed=True)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (2 * 240 + 160, 3 * 240, 0)
    assert "done" not in words
    assert training_loss(series.metrics) is not None
    lines = [*_llmstudio_epoch(1, 3, 240, mid_eval=False, closed=False),  # no close() redraw: the same
             *_llmstudio_epoch(2, 3, 80, mid_eval=False, closed=False)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (240 + 80, 3 * 240, 0)


def test_an_epochs_bar_again_after_its_epoch_header_is_the_next_epoch(tmp_path: Path) -> None:
    """h2o-llmstudio train.py with no validation between two epochs (its evaluation every few epochs): the loop's
    "Training Epoch: 2 / 3" header between the bar's end and its next start says the next epoch begins."""
    bar = "2024-03-02 10:00:{:02d},000 - INFO: train loss: 1.{:02d}: {:3d}%|{:<10}| {}/200 [00:{:02d}<00:10,  2.00it/s]"
    lines = []
    for epoch, upto in ((1, 200), (2, 200), (3, 120)):
        lines.append(f"2024-03-02 10:00:00,000 - INFO: Training Epoch: {epoch} / 3")
        lines += [bar.format(n // 10, 90 - n // 10, n // 2, "#" * (n // 20), n, n // 20)
                  for n in range(0, upto + 1, 40)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.run_total, len(series.restarts)) == (2 * 200 + 120, 600, 0)


def test_an_epochs_bar_again_with_nothing_between_is_still_a_restart(tmp_path: Path) -> None:
    """The same bar drawn again from 0 right after its total, with no validation's bar between (a requeued job
    appending to its log, tqdm's bar of the same loop): a restart, as before."""
    bar = "train loss: 1.50: {:3d}%|{:<10}| {}/200 [00:{:02d}<00:10,  2.00it/s]"
    lines = [bar.format(n // 2, "#" * (n // 20), n, n // 20) for n in range(0, 201, 40)]
    lines += [bar.format(n // 2, "#" * (n // 20), n, n // 20) for n in range(0, 81, 40)]
    series, _ = _read(tmp_path, lines)
    assert series.step == 80 and len(series.restarts) == 1


# ---------------------------------------------------------------- an epoch's iterations beside the run's epochs


def test_an_epochs_iterations_after_its_epoch_of_the_runs_are_not_the_runs_counter() -> None:
    """ZhengPeng7/BiRefNet, train.py, Trainer.train_epoch (run under accelerate launch, its main process logging):
    f"Epoch[{epoch}/{args.epochs}] Iter[{batch_idx}/{len(self.train_loader)}]." then "Training Losses: loss_pix: X |":
    the iterations are the epoch's (batch_idx from 0, each epoch again), not mmengine's run-wide "Iter [i/N]"."""
    point = parse_line("2025-01-07 09:14:02,551 INFO Epoch[4/90] Iter[120/512]. Training Losses: loss_pix: 21.73 |")
    assert point is not None and point.per_epoch and (point.step, point.total) == (120, 512)
    assert (point.epoch, point.epochs) == (4.0, 90)
    assert training_loss(point.metrics) == ("loss_pix", 21.73)
    # mmengine's own iteration-based line (mmengine/runner/log_processor.py, LogProcessor.get_log_after_iter) and
    # mmcv's are still the run's counter
    point = parse_line("01/07 09:14:02 - mmengine - INFO - Iter(train) [  300/20000]  lr: 1.0e-02  eta: 3:02:11  "
                       "time: 0.5120  data_time: 0.0110  memory: 4410  loss: 0.9153")
    assert point is not None and not point.per_epoch and (point.step, point.total) == (300, 20000)
    point = parse_line("2021-07-13 10:20:24,113 - mmseg - INFO - Iter [50/160000]\tlr: 9.9e-03, loss: 2.1")
    assert point is not None and (point.step, point.total) == (50, 160000)


def test_a_run_of_epoch_and_iteration_lines_counts_on_across_epochs(tmp_path: Path) -> None:
    """BiRefNet train.py under accelerate (the main process logs; each device's per-epoch average after the epoch):
    the epoch's iterations start again at each epoch, no restart; the run's step goes on."""
    lines = []
    for epoch in range(1, 4):
        lines.append(f"2025-01-07 09:{epoch:02d}:00,000 INFO Epoch {epoch} started")
        lines += [f"2025-01-07 09:{epoch:02d}:{i // 10:02d},000 INFO Epoch[{epoch}/90] Iter[{i}/512]. Training "
                  f"Losses: loss_pix: {30 - epoch}.{i % 100:02d} |" for i in range(0, 512 if epoch < 3 else 300, 100)]
        if epoch < 3:
            lines += [f"2025-01-07 09:{epoch:02d}:59,000 INFO @==Final== Epoch[{epoch}/90]  Training Loss Device "
                      f"cuda:{d}: {28 - epoch}.{d}1" for d in (1, 0, 2)]
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 0
    assert series.step is not None and series.step > 2 * 500
    assert training_loss(series.metrics) == ("loss_pix", 27.0)


# ---------------------------------------------------------------- each process's own bar (accelerate, no disable=)


def _bar(n: int, total: int, elapsed: int, desc: str = "") -> str:
    """tqdm's default format_meter: "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"."""
    pct = 100 * n // total
    return (f"{desc}{pct:3d}%|{'█' * (pct // 10):<10}| {n}/{total} [00:{elapsed:02d}<00:{max(0, 60 - elapsed):02d}, "
            " 9.80it/s]")


def _processes(total: int, lags: tuple[int, ...], epochs: int = 1, desc: str = "") -> str:
    """huggingface/accelerate, examples/by_feature/*.py and diffusers' train scripts: tqdm(..., disable=not
    accelerator.is_local_main_process) draws rank 0's bar only; without it every process draws its own bar on the
    same stream, each redrawn at its own count every mininterval (tqdm's default 0.1 s), their times together."""
    redraws = []
    for epoch in range(epochs):
        for n in range(0, total + 1, 10):
            redraws += [_bar(max(0, n - lag), total, n // 10, desc.format(epoch)) for lag in lags]
        redraws.append("\n")
    return "\r".join(redraws)


def test_each_processs_own_bar_of_the_run_is_no_restart(tmp_path: Path) -> None:
    """accelerate without disable=: four processes' bars over the run's steps, interleaved, their counts up to 50
    steps apart (a redraw interval at a fast loop's rate): the run's bar, its step the furthest drawn, no restart."""
    for lags in ((0, 3, 6, 9), (0, 20, 40, 50)):
        series, _ = _read(tmp_path, [_processes(500, lags)])
        assert (series.step, series.run_total, len(series.restarts)) == (500, 500, 0)


def test_each_processs_own_bar_of_an_epoch_is_no_restart(tmp_path: Path) -> None:
    """The same with each epoch's bar ("Epoch {epoch}: " its description, accelerate's nlp_example.py style loops
    over train_dataloader): no restart within an epoch, nor at the next epoch's bar."""
    series, _ = _read(tmp_path, [_processes(300, (0, 20, 40, 50), epochs=3, desc="Epoch {}: ")])
    assert (series.step, len(series.restarts)) == (900, 0)


def test_a_bar_whose_time_starts_again_is_a_restart(tmp_path: Path) -> None:
    """A bar that goes back and whose elapsed time starts again is a new process's (a requeued job appending to its
    log; tqdm(initial=200) where it resumes at a checkpoint's step), however far behind: a restart."""
    lines = [_bar(n, 500, n // 10) for n in range(0, 301, 20)]
    series, _ = _read(tmp_path, [*lines, *(_bar(n, 500, (n - 200) // 10) for n in range(200, 261, 20))])
    assert (series.step, len(series.restarts)) == (260, 1)
    series, _ = _read(tmp_path, [*lines, *(_bar(n, 500, n // 10) for n in range(0, 61, 20))])
    assert (series.step, len(series.restarts)) == (60, 1)
