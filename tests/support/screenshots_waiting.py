"""Scenes of issue 24 ([waiting]): why a pending job waits (the details), what would start sooner (the what-if
dialog), with canned Slurm answers in the formats captured from the dev cluster (tests/data/slurm, "Waiting")
and the jobs view's frozen clock.

The 8-node job 48213790 waits behind higher-priority jobs, estimated to start at 11:02 (the clock says 09:30);
sprio shows its factors (multifactor); its what-if asks four shapes, of which 4 nodes start at 09:45 and the
other QOS at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ntui.core.config import Settings
from ntui.core.records.history import HistoryEntry
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import (
    LOG_DIR,
    SCRIPT,
    SQUEUE_AFTER,
    USER,
    WORKDIR,
    DemoHistory,
    _shoot,
    jobs_app,
    settle_jobs,
)
from tests.support.waits import WAIT_BOUND_S

if TYPE_CHECKING:
    from textual.pilot import Pilot

__all__ = ["WAITING_JOB", "save_whatif_screenshot", "save_why_screenshot", "waiting_app", "whatif_scene",
           "why_scene"]

WAITING_JOB = "48213790"
S = "\x1f"

SHOW_PENDING = f"""\
JobId={WAITING_JOB} JobName=alice-ddp-8n
   UserId={USER}(74211) GroupId={USER}(74211) MCS_label=N/A
   Priority=69417 Nice=0 Account=m4242_g QOS=gpu_premium
   JobState=PENDING Reason=Priority Dependency=(null)
   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:00 TimeLimit=06:00:00 TimeMin=N/A
   SubmitTime=2026-06-01T08:58:12 EligibleTime=2026-06-01T08:58:12
   AccrueTime=2026-06-01T08:58:12
   StartTime=2026-06-01T11:02:00 EndTime=2026-06-01T17:02:00 Deadline=N/A
   Partition=gpu_ss11 AllocNode:Sid=login22:1834412
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList= SchedNodeList=nid[200300-200307]
   NumNodes=8-8 NumCPUs=1024 NumTasks=8 CPUs/Task=128 ReqB:S:C:T=0:0:*:*
   TRES=cpu=1024,mem=1840000M,node=8,billing=1024,gres/gpu=32
   Features=gpu DelayBoot=00:00:00
   Command={LOG_DIR}/alice-ddp-8n-{WAITING_JOB}.sbatch
   WorkDir={WORKDIR}
   StdErr={LOG_DIR}/alice-ddp-8n-{WAITING_JOB}.out
   StdIn=/dev/null
   StdOut={LOG_DIR}/alice-ddp-8n-{WAITING_JOB}.out
"""

#: ``sprio --noheader -j ID -o ...`` (multifactor): priority, age, association, fair-share, job size, partition,
#: QOS, site, nice, TRES.
SPRIO = f"{WAITING_JOB}{S}gpu_ss11{S}69417{S}1180{S}0{S}52020{S}217{S}16000{S}0{S}0{S}0{S}\n"

PARTITIONS = (
    "PartitionName=gpu_ss11 AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=YES QoS=N/A "
    "DefaultTime=01:00:00 MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=0 Nodes=nid[200001-201792] State=UP "
    "TotalCPUs=229376 TotalNodes=1792\n"
    "PartitionName=gpu_debug AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=NO QoS=N/A "
    "DefaultTime=00:10:00 MaxNodes=8 MaxTime=00:30:00 MinNodes=0 Nodes=nid[201793-201888] State=UP "
    "TotalCPUs=12288 TotalNodes=96\n"
)
SACCTMGR = "m4242_g|gpu_regular,gpu_premium,gpu_shared|\n"

#: Slurm's estimate for each shape, by the option the shape adds (None: the job as it is).
ESTIMATES: dict[str | None, str] = {
    None: "2026-06-01T11:02:00",
    "--nodes=4": "2026-06-01T09:45:00",
    "--time=03:00:00": "2026-06-01T10:41:00",
    "--qos=gpu_regular": "2026-06-01T09:30:00",
}


def _test_only(argv: tuple[str, ...]) -> Any:
    option = next((a for a in argv[2:-1] if a.startswith("--")), None)
    start = ESTIMATES.get(option, ESTIMATES[None])
    nodes = "nid[200400-200403]" if option == "--nodes=4" else "nid[200300-200307]"
    return result(stderr=f"sbatch: Job 48213999 to start at {start} using 1024 processors on nodes {nodes} "
                         "in partition gpu_ss11\n")


def waiting_runner() -> FakeRunner:
    line = SQUEUE_AFTER
    return FakeRunner({
        "squeue": result(stdout=line),
        ("scontrol", "show", "job"): result(stdout=SHOW_PENDING),
        ("scontrol", "show", "partition"): result(stdout=PARTITIONS),
        "sprio": result(stdout=SPRIO),
        "sacctmgr": result(stdout=SACCTMGR),
        ("sbatch", "--test-only"): _test_only,
        "sacct": result(stdout=""),
    })


def waiting_history() -> DemoHistory:
    entry = HistoryEntry(
        token="demo-8n",  # noqa: S106 - a history row id, not a secret
        job_id=WAITING_JOB, cluster="perlmutter", preset="alice-ddp", preset_path=None,
        overrides=("sbatch.nodes=8", "sbatch.time=6:00:00", "sbatch.qos=gpu_premium"), job_name="alice-ddp-8n",
        launcher="torchrun", nodes=8, world_size=32, log_dir=LOG_DIR, log_stem="alice-ddp-8n",
        script=SCRIPT.replace("--nodes=4", "--nodes=8").replace("--time=02:00:00", "--time=06:00:00"),
        script_path=f"{LOG_DIR}/alice-ddp-8n-{WAITING_JOB}.sbatch", created_at=0.0, submitted_at=0.0,
        status="submitted",
    )
    return DemoHistory({WAITING_JOB: entry})


def waiting_app(runner: FakeRunner | None = None, settings: Settings | None = None) -> Any:
    history = waiting_history()
    return jobs_app(runner=runner or waiting_runner(), settings=settings, history_factory=lambda: history)


async def why_scene(pilot: Pilot[Any]) -> None:
    """The jobs view settled on the waiting job, its why in the details."""
    from ntui.ui.screens.jobs import JobsScreen

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    screen.table.move_cursor(key=WAITING_JOB)
    await settle_jobs(pilot)
    screen._tick()
    await pilot.pause()


async def whatif_scene(pilot: Pilot[Any]) -> None:
    """The what-if dialog of the waiting job, every shape answered."""
    from ntui.ui.screens.jobs import JobsScreen
    from ntui.ui.screens.whatif import WhatIfScreen

    await why_scene(pilot)
    await pilot.press("w")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_BOUND_S
    while not (isinstance(pilot.app.screen, WhatIfScreen) and pilot.app.screen.done):
        if loop.time() > deadline:
            raise TimeoutError("the what-if dialog did not finish")
        await pilot.pause(0.02)
    jobs = next(s for s in pilot.app.screen_stack if isinstance(s, JobsScreen))
    jobs._tick()  # the status line's Slurm-call count after the dialog's calls, not whenever its timer fired
    await pilot.pause()


def save_why_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-why.svg`` (same bytes on every run)."""
    return asyncio.run(_shoot(waiting_app(), why_scene, out / "jobs-why.svg", (120, 36), "ntui · why it waits"))


def save_whatif_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-whatif.svg`` (same bytes on every run)."""
    return asyncio.run(_shoot(waiting_app(), whatif_scene, out / "jobs-whatif.svg", (120, 36), "ntui · what if"))
