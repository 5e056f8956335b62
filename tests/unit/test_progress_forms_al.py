"""General mechanisms of the progress reader, round GG (issue [progress-real]): tqdm's nested bars, a loop over the
epochs whose bar ("for epoch in trange(E, desc='epochs')") holds each epoch's training bar ("for batch in
tqdm(loader)"). tqdm places the inner bar at position 1 by itself: each of its redraws is "\\r<bar>" then the cursor
moved back up (tqdm/std.py, tqdm.display(): ``self.moveto(pos)``, ``self.sp(...)``, ``self.moveto(-pos)``, moveto()
writing "\\n" * n + utils._term_move_up() * -n, that "\\x1b[A"); its close with leave draws it at position 0 and a
"\\n" (tqdm.close(): ``self.display(pos=0)``, ``fp_write('\\n')``). Each bar's line is format_meter's l_bar
"{desc}: {percentage:3.0f}%|" then its bar and r_bar "| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}
{postfix}]". The logs here are written by the real tqdm, run in the test with values of our own; read as
``ntui progress FILE`` reads them."""

from __future__ import annotations

import io
from pathlib import Path

from tqdm import tqdm, trange

from ntui.core.progress.lines import training_loss
from ntui.core.progress.series import estimate
from tests.support.progress_logs import read_text

EPOCHS, BATCHES = 3, 40


def _nested(cut: tuple[int, int] | None, *, outer_every_epoch: bool = False) -> str:
    """What a loop's nested bars write to its log (``file=``: a file, as a batch job's stderr is), to the batch
    ``cut`` = (epoch from 0, batch) where the job was killed there (the bars never closed), else to the run's end.
    ``outer_every_epoch``: the epochs bar redraws at each epoch's end (an epoch longer than its mininterval), else
    tqdm's default 0.1 s holds it back (epochs shorter than that: the inner bar's end alone says the epoch ended)."""
    log = io.StringIO()
    for epoch in trange(EPOCHS, desc="epochs", file=log, mininterval=0 if outer_every_epoch else 3600):
        bar = tqdm(range(BATCHES), desc=f"epoch {epoch + 1}", file=log, mininterval=0)
        for i in bar:
            bar.set_postfix(loss=f"{3.0 - 0.01 * (epoch * BATCHES + i):.3f}")
            if cut == (epoch, i):
                return log.getvalue()
    return log.getvalue()


def _read(tmp_path: Path, text: str) -> tuple[int | None, int | None, str, float | None]:
    series = read_text(tmp_path, text)
    guess = estimate(series, now=0.0, time_left_s=None)
    loss = training_loss(series.metrics)
    return guess.step, guess.total, guess.words, (loss[1] if loss else None)


def test_nested_bars_cut_in_the_second_epoch_count_the_runs_global_steps(tmp_path: Path) -> None:
    """tqdm 4.x, a loop ``for epoch in trange(3, desc="epochs"): for b in tqdm(loader, desc=f"epoch {e}")``, killed
    at batch 25 of epoch 2: the epochs bar still says 0/3 (held back by its mininterval), the inner bar went back
    from 40/40 to 0/40. The run is at global step 40 + 25 of 3 x 40 (the bench's convention for a loop that says the
    epoch of the run's and the step of the epoch's), not at "0 of 3" epochs, and its loss is the inner bar's."""
    text = _nested((1, 25))
    assert "\x1b[A" in text and "epochs:   0%" in text
    step, total, words, loss = _read(tmp_path, text)
    assert (step, total) == (BATCHES + 25, EPOCHS * BATCHES)
    assert "done" not in words
    assert loss == 3.0 - 0.01 * (BATCHES + 25)


def test_nested_bars_whose_epochs_bar_redraws_each_epoch_count_each_epoch_once(tmp_path: Path) -> None:
    """The same loop with epochs longer than the outer bar's mininterval: the epochs bar redraws "1/3" after the
    first epoch's inner bar closed at 40/40, then the next inner bar starts at 0/40. The epoch is counted once (by
    the epochs bar), not again for the inner bar's going back: step 40 + 10 at batch 10 of epoch 2."""
    text = _nested((1, 10), outer_every_epoch=True)
    assert "epochs:  33%" in text
    step, total, _, _ = _read(tmp_path, text)
    assert (step, total) == (BATCHES + 10, EPOCHS * BATCHES)


def test_nested_bars_to_the_runs_end_say_it_is_done(tmp_path: Path) -> None:
    """The loop run to its end: the last inner bar at 40/40 (its close drawn without the cursor's move up) and the
    epochs bar's 3/3: the run's 120 steps of 120, done."""
    step, total, words, loss = _read(tmp_path, _nested(None))
    assert (step, total) == (EPOCHS * BATCHES, EPOCHS * BATCHES)
    assert "done" in words
    assert loss == 3.0 - 0.01 * (EPOCHS * BATCHES - 1)


def test_an_evaluation_bar_under_the_runs_step_bar_is_still_no_training_step(tmp_path: Path) -> None:
    """Guard: a bar below the run's step bar (tqdm(total=steps) over the optimizer steps, an evaluation's
    tqdm(loader) inside it every 20 steps, left behind as leave=False clears it) is the evaluation's, as before: the
    run's step is the outer bar's (no epochs bar above)."""
    log = io.StringIO()
    run = tqdm(total=100, desc="train", file=log, mininterval=0)
    for step in range(1, 46):
        run.update(1)
        if step % 20 == 0:
            for _ in tqdm(range(30), file=log, mininterval=0, leave=False):
                pass
    text = log.getvalue()
    assert "\x1b[A" in text
    step, total, words, _ = _read(tmp_path, text)
    assert (step, total) == (45, 100)
    assert "done" not in words
