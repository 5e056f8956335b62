"""A sweep in the jobs view with deterministic data: its folded row, the row opened into its tasks, the Sweep tab.

    python -m tests.support.screenshots_sweep [--out screenshots]   (from the repository root)

The sweep ``48213802 lr-sweep`` (a 2 x 3 grid, ``parallel: 2``) has two tasks running, three pending and one that
failed (it left the queue between the two refreshes; sacct says FAILED). Its files (the manifest, the job file,
the tasks' rank-0 logs with their ``loss=`` lines and the failed one's traceback) are written to
:data:`SWEEP_LOG_DIR` by :func:`write_sweep_files`; the history knows the sweep (:func:`sweep_history`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ntui.core.jobfiles.manifest import (
    Manifest,
    SweepJob,
    encode_manifest,
    job_file_path,
    manifest_path,
    write_job_file,
)
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import Outcome
from ntui.core.records.sweeps import LIVE_FIELDS
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import SQUEUE_SEPARATOR
from tests.support.fakes import FakeRunner, result
from tests.support.scene_paths import ROOT as SCENE_ROOT
from tests.support.screenshots_jobs import (
    DemoHistory,
    _job,
    _shoot,
    jobs_app,
    settle_jobs,
    wait_until,
)

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from ntui.ui.app import NtuiApp

__all__ = ["SWEEP_ID", "SWEEP_LOG_DIR", "sweep_app", "sweep_scene", "write_sweep_files"]

SWEEP_ID = "48213802"
SWEEP_LOG_DIR = f"{SCENE_ROOT}/sweep-logs"  # shown as /tmp/ntui-snapshots/sweep-logs
STEM = "lr-sweep"
NAMES = ("lr", "seed")
TASKS = (("3e-4", "1"), ("3e-4", "2"), ("3e-4", "3"), ("1e-4", "1"), ("1e-4", "2"), ("1e-4", "3"))
METRIC = "loss=([0-9.]+)"

_OTHER = [
    _job("48213777", "alice-ddp", "RUNNING", "None", "1:02:13", "2:00:00", "4", "nid[200012-200015]", "gpu_regular",
         start="2026-06-01T08:27:47"),
    _job("48213811", "eval-ckpt", "PENDING", "Dependency", "0:00", "30:00", "1", "", "gpu_regular"),
]
_RUNNING = [
    _job("48213803", STEM, "RUNNING", "None", "41:09", "1:00:00", "1", "nid200101", "gpu_regular",
         array=(SWEEP_ID, "0"), start="2026-06-01T08:48:51"),
    _job("48213804", STEM, "RUNNING", "None", "38:40", "1:00:00", "1", "nid200102", "gpu_regular",
         array=(SWEEP_ID, "1"), start="2026-06-01T08:51:20"),
]
_FAILING = _job("48213805", STEM, "RUNNING", "None", "2:11", "1:00:00", "1", "nid200103", "gpu_regular",
                array=(SWEEP_ID, "2"), start="2026-06-01T09:27:49")
_PENDING = [_job(SWEEP_ID, STEM, "PENDING", "JobArrayTaskLimit", "0:00", "1:00:00", "1", "", "gpu_regular",
                 array=(SWEEP_ID, str(t))) for t in range(3, 6)]
SQUEUE_BEFORE = "\n".join([_OTHER[0], *_RUNNING, _FAILING, *_PENDING, _OTHER[1]]) + "\n"
SQUEUE_AFTER = "\n".join([_OTHER[0], *_RUNNING, *_PENDING, _OTHER[1]]) + "\n"

_F = "|m4242_g|gpu_regular|gpu_ss11|/global/homes/a/alice/train"
SACCT_TASKS = (
    f"{SWEEP_ID}_0|{STEM}|RUNNING|0:0|None|2026-06-01T08:40:00|2026-06-01T08:48:51|Unknown|00:41:09|nid200101{_F}\n"
    f"{SWEEP_ID}_1|{STEM}|RUNNING|0:0|None|2026-06-01T08:40:00|2026-06-01T08:51:20|Unknown|00:38:40|nid200102{_F}\n"
    f"{SWEEP_ID}_2|{STEM}|FAILED|1:0|None|2026-06-01T08:40:00|2026-06-01T09:27:49|2026-06-01T09:30:02|00:02:13|"
    f"nid200103{_F}\n"
    f"{SWEEP_ID}_[3-5%2]|{STEM}|PENDING|0:0|JobArrayTaskLimit|2026-06-01T08:40:00|Unknown|Unknown|00:00:00|"
    f"None assigned{_F}\n"
)


def live_line(task: int, state: str, reason: str = "None", node: str = "", used: str = "0:42") -> str:
    """One line of the controller's answer for a live sweep (``squeue --array -O`` with ``LIVE_FIELDS``)."""
    cells = (str(int(SWEEP_ID) + 1 + task), SWEEP_ID, str(task), state, reason, used, "2026-06-01T08:48:51", node)
    assert len(cells) == len(LIVE_FIELDS)
    return "".join(c + SQUEUE_SEPARATOR for c in cells) + "\n"


