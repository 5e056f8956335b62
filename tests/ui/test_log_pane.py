"""The log pane (``ntui/ui/widgets/log_pane.py``) in a small host app, without the rest of ntui.

Rank files are written the way a job ntui submitted writes them (``<stem>-<job>-rank-N.out``, each starting
with ``ntui: rank N on NODE``); rank 2 carries a real torchrun traceback (``tests/data/logs``). The watcher
is a real thread polling every 50 ms; tests wait on the pane's state, never on fixed sleeps. The snapshot
tests draw the canned job of :mod:`tests.support.screenshots_logs` (fixed mtimes, frozen clock). The cluster test
runs a 2x2 ``local-torchrun`` job on the dev cluster in which rank 2 raises, and follows it live.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from ntui.core.config import LogSettings
from ntui.core.jobfiles.lognames import LogPaths, node_of
from ntui.core.logs.rows import BATCH, human_age, human_size
from ntui.core.logs.watch import JobLogWatcher
from ntui.ui.widgets.log_pane import LogPane
from tests.cluster.conftest import REPO, DevCluster, dev_cluster  # noqa: F401 - the fixture
from tests.support.bigjob import BigJob, make_bigjob
from tests.support.logcases import restore_mtimes
from tests.support.screenshots_logs import (
    LogPaneHost,
    big_log_scene,
    log_pane_scene,
    log_pane_screenshots,
    write_demo_logs,
)
from tests.support.waits import WAIT_BOUND_S

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
JOB = "4242"
STEM = "train"
NODES = {0: "nid001", 1: "nid001", 2: "nid002", 3: "nid002"}
MTIME = 1_790_000_000.0
SIZE = (120, 40)


def traceback_lines(rank: int) -> list[str]:
    """The real torchrun rank log of ``tests/data/logs`` (rank 1 raising), as rank ``rank``."""
    text = (DATA / "torchrun-gloo-rank-1.out").read_text()
    return text.replace("rank1", f"rank{rank}").replace("rank 1/2", f"rank {rank}/4").splitlines()


def write_job(log_dir: Path, *, steps: int = 5, failing: int | None = 2) -> LogPaths:
    log_dir.mkdir(parents=True, exist_ok=True)
    paths = LogPaths(str(log_dir), STEM)
    batch = Path(paths.batch(JOB))
    batch.write_text(f"ntui: job {JOB} on nid[001-002]\nlaunching 4 ranks\n")
    os.utime(batch, (MTIME, MTIME))
    for rank, node in NODES.items():
        lines = [f"ntui: rank {rank} on {node}"]
        if rank == failing:
            lines += traceback_lines(rank)
        else:
            lines += [f"rank {rank} step {i} loss {1 / (i + 1):.4f}" for i in range(steps)]
        path = Path(paths.rank(JOB, rank))
        path.write_text("".join(x + "\n" for x in lines))
        os.utime(path, (MTIME + rank, MTIME + rank))
    return paths


def rank_file(paths: LogPaths, rank: int) -> Path:
    return Path(paths.rank(JOB, rank))


def append(path: Path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in lines))


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = WAIT_BOUND_S) -> float:
    """Pause until ``condition()``; return the seconds it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not condition():
        if loop.time() - start > timeout:
            raise AssertionError("timed out waiting for the log pane")
        await pilot.pause(0.02)
    return loop.time() - start


def host(**settings: Any) -> LogPaneHost:
    settings.setdefault("poll_interval", 0.05)
    return LogPaneHost(now=MTIME + 60, settings=LogSettings(**settings))


async def opened(pilot: Any, pane: LogPane, paths: LogPaths, *, active: bool = True) -> None:
    pane.show_job(JOB, paths=paths, world_size=4, job_active=active)
    await until(pilot, lambda: pane.polls > 0 and all(r.exists for r in pane.rows.values()))
    await until(pilot, lambda: len(pane.log_lines) > 0)


def status_text(pane: LogPane) -> str:
    return str(pane.query_one("#lp-status", Static).render())


# ------------------------------------------------------------------------------------------ rank list, triage


