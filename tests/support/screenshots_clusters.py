"""The jobs view with two clusters reached over ssh beside the local one: ``screenshots/clusters.svg``, and the app
factory the clusters' tests use.

    python -m tests.support.screenshots_clusters [--out screenshots]   (from the repository root)

:func:`clusters_app` is the real :class:`~ntui.ui.app.NtuiApp` opened on the jobs view with a runner per cluster
(fakes at the Slurm-runner edge, as the other jobs-view tests use); :func:`demo_cluster_runners` answers like three
clusters where the same job id exists on two of them, and the third's link is down.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ntui.core.config import ClusterSettings, NotifySettings, Settings
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.ssh import SshError
from tests.support.demo import FROZEN_NOW
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import settle_jobs, squeue_line, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from ntui.ui.app import NtuiApp

__all__ = ["clusters_app", "clusters_scene", "clusters_settings", "demo_cluster_runners", "demo_clusters_app",
           "job_line", "save_clusters_screenshot"]

QUIET = Settings(notify=NotifySettings(bell=False, desktop=False, states=()))


def clusters_settings(names: Sequence[str], base: Settings = QUIET) -> Settings:
    """``base`` with ``clusters:`` naming ``names`` (ssh hosts of the same names)."""
    from dataclasses import replace

    return replace(base, clusters=tuple(ClusterSettings(name=n, ssh=n) for n in names))


def job_line(job_id: str, name: str, state: str = "PENDING", *, reason: str = "JobHeldUser", used: str = "0:00",
             limit: str = "1:00:00", nodes: str = "1", nodelist: str = "", partition: str = "debug",
             user: str = "alice") -> str:
    """One squeue line of a job (``query_queue``'s fields)."""
    compact = {"RUNNING": "R", "PENDING": "PD", "COMPLETING": "CG"}[state]
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name=name, StateCompact=compact,
                       State=state, Reason=reason, TimeUsed=used, TimeLimit=limit, StartTime="N/A", NumNodes=nodes,
                       NodeList=nodelist, tres_alloc=f"cpu=8,node={nodes}", Partition=partition, QOS="normal",
                       WorkDir="/home/alice/train", UserName=user, exit_code="")


def show_job(job_id: str, name: str, state: str = "PENDING", *, out: str = "", nodes: str = "",
             partition: str = "debug") -> str:
    """A short ``scontrol show job -d`` answer."""
    where = f"   NodeList={nodes} NumNodes=1\n" if nodes else ""
    return (f"JobId={job_id} JobName={name}\n   UserId=alice(1000) GroupId=alice(1000)\n"
            f"   JobState={state} Reason={'None' if state == 'RUNNING' else 'JobHeldUser'} Dependency=(null)\n"
            f"   RunTime=00:12:40 TimeLimit=04:00:00 TimeMin=N/A\n   Partition={partition}\n{where}"
            f"   StdOut={out or f'/home/alice/logs/{name}-{job_id}.out'}\n")


def cluster_runner(*lines: str, shows: Mapping[str, str] | None = None) -> FakeRunner:
    """A fake cluster: squeue lists ``lines``; scontrol show job answers ``shows`` (job id -> text); scancel,
    hold and release succeed."""
    runner = FakeRunner({"squeue": result(stdout="".join(f"{ln}\n" for ln in lines)), "scancel": result(),
                         "scontrol hold": result(), "scontrol release": result()}, default=result())
    for job_id, text in (shows or {}).items():
        runner.add(("scontrol", "show", "job", "-d", job_id), result(stdout=text))
        runner.add(("scontrol", "show", "job", job_id), result(stdout=text))
    return runner


def link_down(host: str) -> SshError:
    return SshError(f"ssh to {host}: the connection dropped", host=host,
                    words="the connection dropped (ssh: Broken pipe)")


def agent_answer(state: Path, request: Mapping[str, Any]) -> dict[str, Any]:
    """The real agent's answer to one request (after its hello), served over a pipe of protocol lines from the
    cluster's own state directory ``state`` (its home's history): what a cluster's files get from the agent."""
    import io
    import json

    from ntui.core.remote import agent
    from ntui.core.remote.protocol import VERSION

    lines = [{"id": 1, "op": "hello", "version": VERSION}, {"id": 2, **request}]
    out = io.BytesIO()
    # the state directory given, not put into os.environ: the app's workers ask two clusters' agents at once
    agent.serve(io.BytesIO(b"".join(json.dumps(x).encode() + b"\n" for x in lines)), out, state=state)
    answer: dict[str, Any] = json.loads(out.getvalue().splitlines()[-1])
    assert answer["ok"], answer
    return answer


