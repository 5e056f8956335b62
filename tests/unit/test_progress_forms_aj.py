"""General mechanisms of the progress reader, round EE (issue [progress-real]): a table printed again after a fit's
end is a fit of its own; a table whose first row goes on from an earlier fit's epoch numbers the run's epochs; a
callback's last loss that is the Trainer's summary's mean. Every line here is written for the test, in the layout
the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- fastai v1: a fit of its own after "Total time"


def _fastai_fit(rows: int, loss: float, header: str = "epoch     train_loss  valid_loss  accuracy  time") -> list[str]:
    """fastai v1's console table of one fit (fastprogress' ConsoleMasterBar: the header, one row per epoch from 0,
    f"{epoch:<10}" then each value's '%.6f' padded), then f'Total time: {format_time(t)}' once its bar is done."""
    out = [header]
    for e in range(rows):
        out.append(f"{e:<10}{loss - e / 100:<12.6f}{0.4 + e / 100:<12.6f}{0.7 + e / 100:<10.6f}00:31")
    return [*out, "Total time: 02:05"]


def test_a_table_after_a_fits_total_time_is_a_fit_of_its_own(tmp_path: Path) -> None:
    """fastai v1 through a script that fits a language model, then a classifier (another learner): each fit prints
    its table and "Total time:". The classifier's table is not the language model's epochs going on: the step is its
    last row's epoch, with no restart, and its own end holds."""
    lines = ["Training the language model", *_fastai_fit(7, 3.2), "Saving the encoder",
             "Starting the classifier", *_fastai_fit(3, 0.8, "epoch     train_loss  valid_loss  f_beta    time")]
    series, words = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (2, 0)
    assert training_loss(series.metrics) == ("train_loss", 0.78)
    assert "done" in words


def test_a_fit_of_its_own_cut_by_an_error_is_not_done(tmp_path: Path) -> None:
    """The same, the last fit stopped by an error after its row 1: its step, and the end of the fit before it does
    not hold for it."""
    lines = [*_fastai_fit(5, 2.9), "Starting the classifier", *_fastai_fit(4, 0.6)[:3],
             "Traceback (most recent call last):", '  File "cls.py", line 40, in <module>',
             "RuntimeError: CUDA error: out of memory"]
    series, words = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (1, 0)
    assert "done" not in words


def test_a_table_again_without_an_end_still_goes_on(tmp_path: Path) -> None:
    """fastai 2's fine_tune prints no "Total time:" between its frozen fit's table and the next: that next table's
    rows go on from the first's epochs (the rule above takes nothing from it)."""
    lines = _fastai_fit(1, 1.1)[:-1] + _fastai_fit(3, 0.9)[:-1]
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (3, 0)


# ---------------------------------------------------------------- skorch: epochs numbered across fits


def _skorch_table(first: int, last: int) -> list[str]:
    """skorch's PrintLog: tabulate's 'simple' table of the history's rows, the header and its dashed rule at a fit's
    first epoch, the epoch column the history's epoch (len(history) after new_epoch(): across fits where the history
    is kept, as LoadInitState restores it), '+' in cp where the Checkpoint saved."""
    out = ["  epoch    train_loss    valid_acc    valid_loss    cp     dur",
           "-------  ------------  -----------  ------------  ----  ------"]
    for e in range(first, last + 1):
        out.append(f"{e:>7}  {0.6 - e / 100:>12.4f}  {0.5 + e / 100:>11.4f}  {0.7 - e / 100:>12.4f}     +  0.0412")
    return out


def test_a_second_tables_first_row_past_the_start_names_the_runs_epoch(tmp_path: Path) -> None:
    """A first fit of 12 epochs, then a second resumed from the epoch-10 checkpoint: its table starts at 11 and runs
    to 20. The rows are the run's epochs (20, not 12 + 20): the step goes back from 12 to 11, a restart."""
    lines = ["[first] fitting", *_skorch_table(1, 12), "", "[second] resuming from the checkpoint", "",
             *_skorch_table(11, 20)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (20, 1)
    assert training_loss(series.metrics) == ("train_loss", 0.4)


# ---------------------------------------------------------------- the Trainer's mean handed to a callback


def _trainer_run(last_loss: float, mean: float) -> list[str]:
    """transformers' Trainer (logging every 10 steps, its dicts string-formatted '%.4g') with a script's callback
    whose on_log prints f"step={state.global_step} | loss={loss:.6f} | lr={lr:.6e}" of the logs it is given: at the
    end the Trainer's self.log(metrics) hands it the summary, whose train_loss is the run's mean (no lr: printed
    "step=N | loss=x"), then prints the summary dict."""
    lines = []
    for step in range(10, 50, 10):
        loss = last_loss + (40 - step) / 100
        lines += [f"{{'loss': '{loss:.4g}', 'grad_norm': '0.31', 'learning_rate': '{5e-5 - step * 1e-6:.4g}', "
                  f"'epoch': '{step / 40:.4g}'}}", f"step={step} | loss={loss:.6f} | lr={5e-5 - step * 1e-6:.6e}"]
    return [*lines, f"step=40 | loss={mean:.6f}",
            f"{{'train_runtime': '612.5', 'train_samples_per_second': '4.1', 'train_steps_per_second': '0.06', "
            f"'train_loss': '{mean:.4g}', 'epoch': '1'}}"]


def test_a_callbacks_last_loss_that_is_the_summarys_mean_is_not_the_last_loss(tmp_path: Path) -> None:
    """The callback's last line says the summary's mean (0.8123, the summary's '0.8123'): the last training loss is
    the step's before it (0.5)."""
    series, words = _read(tmp_path, _trainer_run(0.5, 0.812345))
    assert series.step == 40 and "done" in words
    loss = training_loss(series.metrics)
    assert loss is not None and abs(loss[1] - 0.5) < 1e-9


def test_a_last_loss_that_is_not_the_mean_stays(tmp_path: Path) -> None:
    """A last line whose loss is not the summary's mean is the run's last loss: kept."""
    lines = _trainer_run(0.5, 0.812345)
    lines[-1] = lines[-1].replace("'train_loss': '0.8123'", "'train_loss': '0.6411'")
    series, _ = _read(tmp_path, lines)
    loss = training_loss(series.metrics)
    assert loss is not None and abs(loss[1] - 0.812345) < 1e-9
