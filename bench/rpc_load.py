"""RPC load and CPU of the jobs view, on the dev cluster, against ``squeue --me`` every 2 s.

    scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"
    python bench/rpc_load.py [--seconds 180] [--idle-seconds 180] [--job ntui|plain]

Two windows, RPCs counted by slurmctld itself (``sdiag``, "Remote Procedure Call statistics by user"):

1. **one running job**: the app (headless, 160x50, every pane mounted: Details shown first, then Logs, then
   the GPU pane for the rest of the window) with the job selected, for ``--seconds``; over the same window, in
   parallel, ``squeue --me`` every 2 s. The job (``--job ntui``, the default) is an ntui job: rendered from the
   ``local-srun`` preset (its journal, rule J2, and its GPU sampler included), in the app's history, its program
   waiting for a stop file; ``--job plain`` is a bare ``sbatch --wrap`` job that ntui knows nothing about (the
   GPU pane then streams from its own watch step);
2. **the end**: the stop file is created (an ntui job: its program exits 0, the batch script ends) or the job is
   cancelled (plain); the seconds from the batch script's end (the journal's ``end`` event) to the app showing
   the job as ended with its final state are measured;
3. **no active job**: the app stays open (its row shows the final state), for ``--idle-seconds``.

Per-user counts need separate users: run as root, the benchmark runs every Slurm command of the app as
``nobody`` (``setpriv`` shims first on ``PATH``; the app, its worker threads and the GPU pane's ``srun`` step all
go through them) and the ``squeue --me`` loop as ``daemon``, so other users of the dev cluster (other sessions'
tests run as root) do not blur the counts. Without root both run as the current user, one after the other. With
accounting (``AccountingStorageEnforce=associations``) those users need an association: the benchmark adds them
to the dev cluster's account with ``sacctmgr`` when they have none (``scripts/dev-cluster up`` does too).

CPU: ``getrusage`` of this process (the app: UI thread, workers, log and GPU readers) over each window, as a share
of one core; the Slurm commands it ran (reaped children) are listed apart. Targets: <= 6 RPC/min with an ntui job
active and all panes open, <= 2 RPC/min without, the end shown <= 5 s after the batch script exits, <= 2 % of one
core.
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

from ntui.core.compose.presets import load_preset  # noqa: E402
from ntui.core.compose.render import render  # noqa: E402
from ntui.core.compose.spec import validate  # noqa: E402
from ntui.core.config import Settings, load_settings  # noqa: E402
from ntui.core.jobfiles.journal import journal_path, read_journal  # noqa: E402
from ntui.core.jobs.queue import ENDED  # noqa: E402
from ntui.core.records.history import History  # noqa: E402
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


ACCOUNT = "ntuidev"  # the dev cluster's default account (scripts/dev-cluster)
STOP_PY = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.2)\n"


def ensure_associations(users: Sequence[str]) -> None:
    """With accounting, each user the benchmark runs Slurm commands as needs an association (else sbatch says
    "Invalid account or account/partition combination specified")."""
    res = subprocess.run(["sacctmgr", "-n", "-P", "show", "assoc", f"account={ACCOUNT}", "format=user"],
                         capture_output=True, text=True, timeout=30)
    if res.returncode != 0:  # no accounting (sacctmgr cannot reach slurmdbd): any account is accepted
        return
    have = set(res.stdout.split())
    missing = [u for u in users if u not in have]
    if missing:
        print(f"sacctmgr: adding {', '.join(missing)} to account {ACCOUNT}", flush=True)
        subprocess.run(["sacctmgr", "-i", "add", "user", ",".join(missing), f"account={ACCOUNT}", "cluster=ntuidev",
                        f"DefaultAccount={ACCOUNT}"], capture_output=True, text=True, timeout=30, check=False)


class NtuiJob:
    """An ntui job as ``ntui submit`` makes it (the rendered script with its journal, its history entry),
    submitted through the shims (as the app's user), its program waiting for :attr:`stop`."""

    def __init__(self, work: Path, minutes: int, owner: int | None) -> None:
        self.logs = work / "logs"
        self.logs.mkdir(parents=True)
        self.stop = self.logs / "stop"
        program = self.logs / "wait_for_stop.py"
        program.write_text(STOP_PY)
        loaded = load_preset("local-srun", [
            f"script={program}", f'args=["{self.stop}"]', "sbatch.nodes=1", "sbatch.ntasks-per-node=2",
            "sbatch.gpus-per-node=2", f"sbatch.time={minutes}", "sbatch.job-name=ntui-rpc", f"logs.dir={self.logs}",
            "launcher.python=/usr/bin/python3"])
        spec, problems = validate(loaded)
        if spec is None:
            raise SystemExit(f"preset: {[str(p) for p in problems]}")
        self.spec, self.loaded, self.script = spec, loaded, render(spec)
        if owner is not None:  # the job runs as the app's user: it writes its logs and journal here
            for path in (work, self.logs, program):
                os.chown(path, owner, owner)
        self.state = work / "state"
        self.job_id = ""

    def submit(self) -> str:
        path = self.logs / "ntui-rpc.sbatch"
        path.write_text(self.script)
        path.chmod(0o644)
        history = History(self.state)
        history.record_intent(token="rpcload", preset="local-srun", preset_path=None,  # noqa: S106
                              overrides=self.loaded.overrides, job_name=self.spec.job_name,
                              launcher=self.spec.launcher, nodes=self.spec.nodes, world_size=self.spec.world_size,
                              log_dir=self.spec.log_dir, log_stem=self.spec.log_stem, script=self.script)
        res = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True, timeout=60)
        if res.returncode != 0:
            raise SystemExit(f"sbatch failed: {res.stderr.strip()}")
        self.job_id = res.stdout.strip().split(";")[0]
        history.record_submitted("rpcload", self.job_id, None, str(path))  # noqa: S106
        history.close()
        return self.job_id

    def end_time(self) -> float | None:
        """When the batch script ended, as its journal says (None: not yet)."""
        state = read_journal(journal_path(self.spec.log_dir, self.spec.log_stem, self.job_id), self.job_id)
        return state.end if state is not None else None


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
                  app_user: str, settings: Settings, ntui_job: NtuiJob | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    runner = CountingRunner()
    opener = (lambda: History(ntui_job.state)) if ntui_job is not None else (lambda: None)
    app = jobs_app(runner=runner, settings=settings, user=app_user, clock=None, history_factory=opener)
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
        if ntui_job is not None:
            ntui_job.stop.write_text("")  # its program exits 0: the batch script ends
        else:
            subprocess.run(["scancel", job_id], check=False, timeout=30)
        deadline = time.monotonic() + 120
        while not (job_id in screen.table and screen.table.row_tag(job_id) == ENDED
                   and screen.table.get_row(job_id)[2] != "ENDED"):
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        out["shown_at"] = time.time()
        out["script_end"] = ntui_job.end_time() if ntui_job is not None else None
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
    parser.add_argument("--job", choices=("ntui", "plain"), default="ntui",
                        help="an ntui job (journal, history entry, GPU sampler; default) or a bare sbatch --wrap job")
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
    if isolated:
        ensure_associations([app_user, loop_user])
    minutes = int((args.seconds + idle_seconds) // 60) + 5
    work = Path(tempfile.mkdtemp(prefix="ntui-rpc-"))
    ntui_job = NtuiJob(work, minutes, APP_UID if isolated else None) if args.job == "ntui" else None
    job_id = ntui_job.submit() if ntui_job is not None else submit_job(minutes, int(args.seconds + 120))
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
                                  settings, ntui_job))
    finally:
        subprocess.run(["scancel", job_id], check=False, timeout=30)
        Path(f"/tmp/ntui-rpc-{job_id}.out").unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
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
    print(f"  ntui, one running {args.job} job (all panes)                  {app_active:6d}   {a['wall']:6.0f}"
          f"   {per_min(app_active, a['wall']):7.1f}   <= 6")
    print(f"  squeue --me every 2 s, same window                       {loop_rpcs:6d}   {args.seconds:6.0f}"
          f"   {per_min(loop_rpcs, args.seconds):7.1f}")
    print(f"  ntui, no active job (after it ended)                     {app_idle:6d}   {i['wall']:6.0f}"
          f"   {per_min(app_idle, i['wall']):7.1f}   <= 2")
    print(f"\nthe app's Slurm commands: running job {a['calls']} (+ the GPU pane's srun step); "
          f"job ending {res['transition_calls']}; no active job {i['calls']}; GPU pane state: {res['gpu_state']}")
    print(f"final row of the job: {res['final_row']}; idle interval now {res['interval']:.0f} s")
    if res.get("script_end") is not None:
        print(f"the end shown {res['shown_at'] - res['script_end']:.1f} s after the batch script ended "
              "(its journal's end event)   target <= 5 s")
    elif args.job == "ntui":
        print("the job's journal has no end event: the end was not measured")
    print("\nCPU of the app process (user+sys, % of one core)      self    Slurm commands it ran (children)")
    print(f"  one running job                                    {100 * a['cpu'] / a['wall']:5.2f} %   "
          f"{100 * a['kids'] / a['wall']:5.2f} %     (target <= 2 %, self)")
    print(f"  no active job                                      {100 * i['cpu'] / i['wall']:5.2f} %   "
          f"{100 * i['kids'] / i['wall']:5.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
