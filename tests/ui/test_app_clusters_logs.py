"""The Logs tab of a job on a cluster reached over ssh (issue #45): its batch log and, for a job ntui submitted there,
every rank's log its history entry's log directory lists there, each followed by offsets through that cluster's
files; the job's history entry answered by the real agent over a pipe of protocol lines; a job ntui did not submit
keeps its batch log alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ntui.core.remote.files import LocalFiles
from ntui.ui.widgets.log_pane import LogPane
from tests.support.clusters_view import clusters_view
from tests.support.screenshots_clusters import (
    agent_answer,
    cluster_runner,
    clusters_app,
    job_line,
    link_down,
    show_job,
)
from tests.support.screenshots_jobs import wait_until

SIZE = (150, 36)


class _ClusterFiles(LocalFiles):
    """A cluster's files: its logs read as the agent reads them, its history entries answered by the real agent
    (``agent.serve``) over a pipe, from that cluster's own state directory."""

    def __init__(self, name: str, state: Path, asked: list[str]) -> None:
        self.name, self.state, self.asked, self.down = name, state, asked, False

    def __getattribute__(self, attr: str) -> Any:
        if attr in ("stat", "read", "follow", "listdir", "job"):
            name = object.__getattribute__(self, "name")
            object.__getattribute__(self, "asked").append(name)
            if object.__getattribute__(self, "down"):
                raise link_down(name)  # the link dropped (ssh's failure, as the agent client raises it)
        return object.__getattribute__(self, attr)

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        answer = agent_answer(self.state, {"op": "job", "job_id": job_id, "cluster": cluster})
        found = answer.get("job")
        return found if isinstance(found, dict) else None


def _record(state: Path, job_id: str, cluster: str, log_dir: Path, stem: str) -> None:
    from ntui.core.records.history import History

    writer = History(state)
    writer.record_intent(token=f"t{job_id}", preset="p", preset_path=None, overrides=[], job_name=stem,
                         launcher="srun", nodes=1, world_size=2, log_dir=str(log_dir), log_stem=stem,
                         script="#!/bin/bash\n")
    writer.record_submitted(f"t{job_id}", job_id, cluster, None)
    writer.close()


async def test_a_remote_jobs_rank_logs_are_listed_and_followed_once(tmp_path: Path) -> None:
    logs = tmp_path / "beta-logs"
    logs.mkdir()
    batch = logs / "train-1234.out"
    batch.write_text("batch starts\n")
    (logs / "train-1234-rank-0.out").write_text("r0 step 0\nr0 step 1\n")
    rank1 = logs / "train-1234-rank-1.out"
    rank1.write_text("r1 step 0\n")
    (logs / "train-999-rank-0.out").write_text("another job's rank\n")  # not this job's: not listed
    beta_state, alpha_state = tmp_path / "beta-home", tmp_path / "alpha-home"
    _record(beta_state, "1234", "beta", logs, "train")
    local = cluster_runner(job_line("1234", "here-job"), shows={"1234": show_job("1234", "here-job")})
    alpha = cluster_runner(job_line("1234", "alpha-job"), shows={"1234": show_job("1234", "alpha-job")})
    beta = cluster_runner(job_line("1234", "train", "RUNNING", reason="None"),
                          shows={"1234": show_job("1234", "train", "RUNNING", out=str(batch))})
    asked: list[str] = []
    opened = {"alpha": _ClusterFiles("alpha", alpha_state, asked), "beta": _ClusterFiles("beta", beta_state, asked)}

    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = opened.__getitem__  # type: ignore[assignment]
    async with clusters_view(app, "beta/1234", size=SIZE, select="beta/1234") as (pilot, screen):
        await pilot.press("l")
        pane = screen.query_one(LogPane)
        await wait_until(pilot, lambda: {0, 1} <= set(pane.rows) and pane.rows[1].exists)
        assert set(pane.rows) == {"batch", 0, 1}  # the other job's rank file is not this job's
        assert pane.rows[0].last_line == "r0 step 1" and pane.rows[1].last_line == "r1 step 0"
        assert list(pane.log_lines) == ["batch starts"]
        pane.open_rank(0)
        await wait_until(pilot, lambda: list(pane.log_lines) == ["r0 step 0", "r0 step 1"])
        pane.open_rank(1)
        await wait_until(pilot, lambda: list(pane.log_lines) == ["r1 step 0"])
        with rank1.open("a") as f:
            f.write("r1 step 1\n")
        await wait_until(pilot, lambda: len(pane.log_lines) == 2)
        await wait_until(pilot, lambda: pane.rows[1].last_line == "r1 step 1")
        assert list(pane.log_lines) == ["r1 step 0", "r1 step 1"]  # arrived once
        assert set(asked) == {"beta"}  # the job's own cluster, and no other
        opened["beta"].down = True  # the link drops: said on the rank's row, the lines written meanwhile kept
        await wait_until(pilot, lambda: pane.rows[1].status.startswith("link down"))
        with rank1.open("a") as f:
            f.write("r1 step 2\n")
        opened["beta"].down = False
        await wait_until(pilot, lambda: len(pane.log_lines) == 3 and pane.rows[1].status == "following")
        assert list(pane.log_lines) == ["r1 step 0", "r1 step 1", "r1 step 2"]  # resumed at its offset, once


async def test_a_remote_job_ntui_did_not_submit_keeps_its_batch_log_alone(tmp_path: Path) -> None:
    logs = tmp_path / "beta-logs"
    logs.mkdir()
    batch = logs / "train-1234.out"
    batch.write_text("batch only\n")
    (logs / "train-1234-rank-0.out").write_text("r0 step 0\n")
    beta = cluster_runner(job_line("1234", "train", "RUNNING", reason="None"),
                          shows={"1234": show_job("1234", "train", "RUNNING", out=str(batch))})
    alpha = cluster_runner(job_line("77", "alpha-job"), shows={"77": show_job("77", "alpha-job")})
    asked: list[str] = []
    opened = {"alpha": _ClusterFiles("alpha", tmp_path / "a", asked),
              "beta": _ClusterFiles("beta", tmp_path / "b", asked)}  # no history there

    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = opened.__getitem__  # type: ignore[assignment]
    async with clusters_view(app, "beta/1234", size=SIZE, select="beta/1234") as (pilot, screen):
        await pilot.press("l")
        pane = screen.query_one(LogPane)
        await wait_until(pilot, lambda: list(pane.log_lines) == ["batch only"] and pane.polls >= 2)
        assert set(pane.rows) == {"batch"}
