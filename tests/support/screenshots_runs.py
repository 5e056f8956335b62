"""A long run in the jobs view with deterministic data: its row in the recent list and its details.

    python -m tests.support.screenshots_runs [--out screenshots]   (from the repository root)

The run ``48213600 lr-long`` (``continue: chain``, ``max-restarts: 5``) was submitted by ntui; its first two
allocations (jobs 48213600 and 48213620) ended at their time limit after saving on SIGUSR2 and chained; the third
(48213640) has started. Its run file is written to :data:`RUN_LOG_DIR` by :func:`write_run_file`; the history
knows the first job, resolved COMPLETED (a chain's link ends with status 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ntui.core.jobfiles.runfile import run_path
from ntui.core.records.history import FinalRecord, History
from tests.support.demo import FROZEN_NOW
from tests.support.scene_paths import ROOT as SCENE_ROOT
from tests.support.screenshots_jobs import (
    SQUEUE_AFTER,
    _job,
    _shoot,
    jobs_app,
    recent_history,
    recent_jobs_runner,
    recent_scene,
    settle_jobs,
    wait_until,
)

__all__ = ["REQUEUED_ID", "RUN_ID", "RUN_LOG_DIR", "queue_app", "queue_scene", "run_app", "run_scene",
           "write_run_file"]

RUN_ID = "48213600"
RUN_LOG_DIR = f"{SCENE_ROOT}/run-logs"  # shown as /tmp/ntui-snapshots/run-logs
STEM = "lr-long"
LINKS = ("48213600", "48213620", "48213640")


def _script() -> str:
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.render import render
    from ntui.core.compose.spec import validate

    preset = Path(__file__).resolve().parents[2] / "presets" / "local-longrun.yaml"
    spec, problems = validate(load_preset(str(preset), (
        "name=lr-long", f"logs.dir={RUN_LOG_DIR}", "run.continue=chain", "sbatch.time=02:00:00",
        "run.warning=300", "run.grace=240", "script=/global/homes/a/alice/train/train.py")))
    assert spec is not None, [str(p) for p in problems]
    return render(spec)


def write_run_file(log_dir: str = RUN_LOG_DIR) -> None:
    """The run file: two allocations chained at their time limit, the third started (same bytes every run)."""
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    now = FROZEN_NOW.timestamp()
    starts = (now - 4 * 3600 - 600, now - 2 * 3600 - 300, now - 240)
    lines: list[dict[str, Any]] = []
    for i, (job, start) in enumerate(zip(LINKS, starts, strict=True)):
        lines.append({"ev": "alloc", "t": start, "job": job, "restart": i, "requeues": 0, "how": "chain", "max": 5})
        if i < 2:
            lines.append({"ev": "signal", "t": start + 6900 - 10 * i, "job": job, "sig": "USR2",
                          "elapsed": 6900 - 10 * i, "cause": "timelimit"})
            lines.append({"ev": "continue", "t": start + 6941 - 10 * i, "job": job, "how": "chain",
                          "cause": "timelimit", "count": i + 1, "next": LINKS[i + 1]})
    text = "".join(json.dumps({"v": 1, **ev, "run": RUN_ID}, separators=(",", ":")) + "\n" for ev in lines)
    Path(run_path(log_dir, STEM, RUN_ID)).write_text(text)


def run_history(path: Path) -> Callable[[], History]:
    """The recent jobs of the jobs scenes, and the run's first job."""
    opener = recent_history(path)
    history = opener()
    now = FROZEN_NOW.timestamp()
    token = f"demo-{RUN_ID}"
    history.record_intent(token=token, preset="local-longrun", preset_path=None, overrides=("run.continue=chain",),
                          job_name=STEM, launcher="torchrun", nodes=2, world_size=4, log_dir=RUN_LOG_DIR,
                          log_stem=STEM, script=_script(), created_at=now - 4 * 3600 - 660)
    history.record_submitted(token, RUN_ID, "perlmutter", f"{RUN_LOG_DIR}/{STEM}-{RUN_ID}.sbatch",
                             when=now - 4 * 3600 - 660)
    history.record_final(RUN_ID, FinalRecord(
        "COMPLETED", "0:0", None, "2026-06-01T05:20:00", "2026-06-01T07:15:41", 6941, "nid[200030-200031]", "",
        "sacct"), when=now)
    history.close()
    return opener


def run_app(tmp: Path) -> Any:
    write_run_file()
    return jobs_app(runner=recent_jobs_runner(), history_factory=run_history(tmp / "history.sqlite3"))


