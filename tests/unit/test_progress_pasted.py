"""A training log as users post it, read as the program wrote it (issue [progress-real]): an issue's Markdown code
block indents every line, and a copy of a coloured terminal keeps its escape sequences. Neither changes where the
run is (``bench/progress_invariance.py`` measures both over the corpus). Every line here is written for the test,
in the layout the named program prints, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import training_loss
from ntui.core.progress.read import paste_margin
from ntui.core.textsafe import inert, without_escapes
from tests.support.progress_logs import read_lines, read_text


def _keras(epochs: int, done: int) -> list[str]:
    """Keras' fit(epochs=) with verbose=1, as a file captures it: its epoch header, then its bar's last state."""
    lines: list[str] = []
    for e in range(1, done + 1):
        lines += [f"Epoch {e}/{epochs}",
                  f"120/120 [==============================] - 4s 31ms/step - loss: 0.{90 - e:02d} - acc: 0.7{e}"]
    return lines


def _pipe(steps: range) -> list[str]:
    """DeepSpeed's pipeline engine's progress line every steps_per_print steps, read from the line's start."""
    return [f"steps: {s} loss: {9 - s / 100:.4f} iter time (s): 0.61{s % 7} samples/sec: 104.{s % 9}" for s in steps]


def test_a_code_block_s_indent_is_taken_off_each_line(tmp_path: Path) -> None:
    """Keras' epoch headers read from a line's start: indented four blanks by a Markdown code block, they are read
    all the same, and so is the run's end (its last epoch reached)."""
    plain, plain_words = read_lines(tmp_path, _keras(12, 12))
    pasted, pasted_words = read_lines(tmp_path, ["    " + line for line in _keras(12, 12)])
    assert (pasted.step, pasted.run_total) == (plain.step, plain.run_total) == (12, 12)
    assert "done" in pasted_words and "done" in plain_words


def test_an_indented_paste_of_a_run_cut_short_is_not_done(tmp_path: Path) -> None:
    """The same paste of a run cut at its 5th epoch of 12: not done, at epoch 5."""
    series, words = read_lines(tmp_path, ["    " + line for line in _keras(12, 5)])
    assert (series.step, series.run_total) == (5, 12)
    assert "done" not in words


def test_an_indented_paste_of_a_killed_run_is_stopped(tmp_path: Path) -> None:
    """A paste of a run the kernel killed: the shell's ``Killed``, indented as the rest, says it stopped (no finish
    time for a run that is not finishing)."""
    lines = [*_keras(30, 7), "Killed"]
    series, words = read_lines(tmp_path, ["    " + line for line in lines])
    assert (series.step, series.run_total) == (7, 30) and series.stopped is not None and "stopped" in words


def test_a_tab_margin_and_a_list_item_s_margin_are_pastes_too(tmp_path: Path) -> None:
    """A tab before every line, or a list item's eight blanks: the same reading as the plain log."""
    for margin in ("\t", " " * 8):
        series, _ = read_lines(tmp_path, [margin + line for line in _keras(9, 4)])
        assert (series.step, series.run_total) == (4, 9), margin


def test_the_margin_is_what_every_line_begins_with() -> None:
    """The margin is the blanks that all of the log's first lines begin with: one line at the left edge says there
    is none, a single blank is a program's own (srun pads its labels with one), and two lines say too little."""
    assert paste_margin(["    Epoch 1/3", "      12/12 [===] - loss: 0.5", "    Epoch 2/3"]) == "    "
    assert paste_margin(["    Epoch 1/3", "12/12 [===] - loss: 0.5", "    Epoch 2/3"]) == ""
    assert paste_margin([" 3: step 10", " 4: step 10", " 5: step 10"]) == ""
    assert paste_margin(["    a", "    b"]) == ""
    assert paste_margin(["\tstep 1", "\tstep 2", "", "\tstep 3"]) == "\t"


