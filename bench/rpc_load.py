"""RPC load and CPU of the jobs view, on the dev cluster, against ``squeue --me`` every 2 s.

    scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"
    python bench/rpc_load.py [--seconds 180] [--idle-seconds 180]

Two windows, RPCs counted by slurmctld itself (``sdiag``, "Remote Procedure Call statistics by user"):

1. **one running job**: the app (headless, 160x50, every pane mounted: Details shown first, then Logs, then
   the GPU pane, which streams from its watch step for the rest of the window) with the job selected, for
   ``--seconds``; over the same window, in parallel, ``squeue --me`` every 2 s;
2. **no active job**: the job is cancelled, the app stays open (its row shows the final state), for
   ``--idle-seconds``.

Per-user counts need separate users: run as root, the benchmark runs every Slurm command of the app as
``nobody`` (``setpriv`` shims first on ``PATH``; the app, its worker threads and the GPU pane's ``srun`` step all
go through them) and the ``squeue --me`` loop as ``daemon``, so other users of the dev cluster (other sessions'
tests run as root) do not blur the counts. Without root both run as the current user, one after the other.

CPU: ``getrusage`` of this process (the app: UI thread, workers, log and GPU readers) over each window, as a share
of one core; the Slurm commands it ran (reaped children) are listed apart. Targets: <= 12 RPC/min with a job
active, <= 2 RPC/min without, <= 2 % of one core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ntui.core.config import Settings, load_settings  # noqa: E402
from ntui.core.jobs.queue import ENDED
from ntui.core.slurm.runner import CommandResult, SubprocessRunner  # noqa: E402
from ntui.core.slurm.sdiag import parse_sdiag_rpc_by_user  # noqa: E402
from ntui.ui.screens.jobs import JobsScreen  # noqa: E402
from tests.support.screenshots_jobs import jobs_app, settle_jobs  # noqa: E402

SLURM_TOOLS = ("squeue", "scontrol", "sacct", "scancel", "sbatch", "srun", "sinfo", "sacctmgr", "sstat", "sattach")
APP_UID, LOOP_UID = 65534, 1  # nobody, daemon
REAL = {tool: shutil.which(tool) or tool for tool in (*SLURM_TOOLS, "sdiag")}  # before the shims go on PATH


class CountingRunner(SubprocessRunner):
    """Counts the app's Slurm commands by program (the GPU pane's srun step is started apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_program: Counter[str] = Counter()

    def run(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
            input: str | None = None) -> CommandResult:  # noqa: A002
        self.by_program[os.path.basename(argv[0])] += 1
        return super().run(argv, timeout=timeout, env=env, input=input)


