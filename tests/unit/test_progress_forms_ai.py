"""General mechanisms of the progress reader, round DD (issue [progress-real], set cc's logs read as nothing): ignite's
engines' own records, a metrics table whose first column is the step, and a loop's summary that names its losses by
their phase alone. Every line here is written for the test, in the layout the named program's format strings give,
with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import table_header, table_row, training_loss
from tests.support.progress_logs import read_lines

# ---------------------------------------------------------------- ignite's Engine.run records

_HEAD = "2025-06-02 10:{m:02d}:{s:02d},{ms:03d} Trainer INFO: "


def _stamp(i: int) -> str:
    return _HEAD.format(m=i // 60 % 60, s=i % 60, ms=7 * i % 1000)


def _ignite(epochs: range, max_epochs: int, *, evaluate_every: int = 0, finished: bool = False) -> list[str]:
    """ignite/engine/engine.py's records under a setup_logger format: the trainer's run starting, its epochs'
    "Epoch[N] Complete. Time taken: HH:MM:SS.fff", an evaluator's run of one epoch inside it every
    ``evaluate_every`` epochs (its own three records), and the trainer's run finished."""
    lines = [f"{_stamp(0)}Engine run starting with max_epochs={max_epochs}."]
    for e in epochs:
        if evaluate_every and e % evaluate_every == 0:
            lines += [f"{_stamp(e * 3)}Engine run starting with max_epochs=1.",
                      f"{_stamp(e * 3 + 1)}Epoch[1] Complete. Time taken: 00:00:04.{e:03d}",
                      f"{_stamp(e * 3 + 1)}Engine run finished. Time taken: 00:00:04.{e + 9:03d}"]
        lines.append(f"{_stamp(e * 3 + 2)}Epoch[{e}] Complete. Time taken: 00:00:2{e % 10}.{e * 37 % 1000:03d}")
    if finished:
        lines.append(f"{_stamp(999)}Engine run finished. Time taken: 00:07:41.500")
    return lines


def test_ignite_epochs_complete_are_the_run_s_epochs_of_its_max_epochs(tmp_path: Path) -> None:
    """Where the engine's records are the only progress lines: the trainer's epochs, of its max_epochs; an
    evaluator's run of one epoch between them is no restart and no step of the run."""
    series, words = read_lines(tmp_path, _ignite(range(1, 10), 30, evaluate_every=4))
    assert (series.step, series.run_total) == (9, 30)
    assert not series.restarts and "done" not in words


def test_ignite_trainer_s_run_finished_ends_the_run(tmp_path: Path) -> None:
    """The trainer's "Engine run finished" after its last epoch: the run is done (the evaluator's, inside it, is
    not)."""
    series, words = read_lines(tmp_path, _ignite(range(1, 13), 12, evaluate_every=4, finished=True))
    assert (series.step, series.run_total) == (12, 12) and series.ended and "done" in words
    series, words = read_lines(tmp_path, _ignite(range(1, 5), 12, evaluate_every=4))
    assert not series.ended and "done" not in words  # (its last line an evaluator's finished run)


def test_ignite_records_beside_the_loop_s_own_lines_keep_its_steps(tmp_path: Path) -> None:
    """A handler's own line every 10 iterations (the run's steps: "epoch[2] - iteration[30/120] loss: 0.61") beside
    the engine's records: the step stays the iteration's, the epochs' records say only that an epoch is over (a
    guard: the records must not add points of their own there)."""
    lines = ["INFO:ignite.engine.engine.Engine:Engine run starting with max_epochs=8."]
    for e in (1, 2):
        lines += [f"INFO:root:epoch[{e}] - iteration[{i}/120] loss: 0.{80 - e * 10 - i // 10}" for i in
                  range(10, 130, 10)]
        lines.append(f"INFO:ignite.engine.engine.Engine:Epoch[{e}] Complete. Time taken: 00:01:0{e}")
    lines += [f"INFO:root:epoch[3] - iteration[{i}/120] loss: 0.4{i // 10}" for i in (10, 20)]
    series, _ = read_lines(tmp_path, lines)
    assert series.step == 260 and not series.restarts


