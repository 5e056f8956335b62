"""ntui/core/logs/statusline.py: the log pane's status line in words, for each state of its live view."""

from __future__ import annotations

from ntui.core.logs.ranktable import table_lines
from ntui.core.logs.rows import BATCH, RankRow
from ntui.core.logs.session import LogView, Reading, Shown
from ntui.core.logs.statusline import status_line


def _row(key: int | str, node: str | None = None, status: str = "running") -> RankRow:
    return RankRow(key, node, True, 10, "", "", status)


def _shown(view: LogView, note: str = "", **kw: object) -> Shown:
    shown = Shown("42", True, note, view, **kw)  # type: ignore[arg-type]
    shown.rows = {r.key: r for r in (_row(BATCH), _row(0, "nid001"), _row(1, "nid002", "errored"))}
    return shown


def test_no_job_says_nothing_and_a_job_without_files_says_why() -> None:
    assert status_line(Shown(), Reading.fresh(10)) == ("", False)
    assert status_line(Shown("7", True, "per-rank logs unknown"), Reading.fresh(10)) == ("per-rank logs unknown",
                                                                                        False)


def test_a_rank_followed_names_its_node_and_file() -> None:
    text, paused = status_line(_shown(LogView(1, "rank", (0,))), Reading.fresh(10), "train-42-rank-0.out")
    assert text == "rank 0 on nid001 · train-42-rank-0.out · following" and not paused


def test_a_paused_view_counts_the_lines_below_and_is_set_off() -> None:
    reading = Reading.fresh(10)
    reading.following, reading.pending_count = False, 1
    assert status_line(_shown(LogView(1, "rank", (BATCH,))), reading) == (
        "batch log · paused · 1 new line below · End: follow", True)
    reading.pending_count = 12
    assert "12 new lines below" in status_line(_shown(LogView(1, "rank", (BATCH,))), reading)[0]


def test_an_excerpt_says_how_back_and_a_merged_view_counts_its_ranks() -> None:
    reading = Reading.fresh(10)
    reading.excerpt = True
    assert status_line(_shown(LogView(1, "rank", (1,))), reading) == (
        "rank 1 on nid002 · excerpt around the error · End: back to the live tail", True)
    merged = _shown(LogView(2, "merged", (BATCH, 0, 1)), note="a note")
    reading = Reading.fresh(10)
    reading.partial = "step 3 of"
    assert status_line(merged, reading) == ("merged: 2 ranks + batch log · following", False)  # no note, no partial
    assert status_line(_shown(LogView(2, "merged", (1,))), Reading.fresh(10))[0] == "merged: 1 rank · following"


def test_the_filter_the_search_the_note_and_the_unfinished_line_follow_in_that_order() -> None:
    shown = _shown(LogView(1, "rank", (0,)), note="over ssh", filter="errored", search_note="“nan”: not found")
    shown.lines = {x.key: x for x in table_lines(list(shown.rows.values()), flt="errored", expanded=set(), now=0.0,
                                                 job_active=True)}
    reading = Reading.fresh(10)
    reading.partial = "epoch 2"
    assert status_line(shown, reading)[0] == ("rank 0 on nid001 · following · table: errored ranks (1) · f: next "
                                              "filter · “nan”: not found · over ssh · ▸ epoch 2")
