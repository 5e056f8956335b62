"""The jobs view with deterministic data: ``screenshots/jobs.svg``, and the app factory tests and benchmarks use.

    python -m tests.support.screenshots_jobs [--out screenshots]   (from the repository root)

:func:`jobs_app` is the real :class:`~ntui.ui.app.NtuiApp` opened on the jobs view (whatever ``VIEWS`` registers
under ``jobs``), with everything injectable. :func:`demo_jobs_runner` answers squeue / scontrol / sacct like a
Perlmutter login node for user ``alice`` (two refreshes: the second one sees two jobs gone, which then show
their final state from sacct). :func:`save_jobs_screenshot` writes the SVG; the lead's screenshot script calls it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ntui.core.config import NotifySettings, Settings
from ntui.core.records.history import FinalRecord, History, HistoryEntry
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import SQUEUE_FIELDS, SQUEUE_SEPARATOR
from tests.support.demo import FROZEN_NOW  # the other screenshots' frozen clock
from tests.support.fakes import FakeRunner, capture, result
from tests.support.scene_paths import shown
from tests.support.waits import WAIT_BOUND_S

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from ntui.ui.app import NtuiApp

__all__ = [
    "FROZEN_NOW",
    "DemoHistory",
    "demo_jobs_runner",
    "jobs_app",
    "recent_history",
    "recent_jobs_runner",
    "recent_scene",
    "save_jobs_screenshot",
    "settle_jobs",
    "wait_until",
    "squeue_line",
]

USER = "alice"
LOG_DIR = "/pscratch/sd/a/alice/ntui/logs"
WORKDIR = "/global/homes/a/alice/train"


def squeue_line(**values: str) -> str:
    """One ``squeue -O F1:<S>,F2:<S>...`` line (``query_queue``'s fields) from keyword values."""
    keys = {f.lower(): f for f in SQUEUE_FIELDS}
    cells = {f: "" for f in SQUEUE_FIELDS}
    for k, v in values.items():
        cells[keys["tres-alloc" if k == "tres_alloc" else k.lower()]] = v
    return "".join(cells[f] + SQUEUE_SEPARATOR for f in SQUEUE_FIELDS)


def _job(job_id: str, name: str, state: str, reason: str, used: str, limit: str, nodes: str, nodelist: str,
         qos: str, *, array: tuple[str, str] | None = None, start: str = "N/A") -> str:
    compact = {"RUNNING": "R", "PENDING": "PD", "COMPLETING": "CG"}[state]
    return squeue_line(
        JobID=job_id, ArrayJobID=array[0] if array else job_id, ArrayTaskID=array[1] if array else "N/A",
        Name=name, StateCompact=compact, State=state, Reason=reason, TimeUsed=used, TimeLimit=limit,
        StartTime=start, NumNodes=nodes, NodeList=nodelist, tres_alloc=f"cpu={128 * int(nodes)},node={nodes}",
        Partition="gpu_ss11", QOS=qos, WorkDir=WORKDIR, UserName=USER, exit_code="",
    )


_COMMON = [
    _job("48213777", "alice-ddp", "RUNNING", "None", "1:02:13", "2:00:00", "4", "nid[200012-200015]", "gpu_regular",
         start="2026-06-01T08:27:47"),
    _job("48213802", "lr-sweep", "RUNNING", "None", "41:09", "1:00:00", "1", "nid200101", "gpu_regular",
         array=("48213802", "0"), start="2026-06-01T08:48:51"),
    _job("48213803", "lr-sweep", "RUNNING", "None", "41:09", "1:00:00", "1", "nid200102", "gpu_regular",
         array=("48213802", "1"), start="2026-06-01T08:48:51"),
    *(_job("48213802", "lr-sweep", "PENDING", "JobArrayTaskLimit", "0:00", "1:00:00", "1", "", "gpu_regular",
           array=("48213802", str(t))) for t in range(2, 6)),
    _job("48213811", "eval-ckpt", "PENDING", "Dependency", "0:00", "30:00", "1", "", "gpu_regular"),
    _job("48213790", "alice-ddp-8n", "PENDING", "Priority", "0:00", "6:00:00", "8", "", "gpu_premium",
         start="2026-06-01T11:02:00"),
    _job("48213795", "tokenize-shard", "PENDING", "JobHeldUser", "0:00", "4:00:00", "1", "", "gpu_shared"),
]
_GONE = [
    _job("48213650", "prep-data", "RUNNING", "None", "24:51", "30:00", "1", "nid200044", "gpu_debug",
         start="2026-06-01T09:04:02"),
    _job("48213701", "alice-ddp", "RUNNING", "None", "3:12", "2:00:00", "2", "nid[200020-200021]", "gpu_regular",
         start="2026-06-01T09:25:40"),
]
SQUEUE_BEFORE = "\n".join(_COMMON[:1] + _GONE + _COMMON[1:]) + "\n"
SQUEUE_AFTER = "\n".join(_COMMON) + "\n"

SHOW_JOB = f"""\
JobId=48213777 JobName=alice-ddp
   UserId={USER}(74211) GroupId={USER}(74211) MCS_label=N/A
   Priority=69417 Nice=0 Account=m4242_g QOS=gpu_regular
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=01:02:13 TimeLimit=02:00:00 TimeMin=N/A
   SubmitTime=2026-06-01T08:12:05 EligibleTime=2026-06-01T08:12:05
   StartTime=2026-06-01T08:27:47 EndTime=2026-06-01T10:27:47 Deadline=N/A
   Partition=gpu_ss11 AllocNode:Sid=login22:1834412
   NodeList=nid[200012-200015]
   BatchHost=nid200012
   NumNodes=4 NumCPUs=512 NumTasks=4 CPUs/Task=128 ReqB:S:C:T=0:0:*:*
   TRES=cpu=512,mem=920000M,node=4,billing=512,gres/gpu=16
   JOB_GRES=gpu:16
     Nodes=nid[200012-200015] CPU_IDs=0-127 Mem=230000 GRES=gpu:4(IDX:0-3)
   Features=gpu DelayBoot=00:00:00
   Command={LOG_DIR}/alice-ddp-48213777.sbatch
   WorkDir={WORKDIR}
   StdErr={LOG_DIR}/alice-ddp-48213777.out
   StdIn=/dev/null
   StdOut={LOG_DIR}/alice-ddp-48213777.out
"""

SACCT = {
    "48213650": "48213650|COMPLETED|0:0|00:25:02\n",
    "48213701": "48213701|FAILED|1:0|00:03:19\n",
}

SCRIPT = """\
#!/bin/bash
#SBATCH --job-name=alice-ddp
#SBATCH --account=m4242_g
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=128
#SBATCH --constraint=gpu
#SBATCH --qos=regular
#SBATCH --time=02:00:00
#SBATCH --output=/pscratch/sd/a/alice/ntui/logs/alice-ddp-%j.out
# Generated by ntui from preset 'alice-ddp'.
set -euo pipefail
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)
export MASTER_ADDR MASTER_PORT=$(( 15000 + SLURM_JOB_ID % 20000 ))
srun --ntasks-per-node=1 --cpus-per-task="$SLURM_CPUS_PER_TASK" --kill-on-bad-exit=1 \\
    torchrun --nnodes="$SLURM_JOB_NUM_NODES" --nproc-per-node=4 \\
    --rdzv-backend=c10d --rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT" \\
    /global/homes/a/alice/train/ddp_check.py --epochs 3 --batch-size 64
"""


def demo_jobs_runner(*, refreshes: Sequence[str] = (SQUEUE_BEFORE, SQUEUE_AFTER)) -> FakeRunner:
    """squeue answers handed out in turn (the last repeats); scontrol show job -d 48213777; sacct for the
    two jobs that leave the queue."""

    def sacct(argv: tuple[str, ...]) -> Any:
        job = argv[argv.index("-j") + 1]
        return result(stdout=SACCT.get(job, ""))

    return FakeRunner(
        {
            "squeue": [result(stdout=text) for text in refreshes],
            ("scontrol", "show", "job"): result(stdout=SHOW_JOB),
            "sacct": sacct,
        }
    )


@dataclass
class DemoHistory:
    """A stand-in for :class:`~ntui.core.records.history.History` that knows one or more submissions."""

    entries: dict[str, HistoryEntry]

    def get(self, job_id: str) -> HistoryEntry | None:
        return self.entries.get(job_id) or self.entries.get(job_id.split("_", 1)[0])

    def close(self) -> None:
        pass


def demo_history() -> DemoHistory:
    entry = HistoryEntry(
        token="demo",  # noqa: S106 - a history row id, not a secret
        job_id="48213777", cluster="perlmutter", preset="alice-ddp",
        preset_path="/global/homes/a/alice/.config/ntui/presets/alice-ddp.yaml",
        overrides=("sbatch.nodes=4", "sbatch.time=2:00:00"), job_name="alice-ddp", launcher="torchrun", nodes=4,
        world_size=16, log_dir=LOG_DIR, log_stem="alice-ddp", script=SCRIPT,
        script_path=f"{LOG_DIR}/alice-ddp-48213777.sbatch", created_at=0.0, submitted_at=0.0, status="submitted",
    )
    return DemoHistory({"48213777": entry})


#: The scenes' settings: no start/end notices (a toast over the status line) in scenes about other features; the
#: notices have their own tests and scene (tests/ui/test_waiting.py).
QUIET = Settings(notify=NotifySettings(bell=False, desktop=False, states=()))


def jobs_app(
    *,
    runner: CommandRunner,
    settings: Settings | None = None,
    user: str | None = USER,
    clock: Callable[[], datetime] | None = lambda: FROZEN_NOW,
    history_factory: Callable[[], Any] | None = lambda: None,
    identity: str = "",
    resolver: Any = None,
) -> NtuiApp:
    """The real app, opened on the jobs view; ``JobsScreen`` gets the injected services."""
    import ntui.ui.app as app_module
    from ntui.ui.app import NtuiApp
    from ntui.ui.screens.jobs import JobsScreen

    def screen() -> JobsScreen:
        return JobsScreen(runner=runner, settings=settings or QUIET, user=user, clock=clock,
                          history_factory=history_factory, resolver=resolver)

    class JobsApp(NtuiApp):
        CSS_PATH = str(Path(app_module.__file__).with_name("ntui.tcss"))
        MODES = {**NtuiApp.MODES, "jobs": screen}
        DEFAULT_MODE = "jobs"

    return JobsApp(
        runner=runner,
        clock=clock or datetime.now,
        history_factory=history_factory or (lambda: None),
        identity=identity,
        cursor_blink=False,
    )


async def wait_until(pilot: Pilot[Any], check: Callable[[], bool], timeout: float = WAIT_BOUND_S) -> None:
    """Pause until ``check()`` holds (TimeoutError after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise TimeoutError("condition not reached")
        await pilot.pause(0.05)


async def settle_jobs(pilot: Pilot[Any], timeout: float = WAIT_BOUND_S) -> None:
    """Wait until the jobs view has no refresh, look-up or action running (the panes' own workers aside)."""
    from ntui.ui.screens.jobs import JobsScreen

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        await pilot.pause(0.02)
        screen = next((s for s in pilot.app.screen_stack if isinstance(s, JobsScreen)), None)
        if screen is not None and screen.is_mounted and not screen.busy:
            await pilot.pause()
            if not screen.busy:
                return
    raise TimeoutError("the jobs view did not settle")


async def _scene(pilot: Pilot[Any]) -> None:
    from ntui.ui.screens.jobs import JobsScreen

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    screen.refresh_now()  # the second answer: two jobs have left the queue
    await settle_jobs(pilot)
    screen.table.move_cursor(key="48213777")
    await settle_jobs(pilot)
    screen._tick()
    await pilot.pause()


async def _shoot(app: NtuiApp, scene: Callable[[Pilot[Any]], Any], path: Path, size: tuple[int, int],
                 title: str) -> Path:
    async with app.run_test(size=size) as pilot:
        await scene(pilot)
        svg = shown(app.export_screenshot(title=title))  # (a scene's log paths as the pictures show them)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")
    return path


async def take_jobs_screenshot(path: Path, size: tuple[int, int] = (120, 36)) -> Path:
    app = jobs_app(runner=demo_jobs_runner(), history_factory=demo_history)
    return await _shoot(app, _scene, path, size, "ntui · jobs")


def save_jobs_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs.svg`` (same bytes on every run)."""
    return asyncio.run(take_jobs_screenshot(out / "jobs.svg"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.screenshots_jobs")
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    print(save_jobs_screenshot(args.out))
    print(save_recent_screenshot(args.out))
    print(save_report_screenshot(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ---------------------------------------------------------------- recent jobs (under the queue)

#: ntui's own jobs of the last days: (job id, name, seconds before FROZEN_NOW, record or None (unresolved)).
RECENT: tuple[tuple[str, str, float, FinalRecord | None], ...] = (
    ("48213777", "alice-ddp", 5400, None),  # still running: listed in the queue, not under it
    ("48213701", "alice-ddp", 3000, FinalRecord(
        "FAILED", "1:0", None, "2026-06-01T09:25:40", "2026-06-01T09:28:59", 199, "nid[200020-200021]",
        "rank 5 on nid200021 failed first: torch.OutOfMemoryError: CUDA out of memory", "sacct")),
    ("48213650", "prep-data", 2400, FinalRecord(
        "COMPLETED", "0:0", None, "2026-06-01T09:04:02", "2026-06-01T09:29:04", 1502, "nid200044", "", "sacct")),
    ("48213544", "alice-ddp", 20 * 3600, FinalRecord(
        "TIMEOUT", "0:0", None, None, "2026-05-31T15:40:11", 7200, "nid[200012-200015]",
        "time limit reached (02:00:00): Slurm ended the job", "sacct")),
    ("48213410", "tokenize", 2 * 86400, FinalRecord(
        "CANCELLED", None, "batch log: CANCELLED AT 2026-05-30T10:02:55", None, "2026-05-30T10:02:55", None,
        "nid200101", "cancelled by the user at 2026-05-30T10:02:55", "inferred")),
)
#: ``sacct -S``: the user's jobs of the last days, with one that ntui did not submit (a notebook).
SACCT_SINCE = (
    "48213701|alice-ddp|FAILED|1:0|None|2026-06-01T08:40:00|2026-06-01T09:25:40|2026-06-01T09:28:59|00:03:19|"
    "nid[200020-200021]|m4242_g|gpu_regular|gpu_ss11|/global/homes/a/alice/train\n"
    "48213322|jupyter|COMPLETED|0:0|None|2026-06-01T04:12:00|2026-06-01T04:12:09|2026-06-01T08:12:09|04:00:00|"
    "nid200311|m4242_g|gpu_interactive|gpu_ss11|/global/homes/a/alice\n"
)
SACCT_RUNNING = ("48213777|alice-ddp|RUNNING|0:0|None|2026-06-01T08:12:05|2026-06-01T08:27:47|Unknown|01:02:13|"
                 "nid[200012-200015]|m4242_g|gpu_regular|gpu_ss11|/global/homes/a/alice/train\n")


def recent_history(path: Path, *, unresolved: Sequence[str] = ()) -> Callable[[], History]:
    """A real history file with :data:`RECENT` (times relative to :data:`FROZEN_NOW`; the jobs in ``unresolved``
    without their record); returns its opener."""
    history = History(path)
    now = FROZEN_NOW.timestamp()
    for job_id, name, ago, record in RECENT:
        token = f"demo-{job_id}"
        history.record_intent(token=token, preset=name, preset_path=None, overrides=("sbatch.nodes=2",),
                              job_name=name, launcher="torchrun", nodes=2, world_size=8, log_dir=LOG_DIR,
                              log_stem=name, script=SCRIPT, created_at=now - ago)
        history.record_submitted(token, job_id, "perlmutter", f"{LOG_DIR}/{name}-{job_id}.sbatch", when=now - ago)
        if record is not None and job_id not in unresolved:
            history.record_final(job_id, record, when=now)
    history.close()
    return lambda: History(path)


def recent_jobs_runner(refreshes: Sequence[str] = (SQUEUE_AFTER,)) -> FakeRunner:
    """squeue answers in turn (default: the queue after two jobs left, :data:`SQUEUE_AFTER`), ``sacct -j`` for
    the jobs it knows (:data:`SACCT_SINCE`, :data:`SACCT_RUNNING`), ``sacct -S`` for the user's jobs of the
    last days."""

    known = {line.split("|", 1)[0]: line + "\n" for line in (SACCT_SINCE + SACCT_RUNNING).splitlines()}

    def sacct(argv: tuple[str, ...]) -> Any:
        if "-S" in argv:
            return result(stdout=SACCT_SINCE)
        ids = argv[argv.index("-j") + 1].split(",")
        return result(stdout="".join(known.get(j, "") for j in ids))

    return FakeRunner({"squeue": [result(stdout=text) for text in refreshes],
                       ("scontrol", "show", "job"): result(stdout=SHOW_JOB), "sacct": sacct})


async def recent_scene(pilot: Pilot[Any], job_id: str = "48213701") -> None:
    """The jobs view settled, the recent list focused on ``job_id`` (its record in the details)."""
    from ntui.ui.screens.jobs import JobsScreen
    from ntui.ui.widgets.recent_jobs import RecentJobsTable

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    table = screen.query_one("#jobs-recent", RecentJobsTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(job_id))
    await settle_jobs(pilot)
    screen._tick()
    await pilot.pause()


async def take_recent_screenshot(path: Path, size: tuple[int, int] = (120, 36)) -> Path:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        app = jobs_app(runner=recent_jobs_runner(), history_factory=recent_history(Path(tmp) / "history.sqlite3"))
        return await _shoot(app, recent_scene, path, size, "ntui · recent jobs")


def save_recent_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-recent.svg`` (same bytes on every run)."""
    return asyncio.run(take_recent_screenshot(out / "jobs-recent.svg"))


# ---------------------------------------------------------------- the Report tab

REPORT_JOB = "48213702"
REPORT_T0 = 1_780_000_000.0


def report_history(directory: Path, *, script: str = "#!/bin/bash\n#SBATCH --time=00:30:00\n",
                   preset: str = "my-experiment", overrides: tuple[str, ...] = ("sbatch.nodes=2",),
                   vendor: str = "nvidia") -> Callable[[], History]:
    """A history with one ended 2-node job of ntui's and its sampler files (``<directory>/logs``): GPU 0 of each
    node idle, GPU 1 busy at 90 % (and 60 % on the second node), 5 minutes of a 30-minute limit. ``vendor="amd"``:
    the same readings as the sampler writes them on an AMD node, rocm-smi's JSON between tick lines."""
    from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS, sample_path

    logs = directory / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    history = History(directory / "history.sqlite3")
    history.record_intent(token="report", preset=preset, preset_path=None, overrides=overrides,  # noqa: S106
                          job_name="exp", launcher="torchrun", nodes=2, world_size=4, log_dir=str(logs),
                          log_stem="exp", script=script, created_at=FROZEN_NOW.timestamp() - 900)
    now = FROZEN_NOW.timestamp()
    history.record_submitted("report", REPORT_JOB, None, None, when=now - 900)
    history.record_final(REPORT_JOB, FinalRecord("COMPLETED", "0:0", None, None, None, 300, "nid[001-002]", "",
                                                 "inferred"), when=now)
    history.close()
    for node, util in (("nid001", 90), ("nid002", 60)):
        rows = []
        for k in range(30):
            stamp = time.strftime("%Y/%m/%d %H:%M:%S.000", time.gmtime(REPORT_T0 + 10 * k))
            busy = util if k % 6 else util // 2  # a dip now and then: something for the sparkline to draw
            if vendor == "amd":
                cards = {f"card{i}": {"GPU use (%)": str(busy if i else 1), "Current Socket Graphics Package Power "
                                      "(W)": f"{(250.0 if i else 60.0) * util / 90:.1f}",
                                      "VRAM Total Memory (B)": str(81559 * 2**20),
                                      "VRAM Total Used Memory (B)": str((9000 + 100 * k) * 2**20),
                                      "Temperature (Sensor edge) (C)": "50.0"} for i in range(2)}
                rows += [f"@ rocm-smi {stamp}\n", json.dumps(cards) + "\n", "@.\n"]
                continue
            rows += [f"{stamp}, {i}, GPU-SIM-{node}-{i}, {busy if i else 1}, {9000 + 100 * k}, 81559, "
                     f"{(250.0 if i else 60.0) * util / 90:.1f}, 50\n" for i in range(2)]
        tool = " tool=rocm-smi" if vendor == "amd" else ""
        header = (f"{HEADER_TAG} v1 job={REPORT_JOB} node={node} interval=10 status=sampling{tool} "
                  f"fields={','.join(SAMPLE_FIELDS)}\n")
        Path(sample_path(str(logs), "exp", REPORT_JOB, node)).write_text(header + "".join(rows) + f"{HEADER_TAG} end\n")
    return lambda: History(directory / "history.sqlite3")


def report_runner() -> FakeRunner:
    """The controller has forgotten the job; no accounting (the report comes from the samples alone)."""
    return FakeRunner({"squeue": result(stdout=SQUEUE_AFTER),
                       ("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
                       "sacct": capture("sacct_no_accounting")})


async def report_scene(pilot: Pilot[Any]) -> None:
    """The recent job selected and its Report tab shown (``u``), the report computed."""
    from ntui.ui.screens.jobs import JobsScreen
    from ntui.ui.widgets.recent_jobs import RecentJobsTable
    from ntui.ui.widgets.report_pane import ReportPane

    await recent_scene(pilot, REPORT_JOB)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    screen.query_one("#jobs-recent", RecentJobsTable).focus()
    await pilot.press("u")
    pane = screen.query_one("#jobs-report", ReportPane)
    await wait_until(pilot, lambda: pane.usage is not None)
    # The status line's Slurm-call count is redrawn by the 1 s tick: tick once the report's worker (two Slurm
    # calls) is done, or the shot shows the count from before or after it by chance.
    screen._tick()
    await pilot.pause()


def save_report_screenshot(out: Path = Path("screenshots")) -> Path:
    """Write ``<out>/jobs-report.svg`` (same bytes on every run)."""
    import tempfile

    async def take(path: Path) -> Path:
        with tempfile.TemporaryDirectory() as tmp:
            app = jobs_app(runner=report_runner(), history_factory=report_history(Path(tmp)))
            return await _shoot(app, report_scene, path, (120, 36), "ntui · report")

    return asyncio.run(take(out / "jobs-report.svg"))


# ------------------------------------------------------------------------------------------ many recent jobs

#: How many recent jobs the "room for the tabs" scene lists (issue #29: a long list took the whole view).
MANY_RECENT = 150


def many_recent_history(directory: Path, count: int = MANY_RECENT) -> Callable[[], History]:
    """A history of ``count`` ended jobs of the last days (the newest one the demo log pane's failed job, with its
    logs written under ``directory``); returns its opener."""
    from ntui.core.records.history import FinalRecord
    from tests.support.screenshots_logs import JOB_ID, NODES, STEM, write_demo_logs

    logs = directory / "logs"
    write_demo_logs(logs)
    history = History(directory / "state")
    now = FROZEN_NOW.timestamp()
    try:
        for n in range(count):
            job_id = JOB_ID if n == 0 else str(48213000 - n)
            token = f"many-{job_id}"
            ago = 600.0 + n * 1800.0
            history.record_intent(token=token, preset="alice-ddp", preset_path=None, overrides=(),
                                  job_name=STEM, launcher="torchrun", nodes=2, world_size=len(NODES),
                                  log_dir=str(logs), log_stem=STEM, script=SCRIPT, created_at=now - ago)
            history.record_submitted(token, job_id, "perlmutter", None, when=now - ago)
            history.record_final(job_id, FinalRecord("FAILED" if n == 0 else "COMPLETED", "1:0" if n == 0 else "0:0",
                                                     None, None, None, 300, "nid[001140-001141]", "", "sacct"),
                                 when=now - ago + 300)
    finally:
        history.close()
    return lambda: History(directory / "state")


async def many_recent_logs_scene(pilot: Pilot[Any]) -> None:
    """The jobs view with :data:`MANY_RECENT` recent jobs, the newest selected, its Logs tab shown (``l``)."""
    from ntui.ui.screens.jobs import JobsScreen
    from ntui.ui.widgets.log_pane import LogPane
    from ntui.ui.widgets.recent_jobs import RecentJobsTable

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    recent = screen.query_one("#jobs-recent", RecentJobsTable)
    recent.focus()
    recent.move_cursor(row=0)
    await settle_jobs(pilot)
    await pilot.press("l")
    pane = screen.query_one(LogPane)
    await wait_until(pilot, lambda: pane.triage_line.failed)  # the watcher is a thread: its state, not a count
    await pilot.pause(0.2)


async def open_tab_after_progress_tick(pilot: Pilot[Any], job: str, key: str) -> Any:
    """The scenes of a running job's progress: the view's progress tick has read its log (the row's words, the
    notices), the job is selected, ``key`` shows its tab. Returns the jobs screen."""
    from ntui.ui.screens.jobs import JobsScreen

    await settle_jobs(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    await wait_until(pilot, lambda: job in screen.model.entries)
    screen.model_workers.progress_tick()
    await wait_until(pilot, lambda: (v := screen.model.progress.views.get(job)) is not None and v.step is not None)
    await settle_jobs(pilot)
    screen.table.move_cursor(key=job)
    await settle_jobs(pilot)
    await pilot.press(key)
    return screen
