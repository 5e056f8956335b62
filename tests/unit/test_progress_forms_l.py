"""General mechanisms of the progress reader, round l (issue [progress-real]): the ways logs get into files, the layer
between the program and the reader (a launcher's tee, a timestamping pipe, syslog, a requeued job's appended output,
a console logger with no total), each read from the source of the program that writes it; each test names the
repository, the file and the function. Every line here is written for the test, in the layout those sources give,
with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss, unheader
from ntui.core.progress.read import read_progress
from ntui.core.progress.runwords import run_stop
from ntui.core.progress.series import Series, estimate


def _read(tmp_path: Path, data: str | bytes) -> tuple[Series, str]:
    log = tmp_path / "run.log"
    if isinstance(data, str):
        log.write_text(data)
    else:
        log.write_bytes(data)
    series = read_progress(log)
    return series, estimate(series, now=0.0, time_left_s=None).words


def _hf_run(upto: int, total: int = 800, start: int = 40) -> list[str]:
    """huggingface/transformers, trainer.py, Trainer._inner_training_loop and Trainer.log: the run's banner with its
    "Total optimization steps", then the log dicts and the tqdm bar's redraws (each on its own line, as tqdm writes
    to a file that is no terminal)."""
    lines = ["***** Running training *****", "  Num examples = 12,800", "  Num Epochs = 1",
             f"  Total optimization steps = {total:,}"]
    for s in range(start, upto + 1, 40):
        lines += [f"{{'loss': {3.0 - s / 1000:.4f}, 'grad_norm': 0.81, 'learning_rate': 3e-05, "
                  f"'epoch': {s / total:.2f}}}",
                  f" {s * 100 // total}%|███▏      | {s}/{total} [02:{s % 60:02d}<04:10,  3.17it/s]"]
    return lines


# ---------------------------------------------------------------- timestamps added outside the program


def test_moreutils_ts_and_syslog_times_are_a_header_taken_off() -> None:
    """joeyh/moreutils, ts (its default format "%b %d %H:%M:%S" before each line it reads); systemd/systemd,
    src/journal/journalctl (the short output: "%b %d %H:%M:%S host tag[pid]: message", as syslog writes it): the
    time and the journal's host and tag are a header before the program's message; a month's word that starts a
    message is not one."""
    assert unheader("Dec 05 10:11:12 {'loss': 1.2}") == "{'loss': 1.2}"
    assert unheader("Mar  7 09:00:01 gpu-b03 python3[30121]: Training completed.") == "Training completed."
    assert unheader("Dec 05 10:11:12.250 Saving model checkpoint") == "Saving model checkpoint"
    assert unheader("May the loss go down") == "May the loss go down"
    assert unheader("Sept 5 runs") == "Sept 5 runs"


def test_a_run_under_ts_reads_its_loss_dicts(tmp_path: Path) -> None:
    """joeyh/moreutils, ts: "python train.py | ts" puts its time before every line, the Trainer's log dicts
    (transformers trainer.py, Trainer.log) too: the dicts are read behind it, as are the bar's counts."""
    lines = _hf_run(480)
    series, _ = _read(tmp_path, "\n".join(f"Dec 05 10:{i // 60:02d}:{i % 60:02d} {line}"
                                          for i, line in enumerate(lines)) + "\n")
    assert (series.step, series.run_total) == (480, 800)
    assert training_loss(series.metrics) == ("loss", 2.52)


def test_a_run_through_journald_reads_its_loss_dicts(tmp_path: Path) -> None:
    """systemd/systemd, journalctl's short output of a unit's (or systemd-run's, or logger's) stdout: "Dec 05
    10:11:12 host tag[pid]: " before each line."""
    lines = _hf_run(480)
    series, _ = _read(tmp_path, "\n".join(f"Dec 05 10:11:{i % 60:02d} node07 python3[4242]: {line}"
                                          for i, line in enumerate(lines)) + "\n")
    assert (series.step, series.run_total) == (480, 800)
    assert training_loss(series.metrics) == ("loss", 2.52)


