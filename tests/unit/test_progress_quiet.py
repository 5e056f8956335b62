"""A job gone quiet (``ntui.core.progress.quiet``): judged against its own pace, never a slow job that still moves;
on the real captures of tests/data/progress/ (their points' times are the programs' own: tqdm's elapsed)."""

from __future__ import annotations

from pathlib import Path

from ntui.core.jobs.progress import ProgressBook
from ntui.core.progress.board import ProgressView
from ntui.core.progress.quiet import QUIET_FACTOR, QUIET_FLOOR_S, quiet, usual_interval
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Sample, Series
from ntui.core.slurm.squeue import QueueJob
from tests.conftest import REPO

LONG = REPO / "tests" / "data" / "progress" / "tqdm-4.70.1" / "tqdm-long-partial.out"


def test_a_job_that_printed_every_second_is_quiet_after_the_floor() -> None:
    series = read_progress(LONG)  # 2.49 steps a second, stopped after 30 s
    last = series.samples[-1].time
    usual = usual_interval([s.time for s in series.samples])
    assert usual == 1.0  # tqdm prints its elapsed time to the second: its points are a second apart
    assert quiet(series, last, last + QUIET_FLOOR_S - 1) is None  # ten intervals are far less than the floor
    q = quiet(series, last, last + 12 * 60)
    assert q is not None and round(q.for_s) == 720 and q.step == series.step
    assert q.words == f"quiet for 12 min: no progress since step {series.step:,} (it printed one every 1 s)"


def _steady(every_s: float, points: int = 20) -> Series:
    """A slow run's series: a point every ``every_s`` seconds (as the view's reader dates them)."""
    return Series(samples=[Sample(1_000.0 + i * every_s, i + 1) for i in range(points)], total=100)


def test_a_slow_job_that_still_moves_is_never_quiet() -> None:
    slow = _steady(600.0)  # a step every ten minutes
    last = slow.samples[-1].time
    assert quiet(slow, last, last + 90 * 60) is None  # 90 min without a step: within ten of its intervals
    assert quiet(slow, last, last + QUIET_FACTOR * 600 + 1) is not None
    # its log still written (a line that is no step: an evaluation's output) is a sign of life too
    assert quiet(slow, last + 99 * 60, last + 101 * 60) is None


def test_without_a_series_the_log_writes_alone_after_twice_the_floor() -> None:
    assert quiet(None, 1_000.0, 1_000.0 + 2 * QUIET_FLOOR_S - 1) is None
    q = quiet(None, 1_000.0, 1_000.0 + 2 * QUIET_FLOOR_S + 1)
    assert q is not None and q.step is None and q.words.endswith("no line in its log since then")
    assert quiet(None, None, 5_000.0) is None  # nothing known: nothing said


def test_the_queue_row_says_quiet_instead_of_an_eta_and_the_notice_comes_once() -> None:
    series = read_progress(LONG)
    last = series.samples[-1].time
    book = ProgressBook()
    book.views["9"] = ProgressView("9", series.step, series.total, None, dict(series.metrics), tuple(series.samples),
                                   printed_rates=tuple(series.printed_rates), last_write=last)
    job = {"9": QueueJob("9", "9", state="RUNNING", elapsed="10:00", time_limit="2-00:00:00")}
    assert book.row_texts(job, last + 1)["9"].startswith("0% · ends in ")
    assert book.row_texts(job, last + 20 * 60)["9"] == "0% · quiet 20 min"
    said = book.newly_quiet(last + 20 * 60)
    assert [j for j, _ in said] == ["9"] and said[0][1].startswith("quiet for 20 min: no progress since step")
    assert book.newly_quiet(last + 30 * 60) == []


def test_a_file_is_a_sign_of_life_by_its_modification_time(tmp_path: Path) -> None:
    """The view's reader keeps the log's last write with each view."""
    from ntui.core.progress.board import ProgressBoard

    log = tmp_path / "x-1-rank-0.out"
    log.write_bytes(LONG.read_bytes())
    view = ProgressBoard().poll({"1": str(log)})["1"]
    assert view.last_write == log.stat().st_mtime


def test_the_queue_row_of_an_epoch_counted_run_is_not_100_percent_in_its_last_epoch(tmp_path: Path) -> None:
    """A Keras run in its last epoch is at epoch 3 of 3 until that epoch's last batch: the row said 100% (done)
    while the tab and ``ntui progress`` said it still ran."""
    log = tmp_path / "keras.out"
    bar = "[==============================]"
    log.write_text(f"Epoch 1/3\n100/100 {bar} - 5s 50ms/step - loss: 0.9000\n"
                   f"Epoch 2/3\n100/100 {bar} - 5s 50ms/step - loss: 0.7000\n"
                   "Epoch 3/3\n 40/100 [===========>..................] - ETA: 3s - loss: 0.5000\n")
    series = read_progress(log)
    assert (series.step, series.run_total, series.ended) == (3, 3, False)
    book = ProgressBook()
    book.views["7"] = ProgressView("7", series.step, series.run_total, None, dict(series.metrics),
                                   tuple(series.samples), state=series)
    job = {"7": QueueJob("7", "7", state="RUNNING", elapsed="0:20", time_limit="1:00:00")}
    assert book.row_texts(job, 0.0)["7"].startswith("99%")
    log.write_text(log.read_text() + f"100/100 {bar} - 5s 50ms/step - loss: 0.4000\n")
    ended = read_progress(log)
    book.views["7"] = ProgressView("7", ended.step, ended.run_total, None, dict(ended.metrics),
                                   tuple(ended.samples), state=ended)
    assert book.row_texts(job, 0.0)["7"].startswith("100%")