def test_an_evaluator_s_run_finished_without_the_trainer_s_start_is_no_end(tmp_path: Path) -> None:
    """A log that begins after the trainer's start (a tail): an evaluator's run finished is not the run's end (a
    guard: the end must not fire)."""
    lines = _ignite(range(1, 6), 20, evaluate_every=2)[1:]
    series, words = read_lines(tmp_path, lines)
    assert not series.ended and "done" not in words


# ---------------------------------------------------------------- a step's metrics table


def test_a_tsv_step_table_is_the_run_s_steps_and_losses(tmp_path: Path) -> None:
    """A loop that writes its metrics as a TSV and prints it ("step<tab>loss", a row every 10 steps): its steps, its
    last loss."""
    rows = [f"{s}\t{6 - s / 100:.6f}" for s in range(10, 310, 10)]
    series, _ = read_lines(tmp_path, ["step\tloss", *rows])
    assert series.step == 300
    assert training_loss(series.metrics) == ("loss", 3.0)


def test_a_csv_and_a_padded_step_table() -> None:
    """The same as a CSV with more columns ("iter,loss,lr"), and padded by blanks with three columns or more."""
    names = table_header("iter,train_loss,lr")
    assert names == ("iter", "train_loss", "lr")
    row = table_row("1200,2.3456,3.0e-04", names)
    assert row is not None and row.step == 1200 and not row.counts_epochs
    assert row.metrics["train_loss"] == 2.3456
    assert table_header("global_step   loss      lr") == ("global_step", "loss", "lr")


def test_two_words_with_a_space_are_no_step_table() -> None:
    """"step loss" with a space may be a sentence's words: no table of two columns without a tab or a comma, and
    none without a loss's column (a guard: the header must not be read)."""
    assert table_header("Step loss") is None
    assert table_header("step\tlr\tgrad_norm") is None
    assert table_header("steps taken, loss so far") is None


# ---------------------------------------------------------------- losses named by their phase alone


def _summary(epochs: range, total: int, sep: str = "/") -> list[str]:
    """A hand-written loop's print of each epoch: its epoch of the run's, then its losses by phase, then its lr."""
    return [f"epoch {e:3d}{sep}{total}  train {0.9 / e:.4f}  val {1.0 / e:.4f}  lr {1e-3 / e:.2e}" for e in epochs]


def test_a_summary_naming_its_losses_by_phase_is_read(tmp_path: Path) -> None:
    """"epoch  12/240  train 0.0750  val 0.0833  lr 8.33e-05": the run in epochs, of 240, its training loss the number
    after "train" (not the evaluation's after "val")."""
    series, _ = read_lines(tmp_path, ["device: cuda", *_summary(range(1, 13), 240)])
    assert (series.step, series.run_total) == (12, 240)
    loss = training_loss(series.metrics)
    assert loss is not None and abs(loss[1] - 0.075) < 1e-9


def test_a_summary_without_a_total_is_read_by_its_phase_words(tmp_path: Path) -> None:
    """The same line with no epochs' count ("epoch 7 | trn 0.61 | dev 0.70"): read as well, no total."""
    lines = [f"epoch {e} | trn 0.{70 - e} | dev 0.{80 - e}" for e in range(1, 8)]
    series, _ = read_lines(tmp_path, lines)
    assert series.step == 7 and series.run_total is None
    assert training_loss(series.metrics) == ("loss", 0.63)


def test_percentages_by_phase_are_no_loss(tmp_path: Path) -> None:
    """"train 91.2% val 90.1%" are accuracies: no loss is read from them (a guard: the phase's loss must not
    fire)."""
    lines = [f"epoch {e}/30 train {80 + e}.2% val {79 + e}.1% time 31s" for e in range(1, 8)]
    series, _ = read_lines(tmp_path, lines)
    assert training_loss(series.metrics) is None
