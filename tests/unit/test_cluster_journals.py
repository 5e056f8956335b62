"""A cluster reached over ssh has its own active jobs' journals read through its agent (issue #45): the real agent
(``ntui agent --stdio``) started here over a pipe, as :class:`AgentFiles` talks to it over the ssh master's channel,
from the cluster's own state directory; its squeue is paced by the local queue's rule (covered -> the idle
interval), asked at once when a journal tells a start or an end, and keeps the active pace without an agent or
while the link is down."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobfiles.journal import JournalReader, journal_path
from ntui.core.jobs.clusters import ClusterQueue
from ntui.core.jobs.journals import JournalBoard, JournalBook, LookupHistory, OffsetJournalReader
from ntui.core.jobs.model import CONFIRM_END_S
from ntui.core.records.history import History
from ntui.core.remote.files import AgentFiles, CommandFiles, LocalFiles, follows_journals, journal_read_at
from ntui.core.remote.logs import remote_entry
from ntui.core.slurm.ssh import SshError
from tests.support.agent_pipe import PipeRunner, agent_cluster
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line

NOW = datetime(2026, 3, 1, 12, 0, 0)
SETTINGS = Settings(queue=QueueSettings(active_interval=2, idle_interval=10, max_backoff=60))
ALLOC = '{"v":1,"ev":"alloc","t":100,"job":"7","restart":0,"nnodes":1,"nodes":"gpu-04","host":"gpu-04"}\n'
END = '{"v":1,"ev":"end","t":160,"job":"7","rc":0,"sig":null,"phase":"after"}\n'


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[PipeRunner, AgentFiles]]:
    with agent_cluster(tmp_path / "beta-home") as pair:
        yield pair


def submitted(tmp_path: Path, job_id: str = "7") -> Path:
    """The cluster's history says ntui submitted ``job_id`` there; its journal's path there (not written yet)."""
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    writer = History(tmp_path / "beta-home")
    writer.record_intent(token=f"{int(job_id):032x}", preset="p", preset_path=None, overrides=[], job_name="train",
                         launcher="srun", nodes=1, world_size=1, log_dir=str(logs), log_stem="train",
                         script="#!/bin/bash\n")
    writer.record_submitted(f"{int(job_id):032x}", job_id, "beta", None)
    writer.close()
    return Path(journal_path(str(logs), "train", job_id))


def _line(job_id: str, state: str, user: str = "bob") -> str:
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name="train", StateCompact=state,
                       Reason="None", TimeUsed="0:05", TimeLimit="1:00:00", NumNodes="1", NodeList="gpu-04",
                       Partition="debug", QOS="normal", WorkDir="/tmp", UserName=user, exit_code="")


def _squeue(queue: ClusterQueue, *lines: str, all_users: bool = False) -> float:
    """One squeue answer of the cluster applied: the delay before its next one."""
    request = queue.request(all_users)
    assert request is not None
    runner = FakeRunner({"squeue": result(stdout="".join(f"{ln}\n" for ln in lines))})
    _, delay = queue.succeeded(request, queue.fetch(runner, request))
    return delay


def _board(files: AgentFiles) -> JournalBoard:
    read_at = journal_read_at(files)
    return JournalBoard(reader=lambda path, job_id: OffsetJournalReader(path, job_id, read_at, retry_s=0.0))


def _tick(queue: ClusterQueue, files: AgentFiles, board: JournalBoard) -> bool:
    """One journal tick of the cluster, as its worker runs it: whether its squeue is asked at once."""
    request = queue.journal_request()
    assert request is not None and queue.journal_request() is None  # ticks never overlap
    return queue.journal_done(JournalBook.fetch(lambda: LookupHistory(partial(remote_entry, files)), board, request))


def test_a_clusters_squeue_goes_idle_while_its_running_jobs_journal_is_read_through_its_agent(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    journal = submitted(tmp_path)
    journal.write_text(ALLOC)
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    assert _squeue(queue, _line("7", "R")) == 2  # before any journal tick: the active pace
    board = _board(files)
    assert _tick(queue, files, board) is False  # running already: nothing to ask squeue
    assert queue.journal.states["7"].started and queue.journal.states["7"].nodes == "gpu-04"
    assert queue.entries["7"] is not None and queue.entries["7"].log_stem == "train"
    assert queue.polls.policy.covered
    assert _squeue(queue, _line("7", "R")) == 10  # its start and end are the journal's to tell: the idle pace
    reader = board.readers["7"]
    assert isinstance(reader, OffsetJournalReader) and reader.offset == len(ALLOC)
    reads = reader.reads
    assert _tick(queue, files, board) is False
    assert reader.reads == reads + 1 and reader.offset == len(ALLOC)  # one read from the offset reached per tick


def test_a_journals_end_asks_the_clusters_squeue_at_once_and_soon_again_while_it_still_lists_the_job(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    journal = submitted(tmp_path)
    journal.write_text(ALLOC)
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    _squeue(queue, _line("7", "R"))
    board = _board(files)
    _tick(queue, files, board)
    with journal.open("a") as f:
        f.write(END)
    assert _tick(queue, files, board) is True  # the end: squeue asked now
    assert _tick(queue, files, board) is False  # told once
    assert _squeue(queue, _line("7", "R")) == CONFIRM_END_S  # slurmctld has not heard yet: asked again soon
    assert _squeue(queue) == 10  # gone from the queue
    assert "7" in queue.finished.ended


def test_a_journals_start_of_a_job_squeue_lists_pending_asks_the_clusters_squeue_at_once(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    journal = submitted(tmp_path)
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    _squeue(queue, _line("7", "PD"))
    board = _board(files)
    assert _tick(queue, files, board) is False  # no journal yet: a pending job's is looked for
    assert queue.polls.policy.covered
    journal.write_text(ALLOC)
    assert _tick(queue, files, board) is True
    assert _tick(queue, files, board) is False  # told once


def test_a_dropped_link_keeps_the_clusters_squeue_at_the_active_pace(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    runner, files = cluster
    submitted(tmp_path).write_text(ALLOC)
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    _squeue(queue, _line("7", "R"))
    board = _board(files)
    _tick(queue, files, board)
    assert _squeue(queue, _line("7", "R")) == 10
    runner.drop()
    request = queue.journal_request()
    assert request is not None
    with pytest.raises(SshError):
        JournalBook.fetch(lambda: LookupHistory(partial(remote_entry, files)), board, request)
    queue.journal_failed()  # what the worker hands back
    assert _squeue(queue, _line("7", "R")) == 2
    runner.down = False  # the link is back: the next tick reads on from the journal's offset
    assert _tick(queue, files, board) is False and queue.polls.policy.covered
    assert _squeue(queue, _line("7", "R")) == 10


def test_without_an_agent_no_journal_is_asked_and_the_pace_stays(tmp_path: Path) -> None:
    commands = CommandFiles(FakeRunner({}), name="beta")
    assert not follows_journals(commands) and not follows_journals(LocalFiles())
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    _squeue(queue, _line("7", "R"))
    assert queue.journal_request() is not None
    queue.journal_failed(unsupported=True)  # what the worker hands back for plain commands
    assert queue.journal_request() is None
    assert _squeue(queue, _line("7", "R")) == 2


def test_in_everyones_view_a_cluster_follows_journals_but_keeps_the_active_pace(
        tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]) -> None:
    _, files = cluster
    submitted(tmp_path).write_text(ALLOC)
    queue = ClusterQueue("beta", SETTINGS, clock=lambda: NOW)
    _squeue(queue, _line("7", "R"))
    queue.toggle_all_users()
    _squeue(queue, _line("7", "R"), _line("8", "R", "carol"), all_users=True)
    request = queue.journal_request()
    assert request is not None and request.own_live == ("7",)  # the login's own job only
    board = _board(files)
    queue.journal.failed()  # (the request above was not run)
    _tick(queue, files, board)
    assert not queue.polls.policy.covered  # as the local model: everyone's view is never covered
    assert _squeue(queue, _line("7", "R"), _line("8", "R", "carol"), all_users=True) == 2


def test_the_offset_reader_folds_as_the_local_reader(tmp_path: Path, cluster: tuple[PipeRunner, AgentFiles]
                                                      ) -> None:
    _, files = cluster
    journal = submitted(tmp_path)
    journal.write_text(ALLOC + END[:30])  # a last line still being written
    local = JournalReader(str(journal), "7")
    remote = OffsetJournalReader(str(journal), "7", journal_read_at(files), retry_s=0.0)
    assert local.poll() and remote.poll()
    assert remote.state == local.state and not remote.state.ended
    with journal.open("a") as f:
        f.write(END[30:])
    assert local.poll() and remote.poll()
    assert remote.state == local.state and remote.state.ended
    local.close()