def test_a_program_s_own_indent_is_kept_where_the_log_starts_at_the_edge(tmp_path: Path) -> None:
    """A log whose lines start at the left edge keeps every other line's own blanks: the Keras bar a program pads
    (`` 60/120 [====``) stays its epoch's, under its epoch header (a guard: the margin must not fire)."""
    lines = ["Epoch 1/4", " 60/120 [==============>...............] - ETA: 2s - loss: 0.61",
             "120/120 [==============================] - 4s 31ms/step - loss: 0.58", "Epoch 2/4",
             " 60/120 [==============>...............] - ETA: 2s - loss: 0.52"]
    series, words = read_lines(tmp_path, lines)
    assert series.step == 2 and series.run_total == 4 and "done" not in words


def test_a_coloured_terminal_s_escapes_are_taken_off(tmp_path: Path) -> None:
    """A copy of a coloured terminal: each line in a colour's escapes. Read as the plain log: Keras' run at epoch 12
    of 12, done; a loop's run at its step, its own word that the training is over (read from the line's start) its
    end."""
    coloured = [f"\x1b[1;32m{line}\x1b[0m" for line in _keras(12, 12)]
    series, words = read_lines(tmp_path, coloured)
    assert (series.step, series.run_total) == (12, 12) and "done" in words
    lines = [*_pipe(range(10, 110, 10)), "Training finished."]
    series, words = read_lines(tmp_path, [f"\x1b[36m{line}\x1b[0m" for line in lines])
    assert series.step == 100 and series.ended and "done" in words


def test_escapes_between_a_bar_s_redraws_keep_the_redraws(tmp_path: Path) -> None:
    """A bar's redraws with a colour before the first and the last: the carriage returns between them stay, so the
    last redraw is the step (not every redraw glued into one line)."""
    redraws = "".join(f"\r\x1b[34mtrain:  {n:>3d}%|####      | {n}/100 [00:{n // 10:02d}<00:30,  3.1it/s]\x1b[0m"
                      for n in range(10, 70, 10))
    series = read_text(tmp_path, redraws + "\n")
    assert series.step == 60 and series.run_total == 100


def test_a_bar_drawn_below_the_run_s_keeps_its_cursor_move(tmp_path: Path) -> None:
    """tqdm's bar at position 1 (an evaluation inside the run's bar, no description) moves the cursor up after each
    redraw: taking a terminal's colours off keeps that move, so the bar is read as the inner one it is, not as the
    run (no restart, the run's step and total, not the evaluation's 50 of 2,000)."""
    run = [f" {s // 10}%|#         | {s}/1000 [00:{s // 10:02d}<01:30,  9.90it/s]" for s in range(10, 210, 10)]
    inner = [f" {e // 20}%|          | {e}/2000 [00:0{e % 10}<00:20,  9.10it/s]\x1b[A" for e in range(10, 60, 10)]
    series, _ = read_lines(tmp_path, run + inner)
    assert (series.step, series.run_total, series.restarts) == (200, 1000, [])


def test_without_escapes_keeps_the_control_characters_inert_takes_off() -> None:
    """The sequences go (a colour, a cursor move, a title), a carriage return and a tab stay; ``inert`` takes off
    both."""
    text = "\x1b[32mstep 5\x1b[0m\r\x1b[Astep 6\t\x1b]0;title\x07loss 1.0"
    assert without_escapes(text) == "step 5\rstep 6\tloss 1.0"
    assert inert(text) == "step 5step 6\tloss 1.0"


def _monai(epochs: int, done: int, steps: int = 8) -> list[str]:
    """MONAI's segmentation tutorial loop as a script prints it: a rule, "epoch e/E", then each step's "s/S,
    train_loss: x" (a line that starts with its counter) and the epoch's average."""
    lines: list[str] = []
    for e in range(1, done + 1):
        lines += ["-" * 10, f"epoch {e}/{epochs}"]
        lines += [f"{s}/{steps}, train_loss: 0.{700 - 9 * e - s}" for s in range(1, steps + 1)]
        lines.append(f"epoch {e} average loss: 0.{690 - 9 * e}")
    return lines


