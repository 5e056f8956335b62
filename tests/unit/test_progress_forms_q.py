"""General mechanisms of the progress reader, round q (issue [progress-real]): forms a fresh set showed the reader
missing, each closed as a rule read from the source of the program that prints it; each test names the repository,
the file and the function. Every line here is written for the test, in the layout those sources give, with values
of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import run_end, run_start
from tests.support.progress_logs import read_text as _read

# ------------------------------------------ Lightning 1.x: a SLURM requeue's new process restores the run's state


def test_lightning_1x_restore_lines_are_a_start_again() -> None:
    """Lightning-AI/pytorch-lightning (1.0-1.4), pytorch_lightning/trainer/connectors/checkpoint_connector.py,
    CheckpointConnector.restore_weights / hpc_load ("restored hpc model from: {checkpoint_path}") and restore
    ("Restored states from the checkpoint file at {checkpoint_path}"): the process goes on from a saved state."""
    assert run_start("restored hpc model from: /scratch/exp7/hpc_ckpt_3.ckpt") == 0
    assert run_start("INFO:lightning:restored hpc model from: /scratch/exp7/hpc_ckpt_3.ckpt") == 0
    assert run_start("Restored states from the checkpoint file at /scratch/exp7/epoch=4.ckpt") == 0


def test_lightning_1x_tuner_restore_is_no_start_again() -> None:
    """Lightning-AI/pytorch-lightning (1.x), pytorch_lightning/tuner/lr_finder.py, lr_find (its temporary
    "lr_find_temp_model.ckpt" restored after its trials; batch_size_scaling.py's "scale_batch_size_temp_model.ckpt"):
    the run's fit has not started yet."""
    assert run_start("Restored states from the checkpoint file at /home/u/proj/lr_find_temp_model.ckpt") is None
    assert run_start("Restored states from the checkpoint file at /home/u/scale_batch_size_temp_model.ckpt") is None


# -------------------------------- Lightning 1.x: the epoch's bar counts the validation's batches, drawn in steps of k


def _epoch_bar(epoch: int, n: int, total: int, loss: float) -> str:
    return (f"Epoch {epoch}: {n * 100 // total:3d}%|#   | {n}/{total} [00:{n % 60:02d}<01:00,  2.10it/s, "
            f"loss={loss:.3f}, v_num=81]")


def _val_bar(n: int, total: int) -> str:
    return f"Validating: {n * 100 // total:3d}%|##  | {n}/{total} [00:01<00:02, 11.0it/s]\x1b[A"


def _epoch(epoch: int, train: int, val: int, k: int, upto: int | None = None) -> list[str]:
    """One epoch as Lightning 1.x's ProgressBar draws it with refresh rate k: the epoch's bar (train + val batches)
    every k training batches, then the validation's bar and the epoch's at the same batch, each k batches."""
    pieces = [_epoch_bar(epoch, 0, train + val, 1.0)]
    for n in range(k, train + 1, k):
        if upto is not None and n > upto:
            return ["\r".join(pieces)]
        pieces.append(_epoch_bar(epoch, n, train + val, 1.0 - n / 1000))
    lines = ["\r".join(pieces)]
    for v in range(k, val + 1, k):
        lines.append(_epoch_bar(epoch, train + v, train + val, 0.7))
        lines.append(_val_bar(v, val))
    return lines


def test_lightning_1x_validation_first_seen_at_k_is_not_training(tmp_path: Path) -> None:
    """Lightning-AI/pytorch-lightning 1.0, pytorch_lightning/callbacks/progress.py, ProgressBar.on_validation_batch_end
    (the main bar updated, then the validation's, each refresh_rate batches; its main bar's total is
    total_train_batches + total_val_batches): the epoch's bar drawn before the validation's first count k had counted
    those k validation batches too; an epoch is its training batches only."""
    lines = ["Namespace(lr=0.001, max_epochs=5, batch_size=32)"]
    for epoch in range(2):
        lines += _epoch(epoch, 300, 50, 25)
    lines += _epoch(2, 300, 50, 25, upto=125)
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (2 * 300 + 125, 5 * 300)


def test_lightning_1x_requeue_restores_and_repeats_the_epoch(tmp_path: Path) -> None:
    """Lightning-AI/pytorch-lightning 1.0, pytorch_lightning/trainer/connectors/slurm_connector.py, sig_handler
    ("handling SIGUSR1", "requeing job {job_id}...", "requeued exp {job_id}") and checkpoint_connector.py, hpc_load:
    the requeued job's new process prints its start again, restores the state saved at the signal and draws the
    interrupted epoch again from 0: one restart, the run's step that epoch's again."""
    lines = ["Namespace(lr=0.001, max_epochs=6, batch_size=32)"]
    for epoch in range(2):
        lines += _epoch(epoch, 200, 40, 20)
    lines += _epoch(2, 200, 40, 20, upto=100)
    lines += ["handling SIGUSR1", "requeing job 771203...", "requeued exp 771203",
              "slurmstepd: error: *** JOB 771203 ON node-4 CANCELLED AT 2021-03-02T10:11:12 DUE TO JOB REQUEUE ***",
              "Namespace(lr=0.001, max_epochs=6, batch_size=32)",
              "restored hpc model from: /scratch/exp/hpc_ckpt_1.ckpt"]
    lines += _epoch(2, 200, 40, 20, upto=60)
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total, len(series.restarts)) == (2 * 200 + 60, 6 * 200, 1)


