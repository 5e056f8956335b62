"""General mechanisms of the progress reader, round JJ (issue [progress-real]): a log pasted as comments ("# " before
its lines, a script's or a README's code block), and Metaflow's task prefix before a task's lines. Every line here
is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.loglines import parse_prefix
from ntui.core.progress.lines import parse_line
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a log pasted as comments


def _keras1_epoch(e: int, epochs: int, loss: float) -> list[str]:
    """Keras 1.x's fit(verbose=1) of one epoch: ProgbarLogger's 'Epoch %d/%d' % (epoch + 1, nb_epoch), Progbar's last
    ETA redraw ('%d/%d [' bar '] - ETA: %ds' then ' - %s: %.4f' each value) with ModelCheckpoint's 'Epoch %05d: %s
    did not improve' (0-based) glued on, then the bar's last line (' - %ds' and the epoch's values)."""
    return [f"Epoch {e}/{epochs}",
            f"4480/4500 [============================>.] - ETA: 0s - loss: {loss + 0.002:.4f} - acc: 0.8812"
            f"Epoch {e - 1:05d}: val_loss did not improve",
            f"4500/4500 [==============================] - 2s - loss: {loss:.4f} - acc: 0.8815 - val_loss: 0.3120 "
            f"- val_acc: 0.8650"]


def test_a_keras_run_whose_epoch_headers_were_pasted_as_comments_is_read(tmp_path: Path) -> None:
    """A Keras 1.x run pasted into a README's code block with "# " before its epoch headers ("# Epoch 2/3", as a
    comment mark before Keras' own 'Epoch %d/%d'): the headers are read as Keras printed them, the run's epochs."""
    lines = ["# fit of the small dense model", ""]
    for e, loss in ((1, 0.61), (2, 0.42), (3, 0.35)):
        head, *rest = _keras1_epoch(e, 3, loss)
        lines += [f"# {head}", *rest]
    series, words = _read(tmp_path, lines)
    assert series.samples[-1].step == 3 and series.total == 3
    assert "done" in words and not series.restarts
    assert series.metrics["loss"] == 0.35


def test_a_run_pasted_whole_as_comments_is_read_as_printed(tmp_path: Path) -> None:
    """Every line a "# " comment (a run pasted at the end of the script that made it): the same reading as the bare
    log; a "#" with no space after it is the line's own text."""
    bare: list[str] = []
    for e, loss in ((1, 0.61), (2, 0.42)):
        bare += _keras1_epoch(e, 4, loss)
    series, words = _read(tmp_path, [f"# {line}" for line in bare])
    assert series.samples[-1].step == 2 and series.total == 4 and "done" not in words
    assert series.metrics["loss"] == 0.42


# ---------------------------------------------------------------- Metaflow's task prefix


def test_metaflow_task_prefix_comes_off_with_its_time() -> None:
    """Metaflow's local runtime, runtime.py Task.log(): prefix "[%s (pid %s)] " % (run-id/step/task-id, pid), after
    its logger's time ("%Y-%m-%d %H:%M:%S.%f" cut to milliseconds); the program's own line is the rest."""
    prefix, rest = parse_prefix("2025-02-03 14:05:06.789 [1738591506000111/fit/3 (pid 5150)] GPU available: False")
    assert rest == "GPU available: False" and prefix.time is not None
    prefix, rest = parse_prefix("[1738591506000111/fit/3 (pid 5150)] Task is starting.")
    assert rest == "Task is starting."
    assert parse_prefix("[12/40] loss 0.5")[1] == "[12/40] loss 0.5"  # (a loop's own counter is no task's path)


def test_a_metaflow_task_s_loop_lines_are_read_with_their_time(tmp_path: Path) -> None:
    """A hand-written loop's "step {s}/{S} loss {l:.4f}" lines in a Metaflow task's output: each a point at the time
    Metaflow's prefix says (a second apart here), not at the file's."""
    lines = [f"2025-02-03 14:05:{10 + s:02d}.500 [1738591506000111/train/2 (pid 5150)] step {s}/40 loss "
             f"{1 - s / 50:.4f}" for s in range(1, 9)]
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 8 and series.total == 40
    assert series.samples[-1].time - series.samples[0].time == 7.0


# ---------------------------------------------------------------- excerpts of the run pasted before it


def test_epochs_quoted_before_the_whole_run_are_excerpts_not_starts(tmp_path: Path) -> None:
    """A README that quotes two epochs of a Keras 1.x run (epoch 5, then epoch 3) before pasting the whole run: each
    quoted epoch's lines are printed again, the same values, in the run below. They were excerpts of it, not starts
    of runs of their own: no restart, the run's points alone."""
    losses = {1: 0.61, 2: 0.52, 3: 0.44, 4: 0.39, 5: 0.33, 6: 0.30}
    lines = ["Why is the best checkpoint not the last epoch?", *_keras1_epoch(5, 6, losses[5]), "",
             "and earlier:", *_keras1_epoch(3, 6, losses[3]), "", "The whole run:"]
    for e in range(1, 7):
        lines += _keras1_epoch(e, 6, losses[e])
    series, words = _read(tmp_path, lines)
    assert series.restarts == [] and "done" in words
    assert [x.step for x in series.samples] == [1, 2, 3, 4, 5, 6]


def test_a_short_first_attempt_whose_values_differ_is_still_a_restart(tmp_path: Path) -> None:
    """A first attempt of one epoch, then the run from its start with other values (another seed): a restart, as
    before; an epoch printed once is no excerpt."""
    lines = [*_keras1_epoch(1, 3, 0.70), *_keras1_epoch(2, 3, 0.58)]
    for e, loss in ((1, 0.66), (2, 0.51), (3, 0.45)):
        lines += _keras1_epoch(e, 3, loss)
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 1


# ---------------------------------------------------------------- Metaflow's word of a flow that finished


def _flow(lines: list[str]) -> list[str]:
    """A loop's "step {s}/{S} loss {l:.4f}" lines in a Metaflow task (its "[run/step/task (pid P)] " prefix)."""
    return [f"2025-02-03 14:05:{10 + s:02d}.500 [1738591506000111/train/2 (pid 5150)] step {s}/20 loss 0.{90 - s}00"
            for s in range(1, 6)] + lines


def test_metaflow_s_done_after_its_end_step_is_the_end(tmp_path: Path) -> None:
    """Metaflow runtime.py, NativeRuntime.execute(): self._logger("Done!", system_msg=True) once the flow's end step
    finished, after its loop and its try/finally (a failed flow logs "Workflow failed." and raises before it)."""
    _, words = _read(tmp_path, _flow(["2025-02-03 14:05:20.100 [1738591506000111/train/2 (pid 5150)] Task finished "
                                      "successfully.", "2025-02-03 14:05:21.700 Done!"]))
    assert "done" in words
    _, words = _read(tmp_path, _flow(["2025-02-03 14:05:21.700 Workflow failed."]))
    assert "done" not in words
    _, words = _read(tmp_path, _flow(["Done!"]))  # (a bare "Done!" says nothing of whose end it is)
    assert "done" not in words


# ---------------------------------------------------------------- a table's row printed over a bar's start


def test_a_table_row_over_a_bar_s_start_is_no_bar() -> None:
    """Lightning 1.x's ModelSummary table ("| Name | Type | Params", cells between "|") printed over the start of a
    validation bar's last redraw: tqdm's "{desc}: {percentage}%" is gone, only its glyphs and counts are left, and
    what the bar counted is not known. A bar with its percentage is read as before."""
    assert parse_line("| Name  | Kind   | Params|██████████| 52/52 [00:01<00:00, 40.2it/s]") is None
    point = parse_line("Validation DataLoader 0: 100%|██████████| 52/52 [00:01<00:00, 40.2it/s]")
    assert point is not None and point.step == 52


# ---------------------------------------------------------------- several fits in one program


def _lightning1_fit(version: int, epochs: int, last: int, loss: float) -> list[str]:
    """Lightning 1.x's TQDMProgressBar main bar ("Epoch {e}: " then tqdm's "{n}/{total}", the total the epoch's 40
    training plus 10 validation batches, postfix "loss=, v_num=" with the logger's version), each epoch at the
    validation's start (40/50) and its end (50/50), the last epoch at ``last`` training batches."""
    bar = "[00:02<00:00, 20.10it/s, loss={loss}, v_num={v}]"
    lines = []
    for e in range(epochs):
        lines.append(f"Epoch {e}:  80%|████████  | 40/50 " + bar.format(loss=loss, v=version))
        lines.append(f"Epoch {e}: 100%|██████████| 50/50 " + bar.format(loss=loss, v=version))
    lines.append(f"Epoch {epochs}:  40%|████      | {last}/50 " + bar.format(loss=loss, v=version))
    return lines


def test_a_new_trainer_s_fit_is_the_run_now_not_a_restart(tmp_path: Path) -> None:
    """A script that fits twice with a new Trainer each time (a fold's fit, then the final fit): the second fit's bar
    says the next logger version (v_num=3 after v_num=2) as its step goes back. The run is the second fit, read as
    it would be alone; no restart."""
    both, _ = _read(tmp_path, [*_lightning1_fit(2, 3, 20, 0.52), "Testing: 100%|██████████| 12/12 [00:00<00:00]",
                               *_lightning1_fit(3, 1, 20, 0.41)])
    alone, _ = _read(tmp_path, _lightning1_fit(3, 1, 20, 0.41))
    assert both.restarts == []
    assert both.samples[-1].step == alone.samples[-1].step
    assert both.metrics["loss"] == 0.41


def test_the_same_fit_s_bar_going_back_is_a_restart_still(tmp_path: Path) -> None:
    """The same logger version's bar from its first epoch again (the script run again, its logger's version
    pinned): a restart, as before."""
    series, _ = _read(tmp_path, [*_lightning1_fit(2, 3, 20, 0.52), *_lightning1_fit(2, 1, 20, 0.41)])
    assert len(series.restarts) == 1