async def test_lists_every_rank_and_flags_the_one_that_failed(tmp_path: Path) -> None:
    paths = write_job(tmp_path)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await until(pilot, lambda: pane.triage_line.failed)
        rows = pane.rows
        assert list(rows) == [BATCH, 0, 1, 2, 3]
        assert rows[2].status == "errored" and rows[2].first
        assert [rows[r].status for r in (0, 1, 3)] == ["running"] * 3
        assert {r: rows[r].node for r in range(4)} == NODES
        assert rows[2].last_line == "[rank2]: RuntimeError: boom: loss is NaN at step 3"
        assert rows[0].age == "1m00s ago" and rows[3].age == "57s ago"
        tri = pane.triage_line
        assert (tri.rank, tri.node) == (2, "nid002")
        assert tri.text.startswith("rank 2 on nid002 failed first: RuntimeError: boom: loss is NaN at step 3")
        banner = str(pane.query_one("#lp-triage", Static).render())
        assert "rank 2 on nid002 failed first" in banner and pane.query_one("#lp-triage").has_class("-failed")
        table = pane.query_one("#lp-ranks", DataTable)
        assert table.row_count == 5
        assert str(table.get_cell("2", "status")) == "errored (first)"
        assert "red" in str(table.get_cell("2", "status").style)  # highlighted
        assert str(table.get_cell("2", "node")) == "nid002"
        # the job ends: the table is diffed in place; the ranks stopped after rank 2 failed say "killed"
        # (issue 15: they said "finished"), the batch log that saw no error of its own is finished
        pane.show_job(JOB, paths=paths, world_size=4, job_active=False)
        await until(pilot, lambda: pane.rows[0].status != "running")
        assert [pane.rows[r].status for r in (0, 1, 3)] == ["killed"] * 3
        assert pane.rows[2].status == "errored" and table.row_count == 5
        assert str(table.get_cell("0", "status")) == "killed" and pane.rows[BATCH].status == "finished"


