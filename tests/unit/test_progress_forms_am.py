"""General mechanisms of the progress reader, round HH (issue [progress-real]): the Trainer's notebook table where a
notebook's output is exported as its HTML, and ignite's engines whose runs say "resuming" (an evaluator run again
after each of the trainer's epochs). Every line here is written for the test, in the layout the named program's
format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- the Trainer's notebook table as HTML


def _notebook(done: int, total: int, epoch: str, losses: dict[int, float], *, margin: str = "    ") -> list[str]:
    """A notebook's training cell exported to Markdown (its output indented): a data preparation bar, then what
    transformers/utils/notebook.py draws: html_progress_bar()'s "<progress value='{value}' max='{total}' ...>" and
    its label "[{value}/{total} {elapsed}, Epoch {epoch}/{epochs}]", and text_to_html_table()'s table: one
    "<th>{name}</th>" a line in its header, one "<td>{value}</td>" a line in each row (floats "%.6f")."""
    body = ["Map (num_proc=2):   0%|          | 0/9300 [00:00<?, ? examples/s]", "", "", "<div>", "",
            f"  <progress value='{done}' max='{total}' style='width:300px; height:20px; vertical-align: middle;'>"
            "</progress>", f"  [{done}/{total} 01:51, Epoch {epoch}]", "</div>",
            '<table border="1" class="dataframe">', "  <thead>", ' <tr style="text-align: left;">',
            "      <th>Step</th>", "      <th>Training Loss</th>", "    </tr>", "  </thead>", "  <tbody>"]
    for step, loss in losses.items():
        body += ["    <tr>", f"      <td>{step}</td>", f"      <td>{loss:.6f}</td>", "    </tr>"]
    body += ["  </tbody>", "</table><p>"]
    return ["```python", "stats = trainer.train()", "```", ""] + [margin + line if line else line for line in body]


def test_a_notebook_table_as_html_gives_the_steps_and_the_loss(tmp_path: Path) -> None:
    """NotebookTrainingTracker's widget at the run's end ("[40/40 01:51, Epoch 1/2]", under a dataset's map bar that
    sits at 0 of its examples) and its table's rows, one <td> a line: step 40 of 40, done, the last row's loss."""
    series, words = _read(tmp_path, _notebook(40, 40, "1/2", {s: 2.0 - s / 100 for s in range(4, 41, 4)}))
    assert (series.step, series.total) == (40, 40)
    assert "done" in words
    assert training_loss(series.metrics) == ("loss", 1.6)


def test_a_notebook_table_cut_short_is_no_end(tmp_path: Path) -> None:
    """The widget and its table saved while the run trains ("[25/60 ..., Epoch 0/1]", rows to step 25): step 25 of
    60, not done, the loss of step 25."""
    series, words = _read(tmp_path, _notebook(25, 60, "0/1", {s: 1.0 + s / 1000 for s in range(5, 26, 5)}))
    assert (series.step, series.total) == (25, 60)
    assert "done" not in words
    assert training_loss(series.metrics) == ("loss", 1.025)


def test_a_notebook_html_table_with_its_evaluation_columns(tmp_path: Path) -> None:
    """A table of "Step | Training Loss | Validation Loss" (the Trainer evaluating every N steps; "No log" where no
    training loss was logged yet): the training loss is the last row's, the validation's apart."""
    lines = _notebook(30, 30, "3/3", {})[:-2]
    lines.insert(-3, "          <th>Validation Loss</th>")  # (the header's third column, before its </tr>)
    for step, train, valid in ((10, "No log", 0.9), (20, 0.812345, 0.8), (30, 0.701234, 0.75)):
        lines += ["        <tr>", f"          <td>{step}</td>", f"          <td>{train}</td>",
                  f"          <td>{valid:.6f}</td>", "        </tr>"]
    lines += ["      </tbody>", "    </table><p>"]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total) == (30, 30)
    assert training_loss(series.metrics) == ("loss", 0.701234)
    assert series.metrics.get("eval_loss") == 0.75


# ---------------------------------------------------------------- ignite's engines resuming


def _monai(epochs_done: int, *, iters: int = 3, max_epochs: int = 10) -> list[str]:
    """MONAI's SupervisedTrainer with a SupervisedEvaluator run after each epoch, its records under the logger
    ignite gives each engine ("ignite.engine.engine.<class>"): ignite's Engine.run() says "Engine run resuming from
    iteration {iteration}, epoch {epoch} until {max_epochs} epochs" where the engine's state is set before its run
    (ignite/engine/engine.py), "Epoch[{epoch}] Complete. Time taken: ..." and "Engine run complete. Time taken: ...";
    MONAI's StatsHandler "Epoch: {epoch}/{max_epochs}, Iter: {i}/{epoch_length} -- train_loss: {value:.4f}"."""
    def rec(engine: str, text: str) -> str:
        return f"2025-03-04 10:00:00,000 - ignite.engine.engine.{engine} - INFO - {text}"
    lines = [rec("SupervisedTrainer", f"Engine run resuming from iteration 0, epoch 0 until {max_epochs} epochs")]
    for e in range(1, epochs_done + 1):
        lines += [rec("SupervisedTrainer", f"Epoch: {e}/{max_epochs}, Iter: {i}/{iters} -- train_loss: "
                      f"{0.9 - e / 100 - i / 1000:.4f}") for i in range(1, iters + 1)]
        lines += [rec("SupervisedEvaluator", f"Engine run resuming from iteration 0, epoch {e - 1} until {e} epochs"),
                  rec("SupervisedEvaluator", f"Epoch[{e}] Complete. Time taken: 00:00:02"),
                  rec("SupervisedEvaluator", "Engine run complete. Time taken: 00:00:02"),
                  rec("SupervisedTrainer", f"Epoch[{e}] Complete. Time taken: 00:00:09")]
    return lines


def test_an_evaluator_resumed_after_each_epoch_is_no_restart(tmp_path: Path) -> None:
    """Four epochs of three iterations, each followed by the evaluator's run "resuming from iteration 0, epoch e-1
    until e epochs" inside the trainer's: no restart, the trainer's iteration 12 of its 30, not done."""
    series, words = _read(tmp_path, _monai(4))
    assert series.restarts == []
    assert (series.step, series.total) == (12, 30)
    assert "done" not in words
    assert training_loss(series.metrics) == ("train_loss", 0.857)


def test_the_trainer_resumed_from_iteration_zero_runs_to_its_end(tmp_path: Path) -> None:
    """The whole run (its engine's state set before it: "resuming from iteration 0, epoch 0 until 3 epochs"), then
    the trainer's own "Engine run complete": done, with no restart."""
    lines = _monai(3, max_epochs=3) + [
        "2025-03-04 10:00:00,000 - ignite.engine.engine.SupervisedTrainer - INFO - Engine run complete. "
        "Time taken: 00:00:40"]
    series, words = _read(tmp_path, lines)
    assert series.restarts == []
    assert (series.step, series.total) == (9, 9)
    assert "done" in words


def test_an_excerpt_without_the_trainer_s_start_is_not_ended_by_an_evaluator(tmp_path: Path) -> None:
    """A paste of the run's later part (the trainer's "Engine run resuming ..." cut off before it): the first engine
    run seen is an evaluator's ("... until 2 epochs", more than one epoch), and its "Engine run complete" ends no
    training, since no training point was read inside it. The run cut in its 6th epoch of 10 is not done."""
    lines = _monai(6)[7:]  # from the 2nd epoch's iterations on: the trainer's and the 1st evaluator's starts cut off
    series, words = _read(tmp_path, lines)
    assert series.step == 18
    assert "done" not in words
