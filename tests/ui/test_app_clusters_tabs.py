"""The Progress, Report, Sweep and Stacks tabs of a job on a cluster reached over ssh (issue #45), in the real app
with two clusters: Slurm faked at the runner's edge, each cluster's files the agent's own functions on a test
directory (:class:`~tests.support.remote_samples.RecordedFiles`: its history entries given, every read recorded);
each tab reads the job on its own cluster, the same id on the other one is another job, a dropped link is said in
the tab."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from textual.widgets import Static

from ntui.core.records.history import HistoryEntry
from ntui.core.remote.protocol import Chunk
from ntui.core.slurm.ssh import classify_ssh
from ntui.ui.widgets.progress_pane import ProgressPane
from ntui.ui.widgets.report_pane import ReportPane
from tests.support.bigjob import STEM as BIG_STEM
from tests.support.bigjob import make_bigjob
from tests.support.clusters_view import clusters_view, select_row
from tests.support.fakes import FakeRunner, result
from tests.support.remote_samples import RecordedFiles
from tests.support.screenshots_clusters import clusters_app, job_line, show_job
from tests.support.screenshots_jobs import wait_until

SIZE = (150, 40)
DATA = Path(__file__).resolve().parents[1] / "data" / "progress"
STEM = "train"


def _cluster(name: str, job_id: str) -> FakeRunner:
    runner = FakeRunner({"squeue": result(stdout=job_line(job_id, f"{name}-train", "RUNNING", reason="None",
                                                          used="10:00", nodelist=f"{name}-g01",
                                                          partition="gpu") + "\n")}, default=result())
    show = show_job(job_id, f"{name}-train", "RUNNING", nodes=f"{name}-g01", partition="gpu")
    runner.add(("scontrol", "show", "job", "-d", job_id), result(stdout=show))
    runner.add(("scontrol", "show", "job", job_id), result(stdout=show))
    return runner


def _entry(job_id: str, log_dir: Path, stem: str = STEM, *, nodes: int = 1) -> dict[str, Any]:
    """A history entry's fields, as the agent sends them."""
    entry = HistoryEntry(token=f"t{job_id}", job_id=job_id, cluster=None, preset="train", preset_path=None,
                         overrides=(), job_name=stem, launcher="torchrun", nodes=nodes, world_size=nodes,
                         log_dir=str(log_dir), log_stem=stem, script="#!/bin/bash\n", script_path=None,
                         created_at=1.0, submitted_at=2.0, status="submitted")
    return dataclasses.asdict(entry)


def _logs(root: Path, job_id: str, capture: Path) -> dict[str, Any]:
    """A log directory of the cluster holding the job's rank-0 log (a real capture); its history entry's fields."""
    root.mkdir(parents=True)
    shutil.copyfile(capture, root / f"{STEM}-{job_id}-rank-0.out")
    return _entry(job_id, root)


class DroppedFiles(RecordedFiles):
    """A cluster whose link dropped: every question raises what ssh's exit 255 says."""

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, object] | None:
        problem = classify_ssh("alpha", 255, "Connection to alpha closed by remote host.")
        assert problem is not None
        raise problem

    def read(self, path: str, offset: int, limit: int = 0, *, from_end: bool = False) -> Chunk:
        raise AssertionError("no read after a dropped link")


def _words(pane: ProgressPane) -> str:
    return str(pane.query_one("#progress-words", Static).render())


