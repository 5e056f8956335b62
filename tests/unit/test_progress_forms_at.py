"""General mechanisms of the progress reader, round OO (issue [progress-real]): several models trained in one process.
Every line here is written for the test, in the layout the named program's format strings give, with values of our
own."""

from __future__ import annotations

from pathlib import Path

from tests.support.progress_logs import read_series


def _fit(loss0: float, epochs: int = 4) -> list[str]:
    """One Keras 1.x fit(verbose=2): "Train on N samples, validate on M samples", then per epoch the header
    'Epoch %d/%d' and one line '%ds - loss: %.4f - acc: %.4f' (keras/callbacks.py, ProgbarLogger / Progbar)."""
    lines = ["Train on 3200 samples, validate on 800 samples"]
    for e in range(1, epochs + 1):
        lines += [f"Epoch {e}/{epochs}", f"12s - loss: {loss0 - e / 10:.4f} - acc: {0.3 + e / 20:.4f}"]
    return lines


def test_a_sweep_s_block_header_again_after_a_fit_is_no_restart(tmp_path: Path) -> None:
    """A Keras 1.x sweep's script prints its own "Building model ..." before each setting's fit, its first line
    also the log's; right after a fit's last epoch and before the next fit's epoch 1 of the same length, it is the
    loop's header, not a relaunch: the run is the last fit's epochs, no restart."""
    lines = []
    for k in range(3):
        lines += ["Building model for setting ...", f"--- compiled in {1.5 + k:.2f}s ---", *_fit(2.0 + k)]
        lines.append(" ")
    series = read_series(tmp_path, lines[:-3])  # the third fit cut after epoch 3's result line
    assert series.restarts == []
    assert series.step == 3 and series.total == 4


def test_the_first_line_again_before_a_fit_of_another_length_is_a_restart(tmp_path: Path) -> None:
    """The same first line again after a fit's last epoch, then epochs of another length: not the same loop's next
    fit, the program started again (one restart)."""
    lines = ["Building model for setting ...", *_fit(2.0), " ", "Building model for setting ...", *_fit(2.0, 6)[:5]]
    series = read_series(tmp_path, lines)
    assert len(series.restarts) == 1