def test_a_counter_that_leads_its_line_is_read_after_srun_s_label(tmp_path: Path) -> None:
    """Under ``srun -l`` every line starts with the task's label ("0: "); the lines whose own text starts with a
    counter ("0: 3/8, train_loss: ...") are read past it, and the run reads as without the label: epoch 6 of 40,
    no restarts (each step's line had been dropped, and each epoch's first step then read as a restart)."""
    plain, _ = read_lines(tmp_path, _monai(40, 6))
    labelled, _ = read_lines(tmp_path, ["0: " + line for line in _monai(40, 6)])
    assert (labelled.step, labelled.run_total, len(labelled.restarts)) == (plain.step, plain.run_total, 0) == (6, 40, 0)
    assert training_loss(labelled.metrics) == training_loss(plain.metrics) is not None


def _wrapped_fairseq(updates: range) -> list[str]:
    """fairseq's simple progress record hard-wrapped over three lines at a comma ("| epoch 001 | training on ...:
    N / T loss=x," then "nll_loss=..., wps=...," then "num_updates=N, lr=..."): the run's step on its last line."""
    lines: list[str] = []
    for u in updates:
        lines += [f"| epoch 001 | training on xla:0/0:     {u} / 3900 loss={12 - u / 100:.3f},",
                  f"nll_loss={11.9 - u / 100:.3f}, wps=812, ups=0, wpb=3012.5, bsz=96.000,",
                  f"num_updates={u}, lr=3.1e-06, gnorm=5.402, oom=0.000, wall={100 + u}"]
    return lines


def test_a_wrapped_record_goes_on_behind_the_same_label(tmp_path: Path) -> None:
    """Under ``srun -l`` each physical line of a record the program wrapped carries the label ("0: nll_loss=...,"):
    the record is read whole as without it, its step the update count its last line says."""
    plain, _ = read_lines(tmp_path, _wrapped_fairseq(range(20, 201, 20)))
    for label in ("0: ", "[default0]:"):
        labelled, _ = read_lines(tmp_path, [label + line for line in _wrapped_fairseq(range(20, 201, 20))])
        assert labelled.step == plain.step == 200, label
        assert training_loss(labelled.metrics) == training_loss(plain.metrics) is not None, label


def _spacy(rows: int) -> list[str]:
    """spaCy's console logger: its table's header (first column "E", the epoch), a rule, a row every 200 steps,
    then loop.py's words once the pipeline is saved."""
    lines = ["E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
             "---  ------  ------------  --------  ------  ------  ------  ------"]
    lines += [f"{r // 5:>3}  {r * 200:>6}  {90 - r:>12.2f}  {900 - 7 * r:>8.2f}  {40 + r:>6.2f}  {41 + r:>6.2f}  "
              f"{39 + r:>6.2f}  {0.4 + r / 100:>6.2f}" for r in range(rows)]
    return [*lines, "✔ Saved pipeline to output directory", "training/model-last"]


def test_a_table_whose_first_column_is_e_behind_a_label_is_no_pytest_failure(tmp_path: Path) -> None:
    """Behind a launcher's label ("0: ", "[default0]:") the header "E    #  LOSS ..." is spaCy's table, not pytest's
    "E" failure marker (pytest writes "E" and seven blanks): the table reads as without the label."""
    plain, plain_words = read_lines(tmp_path, _spacy(12))
    for label in ("0: ", "[default0]:"):
        labelled, words = read_lines(tmp_path, [label + line for line in _spacy(12)])
        assert labelled.step == plain.step == 2200, label
        assert ("done" in words) == ("done" in plain_words) is True, label


def test_keras_next_header_glued_after_its_bar_behind_a_label(tmp_path: Path) -> None:
    """Keras 2's bar at an epoch's end with fit's next "Epoch e/E" header glued after the line's padding (a
    terminal's line that did not break), the line behind srun -l's label: the run is in that epoch, as without it."""
    bar = "11/11 [==============================] - 41s 4s/step - loss: {:.4f} - val_loss: 9.1000"
    lines = ["Epoch 1/25", bar.format(12.5), "Epoch 2/25", bar.format(11.25) + " " * 20 + "Epoch 3/25"]
    plain, _ = read_lines(tmp_path, lines)
    labelled, _ = read_lines(tmp_path, ["0: " + line for line in lines])
    assert labelled.step == plain.step == 3