async def test_the_progress_tab_reads_a_remote_jobs_rank_0_log_on_its_own_cluster(tmp_path: Path) -> None:
    hf, tqdm = DATA / "transformers-5.24.0" / "hf-trainer.out", DATA / "tqdm-4.70.1" / "tqdm-long-partial.out"
    alpha_files = RecordedFiles({"77": _logs(tmp_path / "alpha", "77", hf)})
    beta_files = RecordedFiles({"77": _logs(tmp_path / "beta", "77", tqdm)})
    by_name = {"alpha": alpha_files, "beta": beta_files}
    app = clusters_app(local=None, clusters={"alpha": _cluster("alpha", "77"), "beta": _cluster("beta", "77")})
    app.cluster_files = lambda name: by_name[name]  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/77", "beta/77", size=SIZE, select="alpha/77") as (pilot, screen):
        await pilot.press("p")
        pane = screen.query_one(ProgressPane)
        await wait_until(pilot, lambda: pane.series is not None)
        assert pane.failure is None
        assert pane.series is not None and (pane.series.step, pane.series.total) == (80, 80)
        assert _words(pane).startswith("step 80 of 80")
        assert {p for p, _ in alpha_files.reads} == {str(tmp_path / "alpha" / f"{STEM}-77-rank-0.out")}
        assert beta_files.reads == []

        await select_row(pilot, screen, "beta/77")  # the same id on the other cluster: its own log, not alpha's answer
        await wait_until(pilot, lambda: pane.series is not None and pane.series.total == 10000)
        assert {p for p, _ in beta_files.reads} == {str(tmp_path / "beta" / f"{STEM}-77-rank-0.out")}
        assert pane.series is not None and pane.series.step == 74
        assert "of 10,000" in _words(pane) and "min left" in _words(pane)  # its time limit: the queue row's
        assert "not available over ssh" not in _words(pane)


async def test_a_dropped_link_is_said_in_the_progress_tab(tmp_path: Path) -> None:
    app = clusters_app(local=None, clusters={"alpha": _cluster("alpha", "77"), "beta": _cluster("beta", "5")})
    app.cluster_files = lambda name: DroppedFiles()  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/77", size=SIZE, select="alpha/77") as (pilot, screen):
        await pilot.press("p")
        pane = screen.query_one(ProgressPane)
        await wait_until(pilot, lambda: pane.failure is not None)
        assert _words(pane).startswith("No progress: ssh to alpha: the connection dropped")
        assert pane.series is None


def _report_text(pane: ReportPane) -> str:
    return "\n".join(str(pane.query_one(f"#report-{part}", Static).render()) for part in ("findings", "text"))


async def test_the_report_tab_reads_a_remote_jobs_gpu_samples_on_its_own_cluster(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path / "alpha", nodes=2, steps=12, idle_gpus=((1, 2),), lagging_node=None, fail_rank=None)
    log_dir = tmp_path / "alpha" / "logs"
    alpha_files = RecordedFiles({job.job_id: _entry(job.job_id, log_dir, BIG_STEM, nodes=2)})
    beta_files = RecordedFiles({})  # beta's job of the same id is not ntui's
    by_name = {"alpha": alpha_files, "beta": beta_files}
    alpha, beta = _cluster("alpha", job.job_id), _cluster("beta", job.job_id)
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = lambda name: by_name[name]  # type: ignore[method-assign]
    key = f"alpha/{job.job_id}"
    async with clusters_view(app, key, f"beta/{job.job_id}", size=SIZE, select=key) as (pilot, screen):
        await pilot.press("u")
        pane = screen.query_one(ReportPane)
        await wait_until(pilot, lambda: pane.usage is not None)
        assert pane.failure is None and pane.usage is not None
        report = pane.usage.report  # alpha's two nodes' samples (and the node Slurm names there, its file missing)
        assert {n.node for n in report.nodes if n.status != "missing"} == set(job.nodes)
        assert len(report.all_gpus) == 8 and report.state == "RUNNING"
        assert {str(p) for p in job.sample_files.values()} <= {p for p, _ in alpha_files.reads}  # (the logs' too)
        assert beta_files.reads == []
        assert any(job.job_id in " ".join(a) for a in alpha.argvs()) and not any(
            "sacct" in a[0] for a in beta.argvs())
        text = _report_text(pane)
        assert f"job {job.job_id}" in text and "ntui-remote-" not in text

        await select_row(pilot, screen, f"beta/{job.job_id}")  # the same id on beta: not ntui's there, no report
        await wait_until(pilot, lambda: pane.usage is None and "ntui did not submit it" in _report_text(pane))


async def test_a_dropped_link_is_said_in_the_report_tab() -> None:
    app = clusters_app(local=None, clusters={"alpha": _cluster("alpha", "77"), "beta": _cluster("beta", "5")})
    app.cluster_files = lambda name: DroppedFiles()  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/77", size=SIZE, select="alpha/77") as (pilot, screen):
        await pilot.press("u")
        pane = screen.query_one(ReportPane)
        await wait_until(pilot, lambda: pane.failure is not None)
        assert _report_text(pane).strip().startswith("No report: ssh to alpha: the connection dropped")