def sdiag_counts() -> dict[str, int]:
    res = subprocess.run([REAL["sdiag"]], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        raise SystemExit(f"sdiag failed: {res.stderr.strip()}")
    return parse_sdiag_rpc_by_user(res.stdout)


def user_name(uid: int) -> str:
    import pwd

    return pwd.getpwuid(uid).pw_name


def make_shims(uid: int) -> Path:
    """A directory of ``squeue``/``srun``/... that run the real tool as ``uid``."""
    shim_dir = Path(tempfile.mkdtemp(prefix="ntui-rpc-shims-"))
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SystemExit("setpriv (util-linux) is needed to run the app's Slurm commands as another user")
    for tool in SLURM_TOOLS:
        real = REAL[tool]
        if os.sep not in real:
            continue
        path = shim_dir / tool
        path.write_text(f'#!/bin/sh\nexec {setpriv} --reuid={uid} --regid={uid} --clear-groups {real} "$@"\n')
        path.chmod(0o755)
    return shim_dir


def cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def squeue_loop(seconds: float, uid: int | None) -> subprocess.Popen[bytes]:
    prefix = f"{shutil.which('setpriv')} --reuid={uid} --regid={uid} --clear-groups " if uid is not None else ""
    script = (f"end=$(( $(date +%s) + {int(seconds)} )); while [ $(date +%s) -lt $end ]; do "
              f"{prefix}{REAL['squeue']} --me >/dev/null 2>&1; sleep 2; done")
    return subprocess.Popen(["sh", "-c", script])


def submit_job(minutes: int, sleep_s: int) -> str:
    res = subprocess.run(
        ["sbatch", "--parsable", "-J", "ntui-rpc", "-N1", "-n1", "--gpus-per-node=2", "-t", str(minutes),
         "-o", "/tmp/ntui-rpc-%j.out", "--chdir=/tmp", "--wrap", f"{REAL['srun']} sleep {sleep_s}"],
        capture_output=True, text=True, timeout=60,
    )
    if res.returncode != 0:
        raise SystemExit(f"sbatch failed: {res.stderr.strip()}")
    return res.stdout.strip().split(";")[0]


def job_state(job_id: str) -> str:
    res = subprocess.run(["squeue", "--noheader", "-j", job_id, "-o", "%T"], capture_output=True, text=True,
                         timeout=30)
    return res.stdout.strip()


async def window(seconds: float) -> tuple[float, float, float]:
    """(wall, self CPU s, children CPU s) over ``seconds`` of the app running."""
    w0, c0, k0 = time.monotonic(), cpu_self(), cpu_children()
    await asyncio.sleep(seconds)
    return time.monotonic() - w0, cpu_self() - c0, cpu_children() - k0


async def run_app(job_id: str, seconds: float, idle_seconds: float, loop_uid: int | None,
                  app_user: str, settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    runner = CountingRunner()
    app = jobs_app(runner=runner, settings=settings, user=app_user, clock=None)
    before = sdiag_counts()
    loop = squeue_loop(seconds, loop_uid) if loop_uid is not None else None
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        t0, c0, k0 = time.monotonic(), cpu_self(), cpu_children()
        await settle_jobs(pilot, timeout=60)
        screen.table.move_cursor(key=job_id)
        await settle_jobs(pilot, timeout=60)
        assert screen.table.cursor_key == job_id, f"job {job_id} not in the table"
        await asyncio.sleep(3)  # Details shown
        await pilot.press("l")  # the log pane (reads files; no RPCs)
        await asyncio.sleep(3)
        await pilot.press("g")  # the GPU pane: one scontrol show job -d, then one srun --overlap step
        await asyncio.sleep(max(0.0, seconds - (time.monotonic() - t0)))
        wall, cpu, kids = time.monotonic() - t0, cpu_self() - c0, cpu_children() - k0
        after = sdiag_counts()
        gpu = screen.query("#jobs-gpu")
        out["gpu_state"] = getattr(gpu.first(), "state", "?") if gpu else "not installed"
        if loop is not None:
            loop.wait()
        loop_after = sdiag_counts()
        out["active"] = dict(wall=wall, cpu=cpu, kids=kids, before=before, after=after, loop_after=loop_after,
                             calls=dict(runner.by_program))
        # the job ends; the app stays open
        runner.by_program.clear()
        subprocess.run(["scancel", job_id], check=False, timeout=30)
        deadline = time.monotonic() + 60
        while not (job_id in screen.table and screen.table.row_tag(job_id) == ENDED
                   and screen.table.get_row(job_id)[2] != "ENDED"):
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        await settle_jobs(pilot, timeout=60)
        out["final_row"] = screen.table.get_row(job_id) if job_id in screen.table else None
        out["transition_calls"] = dict(runner.by_program)
        runner.by_program.clear()
        before_idle = sdiag_counts()
        wall, cpu, kids = await window(idle_seconds)
        out["idle"] = dict(wall=wall, cpu=cpu, kids=kids, before=before_idle, after=sdiag_counts(),
                           calls=dict(runner.by_program))
        out["interval"] = screen.policy.delay()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0, help="window with the job running (default 180)")
    parser.add_argument("--idle-seconds", type=float, default=None, help="window with no active job (default: same)")
    parser.add_argument("--active-interval", type=float, default=None,
                        help="queue.active-interval for this run (default: the settings file's, 10 s)")
    args = parser.parse_args()
    idle_seconds = args.seconds if args.idle_seconds is None else args.idle_seconds
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit('run: eval "$(scripts/dev-cluster env)"')
    isolated = os.geteuid() == 0
    sim = os.environ.get("NTUI_DEV_SIM_PATH")  # the dev cluster's SIMULATED nvidia-smi, for the GPU pane
    if isolated:
        shims = make_shims(APP_UID)
        os.environ["PATH"] = f"{shims}:{os.environ['PATH']}"
    if sim:
        os.environ["PATH"] = f"{os.environ['PATH']}:{sim}"
    app_user = user_name(APP_UID) if isolated else user_name(os.getuid())
    loop_user = user_name(LOOP_UID) if isolated else app_user
    minutes = int((args.seconds + idle_seconds) // 60) + 5
    job_id = submit_job(minutes, int(args.seconds + 120))
    try:
        deadline = time.monotonic() + 300
        while job_state(job_id) != "RUNNING":
            if time.monotonic() > deadline:
                raise SystemExit(f"job {job_id} did not start")
            time.sleep(1)
        print(f"job {job_id} running as {app_user}; app for {args.seconds:.0f} s, squeue --me loop as {loop_user}; "
              f"then no active job for {idle_seconds:.0f} s", flush=True)
        settings, _ = load_settings()
        if args.active_interval:
            settings = replace(settings, queue=replace(settings.queue, active_interval=args.active_interval))
        print(f"queue intervals: active {settings.queue.active_interval:g} s, idle {settings.queue.idle_interval:g} s",
              flush=True)
        res = asyncio.run(run_app(job_id, args.seconds, idle_seconds, LOOP_UID if isolated else None, app_user,
                                  settings))
    finally:
        subprocess.run(["scancel", job_id], check=False, timeout=30)
        Path(f"/tmp/ntui-rpc-{job_id}.out").unlink(missing_ok=True)
        if isolated:
            shutil.rmtree(shims, ignore_errors=True)
    if not isolated:
        print("(not root: app and loop ran as the same user, one after the other; counts include other RPCs "
              "of that user)")
        w0 = sdiag_counts()
        loop = squeue_loop(args.seconds, None)
        loop.wait()
        loop_rpcs = sdiag_counts().get(loop_user, 0) - w0.get(loop_user, 0)
    else:
        a = res["active"]
        loop_rpcs = a["loop_after"].get(loop_user, 0) - a["before"].get(loop_user, 0)

    def per_min(n: int, wall: float) -> float:
        return n * 60.0 / wall

    a, i = res["active"], res["idle"]
    app_active = a["after"].get(app_user, 0) - a["before"].get(app_user, 0)
    app_idle = i["after"].get(app_user, 0) - i["before"].get(app_user, 0)
    print("\nsdiag RPCs by user, per window (slurmctld's own count)      RPCs   wall s   RPC/min   target")
    print(f"  ntui, one running job (all panes)                        {app_active:6d}   {a['wall']:6.0f}"
          f"   {per_min(app_active, a['wall']):7.1f}   <= 12")
    print(f"  squeue --me every 2 s, same window                       {loop_rpcs:6d}   {args.seconds:6.0f}"
          f"   {per_min(loop_rpcs, args.seconds):7.1f}")
    print(f"  ntui, no active job (after it ended)                     {app_idle:6d}   {i['wall']:6.0f}"
          f"   {per_min(app_idle, i['wall']):7.1f}   <= 2")
    print(f"\nthe app's Slurm commands: running job {a['calls']} (+ the GPU pane's srun step); "
          f"job ending {res['transition_calls']}; no active job {i['calls']}; GPU pane state: {res['gpu_state']}")
    print(f"final row of the job: {res['final_row']}; idle interval now {res['interval']:.0f} s")
    print("\nCPU of the app process (user+sys, % of one core)      self    Slurm commands it ran (children)")
    print(f"  one running job                                    {100 * a['cpu'] / a['wall']:5.2f} %   "
          f"{100 * a['kids'] / a['wall']:5.2f} %     (target <= 2 %, self)")
    print(f"  no active job                                      {100 * i['cpu'] / i['wall']:5.2f} %   "
          f"{100 * i['kids'] / i['wall']:5.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