async def test_a_job_cancelled_while_pending_says_it_never_started(tmp_path: Path) -> None:
    """Issue 15: it said "waiting for the logs to appear…" forever."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    paths = LogPaths(str(log_dir), STEM)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_job(JOB, paths=paths, world_size=2, job_active=True)
        await until(pilot, lambda: pane.polls > 0)
        assert pane.triage_line.text.startswith("waiting")
        pane.show_job(JOB, paths=paths, world_size=2, job_active=False)  # scancel'd while pending: no log, ever
        await until(pilot, lambda: "never started" in pane.triage_line.text)
        await until(pilot, lambda: {r.status for r in pane.rows.values()} == {"never started"})
        banner = str(pane.query_one("#lp-triage", Static).render())
        assert "never started" in banner and "waiting" not in banner


async def test_pending_job_files_appear_later(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()  # ntui creates it at submit; a missing one is reported (tests/reliability/test_app_panes.py)
    paths = LogPaths(str(log_dir), STEM)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_job(JOB, paths=paths, world_size=4, job_active=True)
        await until(pilot, lambda: pane.polls > 0)
        assert {r.status for r in pane.rows.values()} == {"pending"}
        assert pane.triage_line.text.startswith("waiting")
        assert any("does not exist yet" in line for line in pane.log_lines)
        write_job(log_dir, failing=None)
        await until(pilot, lambda: all(r.status == "running" for r in pane.rows.values()))
        await until(pilot, lambda: "rank 0 step 4 loss 0.2000" in pane.log_lines)
        assert pane.triage_line.text.startswith("no failure found")


async def test_job_not_submitted_by_ntui_shows_its_batch_log(tmp_path: Path) -> None:
    batch = tmp_path / "slurm-77.out"
    batch.write_text("hello from sbatch\n")
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_job("77", paths=None, world_size=None, job_active=True, batch_log=str(batch))
        await until(pilot, lambda: "hello from sbatch" in pane.log_lines)
        assert list(pane.rows) == [BATCH]
        assert "per-rank logs unknown" in status_text(pane)
        pane.show_job(None, paths=None, world_size=None, job_active=False)
        await pilot.pause()
        assert pane.rows == {} and list(pane.log_lines) == [] and pane.job_id is None


async def test_world_size_unknown_discovers_rank_files(tmp_path: Path) -> None:
    paths = write_job(tmp_path)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_job(JOB, paths=paths, world_size=None, job_active=True)
        await until(pilot, lambda: list(pane.rows) == [BATCH, 0, 1, 2, 3] and pane.triage_line.failed)
        assert pane.triage_line.rank == 2


# ------------------------------------------------------------------------------------------ the live view


async def test_enter_opens_a_rank_and_appended_lines_show_within_a_few_polls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    polls = [0]  # the watcher's polls: which one read the line is the mechanism, however slow the machine
    read_by: list[int] = []  # the number of the poll that returned the appended line
    real_poll = JobLogWatcher.poll

    def counted(self: JobLogWatcher, *args: Any, **kwargs: Any) -> Any:
        polls[0] += 1
        ups = real_poll(self, *args, **kwargs)
        if any(line.startswith("rank 3 step 5") for up in ups.values() for line in up.lines):
            read_by.append(polls[0])
        return ups

    monkeypatch.setattr(JobLogWatcher, "poll", counted)
    paths = write_job(tmp_path)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        assert pane.view_keys == (0,) and pane.log_lines[-1] == "rank 0 step 4 loss 0.2000"
        pane.query_one("#lp-ranks", DataTable).focus()
        await pilot.press("down", "down", "down", "down", "enter")  # batch, 0, 1, 2, 3 -> rank 3
        await until(pilot, lambda: pane.view_keys == (3,) and "rank 3 step 4 loss 0.2000" in pane.log_lines)
        assert "rank 3 on nid002" in status_text(pane) and "following" in status_text(pane)
        before = polls[0]
        append(rank_file(paths, 3), "rank 3 step 5 loss 0.1667 \x1b[31mred\x1b[0m \x1b]0;title\x07")
        await until(pilot, lambda: pane.log_lines[-1].startswith("rank 3 step 5"), timeout=60)
        # read by the next poll, or the one after (one may have been under way when the line was appended)
        assert read_by and read_by[0] - before <= 2, (read_by, before)
        assert pane.log_lines[-1] == "rank 3 step 5 loss 0.1667 red "  # inert: escapes gone
        await pilot.pause()
        assert pane.visible_lines[-1].startswith("rank 3 step 5")  # on screen: followed
        # a progress bar (no newline, \r updates) shows its latest state in the status line
        with open(rank_file(paths, 3), "a") as fh:
            fh.write("epoch 1:  10%|#         | 10/100\repoch 1:  50%|#####     | 50/100")
        await until(pilot, lambda: "50/100" in status_text(pane))
        assert "10/100" not in status_text(pane)


async def test_scrolling_up_pauses_counts_new_lines_and_end_resumes(tmp_path: Path) -> None:
    paths = write_job(tmp_path, steps=300)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await until(pilot, lambda: pane.log_lines[-1] == "rank 0 step 299 loss 0.0033")
        pane.query_one("#lp-log").focus()
        await pilot.press("pageup")
        await until(pilot, lambda: not pane.following)
        assert "paused · 0 new lines below" in status_text(pane)
        append(rank_file(paths, 0), "late 1", "late 2", "late 3")
        await until(pilot, lambda: pane.pending_count == 3)
        assert "3 new lines below" in status_text(pane)
        assert "late 1" not in pane.log_lines  # nothing moves under the reader
        await pilot.press("end")
        assert pane.following and pane.pending_count == 0
        assert list(pane.log_lines[-3:]) == ["late 1", "late 2", "late 3"]
        await pilot.pause()
        assert pane.visible_lines[-1] == "late 3"
        append(rank_file(paths, 0), "later")
        await until(pilot, lambda: pane.log_lines[-1] == "later")


async def test_truncated_file_restarts_with_a_marker(tmp_path: Path) -> None:
    paths = write_job(tmp_path)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        rank_file(paths, 0).write_text("ntui: rank 0 on nid001\nrequeued: step 0\n")
        await until(pilot, lambda: "requeued: step 0" in pane.log_lines)
        assert "truncated or replaced" in pane.log_lines[0]
        assert "rank 0 step 4 loss 0.2000" not in pane.log_lines


async def test_E_jumps_to_the_traceback_of_the_rank_that_failed_first(tmp_path: Path) -> None:
    paths = write_job(tmp_path, steps=200)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await until(pilot, lambda: pane.triage_line.failed)
        assert pane.view_keys == (0,)
        await pilot.press("E")
        await until(pilot, lambda: pane.view_keys == (2,) and pane.marked_line is not None)
        await pilot.pause()
        assert pane.marked_line == "[rank2]: RuntimeError: boom: loss is NaN at step 3"
        assert "[rank2]: Traceback (most recent call last):" in pane.visible_lines
        assert pane.marked_line in pane.visible_lines
        assert not pane.following


async def test_E_reads_around_an_error_that_left_the_window(tmp_path: Path) -> None:
    paths = write_job(tmp_path)
    app = host(window=50)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await until(pilot, lambda: pane.triage_line.failed)
        append(rank_file(paths, 2), *(f"rank 2 keeps logging {i}" for i in range(400)))
        await until(pilot, lambda: pane.rows[2].last_line == "rank 2 keeps logging 399")
        await pilot.press("E")
        await until(pilot, lambda: pane.view_keys == (2,) and pane.marked_line is not None)
        assert pane.marked_line == "[rank2]: RuntimeError: boom: loss is NaN at step 3"
        assert "excerpt" in status_text(pane)
        assert len(pane.log_lines) < 100  # read around it by offset, not the whole file
        await pilot.press("end")  # back to the live tail
        await until(pilot, lambda: pane.log_lines[-1] == "rank 2 keeps logging 399")
        assert len(pane.log_lines) <= 50 and pane.following


async def test_merged_view_prefixes_every_line_with_its_rank(tmp_path: Path) -> None:
    paths = write_job(tmp_path)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await pilot.press("m")
        await until(pilot, lambda: pane.view_mode == "merged" and len(pane.log_lines) > 20)
        assert pane.view_keys == (0, 1, 2, 3)
        assert {line[:5] for line in pane.log_lines} == {"[r0] ", "[r1] ", "[r2] ", "[r3] "}
        assert "[r2] [rank2]: RuntimeError: boom: loss is NaN at step 3" in pane.log_lines
        append(rank_file(paths, 3), "rank 3 says hi")
        append(rank_file(paths, 1), "rank 1 says hi")
        await until(pilot, lambda: {"[r3] rank 3 says hi", "[r1] rank 1 says hi"} <= set(pane.log_lines[-2:]))
        assert "merged: 4 ranks" in status_text(pane)
        # several ranks: mark 1 and 3 with space, then m twice (back to one rank, then merged again)
        table = pane.query_one("#lp-ranks", DataTable)
        table.focus()
        await pilot.press("down", "down", "space", "down", "down", "space")
        await pilot.press("m")
        await until(pilot, lambda: pane.view_mode == "rank")
        await pilot.press("m")
        await until(pilot, lambda: pane.view_mode == "merged" and pane.view_keys == (1, 3) and len(pane.log_lines) > 5)
        assert {line[:5] for line in pane.log_lines} == {"[r1] ", "[r3] "}


async def test_search_with_slash_n_and_N(tmp_path: Path) -> None:
    paths = write_job(tmp_path, steps=120)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        await pilot.press("slash")
        await pilot.press(*"step 1")
        await pilot.press("enter")
        await until(pilot, lambda: pane.marked_line is not None)
        assert pane.marked_line == "rank 0 step 1 loss 0.5000"
        assert not pane.following
        await pilot.press("n")
        assert pane.marked_line == "rank 0 step 10 loss 0.0909"
        await pilot.press("N")
        assert pane.marked_line == "rank 0 step 1 loss 0.5000"
        await pilot.press("N")  # wraps to the last match
        assert pane.marked_line == "rank 0 step 119 loss 0.0083"
        assert "step 1" in status_text(pane)
        await pilot.press("slash")
        assert pane.has_class("-searching")
        await pilot.press("escape")
        assert not pane.has_class("-searching")


def test_formatting_helpers() -> None:
    assert [human_size(n) for n in (0, 1023, 1024, 256 * 2**20)] == ["0 B", "1023 B", "1.0 KiB", "256.0 MiB"]
    assert [human_age(s) for s in (3, 75, 3700, 90000)] == ["3s ago", "1m15s ago", "1h01m ago", "1d1h ago"]


# ------------------------------------------------------------------------------------------ pictures


def test_snapshot_of_the_rank_list(snap_compare: Any, tmp_path: Path) -> None:
    paths = write_demo_logs(tmp_path / "logs")
    app = LogPaneHost()

    async def run_before(pilot: Any) -> None:
        await log_pane_scene(pilot, app.pane, paths, "error")

    assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)


def test_snapshot_of_the_merged_view(snap_compare: Any, tmp_path: Path) -> None:
    paths = write_demo_logs(tmp_path / "logs")
    app = LogPaneHost()

    async def run_before(pilot: Any) -> None:
        await log_pane_scene(pilot, app.pane, paths, "merged")

    assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)


def test_screenshots_are_deterministic(tmp_path: Path) -> None:
    one = [p.read_text() for p in log_pane_screenshots(tmp_path / "a")]
    two = [p.read_text() for p in log_pane_screenshots(tmp_path / "b")]
    assert one == two
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["log-merged.svg", "log-pane.svg"]
    assert "rank&#160;2&#160;on&#160;nid001141&#160;ran&#160;out&#160;of&#160;GPU&#160;memory&#160;first" in one[0]
    assert "[r2]&#160;[rank2]:&#160;torch.OutOfMemoryError" in one[1]


# ------------------------------------------------------------------------------------------ the real cluster


def run_ntui(cluster: DevCluster, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(cluster.env)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "ntui", *args],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        cwd=str(cwd),
    )


@pytest.mark.cluster
async def test_live_job_where_rank_2_raises(dev_cluster: DevCluster, tmp_path: Path) -> None:  # noqa: F811
    log_dir = tmp_path / "logs"
    res = run_ntui(
        dev_cluster,
        "submit",
        "local-torchrun",
        "--set",
        f"logs.dir={log_dir}",
        "--set",
        "env.NTUI_CHECK_FAIL_RANK=2",
        cwd=REPO,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    assert job_id.isdigit()
    paths = LogPaths(str(log_dir), "local-torchrun")
    app = LogPaneHost(now=0.0, settings=LogSettings(poll_interval=0.2))
    app.pane.clock = time.time
    try:
        async with app.run_test(size=SIZE) as pilot:
            pane = app.pane
            pane.show_job(job_id, paths=paths, world_size=4, job_active=True)  # opened while pending
            await until(pilot, lambda: pane.polls > 0)
            assert list(pane.rows) == [BATCH, 0, 1, 2, 3]
            # the shared cluster may queue it. Torch elastic's summary in the batch log may name rank 2 before the
            # pane has read rank 2's own file (seen in a full run: the machine loaded, the batch log polled first);
            # its "host : localhost" is the agent's word, so the verdict then says localhost until the rank's own
            # traceback, with the node of its header, is read: wait for that one (the summary's SIGABRT entry may
            # also come before the rank's file is read: its row errored says the pane read the rank's own error)
            await until(
                pilot,
                lambda: pane.triage_line.failed and pane.triage_line.rank == 2 and pane.triage_line.node != "localhost"
                and pane.rows[2].status == "errored",
                timeout=400,
            )
            header_node = node_of(Path(paths.rank(job_id, 2)))
            assert header_node in ("nid001", "nid002")
            assert pane.triage_line.node == header_node
            assert pane.triage_line.text.startswith(
                f"rank 2 on {header_node} failed first: RuntimeError: ntui check: rank 2 fails on purpose"
            )
            await until(pilot, lambda: pane.rows[2].status == "errored" and pane.rows[2].first)
            assert pane.rows[2].node == header_node
            await until(pilot, lambda: all(pane.rows[r].exists for r in range(4)), timeout=60)
            await pilot.press("E")
            await until(pilot, lambda: pane.view_keys == (2,) and pane.marked_line is not None)
            assert pane.marked_line == "[rank2]: RuntimeError: ntui check: rank 2 fails on purpose"
            assert "[rank2]: Traceback (most recent call last):" in pane.visible_lines
    finally:
        dev_cluster.run("scancel", job_id)


async def test_hidden_pane_tells_its_watcher_and_a_highlighted_row_is_read_at_once(tmp_path: Path) -> None:
    """Off screen the watcher polls only the batch log often (issue 16); a row the user moves to is read at
    the next tick, whatever its back-off."""
    paths = write_job(tmp_path, failing=None)
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        await opened(pilot, pane, paths)
        session = pane._follow.session
        assert session is not None and not session.hidden
        pane.display = False
        await until(pilot, lambda: session.hidden)
        pane.display = True
        await until(pilot, lambda: not session.hidden)
        table = pane.query_one("#lp-ranks", DataTable)
        wanted: list[object] = []

        class Recording(set):  # type: ignore[type-arg]
            def add(self, key: object) -> None:
                wanted.append(key)
                super().add(key)

        session.wanted = Recording()
        table.focus()
        table.move_cursor(row=3)  # the batch log is row 0: rank 2
        await until(pilot, lambda: 2 in wanted)


async def test_a_cancelled_job_is_said_cancelled_not_a_ranks_failure(tmp_path: Path) -> None:
    """The real logs of a torchrun job cancelled on the dev cluster (tests/data/logs/cancel-torchrun): the
    triage line states Slurm's verdict, not 'rank 0 failed first: srun: error: nid001: task 0: Exited'."""
    import shutil

    case = DATA / "cancel-torchrun"
    meta = restore_mtimes(case)
    shutil.copytree(case, tmp_path / "logs")  # copy2 keeps the captured mtimes
    paths = LogPaths(str(tmp_path / "logs"), meta["preset"])
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_job(meta["job_id"], paths=paths, world_size=4, job_active=False)
        await until(pilot, lambda: pane.triage_line.failed)
        assert pane.triage_line.text.startswith("cancelled at 2026-")
        assert pane.triage_line.key == BATCH and pane.triage_line.rank is None
        pane.action_first_error()  # E: the batch log at slurmstepd's CANCELLED line
        await until(pilot, lambda: pane.marked_line is not None)
        assert "CANCELLED AT" in (pane.marked_line or "")


