"""``screenshots/gpu-pane.svg``: the GPU pane alone, from canned data, deterministically.

    python -m tests.support.screenshots_gpu [PATH]   (from the repository root)

A :class:`~tests.support.fakes.FakeRunner` answers the one ``scontrol show job -d`` (a 2-node job with 4
GPUs per node, Perlmutter-shaped), a :class:`~tests.support.fakes.FakeStream` stands in for the
``srun ... nvidia-smi -l`` step, and :func:`canned_lines` makes 40 samples (80 s at the 2 s interval) of
plausible A100 readings, with one GPU idle for the whole time (flagged) and one reporting ``[N/A]``.
The clock is frozen, so the SVG is the same on every run.
:func:`gpu_pane_scene` is the part a combined screenshot script can reuse; :func:`big_gpu_scene` feeds the
big-job fixture's 1,024 GPUs (the heatmap) to a :func:`big_gpu_host`.
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult

from ntui.core.config import GpuSettings
from ntui.ui.widgets.gpu_pane import GpuPane
from tests.support.bigjob import BigJob
from tests.support.fakes import FakeRunner, FakeStream, result
from tests.support.waits import WAIT_BOUND_S

JOB_ID = "48213777"
NODES = ("nid001140", "nid001141")
IDLE = (1, 2)  # task 1 (nid001141), GPU 2: 0 % throughout
NOT_AVAILABLE = (0, 3)  # task 0, GPU 3: utilisation and power [N/A] in the last sample
SIZE = (120, 30)
START = 10_000.0
SAMPLES = 40
INTERVAL = 2

SCONTROL_SHOW_JOB = f"""\
JobId={JOB_ID} JobName=alice-ddp
   UserId=alice(74211) GroupId=alice(74211) MCS_label=N/A
   Priority=69120 Nice=0 Account=m4242_g QOS=gpu_regular
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:14:02 TimeLimit=02:00:00 TimeMin=N/A
   SubmitTime=2026-06-01T09:12:40 EligibleTime=2026-06-01T09:12:40
   StartTime=2026-06-01T09:15:58 EndTime=2026-06-01T11:15:58 Deadline=N/A
   Partition=regular AllocNode:Sid=login22:1841
   NodeList=nid[001140-001141]
   BatchHost=nid001140
   NumNodes=2 NumCPUs=256 NumTasks=8 CPUs/Task=32 ReqB:S:C:T=0:0:*:*
   TRES=cpu=256,mem=464G,node=2,billing=256,gres/gpu=8
   JOB_GRES=gpu:8
     Nodes=nid[001140-001141] CPU_IDs=0-127 Mem=237568 GRES=gpu:4(IDX:0-3)
   TresPerNode=gres:gpu:4
"""


def canned_lines(step: int, *, name: str = "NVIDIA A100-SXM4-40GB") -> list[str]:
    """One ``nvidia-smi -l`` round of the watch step (``srun --label``): 2 tasks x 4 GPUs, sample ``step``."""
    out: list[str] = []
    for task in range(len(NODES)):
        for gpu in range(4):
            phase = 0.7 * task + 1.3 * gpu
            if (task, gpu) == IDLE:
                util, umem, mem, temp, power = "0", "0", "3", "33", "56.10"
            else:
                u = 74 + 24 * math.sin(step / 2.5 + phase) - (45 if (step + 2 * gpu + task) % 11 == 0 else 0)
                util = str(max(0, min(100, round(u))))
                umem = str(max(0, min(100, round(u * 0.6))))
                mem = str(30_500 + 250 * gpu + 40 * (step % 7))
                temp = str(58 + round(u / 10))
                power = f"{90 + 3.1 * u:.2f}"
            if (task, gpu) == NOT_AVAILABLE and step == SAMPLES - 1:
                util, power = "[N/A]", "[N/A]"
            uuid = f"GPU-{task:02d}{gpu:02d}a1c3-5e7f-4a9b-8d1f-3e5a7c9b1d3f"
            out.append(f"{task}: {gpu}, {uuid}, {name}, {util}, {umem}, {mem}, 40960, {temp}, {power}")
    return out


class FrozenClock:
    """A monotonic clock that moves only when told (``advance``)."""

    def __init__(self, start: float = START) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def demo_gpu_runner() -> FakeRunner:
    return FakeRunner({"scontrol show job": result(stdout=SCONTROL_SHOW_JOB)})


class GpuPaneHost(App[None]):
    """The pane alone on a screen."""

    TITLE = "ntui · gpu-pane"

    def __init__(self, clock: FrozenClock | None = None, runner: FakeRunner | None = None) -> None:
        super().__init__()
        self.clock = clock or FrozenClock()
        self.pane = GpuPane(
            runner or demo_gpu_runner(),
            GpuSettings(interval=INTERVAL, idle_after=60.0),
            clock=self.clock,
            stream_factory=FakeStream,
            environ={},
            id="gpu-pane",
        )

    def compose(self) -> ComposeResult:
        yield self.pane


async def _stream_scene(pilot: Any, pane: GpuPane, clock: FrozenClock, job_id: str,
                        lines: Callable[[int], Iterable[str]], samples: int) -> None:
    """Watch ``job_id``, then feed ``samples`` rounds of ``lines(step)`` through the pane's stream."""
    await pilot.pause()
    before = len(FakeStream.made)  # streams of earlier scenes or tests stay in the list: only a new one is this one's
    pane.watch_job(job_id)
    deadline = asyncio.get_running_loop().time() + WAIT_BOUND_S
    while not (len(FakeStream.made) > before and FakeStream.made[-1].started):
        if asyncio.get_running_loop().time() > deadline:
            raise RuntimeError(f"the GPU pane did not start its stream (state {pane.state}: {pane.reason})")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    stream = FakeStream.made[-1]
    for step in range(samples):
        clock.advance(INTERVAL)
        for line in lines(step):
            stream.on_line(line)


async def gpu_pane_scene(pilot: Any, pane: GpuPane, clock: FrozenClock, samples: int = SAMPLES) -> None:
    """Watch the canned job, feed ``samples`` rounds, redraw: the state every GPU-pane picture shows."""
    await _stream_scene(pilot, pane, clock, JOB_ID, canned_lines, samples)
    pane.redraw()
    await pilot.pause()


def big_gpu_host(job: BigJob) -> GpuPaneHost:
    """The pane over the big-job fixture's allocation (256 nodes x 4 GPUs by default)."""
    return GpuPaneHost(runner=FakeRunner({"scontrol show job": result(stdout=job.scontrol_show_job())}))


async def big_gpu_scene(pilot: Any, pane: GpuPane, clock: FrozenClock, job: BigJob, samples: int = 3) -> None:
    """Watch the big job, feed ``samples`` rounds of its readings: the heatmap with its outliers."""
    await _stream_scene(pilot, pane, clock, job.job_id, job.watch_lines, samples)
    pane.redraw()
    await pilot.pause()


async def _take(path: Path) -> Path:
    app = GpuPaneHost()
    async with app.run_test(size=SIZE) as pilot:
        await gpu_pane_scene(pilot, app.pane, app.clock)
        svg = app.export_screenshot(title="ntui · gpu-pane")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")
    return path


def gpu_pane_screenshot(path: str | Path = Path("screenshots") / "gpu-pane.svg") -> Path:
    """Write the GPU pane screenshot (not from inside a running event loop; use ``gpu_pane_scene`` there)."""
    return asyncio.run(_take(Path(path)))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    print(gpu_pane_screenshot(*args[:1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
