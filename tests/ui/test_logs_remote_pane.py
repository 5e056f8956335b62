"""The log pane as the thin owner of a remote job's follow (ntui/core/remote/rankfollow.py): what it draws of a job of
a cluster reached over ssh that ended, one whose batch log is not known yet, one whose cluster's files cannot be
read, and the way back to it after a local job. The cluster's files are this machine's, read as the agent reads
them; its history is answered by the real agent over a pipe (tests/support/screenshots_clusters.agent_answer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ntui.core.jobs.selected import SelectedJob
from ntui.core.records.history import History
from ntui.core.remote.files import LocalFiles
from ntui.ui.widgets.log_pane import LogPane
from tests.support.screenshots_clusters import agent_answer
from tests.support.screenshots_logs import LogPaneHost, wait_for

SIZE = (130, 30)


class _Cluster(LocalFiles):
    """A cluster's files: its logs read as the agent reads them, its history entries the real agent's answers."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.reads = 0

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = 256 * 1024,
               **kw: Any) -> Any:
        self.reads += 1
        return super().follow(path, offset, inode=inode, wait=wait, limit=limit)

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        found = agent_answer(self.state, {"op": "job", "job_id": job_id, "cluster": cluster}).get("job")
        return found if isinstance(found, dict) else None


def _logs(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    batch = logs / "train-77.out"
    batch.write_text("batch 0\nbatch 1\n")
    (logs / "train-77-rank-0.out").write_text("r0 done\n")
    state = tmp_path / "beta-home"
    writer = History(state)
    writer.record_intent(token="t77", preset="p", preset_path=None, overrides=[], job_name="train", launcher="srun",
                         nodes=1, world_size=1, log_dir=str(logs), log_stem="train", script="#!/bin/bash\n")
    writer.record_submitted("t77", "77", "beta", None)
    writer.close()
    return batch, state


def _remote(batch: Path | None, *, active: bool) -> SelectedJob:
    return SelectedJob("77", cluster="beta", batch_log=str(batch) if batch else None, active=active)


def _triage(pane: LogPane) -> str:
    return pane.triage_line.text


async def test_an_ended_remote_jobs_follow_reads_to_the_end_then_stops(tmp_path: Path) -> None:
    batch, state = _logs(tmp_path)
    cluster = _Cluster(state)
    app = LogPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.files = {"beta": cluster}.__getitem__
        pane.show_selected(_remote(batch, active=False))
        await wait_for(pilot, lambda: set(pane.rows) == {"batch", 0} and {r.status for r in pane.rows.values()}
                       == {"ended"} and not pane.workers)  # the follow stopped: its worker ended
        assert list(pane.log_lines) == ["batch 0", "batch 1"]
        assert _triage(pane) == f"the logs on beta: {batch.parent} ({batch})"


async def test_a_remote_job_whose_batch_log_is_not_known_yet_says_so_and_reads_nothing(tmp_path: Path) -> None:
    batch, state = _logs(tmp_path)
    cluster = _Cluster(state)
    app = LogPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.files = {"beta": cluster}.__getitem__
        pane.show_selected(_remote(None, active=True))
        await pilot.pause()
        assert _triage(pane) == "looking up where job 77 writes on beta (scontrol there)…"
        assert not pane.rows and not pane.workers and cluster.reads == 0
        pane.show_selected(_remote(batch, active=True))  # scontrol answered: the same job, its log now known
        await wait_for(pilot, lambda: list(pane.log_lines) == ["batch 0", "batch 1"])


async def test_a_remote_job_without_its_clusters_files_says_they_cannot_be_read(tmp_path: Path) -> None:
    batch, _ = _logs(tmp_path)
    app = LogPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.show_selected(_remote(batch, active=True))
        await pilot.pause()
        assert _triage(pane) == "the files of beta cannot be read from this view" and pane.triage_line.failed
        assert not pane.workers


async def test_a_local_job_between_two_selections_of_a_remote_one_shows_it_afresh(tmp_path: Path) -> None:
    batch, state = _logs(tmp_path)
    local = tmp_path / "here-5.out"
    local.write_text("here 0\n")
    app = LogPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.files = {"beta": _Cluster(state)}.__getitem__
        pane.show_selected(_remote(batch, active=True))
        await wait_for(pilot, lambda: list(pane.log_lines) == ["batch 0", "batch 1"])
        pane.show_job("5", paths=None, world_size=None, job_active=True, batch_log=str(local))
        await wait_for(pilot, lambda: list(pane.log_lines) == ["here 0"])
        pane.show_selected(_remote(batch, active=True))
        await wait_for(pilot, lambda: list(pane.log_lines) == ["batch 0", "batch 1"] and pane.job_id == "77")


async def test_a_remote_jobs_rows_say_the_link_state_the_pane_was_given_and_nothing_without_one(
        tmp_path: Path) -> None:
    """The link state comes with the pane's dependencies (``TabDeps.links``), not from the app it runs in: a pane
    in an app that keeps none (this host) says nothing of a link; one given the board says when the link drops and
    shows its own rows again once it is back."""
    from ntui.core.remote.link import ROW_DOWN, LinkBoard

    batch, state = _logs(tmp_path)
    app = LogPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane
        pane.files = {"beta": _Cluster(state)}.__getitem__
        pane.show_selected(_remote(batch, active=True))
        await wait_for(pilot, lambda: list(pane.log_lines) == ["batch 0", "batch 1"] and bool(pane.rows))
        pane._link_tick()  # no board: the tick looks at nothing (it read the app's attribute, which this host lacks)
        assert ROW_DOWN not in {r.status for r in pane.rows.values()}
        board = LinkBoard()
        pane.links = board
        own = {k: r.status for k, r in pane.rows.items()}
        board.of("beta").dropped("the connection dropped")
        pane._link_tick()
        assert {r.status for r in pane.rows.values()} == {ROW_DOWN}
        board.of("beta").answered()
        pane._link_tick()
        assert {k: r.status for k, r in pane.rows.items()} == own