# ------------------------------------------------------------------------------------------ a big job


@pytest.fixture(scope="module")
def bigjob(tmp_path_factory: pytest.TempPathFactory) -> BigJob:
    return make_bigjob(tmp_path_factory.mktemp("bigjob"), samples=False)


def test_snapshot_of_a_big_job_grouped_wide(snap_compare: Any, bigjob: BigJob) -> None:
    app = LogPaneHost(now=bigjob.now)

    async def run_before(pilot: Any) -> None:
        await big_log_scene(pilot, app.pane, bigjob)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_snapshot_of_a_big_job_grouped_narrow(snap_compare: Any, bigjob: BigJob) -> None:
    app = LogPaneHost(now=bigjob.now)

    async def run_before(pilot: Any) -> None:
        await big_log_scene(pilot, app.pane, bigjob)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_big_job_table_groups_filters_and_expands(bigjob: BigJob) -> None:
    """256 node lines; E opens the failing rank's node; f cycles the filters; Enter on a node folds it."""
    app = LogPaneHost(now=bigjob.now)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.pane
        await big_log_scene(pilot, pane, bigjob)
        keys = pane.table_keys
        assert keys[0] == BATCH and sum(k.startswith("node:") for k in keys) == 256
        i = keys.index("node:nid000130")
        assert keys[i + 1 : i + 5] == ["516", "517", "518", "519"]
        table = pane.query_one("#lp-ranks", DataTable)
        assert table.cursor_row == i + 2  # on rank 517
        assert pane.triage_line.rank == 517
        table.focus()
        await pilot.press("f")
        await until(pilot, lambda: pane.rank_filter == "failed")
        assert pane.table_keys == [BATCH, "node:nid000130", "517"]
        await pilot.press("f")
        assert pane.rank_filter == "errored" and pane.table_keys[-1] == "517"
        await pilot.press("f")
        assert pane.rank_filter == "silent" and pane.table_keys == [BATCH, "node:nid000011", "42"]
        await pilot.press("w")
        assert pane.rank_filter == "slowest" and pane.table_keys[1:3] == ["42", "517"]
        assert "table: slowest ranks (64)" in str(pane.query_one("#lp-status", Static).render())
        await pilot.press("w")
        assert pane.rank_filter == "all"
        table.move_cursor(row=pane.table_keys.index("node:nid000130"))
        await pilot.press("enter")
        await until(pilot, lambda: "517" not in pane.table_keys)
        assert len(pane.table_keys) == 257
        table.move_cursor(row=pane.table_keys.index("node:nid000002"))
        await pilot.press("enter")
        await until(pilot, lambda: "4" in pane.table_keys)
        await pilot.press("enter")  # the cursor stays on the node line: it folds again
        await until(pilot, lambda: "4" not in pane.table_keys)
