"""The stuck-job scene: a running job gone quiet (its queue row, the notice) and its Stacks tab.

Everything comes from one real job on the dev cluster, ``tests/data/stacks/torchrun-stuck/`` (made by
``tests/cluster/test_stacks.py`` with ``NTUI_CAPTURE_STACKS``): 4 ranks on 2 nodes under torchrun, rank 3 stuck in a
function of its own at step 4 while the others wait in ``all_reduce``. The runner answers with that job's real
``squeue``, ``scontrol show job -d`` and ``ntui stacks`` step output; its history entry holds its real script (the
preset's progress pattern in it); its rank-0 log is the real one, with its real last write. The clock is frozen at
the moment ``squeue`` answered (the job's StartTime plus its RunTime, Slurm's times in the capture machine's UTC) and
the quiet threshold is the test's (``progress.quiet-after: 6``): the view's progress tick reads the log (the row
says ``37% · quiet 19 s``, a notice says it once), then ``k`` takes the stacks.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from ntui.core.config import ProgressSettings
from ntui.core.records.history import HistoryEntry
from ntui.ui.app import NtuiApp
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import (
    QUIET,
    USER,
    DemoHistory,
    jobs_app,
    open_tab_after_progress_tick,
    wait_until,
)

CAPTURE = Path(__file__).resolve().parents[1] / "data" / "stacks" / "torchrun-stuck"
#: The cluster test's threshold (tests/cluster/test_stacks.py QUIET_AFTER_S), under which the job was captured.
QUIET_AFTER_S = 6.0


def _case() -> dict[str, Any]:
    case: dict[str, Any] = json.loads((CAPTURE / "case.json").read_text())
    return case


JOB = str(_case()["job_id"])
STEM = "hang-torchrun-stuck"


def stacks_runner() -> FakeRunner:
    """The job's own answers: squeue, scontrol show job -d, and the stacks step's output."""
    def text(name: str) -> str:
        return (CAPTURE / name).read_text()

    return FakeRunner({"squeue": result(stdout=text("squeue.stdout")),
                       ("scontrol", "show", "job"): result(stdout=text("show_job.stdout")),
                       "srun": result(stdout=text("srun.stdout"), stderr=text("srun.stderr"))},
                      default=result())


def stacks_history(directory: Path) -> DemoHistory:
    """The job's entry, its logs in ``directory``: the real rank-0 log with its real last write."""
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f"{STEM}-{JOB}-rank-0.out"
    shutil.copyfile(CAPTURE / "rank-0.out", log)
    written = float(_case()["log_mtime"])
    os.utime(log, (written, written))
    entry = HistoryEntry(
        token="stuck", job_id=JOB, cluster="dev", preset=STEM, preset_path=None, overrides=(), job_name=STEM,  # noqa: S106 - a row id
        launcher="torchrun", nodes=2, world_size=4, log_dir=str(directory), log_stem=STEM,
        script=(CAPTURE / "script.sbatch").read_text(), script_path=None, created_at=0.0, submitted_at=0.0,
        status="submitted")
    return DemoHistory({JOB: entry})


def _captured_at() -> datetime:
    """When squeue answered: the job's StartTime plus its RunTime (``scontrol show job -d``)."""
    words = dict(w.split("=", 1) for w in (CAPTURE / "show_job.stdout").read_text().split() if "=" in w)
    h, m, sec = (int(x) for x in words["RunTime"].split(":"))
    start = datetime.fromisoformat(words["StartTime"]).replace(tzinfo=timezone.utc)
    return start + timedelta(hours=h, minutes=m, seconds=sec)


AT = _captured_at()


def stacks_app(directory: Path) -> NtuiApp:
    history = stacks_history(directory)
    settings = replace(QUIET, progress=ProgressSettings(quiet_after=QUIET_AFTER_S))
    return jobs_app(runner=stacks_runner(), settings=settings, history_factory=lambda: history, clock=lambda: AT,
                    user=USER)


async def stacks_scene(pilot: Pilot[Any]) -> None:
    """The progress tick found the job quiet (row, notice), the job selected, ``k`` pressed, the stacks taken."""
    from ntui.ui.widgets.stacks_pane import StacksPane

    screen = await open_tab_after_progress_tick(pilot, JOB, "k")
    pane = screen.query_one("#jobs-stacks", StacksPane)
    await wait_until(pilot, lambda: JOB in pane.taken)
    screen._tick()
    await pilot.pause()


def save_stacks_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-stacks.svg`` (same bytes on every run)."""
    import asyncio
    import tempfile

    from tests.support.screenshots_jobs import _shoot

    async def take(path: Path) -> Path:
        with tempfile.TemporaryDirectory() as tmp:
            return await _shoot(stacks_app(Path(tmp) / "logs"), stacks_scene, path, (120, 36), "ntui · stacks")

    return asyncio.run(take(out / "jobs-stacks.svg"))