def test_dates_default_form_is_a_header_taken_off() -> None:
    """coreutils, date (its default "+%a %b %e %H:%M:%S %Z %Y"), and gawk's strftime() with no format (the same): a
    wrapper's "$(date) $line" or "awk '{ print strftime(), $0 }'" before each line; a day's word that starts a
    message is not one."""
    assert unheader("Sat Dec  5 10:11:12 UTC 2026 {'loss': 1.2}") == "{'loss': 1.2}"
    assert unheader("Tue Jun 17 08:14:03 +0200 2025 Training completed.") == "Training completed."
    assert unheader("Mon Dec  5 then the run") == "Mon Dec  5 then the run"


def test_a_loop_under_ts_or_date_is_timed_by_their_stamps(tmp_path: Path) -> None:
    """joeyh/moreutils, ts; coreutils, date; systemd's journal: the stamp a wrapper put before each of a loop's lines
    that print no time of their own is the time the line was written: the rate is read from them (one step a second
    here: 400 steps left, about 7 minutes), where the same lines without stamps give none."""
    def loop(stamp: str) -> str:
        return "\n".join(stamp.format(m=s // 60, s=s % 60) + f"step {s}/1000 | loss {3 - s / 1000:.3f}"
                         for s in range(10, 601, 10)) + "\n"
    for stamp in ("Dec 05 10:{m:02d}:{s:02d} ", "Sat Dec  5 10:{m:02d}:{s:02d} UTC 2026 ",
                  "Dec 05 10:{m:02d}:{s:02d} node07 python3[4242]: "):
        series, words = _read(tmp_path, loop(stamp))
        assert (series.step, series.run_total) == (600, 1000)
        assert "about 7 min" in words, stamp
    _, words = _read(tmp_path, loop(""))
    assert "about 7 min" not in words


def test_kubectl_timestamps_and_crlf_line_ends_change_nothing(tmp_path: Path) -> None:
    """kubernetes/kubectl, pkg/cmd/logs (--timestamps: the RFC 3339 time with nanoseconds and "Z" before each line);
    a log written with CRLF line ends (a Windows-side copy): the same run read."""
    lines = _hf_run(480)
    series, _ = _read(tmp_path, "".join(f"2024-05-01T10:11:{i % 60:02d}.123456789Z {line}\r\n"
                                        for i, line in enumerate(lines)))
    assert (series.step, series.run_total, len(series.restarts)) == (480, 800, 0)
    assert training_loss(series.metrics) == ("loss", 2.52)


def test_nul_padding_after_a_crash_is_no_line(tmp_path: Path) -> None:
    """A file whose last blocks a crashed node's filesystem left as NULs (Lustre, NFS after a client's crash), then a
    requeued job's output appended after them (Slurm's --open-mode=append): the NULs say nothing; the run's start
    again is read as one."""
    first = "\n".join(_hf_run(480)) + "\n"
    again = "\n".join(["  Continuing training from global step 400", *_hf_run(640, start=440)[4:]]) + "\n"
    series, _ = _read(tmp_path, first.encode() + b"\0" * 512)
    assert (series.step, len(series.restarts)) == (480, 0)
    series, _ = _read(tmp_path, first.encode() + b"\0" * 512 + again.encode())
    assert (series.step, series.run_total, len(series.restarts)) == (640, 800, 1)


# ---------------------------------------------------------------- torchrun's --tee / --redirects


def test_torchrun_tee_labels_each_workers_chunk_of_redraws(tmp_path: Path) -> None:
    """pytorch/pytorch, torch/distributed/elastic/multiprocessing/tail_log.py, tail_logfile: each readline() of a
    worker's file is written with the header "[{name}{local_rank}]:" before it; a tqdm bar's redraws (\\r, no
    newline) come as one chunk per read, the header before the chunk only. Two workers' chunks interleave: each
    worker's redraws stay its own (no restart where the second worker's bar starts behind the first's), also those
    of the first chunk, drawn before the second worker's label was ever seen."""
    bars = [f"\r {s * 100 // 900}%|██        | {s}/900 [00:{s % 60:02d}<01:40,  6.02it/s]" for s in range(1, 601)]
    text = ""
    for i in range(0, 600, 30):
        text += "[default0]:" + "".join(bars[i:i + 30]) + "\n" + "[default1]:" + "".join(bars[i:i + 30]) + "\n"
    series, _ = _read(tmp_path, text)
    assert (series.step, series.run_total, len(series.restarts)) == (600, 900, 0)


def test_torchrun_tee_label_without_a_global_rank_says_the_worker() -> None:
    """pytorch/pytorch, torch/distributed/elastic/multiprocessing/api.py (the default log line prefix
    "[{role}{local_rank}]:") and tail_log.py: a point read behind the label is that worker's."""
    point = parse_line("[default3]: 40%|████      | 360/900 [01:00<01:30,  6.02it/s]")
    assert point is not None
    assert (point.step, point.rank) == (360, 3)
    point = parse_line("[rank2]:[default0]: 40%|████      | 360/900 [01:00<01:30,  6.02it/s]")
    assert point is not None and point.rank == 2  # the global rank, where the line says it


# ---------------------------------------------------------------- Slurm's --open-mode=append over requeues


def test_a_requeued_jobs_appended_output_is_a_restart_and_goes_on(tmp_path: Path) -> None:
    """SchedMD/slurm, src/slurmd/slurmstepd/req.c (and step_terminate_monitor): "*** JOB %u ON %s CANCELLED AT %s DUE
    TO PREEMPTION ***" (or TIME LIMIT) between the first allocation's output and the requeued job's, appended to the
    same file under --open-mode=append; the Trainer resumed from its checkpoint ("Continuing training from global
    step", transformers trainer.py): one restart, the run's step the second allocation's."""
    stop = "slurmstepd: error: *** JOB 55120 ON gpu-c011 CANCELLED AT 2024-05-01T10:11:12 DUE TO PREEMPTION ***"
    again = ["  Continuing training from global step 400", *_hf_run(640, start=440)]
    series, words = _read(tmp_path, "\n".join([*_hf_run(480), stop, *again]) + "\n")
    assert (series.step, series.run_total, len(series.restarts)) == (640, 800, 1)
    assert "stopped" not in words and "done" not in words
    series, words = _read(tmp_path, "\n".join([*_hf_run(480), stop]) + "\n")
    assert series.step == 480 and "stopped" in words


# ---------------------------------------------------------------- Composer's console logger with no epoch length


def _composer(epochs: int, batches: int, total: bool) -> list[str]:
    """mosaicml/composer, composer/loggers/console_logger.py, ConsoleLogger._get_progress_string and log_to_console:
    with max_duration in epochs, "[epoch={e}][batch={b}/{len}]:" where the dataloader has a length, else
    "[epoch={e}][batch={b}]:", its metrics on the tab-indented lines after it; the evaluation's
    "[Eval batch={b}/{n}] Eval on {label} data"."""
    lines = ["******************************", "Config:", f"max_duration: {epochs}ep",
             "******************************"]
    for e in range(1, epochs + 1):
        for b in range(8, batches + 1, 8):
            lines += [f"[epoch={e}][batch={b}{f'/{batches}' if total else ''}]:",
                      f"\t Train loss/train/total: {4.0 - e * 0.4 - b / 1000:.4f}", "\t Train time/batch: 1"]
        lines += ["[Eval batch=1/4] Eval on eval data", "[Eval batch=4/4] Eval on eval data:",
                  "\t Eval metrics/eval/LanguageCrossEntropy: 2.71"]
    return lines


def test_composers_batch_of_an_epoch_with_no_length_is_no_restart(tmp_path: Path) -> None:
    """mosaicml/composer, console_logger.py, _get_progress_string: where the dataloader has no length the batch is
    the epoch's (batch_in_epoch) with no total: the next epoch's batch from the start is that epoch's, not a restart;
    the run counts epochs."""
    series, words = _read(tmp_path, "\n".join(_composer(4, 48, total=False)[:-12]) + "\n")
    assert len(series.restarts) == 0
    assert (series.step, series.run_total) == (4, 4)
    assert training_loss(series.metrics) == ("loss/train/total", 2.376)  # epoch 4, batch 24
    assert "done" not in words
    point = parse_line("[epoch=2][batch=16]:")
    assert point is not None and point.counts_epochs and (point.step, point.batch) == (2, 16)


def test_composers_batch_of_an_epoch_with_its_length_counts_batches(tmp_path: Path) -> None:
    """The same logger where the dataloader has a length ("[epoch=2][batch=16/48]:"): the run's batches."""
    series, _ = _read(tmp_path, "\n".join(_composer(3, 48, total=True)[:-9]) + "\n")
    assert len(series.restarts) == 0
    assert (series.step, series.run_total) == (128, 144)  # epoch 3, batch 32 of 48


# ---------------------------------------------------------------- t5x's end


def _t5x(periods: int, done: int) -> list[str]:
    """google-research/t5x, t5x/train.py, train: "Epoch %d of %d" as each period of steps begins, "Training for %d
    steps.", clu's LoggingWriter scalars "[step] collection=train ...", "END Train loop."; after the loop _cleanup()
    logs "Finished."."""
    head = "I1205 10:11:12.000321 140001 {}] "
    lines: list[str] = []
    step = 0
    for period in range(done):
        lines += [head.format("train.py:450") + f"Epoch {period} of {periods}",
                  head.format("train.py:462") + "Training for 1000 steps."]
        for k in range(5):
            step += 200
            lines.append(head.format("logging_writer.py:48") + f"[{step}] collection=train accuracy=0.52, "
                         f"cross_ent_loss=1.{k}4, learning_rate=0.001, loss=1.{k}6, timing/seconds=21.3")
        lines += [head.format("train.py:490") + "END Train loop.", head.format("train.py:503") + "Saving checkpoint."]
    return lines


def test_t5xs_finished_after_its_loop_ends_the_run(tmp_path: Path) -> None:
    """t5x/train.py, train's _cleanup: logging.info('Finished.') after the loop over the periods, all of them or
    fewer (trainer.stop_training: "Stopping training loop early since `stop_training` is requested."): the run is
    over where it stopped; without it, a run two periods into three is not."""
    end = "I1205 10:41:12.000321 140001 train.py:231] Finished."
    series, words = _read(tmp_path, "\n".join([*_t5x(3, 2), end]) + "\n")
    assert (series.step, series.run_total) == (2000, 3000)
    assert "done" in words
    series, words = _read(tmp_path, "\n".join(_t5x(3, 2)) + "\n")
    assert "done" not in words


def test_a_bare_finished_outside_t5xs_loop_says_no_end(tmp_path: Path) -> None:
    """A "Finished." that no periods' loop printed (a data step's, a download's) ends nothing: the run goes on."""
    lines = [*_hf_run(480), "Finished."]
    series, words = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 480
    assert "done" not in words


# ---------------------------------------------------------------- what the layer around the program says of its end


def test_slurmstepds_cancel_reasons_are_said() -> None:
    """SchedMD/slurm, src/slurmd/slurmstepd/req.c, _handle_signal_container: "*** %s ON %s CANCELLED AT %s DUE TO
    TIME LIMIT ***", "... DUE TO PREEMPTION ***" (a requeue may follow), "... DUE TO NODE FAILURE, SEE SLURMCTLD LOG
    FOR DETAILS ***"; a plain cancel has no reason."""
    at = "slurmstepd: error: *** JOB 60311 ON gpu-d004 CANCELLED AT 2024-06-02T08:09:10"
    assert run_stop(f"{at} DUE TO PREEMPTION ***") == "cancelled: preempted"
    assert run_stop(f"{at} DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***") == "cancelled: a node failed"
    assert run_stop(f"{at} DUE TO TIME LIMIT ***") == "cancelled at its time limit"
    assert run_stop(f"{at} ***") == "cancelled"


def test_sruns_report_of_a_tasks_non_zero_exit_stops_the_run(tmp_path: Path) -> None:
    """SchedMD/slurm, src/srun (its task exit report): "srun: error: %s: task %s: Exited with exit code %d" for a
    non-zero code only: the run stopped with an error where its training had not ended; after the Trainer's summary
    of a finished run (a failure at teardown) the run is done all the same."""
    assert run_stop("srun: error: gpu-d004: tasks 0-3: Exited with exit code 2") \
        == "an error: a task exited with code 2"
    assert run_stop("srun: error: gpu-d004: task 1: Exited with exit code 0") is None
    exit_line = "srun: error: gpu-d004: task 0: Exited with exit code 1"
    _, words = _read(tmp_path, "\n".join([*_hf_run(480), exit_line]) + "\n")
    assert "stopped" in words and "exited with code 1" in words
    summary = "{'train_runtime': 512.3, 'train_samples_per_second': 25.0, 'train_steps_per_second': 1.56, " \
              "'train_loss': 2.61, 'epoch': 1.0}"
    _, words = _read(tmp_path, "\n".join([*_hf_run(800), summary, exit_line]) + "\n")
    assert "done" in words


def test_slurmstepds_oom_kill_event_in_both_spellings() -> None:
    """SchedMD/slurm, src/plugins/task/cgroup (22.05: "Detected %u oom-kill event(s) in %ps cgroup."; later releases:
    "Detected %u oom_kill event in %ps. Some of the step tasks have been OOM Killed.")."""
    assert run_stop("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=60311.0 cgroup.") \
        == "out of memory (killed)"
    assert run_stop("slurmstepd: error: Detected 2 oom_kill events in StepId=60311.batch. Some of the step tasks "
                    "have been OOM Killed.") == "out of memory (killed)"


def test_systemds_main_process_exit_in_the_journal_stops_the_run(tmp_path: Path) -> None:
    """systemd/systemd, src/core/service.c, service_sigchld_event: "Main process exited, code=%s, status=%i/%s" of a
    run under systemd-run or a user unit, in the journal with the program's lines: killed or dumped by a signal, or
    exited with a failure, stops the run; status 0 says nothing."""
    assert run_stop("train.service: Main process exited, code=killed, status=9/KILL") == "killed by a signal"
    assert run_stop("train.service: Main process exited, code=dumped, status=11/SEGV") == "killed by a signal"
    assert run_stop("train.service: Main process exited, code=exited, status=1/FAILURE") == "an error: it exited"
    assert run_stop("train.service: Main process exited, code=exited, status=0/SUCCESS") is None
    lines = [f"Dec 05 10:11:{i % 60:02d} node07 python3[4242]: {line}" for i, line in enumerate(_hf_run(480))]
    lines.append("Dec 05 10:12:00 node07 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL")
    series, words = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 480 and "stopped (killed by a signal)" in words


# ---------------------------------------------------------------- wandb's console


def _wandb_footer(loss: str) -> list[str]:
    """wandb/wandb, wandb/sdk/wandb_run.py, Run._footer_history_summary_info: "wandb: Run history:" (each key and its
    sparkline), "wandb: Run summary:" (each key right-aligned, its last value, keys in order), then "wandb: 🚀 View run
    {name} at: {url}" and "wandb: Find logs at: {dir}"."""
    return ["wandb: ", "wandb: Run history:", "wandb:  train/epoch ▁▂▄▅▇█", "wandb:   train/loss █▇▅▄▂▁", "wandb: ",
            "wandb: Run summary:", "wandb:   eval/loss 2.204", "wandb:  train/epoch 1.0", f"wandb:   train/loss {loss}",
            "wandb: ", "wandb: 🚀 View run quiet-pond-7 at: https://wandb.ai/lab/proj/runs/k2m9x1",
            "wandb: Find logs at: ./wandb/run-20240501_101112-k2m9x1/logs"]


def test_wandbs_summary_gives_the_loss_a_bar_alone_never_printed(tmp_path: Path) -> None:
    """A loop whose bar prints no loss (tqdm's bar without a postfix) logging to wandb: the summary's last training
    loss is the run's; the evaluation's is not; the history's sparklines and the footer's links are no points."""
    bars = [f" {s * 100 // 900}%|██        | {s}/900 [00:{s % 60:02d}<01:40,  6.02it/s]" for s in range(30, 901, 30)]
    series, words = _read(tmp_path, "\n".join([*bars, *_wandb_footer("1.873")]) + "\n")
    assert (series.step, series.run_total) == (900, 900)
    assert training_loss(series.metrics) == ("train/loss", 1.873)
    assert "done" in words


def test_wandbs_summary_never_replaces_the_loss_the_loop_printed(tmp_path: Path) -> None:
    """The Trainer's own log dicts said the loss (transformers trainer.py, Trainer.log): the summary after them (wandb
    keeps what it was sent; a run's finish after an error prints it too) changes nothing, and is no end."""
    series, words = _read(tmp_path, "\n".join([*_hf_run(480), *_wandb_footer("9.999")]) + "\n")
    assert series.step == 480
    assert training_loss(series.metrics) == ("loss", 2.52)
    assert "done" not in words


# ---------------------------------------------------------------- a file cut mid-line


def _loop_lines(upto: int) -> str:
    """A loop's own line per ten steps ("step {n}/{total} | loss {x} | lr {y}", print to a file: block-buffered)."""
    return "\n".join(f"step {s}/1000 | loss {3 - s / 1000:.3f} | lr 3e-4" for s in range(10, upto + 1, 10))


def test_a_cut_last_line_says_no_restart_nor_another_total(tmp_path: Path) -> None:
    """CPython's io.BufferedWriter: a program's stdout redirected to a file is written in blocks (8 KiB), so a running
    job's file (and a killed one's) ends mid-line: "step 61" of "step 610/1000 ...", "610/10" of "610/1000". Such a
    last line with no line end after it is read only where it agrees with the lines before (no restart, no step back,
    no other total, no step past its total): the run stays at its last whole line, never "done"."""
    text = _loop_lines(600) + "\n"
    for cut in ("step 61", "step 610/10", "step 610/1000 | lo"):
        series, words = _read(tmp_path, text + cut)
        assert (series.step, series.run_total, len(series.restarts)) == (600, 1000, 0), cut
        assert "done" not in words
    series, _ = _read(tmp_path, text + "step 610/1000 | loss 2.391 | lr")  # cut after its counts: read
    assert series.step == 610


def test_a_last_line_without_its_line_end_still_says_the_end(tmp_path: Path) -> None:
    """A whole last line that only lacks its newline (an echo -n, a tail cut at its end) is read where it agrees: the
    Trainer's last bar and its end word (transformers trainer.py: "Training completed. ...")."""
    lines = _hf_run(800)
    series, words = _read(tmp_path, "\n".join(lines) + "\n\nTraining completed. Do not forget to share your model!")
    assert series.step == 800 and "done" in words
    series, _ = _read(tmp_path, "\n".join(lines[:-1]) + "\n" + lines[-1])  # the bar's last line, no newline
    assert (series.step, series.run_total) == (800, 800)


# ---------------------------------------------------------------- a bar over the run's epochs, by its word alone


def _outer_inner(epochs: int, done: int, batches: int) -> str:
    """tqdm/tqdm, tqdm/std.py, tqdm.__init__ and format_meter: an outer bar over the epochs (trange(E, desc="Epoch"),
    as transformers 3's Trainer.train drew it, its batches' bar desc="Iteration" inside) redrawn as each epoch ends,
    the inner bar's redraws on one line after their carriage returns."""
    out = ""
    for e in range(done + 1):
        out += f"Epoch:  {e * 100 // epochs}%|██        | {e}/{epochs} [0{e}:00<20:00, 62.0s/it]\n"
        if e == done:
            break
        out += "".join(f"\rIteration: {b * 100 // batches}%|████      | {b}/{batches} [00:{b % 60:02d}<00:30, "
                       f" 8.00it/s]" for b in range(20, batches + 1, 20)) + "\n"
    return out


def test_a_bar_whose_description_is_the_epochs_word_counts_the_runs_epochs(tmp_path: Path) -> None:
    """huggingface/transformers v3, trainer.py, Trainer.train: train_iterator = trange(..., desc="Epoch"), the
    batches' epoch_iterator = tqdm(..., desc="Iteration"): the outer bar's count is the epochs done and its total the
    run's epochs (its rate's unit is tqdm's default "it", not "epoch"); the inner bars are an epoch's batches."""
    point = parse_line("Epoch:  20%|██        | 2/10 [03:00<20:00, 60.0s/it]")
    assert point is not None and point.form == "epochs-bar" and (point.step, point.total) == (2, 10)
    point = parse_line("Epochs 3 of 10:  20%|██        | 2/10 [03:00<20:00, 60.0s/it]")
    assert point is None or point.form != "epochs-bar"  # a description that names its epoch is not the word alone
    series, _ = _read(tmp_path, _outer_inner(10, 3, 400))
    assert (series.step, series.run_total, len(series.restarts)) == (3, 10, 0)


def test_a_rich_task_over_the_epochs_counts_the_runs_epochs() -> None:
    """Textualize/rich, rich/progress.py, MofNCompleteColumn and Progress.add_task("Epochs", total=E): the task's
    row is its description, the bar, "2/10": the epochs done of the run's; a task of its batches is not."""
    point = parse_line("Epochs  ━━━━━━━━━━╺━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  2/10 0:03:00")
    assert point is not None and point.form == "epochs-bar" and (point.step, point.total) == (2, 10)
    point = parse_line("Batches ━━━━━━━━━━━━━━━━━━━━━━━━━━╺━━━━━━━━━━━━━  320/500 0:00:40")
    assert point is not None and point.form != "epochs-bar" and (point.step, point.total) == (320, 500)
