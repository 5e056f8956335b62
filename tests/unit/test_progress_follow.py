"""Following own running jobs' progress as their logs grow: the board over a real tqdm capture written in pieces, and
the jobs view's model turning it into the row's words against the time the queue says is left."""

from __future__ import annotations

from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.progress.board import START_BYTES, ProgressBoard
from tests.conftest import REPO
from tests.unit.test_jobmodel import entry, job_line, model, refresh

CAPTURE = sorted((REPO / "tests" / "data" / "progress").glob("tqdm-*/tqdm-loop.out"))[-1]


def _pieces(n: int) -> list[bytes]:
    data = CAPTURE.read_bytes()
    size = len(data) // n + 1
    return [data[i:i + size] for i in range(0, len(data), size)]


def test_the_board_reads_what_each_tick_appended_and_follows_a_replaced_file(tmp_path: Path) -> None:
    log = tmp_path / "run-7-rank-0.out"
    log.write_bytes(b"")
    board = ProgressBoard()
    steps = []
    for piece in _pieces(5):
        with log.open("ab") as fh:
            fh.write(piece)
        view = board.poll({"7": str(log)}).get("7")
        if view is not None:
            steps.append(view.step)
    assert steps == sorted(steps) and steps[-1] == 80 and len(steps) >= 4
    assert board.poll({"7": str(log)}) == {}  # nothing new: no view
    log.unlink()
    log.write_bytes(_pieces(5)[0])  # a new file under the name (a requeued job's log started again)
    again = board.poll({"7": str(log)})["7"]
    assert again.step is not None and again.step < 80


def test_a_big_log_is_read_from_its_tail(tmp_path: Path) -> None:
    log = tmp_path / "big.out"
    noise = b"x" * 1000 + b"\n"
    with log.open("wb") as fh:
        for _ in range(START_BYTES // len(noise) + 500):  # more than the first read takes
            fh.write(noise)
        fh.write(CAPTURE.read_bytes())
    view = ProgressBoard().poll({"1": str(log)})["1"]
    assert (view.step, view.total) == (80, 80)


def test_the_models_rows_say_how_far_a_running_job_is_and_when_it_ends(tmp_path: Path) -> None:
    m, clock = model()
    refresh(m, job_line("41") + job_line("42", state="PENDING"))
    assert m.progress_request() is None  # no entry known: not ntui's logs
    m.entries["41"] = entry("41", log_dir=str(tmp_path), stem="run")
    m.entries["42"] = entry("42", log_dir=str(tmp_path), stem="run")
    request = m.progress_request()
    assert request is not None and list(request.wanted) == ["41"]  # the pending job has no progress to read
    rank0 = Path(LogPaths(str(tmp_path), "run").rank("41", 0))
    data = CAPTURE.read_bytes()
    rank0.write_bytes(data[:data.index(b"| 41/80")])  # half-way
    views = m.progress.fetch(ProgressBoard(), request)
    applied = m.progress_done(views)
    assert applied is not None
    where = applied.rows["41"][-3]
    # the queue's line says 0:10 used of 10:00: plenty of time for the 40 steps left
    assert where.startswith("50% · ends in "), where
    assert m.progress_request() is not None  # the tick ended: the next may start
    assert m.progress_done({}) is None  # nothing moved: no rows
