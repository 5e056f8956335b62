"""The app with a cluster reached over ssh (issue #45): its own running job's journal is read through its agent (the
real ``ntui agent --stdio`` over a pipe) on the journal tick, so that cluster's squeue goes at the idle pace, and the
journal's end asks its squeue at once: the job's ended row shows long before either pace would have asked (both
intervals here are far longer than the wait)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ntui.core.config import QueueSettings
from ntui.core.remote.files import AgentFiles
from tests.support.agent_pipe import AGENT, PipeRunner
from tests.support.clusters_view import clusters_view
from tests.support.fakes import result
from tests.support.screenshots_clusters import QUIET, cluster_runner, clusters_app, clusters_settings, job_line
from tests.support.screenshots_jobs import wait_until
from tests.unit.test_cluster_journals import ALLOC, END, submitted

SIZE = (150, 36)


async def test_a_clusters_journal_paces_its_squeue_and_its_end_asks_squeue_at_once(tmp_path: Path) -> None:
    journal = submitted(tmp_path)
    journal.write_text(ALLOC)
    beta = cluster_runner(job_line("7", "train", "RUNNING", reason="None", user="bob"))
    pipe = PipeRunner("beta", tmp_path / "beta-home")
    files = AgentFiles(pipe, command=AGENT, reconnects=1, sleep=lambda _s: None)  # type: ignore[arg-type]
    slow = replace(QUIET, queue=QueueSettings(active_interval=600, idle_interval=900, max_backoff=900))
    app = clusters_app(local=None, clusters={"beta": beta}, settings=clusters_settings(("beta",), slow), user="bob")
    app.cluster_files = {"beta": files}.__getitem__  # type: ignore[assignment]
    try:
        async with clusters_view(app, "beta/7", size=SIZE) as (pilot, screen):
            queue = screen.remote.queues["beta"]
            await wait_until(pilot, lambda: queue.polls.policy.covered)  # the job's journal is followed
            assert queue.journal.states["7"].nodes == "gpu-04"
            asked = queue.polls.refresh_count
            beta.add("squeue", result(stdout=""))  # the job has left the queue
            with journal.open("a") as f:
                f.write(END)
            await wait_until(pilot, lambda: "7" in queue.finished.ended)  # asked at once, not at either pace
            assert queue.polls.refresh_count > asked
            assert "beta/7" in screen.table.rows  # its ended row
    finally:
        files.close()
        pipe.drop()