async def run_scene(pilot: Any) -> None:
    """The recent list focused on the run (its row says which allocation; the details list them)."""
    await recent_scene(pilot, RUN_ID)


async def take_run_screenshot(path: Path, tmp: Path, size: tuple[int, int] = (120, 36)) -> Path:
    return await _shoot(run_app(tmp), run_scene, path, size, "ntui · a long run")


#: A requeued run in the queue, in its third allocation (same job id): its row says so, from its journal.
REQUEUED_ID = "48213760"
REQUEUED_STEM = "lr-long"


def write_journal(log_dir: str = RUN_LOG_DIR) -> None:
    from ntui.core.jobfiles.journal import journal_path

    Path(log_dir).mkdir(parents=True, exist_ok=True)
    now = FROZEN_NOW.timestamp()
    lines = []
    for i, start in enumerate((now - 4 * 3600, now - 2 * 3600 + 60, now - 1500)):
        lines += [
            {"ev": "alloc", "t": start, "restart": i, "nnodes": 2, "nodes": "nid[200040-200041]", "host": "nid200040"},
            {"ev": "run-alloc", "t": start + 0.01, "run": REQUEUED_ID, "restart": i, "requeues": i, "how": "requeue",
             "max": 5},
            {"ev": "launch", "t": start + 1, "launcher": "torchrun"},
        ]
        if i < 2:
            lines += [{"ev": "run-signal", "t": start + 6900, "run": REQUEUED_ID, "sig": "USR2", "elapsed": 6900},
                      {"ev": "run-continue", "t": start + 6905, "run": REQUEUED_ID, "how": "requeue", "count": i + 1},
                      {"ev": "end", "t": start + 6906, "rc": 0, "phase": "after"}]
    text = "".join(json.dumps({"v": 1, **{k: v for k, v in ev.items() if k in ("ev", "t")}, "job": REQUEUED_ID,
                               **{k: v for k, v in ev.items() if k not in ("ev", "t")}}, separators=(",", ":")) + "\n"
                   for ev in lines)
    Path(journal_path(log_dir, REQUEUED_STEM, REQUEUED_ID)).write_text(text)


def queue_history(path: Path) -> Callable[[], History]:
    opener = recent_history(path)
    history = opener()
    now = FROZEN_NOW.timestamp()
    token = f"demo-{REQUEUED_ID}"
    history.record_intent(token=token, preset="local-longrun", preset_path=None, overrides=(),
                          job_name=REQUEUED_STEM, launcher="torchrun", nodes=2, world_size=8, log_dir=RUN_LOG_DIR,
                          log_stem=REQUEUED_STEM, script=_script(), created_at=now - 4 * 3600 - 60)
    history.record_submitted(token, REQUEUED_ID, "perlmutter", f"{RUN_LOG_DIR}/{REQUEUED_STEM}-{REQUEUED_ID}.sbatch",
                             when=now - 4 * 3600 - 60)
    history.close()
    return opener


def queue_app(tmp: Path) -> Any:
    write_journal()
    line = _job(REQUEUED_ID, REQUEUED_STEM, "RUNNING", "None", "25:00", "2:00:00", "2", "nid[200040-200041]",
                "gpu_regular", start="2026-06-01T09:05:00")
    squeue = SQUEUE_AFTER + line + "\n"
    return jobs_app(runner=recent_jobs_runner((squeue,)), history_factory=queue_history(tmp / "history.sqlite3"))


async def queue_scene(pilot: Any) -> None:
    """The queue with the requeued run's row, as the view's own journal tick reads the run's journal (every 2 s, real
    time): the row says which allocation it is in. (Setting the model's journal by hand raced the tick: on a loaded
    machine the tick came first and annotated the row, on an idle one the hand-set state made the tick see nothing
    new and the row stayed plain.) Then the run's row selected, its details with ntui's history entry."""
    from ntui.ui.screens.jobs import JobsScreen

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)

    def annotated() -> bool:
        return REQUEUED_ID in screen.table and "allocation 3 of" in " ".join(screen.table.get_row(REQUEUED_ID))

    await wait_until(pilot, annotated)  # the tick every 2 s; a loaded machine may take a few
    screen.table.focus()
    screen.table.move_cursor(key=REQUEUED_ID)
    await settle_jobs(pilot)
    # the history entry (a worker of its own) gives the details ntui's preset
    await wait_until(pilot, lambda: screen.model.entries.get(REQUEUED_ID) is not None and not screen.busy)
    await settle_jobs(pilot)
    screen._tick()
    await pilot.pause()


def main() -> int:
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("screenshots"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(asyncio.run(take_run_screenshot(args.out / "jobs-run.svg", Path(tmp))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
