"""The log pane's session values (ntui/core/logs/session.py): a job shown is one new value, a view one new reading."""

from __future__ import annotations

from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.logs.session import LogView, Reading, Shown, WatchSession


def test_a_new_shown_job_shares_nothing_with_the_last() -> None:
    first = Shown("1", True)
    first.rows[0] = None  # type: ignore[assignment]
    first.marked.add(0)
    first.expanded.add("nid001")
    second = Shown("2", False)
    assert not second.rows and not second.marked and not second.expanded and second.filter == "all"
    assert second.view == LogView(0, "rank", ()) and second.search is None


def test_a_fresh_reading_holds_a_window_of_paused_lines() -> None:
    reading = Reading.fresh(3)
    reading.pending.extend(["a", "b", "c", "d"])
    assert list(reading.pending) == ["b", "c", "d"] and reading.following and reading.loaded_gen == -1
    assert Reading.fresh(0).pending.maxlen == 1


def test_the_same_job_with_the_same_files_is_the_same_session() -> None:
    paths = LogPaths("/logs", "train")
    session = WatchSession(1, "7", {0: Path("/logs/train-7-0.out")}, LogView(0, "rank", (0,)), job_active=True,
                           paths=paths, discover=False, launcher="torchrun")
    assert session.same_files("7", paths, "torchrun", None)
    assert not session.same_files("8", paths, "torchrun", None)
    assert not session.same_files("7", paths, None, None)  # the launcher learned: read again as it says
    assert not session.same_files(None, paths, "torchrun", None)
    batch = WatchSession(2, "9", {"batch": Path("/x/9.out")}, LogView(0, "rank", ("batch",)), job_active=False,
                         paths=None, discover=False)
    assert batch.same_files("9", None, None, "/x/9.out") and not batch.same_files("9", None, None, "/y/9.out")
    session.stop()
    assert session.stopped and session.wake.is_set()
