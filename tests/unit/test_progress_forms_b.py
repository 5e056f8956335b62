"""The run's model on the forms of the second study corpus (index-b): a tuner's fit before the run's, the loop's own
line glued after a bar's redraw, the evaluation a program announces on a line of its own (issue [progress-real])."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import eval_start, parse_line
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Series, estimate


def _read(tmp_path: Path, lines: list[str]) -> tuple[Series, str]:
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    series = read_progress(log)
    return series, estimate(series, now=0.0, time_left_s=None).words


def _bar(desc: str, n: int, total: int, post: str = "") -> str:
    pct = 100 * n // total
    return f"{desc}{pct:3d}%|{'#' * (pct // 10):10}| {n}/{total} [00:{n % 60:02d}<00:01, 4.76it/s{post}]"


def test_the_learning_rate_finders_fit_and_its_end_are_not_the_runs(tmp_path: Path) -> None:
    finder = [_bar("Finding best initial lr: ", n, 100) for n in (10, 50, 100)]
    run = [_bar(f"Epoch {e}: ", n, 30, ", loss=1.2, v_num=3") for e in (0, 1) for n in (10, 20, 30)]
    lines = [*finder, "`Trainer.fit` stopped: `max_steps=100` reached.", *run[:-1]]
    series, words = _read(tmp_path, lines)
    assert "done" not in words, words
    assert series.step == 50 and series.restarts == [], words
    # the run's own end, after its points, still ends it
    series, words = _read(tmp_path, [*lines, run[-1], "`Trainer.fit` stopped: `max_epochs=2` reached."])
    assert "done" in words and series.step == 60, words


def test_the_loops_own_line_glued_after_a_bar_counts_the_run(tmp_path: Path) -> None:
    point = parse_line(_bar("1|7|Loss: 1.62: ", 7, 25) + "Step 7 | loss:1.62 lr:2e-05")
    assert point is not None and (point.step, point.format) == (7, "log")
    lines = ["epochs: 2", "max_steps_per_epoch: 25"]
    for epoch in (1, 2):
        lines.append(_bar("", 0, 25))
        lines += [_bar(f"{epoch}|{g}|Loss: 0.9: ", g - 25 * (epoch - 1), 25) + f"Step {g} | loss:0.{g} lr:2e-05"
                  for g in range(25 * epoch - 24, 25 * epoch + 1)]
    series, words = _read(tmp_path, lines[:-20])
    assert (series.step, series.run_total, series.restarts) == (30, 50, []), words
    assert "done" not in words
    series, words = _read(tmp_path, lines)
    assert words == "step 50 of 50: done", words


def test_an_announced_evaluations_bar_after_the_end_is_no_restart(tmp_path: Path) -> None:
    assert eval_start("[INFO|trainer.py:1921] 2024-03-11 09:43:12,444 >> ***** Running Evaluation *****")
    assert eval_start("INFO:__main__:*** Evaluate ***")
    assert not eval_start("***** Running training *****")
    train = [_bar("", n, 48) for n in range(0, 49, 6)]
    evals = [_bar("", n, 16) for n in range(0, 17, 4)]
    series, words = _read(tmp_path, ["***** Running training *****", *train, "Training completed.",
                                     "***** Running Evaluation *****", *evals])
    assert (series.step, series.total, series.restarts) == (48, 48, []), words
    assert words == "step 48 of 48: done"
    # an evaluation announced in the middle: the run's bar comes back after it
    series, words = _read(tmp_path, ["***** Running training *****", *train[:4], "***** Running Evaluation *****",
                                     *evals, *train[4:6]])
    assert (series.step, series.total, series.restarts) == (30, 48, []), words
    assert "done" not in words
