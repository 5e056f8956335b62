"""General mechanisms of the progress reader, round MM (issue [progress-real]): several Keras fits in one process.
Every line here is written for the test, in the layout the named program's format strings give, with values of our
own."""

from __future__ import annotations

from pathlib import Path

from tests.support.progress_logs import read_lines as _read


def _fit(epochs: int, loss: float, upto: int | None = None, stop: bool = False) -> list[str]:
    """keras-team/keras 1.x, keras/engine/training.py, _fit_loop: 'Train on %d samples, validate on %d samples', then
    per epoch 'Epoch %d/%d' and verbose=2's '%ds - loss: %.4f - ...' line; EarlyStopping's 'Epoch %05d: early
    stopping' (keras/callbacks.py, on_train_end) after the last epoch."""
    lines = ["Train on 5120 samples, validate on 640 samples"]
    for e in range(1, (upto or epochs) + 1):
        lines += [f"Epoch {e}/{epochs}", f"37s - loss: {loss:.4f} - acc: 0.6100 - val_loss: {loss + 0.2:.4f}"]
        loss -= 0.05
    if stop:
        lines.append(f"Epoch {(upto or epochs) - 1:05d}: early stopping")
    return lines


def test_keras_fit_of_the_same_length_again_after_a_full_fit_is_a_new_fit_not_a_restart(tmp_path: Path) -> None:
    """keras 1.x Model.fit called twice by one script with the same nb_epoch (a sweep's next model): the second
    call's "Train on %d samples..." is fit's own line of each call, not the program started again, and its "Epoch
    1/8" after the first call's 8 of 8 is a new fit: no restart, the run is the second fit's."""
    series, _ = _read(tmp_path, _fit(8, 1.5) + _fit(8, 1.2, upto=3))
    assert (series.step, series.run_total, len(series.restarts)) == (3, 8, 0)


def test_keras_fit_again_after_early_stopping_is_a_new_fit(tmp_path: Path) -> None:
    """keras 1.x: a fit that EarlyStopping ended ('Epoch %05d: early stopping'), then fit called again (the learning
    rate lowered): the new call's epochs from 1 are the run's, no restart."""
    series, _ = _read(tmp_path, _fit(8, 1.5) + _fit(8, 1.0, upto=4, stop=True) + _fit(8, 0.6, upto=2))
    assert (series.step, series.run_total, len(series.restarts)) == (2, 8, 0)

