"""A remote job's logs followed rank by rank (ntui/core/remote/rankfollow.py), through the real agent (``ntui agent
--stdio``) started here over a pipe, from the cluster's own state directory, as :class:`AgentFiles` talks to it over
the ssh master's channel; the link dropped by killing that channel and refusing new ones as ssh does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ntui.core.logs.rows import BATCH, Appended, Loaded
from ntui.core.records.history import History
from ntui.core.remote.files import AgentFiles, ClusterFiles, LocalFiles
from ntui.core.remote.logs import RemoteTail
from ntui.core.remote.protocol import MAX_CHUNK, Chunk
from ntui.core.remote.rankfollow import BACKOFF_CAP_S, RemoteJob, RemoteRanks
from ntui.core.slurm.ssh import SshError
from tests.support.agent_pipe import PipeRunner, agent_cluster, link_down


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[PipeRunner, AgentFiles]]:
    with agent_cluster(tmp_path / "beta-home") as pair:
        yield pair


def _record(state: Path, job_id: str, log_dir: Path, stem: str) -> None:
    """The cluster's history says ntui submitted ``job_id`` there, its logs in ``log_dir`` named after ``stem``."""
    writer = History(state)
    writer.record_intent(token=f"t{job_id}", preset="p", preset_path=None, overrides=[], job_name=stem,
                         launcher="srun", nodes=1, world_size=2, log_dir=str(log_dir), log_stem=stem,
                         script="#!/bin/bash\n")
    writer.record_submitted(f"t{job_id}", job_id, "beta", None)
    writer.close()


def _job(tmp_path: Path, *, active: bool = True, submitted: bool = True) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    batch = logs / "train-1234.out"
    batch.write_text("batch starts\n")
    (logs / "train-1234-rank-0.out").write_text("r0 step 0\nr0 step 1\n")
    (logs / "train-1234-rank-1.out").write_text("r1 step 0\n")
    (logs / "train-999-rank-0.out").write_text("another job's rank\n")
    if submitted:
        _record(tmp_path / "beta-home", "1234", logs, "train")
    return logs, batch


def _follow(files: ClusterFiles, batch: Path, *, active: bool = True, window: int = 100) -> RemoteRanks:
    return RemoteRanks(RemoteJob("beta", "1234", str(batch), active), {"beta": files}.__getitem__, window=window,
                       interval=0.5)