# --------------------------------------- a Lightning callback's epoch line: "Epoch N: name 1.234e+00   name ..."


def _progress_logger(epoch: int, train: float, val: float | None = None) -> str:
    line = f"Epoch {epoch}"
    fields = [f"Train_total {train:.3e}"] + ([f"Val_total {val:.3e}"] if val is not None else [])
    return f"[03/11/24 09:{epoch % 60:02d}:00][proj.callback.progress][INFO] - {line:>10}: " \
        + "   ".join(fields) + "   Memory 12.5%"


def test_progress_logger_epoch_line_reads_its_epoch_and_summed_loss() -> None:
    """mathux/temos, temos/callback/progress.py, ProgressLogger.on_train_epoch_end (f"Epoch
    {trainer.current_epoch}" right-padded, ": ", the config's names each with "{:.3e}", "   " between, then the
    memory): the epoch is the step; the training total (the loss terms' sum) the loss, not the validation's."""
    point = parse_line(_progress_logger(12, 3.6051, 3.9))
    assert point is not None and (point.step, point.counts_epochs) == (12, True)
    assert training_loss(point.metrics) == ("Train_total", 3.605)
    point = parse_line("   Epoch 7: loss_total 8.250e-01   Memory 4.0%")
    assert point is not None and point.step == 7 and training_loss(point.metrics) == ("loss_total", 0.825)


