"""The GPU tab of a job on a cluster reached over ssh (issue #45), in the real app with two clusters: the plan asked
of that cluster alone, the watch step streamed through its relay (here a local stand-in for the ssh channel that runs
the SIMULATED nvidia-smi: the GPU tool is simulated only at the hardware edge), the remote job's GPU rows drawn, the
step ended when another job is selected or the tab is hidden, a dropped link said in the pane."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ntui.core.gpu.watch import SAMPLES_NOT_OVER_SSH
from ntui.core.slurm.ssh import SshError, classify_ssh
from ntui.ui.widgets.gpu_pane import GpuPane
from tests.support.bigjob import STEM, make_bigjob
from tests.support.clusters_view import clusters_view, select_row
from tests.support.fakes import FakeRunner, result
from tests.support.remote_samples import RecordedFiles
from tests.support.screenshots_clusters import clusters_app, job_line, show_job
from tests.support.screenshots_jobs import wait_until
from tests.support.simulated_gpu import SCRIPT

SIZE = (150, 40)


class SimulatedCluster(FakeRunner):
    """A cluster reached over ssh at the Slurm-runner edge: squeue and scontrol answers canned; the watch step's
    channel (``stream_argv``) runs the SIMULATED nvidia-smi here with the step's own arguments, as node ``node``
    with ``gpus`` GPUs, its lines labelled like ``srun --label``; ``drop``: the channel dies the way ssh says a
    dropped connection does (exit 255)."""

    def __init__(self, name: str, job_id: str, node: str, *, gpus: int = 2, drop: bool = False) -> None:
        super().__init__({"squeue": result(stdout=job_line(job_id, f"{name}-train", "RUNNING", reason="None",
                                                            used="10:00", nodelist=node, partition="gpu") + "\n")},
                         default=result())
        show = show_job(job_id, f"{name}-train", "RUNNING", nodes=node, partition="gpu")
        self.add(("scontrol", "show", "job", "-d", job_id), result(stdout=show))
        self.add(("scontrol", "show", "job", job_id), result(stdout=show))
        self.name, self.node, self.gpus, self.drop = name, node, gpus, drop
        self.streamed: list[tuple[str, ...]] = []

    def stream_argv(self, argv: Sequence[str]) -> list[str]:
        self.streamed.append(tuple(argv))
        if self.drop:
            return ["sh", "-c", f"echo 'Connection to {self.name} closed by remote host.' >&2; exit 255"]
        smi_args = list(argv[list(argv).index("nvidia-smi") + 1:])
        return ["env", f"SLURMD_NODENAME={self.node}", f"SLURM_GPUS_ON_NODE={self.gpus}", "sh", "-c",
                '"$@" | sed -u "s/^/0: /"', "relay", sys.executable, str(SCRIPT), *smi_args]

    def classify(self, returncode: int, stderr: str, argv: Sequence[str] = ()) -> SshError | None:
        return classify_ssh(self.name, returncode, stderr, argv=argv)


def _text(pane: GpuPane, selector: str) -> str:
    from textual.widgets import Static

    content = pane.query_one(selector, Static).content
    return str(getattr(content, "plain", content))


async def test_the_gpu_tab_streams_a_remote_jobs_gpus_through_its_cluster_and_stops_there() -> None:
    alpha = SimulatedCluster("alpha", "77", "alpha-g01", gpus=2)
    beta = SimulatedCluster("beta", "77", "beta-g09", gpus=3)
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    files = RecordedFiles()  # no ntui job's record there: the watch step
    app.cluster_files = lambda name: files  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/77", "beta/77", size=SIZE, select="alpha/77") as (pilot, screen):
        await pilot.press("g")
        pane = screen.query_one(GpuPane)
        await wait_until(pilot, lambda: pane.state == "streaming" and pane.board is not None
                         and sum(len(g) for g in pane.board.latest().values()) == 2)
        assert (pane.cluster, pane.job_id) == ("alpha", "77")
        assert pane.failure is None
        (step,) = alpha.streamed
        assert step[:3] == ("srun", "--jobid=77", "--overlap") and "--nodelist=alpha-g01" in step
        assert ("scontrol", "show", "job", "-d", "77") in alpha.argvs() and not beta.streamed
        pane.redraw()
        await pilot.pause()
        summary, body = _text(pane, "#gpu-summary"), _text(pane, "#gpu-body")
        assert "job 77" in summary and "2 GPUs on 1 node" in summary and "SIMULATED" in summary
        assert "alpha-g01" in body
        assert SAMPLES_NOT_OVER_SSH in _text(pane, "#gpu-issues")
        first = pane.gpu_watch.stream
        assert first is not None

        await select_row(pilot, screen, "beta/77")  # the same id on the other cluster: its own step, alpha's ended
        await wait_until(pilot, lambda: pane.cluster == "beta" and pane.state == "streaming" and pane.board
                         is not None and sum(len(g) for g in pane.board.latest().values()) == 3)
        assert pane.wait_stopped() and not first.running  # type: ignore[attr-defined]
        assert len(alpha.streamed) == 1 and len(beta.streamed) == 1
        pane.redraw()
        assert "beta-g09" in _text(pane, "#gpu-body") and "alpha-g01" not in _text(pane, "#gpu-body")
        second = pane.gpu_watch.stream
        assert second is not None

        await pilot.press("d")  # the tab hidden: the channel closed, so the relay ends the step there
        await wait_until(pilot, lambda: pane.state == "paused")
        assert pane.wait_stopped() and not second.running  # type: ignore[attr-defined]
        assert pane.gpu_watch.stream is None


async def test_a_dropped_link_is_said_in_the_gpu_tab_and_retried_later() -> None:
    alpha = SimulatedCluster("alpha", "77", "alpha-g01", drop=True)
    beta = SimulatedCluster("beta", "5", "beta-g01")
    app = clusters_app(local=FakeRunner({"squeue": result()}, default=result()),
                       clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = lambda name: RecordedFiles()  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/77", size=SIZE, select="alpha/77") as (pilot, screen):
        await pilot.press("g")
        pane = screen.query_one(GpuPane)
        await wait_until(pilot, lambda: pane.state == "failed")
        assert "alpha: link down (the connection dropped" in pane.reason and "retrying in 2 s" in pane.reason
        assert "link down" in _text(pane, "#gpu-body")
        assert pane.gpu_watch.retry_at is not None and len(alpha.streamed) == 1
        alpha.drop = False  # the link is back: the tick's retry streams
        await wait_until(pilot, lambda: pane.state == "streaming")
        assert len(alpha.streamed) == 2 and pane.gpu_watch.retry_at is None


async def test_an_ntui_jobs_gpu_samples_on_its_cluster_are_read_through_its_files_with_no_step(tmp_path: Any) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=12, idle_gpus=(), lagging_node=None, fail_rank=None)
    alpha = SimulatedCluster("alpha", job.job_id, "nid000001")
    beta = SimulatedCluster("beta", "5", "beta-g01")
    there = RecordedFiles({job.job_id: {"log_dir": str(tmp_path / "logs"), "log_stem": STEM}})
    asked: list[str] = []

    def cluster_files(name: str) -> RecordedFiles:
        asked.append(name)
        return there

    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = cluster_files  # type: ignore[method-assign]
    key = f"alpha/{job.job_id}"
    async with clusters_view(app, key, size=SIZE, select=key) as (pilot, screen):
        await pilot.press("g")
        pane = screen.query_one(GpuPane)
        await wait_until(pilot, lambda: pane.state == "streaming" and pane.source == "samples")
        assert "alpha" in asked and alpha.streamed == [] and beta.streamed == []
        assert {p for p, _ in there.reads} == {str(p) for p in job.sample_files.values()}
        pane.redraw()
        summary = _text(pane, "#gpu-summary")
        assert f"job {job.job_id}" in summary and "8 GPUs on 2 nodes" in summary
        assert "from the job's own samples" in summary
        assert SAMPLES_NOT_OVER_SSH not in _text(pane, "#gpu-issues")