def test_a_submitted_jobs_rank_logs_are_found_by_its_history_entry_and_read_once(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    logs, batch = _job(tmp_path)
    follow = _follow(files, batch)
    first = follow.poll(0, BATCH)
    assert [r.key for r in first.rows] == [BATCH, 0, 1]  # the other job's rank file is not this job's
    assert [(r.status, r.last_line) for r in first.rows] == [
        ("following", "batch starts"), ("following", "r0 step 1"), ("following", "r1 step 0")]
    assert first.shown == Loaded(("batch starts",))
    assert first.triage.text == f"the logs on beta: {logs} ({batch})" and not first.triage.failed
    assert follow.poll(0, BATCH).shown is None  # nothing new: nothing drawn
    assert follow.poll(1, 0).shown == Loaded(("r0 step 0", "r0 step 1"))  # a view change: the file's window
    with (logs / "train-1234-rank-0.out").open("a") as f:
        f.write("r0 step 2\nr0 step")
    got = follow.poll(1, 0)
    assert got.shown == Appended(("r0 step 2",), "r0 step")  # the new line once, the unfinished one held
    assert dict((r.key, r.last_line) for r in got.rows)[0] == "r0 step 2"
    with (logs / "train-1234-rank-0.out").open("a") as f:
        f.write(" 3\n")
    assert follow.poll(1, 0).shown == Appended(("r0 step 3",))


def test_a_rank_log_written_after_the_start_is_found_at_a_later_listing(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    logs, batch = _job(tmp_path)
    follow = _follow(files, batch)
    follow.poll(0, BATCH)
    (logs / "train-1234-rank-2.out").write_text("r2 up\n")
    seen = [[r.key for r in follow.poll(0, BATCH).rows] for _ in range(4)]  # listed again every fourth poll
    assert seen[0] == [BATCH, 0, 1] and seen[-1] == [BATCH, 0, 1, 2]


def test_a_dropped_link_is_said_on_every_row_and_the_follow_resumes_at_its_offsets(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    runner, files = cluster
    logs, batch = _job(tmp_path)
    follow = _follow(files, batch)
    follow.poll(0, BATCH)
    assert follow.poll(1, 1).shown == Loaded(("r1 step 0",))
    runner.drop()
    with (logs / "train-1234-rank-1.out").open("a") as f:
        f.write("r1 step 1\n")
    down = follow.poll(1, 1)
    assert {r.status for r in down.rows} == {"link down, retry in 1 s"}
    assert all("the connection dropped" in r.last_line for r in down.rows)
    assert down.shown is None and down.wait_s == 1.0  # the interval, doubled
    assert follow.poll(1, 1).wait_s == 2.0
    with (logs / "train-1234-rank-1.out").open("a") as f:
        f.write("r1 step 2\n")
    runner.down = False
    back = follow.poll(1, 1)
    assert back.shown == Appended(("r1 step 1", "r1 step 2"))  # what was written meanwhile, once
    assert dict((r.key, r.status) for r in back.rows) == {BATCH: "following", 0: "following", 1: "following"}
    assert back.wait_s == 0.5 and len(runner.opened) == 2  # the channel opened again, once
    assert follow.poll(1, 1).shown is None


def test_the_wait_after_a_dropped_link_doubles_up_to_its_cap(tmp_path: Path) -> None:
    def unreachable(name: str) -> ClusterFiles:
        raise link_down(name)

    follow = RemoteRanks(RemoteJob("beta", "7", "/logs/7.out"), unreachable, window=10, interval=4.0)
    waits = [follow.poll(0, BATCH).wait_s for _ in range(5)]
    assert waits == [8.0, 16.0, BACKOFF_CAP_S, BACKOFF_CAP_S, BACKOFF_CAP_S]
    assert [r.status for r in follow.poll(0, BATCH).rows] == ["link down, retry in 30 s"]


def test_an_ended_jobs_follow_stops_at_the_first_poll_that_finds_nothing_new(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    logs, batch = _job(tmp_path)
    follow = _follow(files, batch, active=False)
    first = follow.poll(0, BATCH)
    assert not first.done and {r.status for r in first.rows} == {"ended"}
    with batch.open("a") as f:
        f.write("batch ends\n")
    assert not follow.poll(0, BATCH).done  # it found a line
    last = follow.poll(0, BATCH)
    assert last.done and {r.status for r in last.rows} == {"ended"} and len(last.rows) == 3


def test_a_job_ntui_did_not_submit_keeps_its_batch_log_alone(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    _, batch = _job(tmp_path, submitted=False)
    follow = _follow(files, batch)
    for _ in range(5):
        got = follow.poll(0, BATCH)
    assert [r.key for r in got.rows] == [BATCH] and got.triage.text == f"the batch log on beta: {batch}"


def test_a_shown_file_replaced_is_loaded_again_from_its_start(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    logs, batch = _job(tmp_path)
    follow = _follow(files, batch)
    follow.poll(0, 0)
    fresh = logs / "new.out"
    fresh.write_text("again 0\n")
    fresh.replace(logs / "train-1234-rank-0.out")
    assert follow.poll(0, 0).shown == Loaded(("again 0",))


def test_a_file_not_there_yet_is_said_and_read_once_it_is(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    batch = tmp_path / "logs" / "train-1234.out"
    batch.parent.mkdir()
    follow = _follow(files, batch)
    assert [(r.status, r.exists) for r in follow.poll(0, BATCH).rows] == [("not there yet", False)]
    batch.write_text("late\n")
    later = follow.poll(0, BATCH)
    assert later.rows[0].status == "following" and later.shown == Loaded(("late",))


def test_a_rows_last_line_is_cut_to_what_the_table_shows(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    batch = tmp_path / "job.out"
    batch.write_text("  " + "x" * 300 + "  \n")
    (row,) = _follow(files, batch).poll(0, BATCH).rows
    assert row.last_line == "x" * 159 + "…"


def test_a_job_without_its_batch_log_path_is_not_followed() -> None:
    with pytest.raises(ValueError, match="batch log"):
        RemoteRanks(RemoteJob("beta", "7", None), {}.__getitem__, window=10, interval=1.0)


class _DropsOnReadOn(LocalFiles):
    """This machine's files, whose link drops at the second read of a poll that needs more than one."""

    def __init__(self) -> None:
        self.fail = False

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        if self.fail:
            self.fail = False
            raise link_down("beta")
        return super().read(path, offset, limit, from_end=from_end)

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = MAX_CHUNK,
               **kw: Any) -> Chunk:
        self.fail = True  # the read after this follow drops
        return super().follow(path, offset, inode=inode, wait=wait, limit=limit)


def test_a_link_dropped_between_two_chunks_of_a_poll_loses_no_line(tmp_path: Path) -> None:
    files = _DropsOnReadOn()
    log = tmp_path / "big.out"
    log.write_text("")
    tail = RemoteTail(files, str(log))
    tail.start()
    written = [f"line {i:07d} " + "y" * 60 for i in range(2 * MAX_CHUNK // 70)]  # more than one chunk
    log.write_text("".join(f"{x}\n" for x in written))
    got = tail.poll()
    assert got.lines and len(got.lines) < len(written)  # the first chunk's lines, kept though the link dropped
    lines = list(got.lines)
    for _ in range(len(written)):
        if len(lines) >= len(written):
            break
        lines += tail.poll().lines
    assert lines == written  # each line once, in order


class _DropsOnReread(LocalFiles):
    """This machine's files, whose link drops at the read from a file's start after the follow found it replaced."""

    def __init__(self) -> None:
        self.drops = 1

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        if offset == 0 and self.drops:
            self.drops -= 1
            raise link_down("beta")
        return super().read(path, offset, limit, from_end=from_end)


def test_a_link_dropped_while_a_replaced_file_is_read_again_says_the_reset_at_the_next_poll(tmp_path: Path) -> None:
    files = _DropsOnReread()
    log = tmp_path / "job.out"
    log.write_text("old 0\nold 1\n")
    tail = RemoteTail(files, str(log), start_bytes=4)  # its start reads from offset 4: the drop waits for the reset
    tail.start()
    fresh = tmp_path / "fresh.out"
    fresh.write_text("new 0\n")
    fresh.replace(log)
    with pytest.raises(SshError):
        tail.poll()
    again = tail.poll()
    assert again.reset == "replaced" and again.lines == ["new 0"]  # the whole new file, said as a reset