def test_progress_logger_run_follows_the_last_epoch(tmp_path: Path) -> None:
    """mathux/temos, temos/callback/progress.py, ProgressLogger: one line per epoch, a validation's total every few
    epochs on the same line; the run's step is the last epoch printed, its loss the last training total."""
    lines = ["[03/11/24 09:00:00][proj.callback.progress][INFO] - Training started"]
    lines += [_progress_logger(e, 5.0 - e / 10, 5.5 - e / 10 if e % 5 == 4 else None) for e in range(23)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 22 and training_loss(series.metrics) == ("Train_total", 2.8)


def test_a_total_without_the_training_phase_is_no_loss() -> None:
    """The summed loss is read by its training phase's name only: a bare "total" (examples, time) is not one."""
    assert training_loss({"total": 2.1, "Memory": 6.0}) is None
    assert training_loss({"Val_total": 2.1}) is None


# ---------------------------------------- a logger's header that names the rank, its message on the next line


def _stats(step: int, loss: float) -> str:
    return f'{{"ar.loss": {loss}, "ar.lr": 0.0002, "ar.grad_norm": 1.1, "elapsed_time": 0.61, "global_step": {step}}}'


def test_rank_header_on_the_line_before_says_whose_stats_follow(tmp_path: Path) -> None:
    """enhuiz/vall-e, vall_e/utils/trainer.py, setup_logging (ColoredFormatter("%(asctime)s - %(name)s -
    %(levelname)s - GR={global_rank()};LR={local_rank()} - \\n%(message)s"): every rank logs its own stats dict, the
    header on a line of its own before it; the ranks interleave in either order. The run's loss is rank 0's."""
    lines = []
    for step in range(10, 101, 10):
        order = (1, 0) if step % 20 else (0, 1)
        for rank in order:
            lines.append(f"2024-05-06 10:{step // 10:02d}:00 - proj.utils.trainer - INFO - GR={rank};LR={rank} - ")
            lines.append(_stats(step, round(5.0 - step / 100 + rank / 10, 4)))
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 100
    assert training_loss(series.metrics) == ("ar.loss", 4.0)


def test_rank_header_on_the_same_line_says_whose_line_it_is(tmp_path: Path) -> None:
    """enhuiz/vall-e, vall_e/utils/utils.py (_FORMATTER: "%(asctime)s :: %(levelname)s :: GR={global_rank()};LR=
    {local_rank()} :: %(message)s"): the header and the message on one line; rank 0's loss is the run's."""
    lines = []
    for step in range(10, 61, 10):
        for rank in (1, 0) if step % 20 else (0, 1):
            lines.append(f"2024-05-06 10:{step // 10:02d}:00 :: INFO :: GR={rank};LR={rank} :: "
                         + _stats(step, round(3.0 - step / 100 + rank / 10, 4)))
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 60 and training_loss(series.metrics) == ("ar.loss", 2.4)


# ---------------------------------------------------- DeepSpeed-Chat: its epochs' micro-batches, its launcher's end


def test_deepspeed_launchers_clean_exit_is_an_end() -> None:
    """deepspeedai/DeepSpeed, deepspeed/launcher/launch.py, main (logger.info(f"Process {process.pid} exits
    successfully.") for a worker that returned 0; a non-zero return kills the others instead)."""
    line = "[2024-02-03 11:00:01,500] [INFO] [launch.py:351:main] Process 9921 exits successfully."
    assert run_end(line) == ("", 0)
    assert run_end("[2024-02-03 11:00:01,500] [INFO] [launch.py:351:main] Process 9921 exits with return code = 1") \
        is None


def _ds_chat(epochs: int, micro: int, gas: int, upto: int) -> list[str]:
    lines = ["***** Running training *****"]
    step = 0
    for epoch in range(1, epochs + 1):
        lines.append(f"Beginning of Epoch {epoch}/{epochs}, Total Micro Batches {micro}")
        for _ in range(micro // gas):
            step += 1
            if step % 5 == 0:
                lines.append(f"[2024-02-03 10:{step // 60 % 60:02d}:{step % 60:02d},100] [INFO] [logging.py:96:"
                             f"log_dist] [Rank 0] step={step}, skipped=0, lr=[1e-05, 1e-05], "
                             "mom=[(0.9, 0.95), (0.9, 0.95)]")
                lines.append(f"[2024-02-03 10:{step // 60 % 60:02d}:{step % 60:02d},120] [INFO] [timer.py:260:stop] "
                             f"epoch=0/micro_step={step * gas}/global_step={step}, RunningAvgSamplesPerSec=30.1, "
                             "CurrSamplesPerSec=30.4, MemAllocated=5.1GB, MaxMemAllocated=9.9GB")
            if step == upto:
                return lines
    return lines


def test_deepspeed_chat_total_is_its_epochs_micro_batches_over_accumulation(tmp_path: Path) -> None:
    """deepspeedai/DeepSpeedExamples, applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py
    (print_rank_0(f"Beginning of Epoch {epoch+1}/{args.num_train_epochs}, Total Micro Batches
    {len(train_dataloader)}")) and deepspeed/utils/timer.py, ThroughputTimer.stop ("epoch=.../micro_step=.../
    global_step=..."): the engine's steps are optimizer steps, micro_step / global_step micro-batches each."""
    series = _read(tmp_path, "\n".join(_ds_chat(3, 120, 4, 45)) + "\n")
    assert (series.step, series.run_total) == (45, 3 * 30)
    series = _read(tmp_path, "\n".join(_ds_chat(2, 50, 1, 100) + [
        "saving the final model ...",
        "[2024-02-03 11:00:01,500] [INFO] [launch.py:351:main] Process 9921 exits successfully."]) + "\n")
    assert (series.step, series.run_total, series.ended) == (100, 100, True)


# ------------------------------------------------------------- Keras: fit called again by the script's own loop


def _keras_fit(epochs: int, samples: int, loss: float, upto: int | None = None) -> list[str]:
    lines = [f"Train on {samples} samples, validate on {samples // 8} samples"]
    for e in range(1, epochs + 1):
        lines.append(f"Epoch {e}/{epochs}")
        if upto is not None and e == upto:
            lines.append(f"{samples // 2}/{samples} [==============>...............] - ETA: 90s - loss: {loss:.4f}")
            return lines
        lines.append(f"{samples}/{samples} [==============================] - 180s - loss: {loss:.4f} - val_loss: "
                     f"{loss + 1:.4f}")
        loss -= 0.01
    return lines


def test_keras_fit_called_in_a_loop_counts_on(tmp_path: Path) -> None:
    """keras-team/keras 1.x, keras/engine/training.py, Model.fit / _fit_loop ("Train on %d samples, validate on %d
    samples", then each epoch's "Epoch %d/%d" from 1): a script that calls fit(nb_epoch=1) once per pass of its own
    loop prints "Epoch 1/1" each time; the run's epochs go on across the calls, none of them the run's total."""
    lines: list[str] = []
    for k in range(4):
        lines += _keras_fit(1, 64000, 2.0 - k / 10)
        lines.append(f"saved weights to ckpt/model_ep{k + 1:02d}.h5")
    lines += _keras_fit(1, 64000, 1.5, upto=1)
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total, len(series.restarts)) == (5, None, 0)


def test_keras_calls_of_several_epochs_count_on_but_an_unfinished_call_again_does_not(tmp_path: Path) -> None:
    """keras-team/keras, keras/engine/training.py, Model.fit: a second call after the first's last epoch goes on
    from the first's epochs (a fine-tuning stage); the same call started again before its last epoch ended (a
    requeued job) does not count on."""
    series = _read(tmp_path, "\n".join(_keras_fit(2, 6400, 1.0) + _keras_fit(3, 6400, 0.8, upto=2)) + "\n")
    assert (series.step, series.run_total) == (2 + 2, None)
    series = _read(tmp_path, "\n".join(_keras_fit(3, 6400, 1.0, upto=2) + _keras_fit(3, 6400, 1.0, upto=1)) + "\n")
    assert series.step is not None and series.step <= 3
