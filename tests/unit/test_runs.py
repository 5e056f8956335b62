"""One long run across its allocations (T10): the run file folded, and what the history and show say of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ntui.core.jobfiles.runfile import parse_run_lines, read_run, run_path
from ntui.core.records.history import HistoryEntry
from ntui.core.records.runs import find_run, run_of


def ev(kind: str, t: float, job: str, **fields: object) -> str:
    return json.dumps({"v": 1, "ev": kind, "t": t, "job": job, "run": "832", **fields}, separators=(",", ":"))


REQUEUED = [
    ev("alloc", 100, "832", restart=0, requeues=0, how="requeue", max=5),
    ev("signal", 168, "832", sig="USR2", elapsed=68, cause="timelimit"),
    ev("continue", 173, "832", how="requeue", cause="timelimit", count=1),
    ev("alloc", 300, "832", restart=1, requeues=1, how="requeue", max=5),
    ev("signal", 350, "832", sig="USR2", elapsed=50, cause="timelimit"),
    ev("continue", 355, "832", how="requeue", cause="timelimit", count=2),
    ev("alloc", 500, "832", restart=2, requeues=2, how="requeue", max=5),
    ev("stop", 540, "832", why="done"),
]


def entry(tmp: Path, job_id: str = "832", script: str = "NTUI_RUN_FILE=x\n") -> HistoryEntry:
    return HistoryEntry(token="t", job_id=job_id, cluster=None, preset="local-longrun", preset_path=None,  # noqa: S106
                        overrides=(), job_name="lr", launcher="torchrun", nodes=2, world_size=4,
                        log_dir=str(tmp), log_stem="lr", script=script, script_path=None, created_at=0.0,
                        submitted_at=0.0, status="submitted")


def write(tmp: Path, lines: list[str], run_id: str = "832", tail: str = "") -> None:
    Path(run_path(str(tmp), "lr", run_id)).write_text("\n".join(lines) + "\n" + tail)


def test_a_requeued_run_is_one_run_with_its_allocations(tmp_path: Path) -> None:
    write(tmp_path, REQUEUED)
    view = run_of(entry(tmp_path))
    assert view is not None
    assert [a.ended_by for a in view.state.allocations] == [
        "time limit, checkpointed, requeued", "time limit, checkpointed, requeued", "done"]
    assert view.state.job_ids == ("832",) and view.state.done
    assert view.training_s == 73 + 55 + 40
    assert view.summary() == "run 832: 3 allocations (job 832), done, 2:48 of training"
    assert view.allocation_lines()[0] == ("1. job 832 (restart 0): 1:13, signal after 1:08; time limit, "
                                          "checkpointed, requeued")


def test_a_run_going_on_counts_its_allocation_against_the_cap(tmp_path: Path) -> None:
    write(tmp_path, REQUEUED[:4])
    view = run_of(entry(tmp_path))
    assert view is not None
    assert view.allocation_text == "allocation 2 of ≤ 6" and view.status == "going on"
    assert "allocation 2 of ≤ 6" in view.summary()
    assert view.allocation_lines()[-1].startswith("2. job 832 (restart 1): running since ")


def test_a_chain_links_its_jobs_and_a_later_link_finds_its_run(tmp_path: Path) -> None:
    write(tmp_path, [
        ev("alloc", 100, "832", restart=0, how="chain", max=5),
        ev("signal", 160, "832", sig="USR2", elapsed=60, cause="timelimit"),
        ev("continue", 165, "832", how="chain", cause="timelimit", count=1, next="840"),
        ev("alloc", 175, "840", restart=1, how="chain", max=5),
        ev("signal", 235, "840", sig="USR2", elapsed=60, cause="timelimit"),
        ev("stop", 240, "840", why="max-restarts", max=1),
    ])
    other = entry(tmp_path, job_id="700", script="#!/bin/bash\n")
    view = find_run([other, entry(tmp_path)], "840")
    assert view is not None and view.run_id == "832"
    assert view.state.job_ids == ("832", "840")
    assert view.state.allocations[0].next_job == "840"
    assert [a.ended_by for a in view.state.allocations] == ["time limit, checkpointed, chained",
                                                            "time limit, max-restarts reached"]
    assert view.status == "stopped: max-restarts reached"
    assert find_run([other], "840") is None


@pytest.mark.parametrize(("lines", "said"), [
    ([ev("stop", 200, "832", why="ignored", grace=20), ev("stop", 230, "832", why="failed", rc=143)],
     "time limit (the program ignored the signal)"),
    ([ev("stop", 200, "832", why="failed", rc=3)], "failure (status 3)"),
])
def test_what_ended_the_last_allocation(tmp_path: Path, lines: list[str], said: str) -> None:
    write(tmp_path, [REQUEUED[0], REQUEUED[1], *lines])
    view = run_of(entry(tmp_path))
    assert view is not None and view.state.allocations[-1].ended_by == said


def test_damaged_and_cut_lines_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, [REQUEUED[0], "garbage", '{"v":2,"ev":"alloc","t":1,"job":"9"}'], tail='{"v":1,"ev":"sto')
    state = read_run(run_path(str(tmp_path), "lr", "832"), "832")
    assert state is not None and len(state.allocations) == 1 and state.bad_lines == 2
    assert parse_run_lines(b'{"v":1') == ([], 0)


def test_not_a_run(tmp_path: Path) -> None:
    assert run_of(entry(tmp_path, script="#!/bin/bash\n")) is None
    assert run_of(entry(tmp_path)) is None  # a run script whose file is not there yet


def test_a_run_row_in_the_queue_says_its_allocation() -> None:
    from ntui.core.jobfiles.journal import journal_state, parse_events
    from ntui.core.jobs.model import RowFacts, annotate_runs

    data = (b'{"v":1,"ev":"alloc","t":1,"job":"832","restart":1}\n'
            b'{"v":1,"ev":"run-alloc","t":1,"job":"832","run":"832","restart":1,"requeues":1,"how":"requeue",'
            b'"max":5}\n')
    events, bad, _ = parse_events(data)
    state = journal_state("832", events, bad)
    rows = {"832": ("832", "lr", "RUNNING", "0:10", "2:00", "2", "nid[001-002]", "debug", ""),
            "900": ("900", "other", "PENDING", "0:00", "2:00", "1", "(Priority)", "debug", "")}
    out = annotate_runs(rows, RowFacts({"832": state}))
    assert out["832"][6] == "allocation 2 of ≤ 6 · nid[001-002]"
    assert out["900"] == rows["900"]
    assert annotate_runs(rows, RowFacts({})) is rows