#: The controller's word on the sweep's tasks, as SACCT_TASKS has them (task 2 has left the queue).
SQUEUE_TASKS = (live_line(0, "RUNNING", node="nid200101", used="41:09")
                + live_line(1, "RUNNING", node="nid200102", used="38:40")
                + "".join(live_line(t, "PENDING", "JobArrayTaskLimit", used="0:00") for t in (3, 4, 5)))


def _show_task(task: int, job: int, node: str, state: str = "RUNNING") -> str:
    return f"""\
JobId={job} ArrayJobId={SWEEP_ID} ArrayTaskId={task} ArrayTaskThrottle=2 JobName={STEM}
   UserId=alice(74211) GroupId=alice(74211) MCS_label=N/A
   Priority=69417 Nice=0 Account=m4242_g QOS=gpu_regular
   JobState={state} Reason=None Dependency=(null)
   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:41:09 TimeLimit=01:00:00 TimeMin=N/A
   SubmitTime=2026-06-01T08:40:00 EligibleTime=2026-06-01T08:40:00
   StartTime=2026-06-01T08:48:51 EndTime=2026-06-01T09:48:51 Deadline=N/A
   Partition=gpu_ss11 AllocNode:Sid=login22:1834412
   NodeList={node}
   BatchHost={node}
   NumNodes=1 NumCPUs=128 NumTasks=1 CPUs/Task=128 ReqB:S:C:T=0:0:*:*
   TRES=cpu=128,mem=230000M,node=1,billing=128,gres/gpu=4
   Command={SWEEP_LOG_DIR}/{STEM}-{SWEEP_ID}.sbatch
   WorkDir=/global/homes/a/alice/train
   StdErr={SWEEP_LOG_DIR}/{STEM}-{SWEEP_ID}_{task}.out
   StdIn=/dev/null
   StdOut={SWEEP_LOG_DIR}/{STEM}-{SWEEP_ID}_{task}.out
"""


def _script() -> str:
    """The sweep's script, as the history keeps it (what ntui rendered)."""
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.render import render
    from ntui.core.compose.spec import validate

    preset = Path(__file__).resolve().parents[2] / "presets" / "local-sweep.yaml"
    spec, problems = validate(load_preset(str(preset), (
        "name=lr-sweep", f"logs.dir={SWEEP_LOG_DIR}", f"sweep.metric={METRIC}",
        'sweep.grid={lr: ["3e-4", "1e-4"], seed: ["1", "2", "3"]}', "script=/global/homes/a/alice/train/train.py")))
    assert spec is not None, [str(p) for p in problems]
    return render(spec)


def sweep_entry() -> HistoryEntry:
    return HistoryEntry(
        token="demo-sweep",  # noqa: S106 - a history row id, not a secret
        job_id=SWEEP_ID, cluster="perlmutter", preset="local-sweep", preset_path=None,
        overrides=("name=lr-sweep",), job_name=STEM, launcher="srun", nodes=1, world_size=1,
        log_dir=SWEEP_LOG_DIR, log_stem=STEM, script=_script(),
        script_path=f"{SWEEP_LOG_DIR}/{STEM}-{SWEEP_ID}.sbatch", created_at=0.0, submitted_at=0.0,
        status="submitted",
    )