def demo_cluster_runners() -> tuple[FakeRunner, dict[str, CommandRunner]]:
    """The local cluster ``perlmutter`` and two over ssh: ``della`` (job 48213777 too, a different job) and
    ``frontier``, whose link is down."""
    local = cluster_runner(
        job_line("48213777", "alice-ddp", "RUNNING", reason="None", used="1:02:13", limit="2:00:00", nodes="4",
                 nodelist="nid[200012-200015]", partition="gpu_ss11"),
        job_line("48213811", "eval-ckpt", reason="Dependency", limit="30:00", partition="gpu_ss11"),
        shows={"48213777": show_job("48213777", "alice-ddp", "RUNNING", nodes="nid[200012-200015]",
                                    partition="gpu_ss11")},
    )
    della = cluster_runner(
        job_line("48213777", "tokenize", "RUNNING", reason="None", used="12:40", limit="4:00:00",
                 nodelist="della-l07g3", partition="gpu"),
        job_line("3391020", "sweep-lr", reason="Priority", limit="8:00:00", nodes="2", partition="gpu"),
        shows={"48213777": show_job("48213777", "tokenize", "RUNNING", out="/scratch/alice/logs/tokenize.out",
                                    nodes="della-l07g3", partition="gpu")},
    )
    frontier = FakeRunner({"squeue": link_down("frontier")}, default=result())
    return local, {"della": della, "frontier": frontier}


def clusters_app(
    *,
    local: CommandRunner | None,
    clusters: Mapping[str, CommandRunner],
    settings: Settings | None = None,
    user: str = "alice",
    clock: Callable[[], datetime] | None = lambda: FROZEN_NOW,
    local_name: str = "perlmutter",
    history_factory: Callable[[], Any] | None = None,
) -> NtuiApp:
    """The real app on the jobs view: the local cluster through ``local`` (None: no Slurm here) and each of
    ``clusters`` through its runner."""
    import ntui.ui.app as app_module
    from ntui.ui.app import NtuiApp
    from ntui.ui.screens.jobs import JobsScreen

    full = settings or clusters_settings(tuple(clusters))
    local_runner = local if local is not None else FakeRunner()
    history = history_factory or (lambda: None)

    def screen() -> JobsScreen:
        return JobsScreen(runner=local_runner, settings=full, user=user, clock=clock, history_factory=history)

    class ClustersApp(NtuiApp):
        CSS_PATH = str(Path(app_module.__file__).with_name("ntui.tcss"))
        MODES = {**NtuiApp.MODES, "jobs": screen}
        DEFAULT_MODE = "jobs"

    return ClustersApp(runner=local_runner, clock=clock or datetime.now, history_factory=history, identity="",
                       cursor_blink=False, settings=full, cluster_runners=clusters, clusters=tuple(clusters),
                       local_slurm=local is not None, local_name=local_name)


def demo_clusters_app() -> NtuiApp:
    """The screenshot's app: :func:`demo_cluster_runners` behind :func:`clusters_app`."""
    local, clusters = demo_cluster_runners()
    return clusters_app(local=local, clusters=clusters)


async def clusters_scene(pilot: Pilot[Any]) -> None:
    """The queue answered by every cluster (one link down), della's 48213777 selected, its details shown."""
    await settle_jobs(pilot)
    screen: Any = pilot.app.screen
    await wait_until(pilot, lambda: "della/48213777" in screen.table.rows)
    screen.table.move_cursor(key="della/48213777")
    await settle_jobs(pilot)
    await wait_until(pilot, lambda: "della" in str(screen.query_one("#jobs-details").view or ""))
    await pilot.pause()


def save_clusters_screenshot(out: Path = Path("screenshots"), size: tuple[int, int] = (120, 36)) -> Path:
    """Write ``<out>/clusters.svg``: the jobs view with three clusters, the same job id on two of them, the third's
    link down; della's job selected (frozen clock, no host, user or version shown; same bytes on every run)."""
    app = demo_clusters_app()
    path = out / "clusters.svg"

    async def run() -> None:
        async with app.run_test(size=size) as pilot:
            await clusters_scene(pilot)
            svg = app.export_screenshot(title="ntui · clusters")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")

    asyncio.run(run())
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="screenshots", type=Path)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(save_clusters_screenshot(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