def write_sweep_files(log_dir: str = SWEEP_LOG_DIR) -> None:
    """The sweep's manifest, job file and the tasks' rank-0 logs (same bytes on every run)."""
    d = Path(log_dir)
    d.mkdir(parents=True, exist_ok=True)
    data = encode_manifest(Manifest(NAMES, TASKS, METRIC))
    path = manifest_path(log_dir, STEM, data)
    Path(path).write_bytes(data)
    write_job_file(job_file_path(log_dir, STEM, SWEEP_ID), SweepJob(Path(path).name, 6, tuple(range(6)), 2))
    losses = {0: ("2.3104", "1.9821", "1.7410"), 1: ("2.3391", "2.1054", "1.9972"), 2: ("2.3012",)}
    for task, values in losses.items():
        lines = [f"ntui: rank 0 on nid20010{task + 1}"]
        lines += [f"step={100 * (i + 1)}/500 loss={v} lr={TASKS[task][0]}" for i, v in enumerate(values)]
        if task == 2:
            lines += ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>',
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
        (d / f"{STEM}-{SWEEP_ID}_{task}-rank-0.out").write_text("\n".join(lines) + "\n")
        (d / f"{STEM}-{SWEEP_ID}_{task}.out").write_text("")


def sweep_runner() -> FakeRunner:
    shows = {f"{SWEEP_ID}_0": _show_task(0, 48213803, "nid200101"),
             f"{SWEEP_ID}_1": _show_task(1, 48213804, "nid200102"),
             f"{SWEEP_ID}_2": _show_task(2, 48213805, "nid200103", "FAILED")}

    def scontrol(argv: tuple[str, ...]) -> Any:
        return result(stdout=shows.get(argv[-1], shows[f"{SWEEP_ID}_0"]))

    def sacct(argv: tuple[str, ...]) -> Any:
        return result(stdout=SACCT_TASKS if SWEEP_ID in argv[argv.index("-j") + 1] else "")

    def live(argv: tuple[str, ...]) -> Any:  # the Sweep tab's question of the controller (its tasks only)
        return result(stdout=SQUEUE_TASKS) if argv[0] == "squeue" and f"--jobs={SWEEP_ID}" in argv else None

    return FakeRunner({"squeue": [result(stdout=SQUEUE_BEFORE), result(stdout=SQUEUE_AFTER)],
                       ("scontrol", "show", "job"): scontrol, "sacct": sacct}, handler=live)


def _resolver(runner: CommandRunner, job_id: str) -> Outcome:
    return Outcome(job_id, "FAILED", "1:0", "sacct", True, 133)


def sweep_app(runner: CommandRunner | None = None) -> NtuiApp:
    write_sweep_files()
    history = DemoHistory({SWEEP_ID: sweep_entry()})
    return jobs_app(runner=runner or sweep_runner(), history_factory=lambda: history,
                    resolver=_resolver)


def sweep_scene(what: str) -> Callable[[Pilot[Any]], Any]:
    """``folded``: the cursor on the sweep's row; ``open``: its tasks shown (``t``); ``tab``: the Sweep tab."""

    async def scene(pilot: Pilot[Any]) -> None:
        from ntui.ui.screens.jobs import JobsScreen

        await settle_jobs(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, JobsScreen)
        screen.refresh_now()  # the second answer: task 2 has left the queue (failed)
        await settle_jobs(pilot)
        screen.table.move_cursor(key=SWEEP_ID)
        await settle_jobs(pilot)
        if what == "open":
            await pilot.press("t")
            await settle_jobs(pilot)
        elif what == "tab":
            await pilot.press("v")
            await settle_jobs(pilot)
            await wait_until(pilot, lambda: screen.query_one("#jobs-sweep").table is not None)  # type: ignore[attr-defined]
        screen._tick()
        await pilot.pause()

    return scene


def save_sweep_screenshots(out: Path = Path("screenshots")) -> list[Path]:
    """``<out>/jobs-sweep.svg`` (the row opened into its tasks) and ``<out>/jobs-sweep-tab.svg``."""
    shots = [("open", "jobs-sweep.svg"), ("tab", "jobs-sweep-tab.svg")]
    return [asyncio.run(_shoot(sweep_app(), sweep_scene(what), out / name, (120, 36), "ntui · sweep"))
            for what, name in shots]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.screenshots_sweep")
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    for path in save_sweep_screenshots(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
