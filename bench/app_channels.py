"""Benchmark: what the app costs the link and the controller for one running job with every tab open, over ssh,
side by side with the same app on the login node (issue #45).

    eval "$(scripts/dev-cluster env --slurm 22.05)"
    python bench/app_channels.py [--hold 25]

Needs root (the tests' private sshd, ``tests/support/sshd.py``) and the dev cluster. One job of two ranks printing a
line every 0.25 s, with two of the cluster's (simulated) GPUs and its GPU sampler, is submitted by ``ntui submit``
here, its history in a state directory that both sides read: the cluster's side through its agent over the master,
the login-node side directly. The real app then runs headless (Textual's ``run_test``) twice, one after the other:
over ssh (no Slurm client on its side, the cluster behind the sshd) and on the login node (Slurm here). Each run
selects the job and opens every tab in turn (Details, Logs, GPUs, Progress, Report, Stacks), holding each ``--hold``
seconds, and counts over each hold:

* logins (sshd's ``Accepted publickey``) and channels (sshd's ``Starting session``): over ssh only;
* link bytes: the TCP connections to the sshd, both ways (``ss -ti``'s ``bytes_sent`` and ``bytes_received`` of
  the master's socket; a connection that closed inside a hold takes its count with it, said as ``*``); and the
  agent's own bytes (its channel's JSON lines, both ways);
* the Slurm commands the app ran (its runner's calls, by program: each is one channel over ssh, and a few RPCs);
* slurmctld RPCs: ``sdiag``'s counts by message type, summed (its own ``REQUEST_STATS_INFO`` left out). The dev
  cluster is shared: other users' RPCs in the same hold count too, so this is an upper bound of the app's.

Per hold the table gives the counts and their rate per minute; the last rows are the whole run (the app's start,
the selection and every hold) and, over ssh, the logins per hour at that rate (1 login expected for the run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ntui.core.config import NotifySettings, Settings, SlurmSettings, cluster_runner  # noqa: E402
from tests.support import sshd as sshd_support  # noqa: E402
from tests.support.remote_app import remote_runners, remote_settings, write_numbered_preset  # noqa: E402
from tests.support.screenshots_clusters import clusters_app  # noqa: E402
from tests.support.screenshots_jobs import settle_jobs, wait_until  # noqa: E402

#: the tabs opened in turn: (key, name)
TABS: tuple[tuple[str, str], ...] = (("d", "Details"), ("l", "Logs"), ("g", "GPUs"), ("p", "Progress"),
                                     ("u", "Report"), ("k", "Stacks"))
WAIT_S = 240.0
JOB_NAME = "ntui-bench-channels"


class Counted:
    """A runner that counts the commands run through it, by program (``inner``: what
    :func:`~ntui.core.remote.files.ssh_runner_of` looks under)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.by_program: dict[str, int] = {}

    def run(self, argv: Any, *args: Any, **kwargs: Any) -> Any:
        prog = os.path.basename(str(argv[0])) if argv else "?"
        self.by_program[prog] = self.by_program.get(prog, 0) + 1
        return self.inner.run(argv, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(frozen=True)
class Counts:
    at: float
    logins: int
    channels: int
    link: dict[str, int]  # connection (local port) -> bytes both ways
    agent: int
    commands: dict[str, int]
    rpcs: int
    by_type: dict[str, int]


def sdiag(env: dict[str, str]) -> tuple[int, dict[str, int]]:
    """slurmctld's RPC counts by message type (sdiag's own left out): their sum and each."""
    out = subprocess.run(["sdiag"], env=env, capture_output=True, text=True, timeout=60).stdout
    section = out.split("by message type", 1)[1].split("by user", 1)[0] if "by message type" in out else ""
    found = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\S+)\s+\(\s*\d+\)\s+count:(\d+)", section,
                                                              re.MULTILINE)}
    found.pop("REQUEST_STATS_INFO", None)
    return sum(found.values()), found


def link_bytes(port: int) -> dict[str, int]:
    """Bytes both ways of each established TCP connection to 127.0.0.1:``port``, by its local port."""
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( dport = :{port} )"], capture_output=True,
                         text=True, timeout=30).stdout
    found: dict[str, int] = {}
    local = ""
    for line in out.splitlines():
        addr = re.search(r"127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:\d+", line)
        if addr:
            local = addr.group(1)
        sent, got = re.search(r"bytes_sent:(\d+)", line), re.search(r"bytes_received:(\d+)", line)
        if local and (sent or got):
            found[local] = found.get(local, 0) + int(sent.group(1) if sent else 0) + int(got.group(1) if got else 0)
    return found


class Meter:
    """Snapshots of every counter; ``server`` None: the login-node side (no link)."""

    def __init__(self, env: dict[str, str], server: sshd_support.Sshd | None, agent: Callable[[], int],
                 runner: Counted) -> None:
        self.env, self.server, self.agent, self.runner = env, server, agent, runner

    def take(self) -> Counts:
        logins = channels = 0
        link: dict[str, int] = {}
        if self.server is not None:
            text = self.server.log.read_text(errors="replace")
            logins, channels = text.count("Accepted publickey"), text.count("Starting session:")
            link = link_bytes(self.server.port)
        rpcs, by_type = sdiag(self.env)
        return Counts(time.monotonic(), logins, channels, link, self.agent(), dict(self.runner.by_program), rpcs,
                      by_type)


def delta_row(label: str, a: Counts, b: Counts, over_ssh: bool) -> tuple[str, list[str]]:
    minutes = max(1e-9, (b.at - a.at) / 60)
    link = sum(b.link.get(k, 0) - a.link.get(k, 0) for k in b.link)
    closed = any(k not in b.link for k in a.link)
    rpcs = b.rpcs - a.rpcs
    ran = {k: v - a.commands.get(k, 0) for k, v in b.commands.items() if v - a.commands.get(k, 0) > 0}
    commands = sum(ran.values())
    said = " ".join(f"{k} {v}" for k, v in sorted(ran.items(), key=lambda kv: -kv[1])[:3])
    types = {k: v - a.by_type.get(k, 0) for k, v in b.by_type.items() if v - a.by_type.get(k, 0) > 0}
    top = ", ".join(f"{k.removeprefix('REQUEST_')} {v}" for k, v in sorted(types.items(), key=lambda kv: -kv[1])[:3])
    if over_ssh:
        cells = [f"{b.at - a.at:6.0f}", f"{b.logins - a.logins:6d}", f"{b.channels - a.channels:8d}",
                 f"{(b.channels - a.channels) / minutes:9.1f}", f"{link / minutes / 1024:9.1f}{'*' if closed else ' '}",
                 f"{(b.agent - a.agent) / minutes / 1024:10.1f}"]
    else:
        cells = [f"{b.at - a.at:6.0f}", f"{'-':>6}", f"{'-':>8}", f"{'-':>9}", f"{'-':>10}", f"{'-':>10}"]
    cells += [f"{commands:4d}", f"{commands / minutes:7.1f}", f"{said:<26}", f"{rpcs:5d}", f"{rpcs / minutes:7.1f}"]
    return label, [*cells, top]


HEAD = (f"{'side':<11} {'hold':<10} {'secs':>6} {'logins':>6} {'channels':>8} {'chan/min':>9} {'KiB/min':>10} "
        f"{'agentKiB/m':>10} {'cmds':>4} {'cmd/min':>7} {'commands run':<26} {'RPCs':>5} {'RPC/min':>7}  "
        "top RPC types (sdiag, every user)")


async def drive(app: Any, key: str, hold: float, meter: Meter, sim: str, side: str, over_ssh: bool) -> list[str]:
    """Select the job, open every tab in turn, hold each; the table's rows of this side."""
    from ntui.ui.widgets.gpu_pane import GpuPane

    rows: list[str] = []
    shown: list[str] = []
    begin = meter.take()
    async with app.run_test(size=(160, 45)) as pilot:
        screen: Any = pilot.app.screen
        table = screen.table
        await wait_until(pilot, lambda: key in table.rows, timeout=WAIT_S)
        table.move_cursor(key=key)
        await settle_jobs(pilot, timeout=WAIT_S)
        selected = meter.take()
        label, cells = delta_row("start", begin, selected, over_ssh)
        rows.append(f"{side:<11} {label:<10} {' '.join(cells[:-1])}  {cells[-1]}")
        for tab_key, tab_name in TABS:
            table.focus()
            await pilot.pause()
            if tab_key == "g":
                screen.query_one(GpuPane).gpu_watch.nvidia_smi = f"{sim}/nvidia-smi"  # the nodes' simulated tool
            await pilot.press(tab_key)
            a = meter.take()
            until = asyncio.get_running_loop().time() + hold
            while asyncio.get_running_loop().time() < until:
                await pilot.pause(0.25)
            b = meter.take()
            label, cells = delta_row(tab_name, a, b, over_ssh)
            rows.append(f"{side:<11} {label:<10} {' '.join(cells[:-1])}  {cells[-1]}")
            if tab_key == "g":
                gpu = screen.query_one(GpuPane)
                with gpu.gpu_watch.lock:  # what the pane draws: the job's sample files, else the watch step's board
                    drawn = gpu.gpu_watch.shown
                    board = drawn.latest() if drawn is not None else {}
                shown.append(f"{side}: the GPU tab {gpu.state} ({gpu.source or 'nothing'}), "
                             f"{sum(len(g) for g in board.values())} GPU(s) shown")
        end = meter.take()
    label, cells = delta_row("whole run", begin, end, over_ssh)
    rows.append(f"{side:<11} {label:<10} {' '.join(cells[:-1])}  {cells[-1]}")
    if over_ssh:
        again = max(0, end.logins - begin.logins - 1)  # the first opens the master, which outlives the run
        rows.append(f"{side:<11} logins     {end.logins - begin.logins} in {end.at - begin.at:.0f} s (the first "
                    f"opens the master); after it {again}, {again * 3600 / (end.at - begin.at):.0f} per hour at "
                    "this rate (0 expected: 1 login per hour)")
    return rows + shown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hold", type=float, default=25.0, help="seconds each tab is held open (default 25)")
    args = ap.parse_args()
    reason = sshd_support.why_not()
    if reason is not None:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    conf = os.environ.get("SLURM_CONF")
    if not conf or shutil.which("sdiag") is None:
        print('cannot run: no dev cluster (eval "$(scripts/dev-cluster env --slurm 22.05)")', file=sys.stderr)
        return 2
    env = dict(os.environ)
    sim = env.get("NTUI_DEV_SIM_PATH") or str(Path(conf).parent.parent / "simbin")
    bin_dir = os.path.dirname(shutil.which("squeue") or "/usr/bin/squeue")
    version = subprocess.run(["sinfo", "--version"], capture_output=True, text=True, timeout=60).stdout.split()[-1]
    name = "c" + "".join(version.split(".")[:2])
    with tempfile.TemporaryDirectory(prefix="ntui-bench-") as tmp:
        home = Path(tmp)
        state = home / "state"
        os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
                           "XDG_STATE_HOME": str(home / "xdg-state"), "XDG_CACHE_HOME": str(home / "cache"),
                           "NTUI_STATE_DIR": str(state)})
        lines = int((len(TABS) + 2) * 2 * (args.hold + 10) * 4) + 400  # outlives both runs
        write_numbered_preset(JOB_NAME, home / "job", home / "logs", lines=lines, gpus=2,
                              minutes=min(59, lines // 240 + 3))
        # the simulated nvidia-smi on the job's PATH (sbatch exports it): its GPU sampler's step records samples
        submit_env = {**os.environ, "PATH": f"{sim}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        sub = subprocess.run([sys.executable, "-m", "ntui", "submit", JOB_NAME], env=submit_env, cwd=REPO,
                             capture_output=True, text=True, timeout=120)
        if sub.returncode != 0 or not sub.stdout.strip().isdigit():
            print(f"submit failed: {sub.stdout} {sub.stderr}", file=sys.stderr)
            return 1
        job_id = sub.stdout.strip()
        try:
            deadline = time.monotonic() + WAIT_S
            while subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True,
                                 timeout=60).stdout.strip() != "RUNNING":
                if time.monotonic() > deadline:
                    print(f"job {job_id} did not start", file=sys.stderr)
                    return 1
                time.sleep(1)
            print(f"job {job_id} on {name}: 2 ranks, a line every 0.25 s each, 2 simulated GPUs; "
                  f"each tab held {args.hold:g} s\n")
            print(HEAD)
            cluster_env = {"SLURM_CONF": conf, "PYTHONPATH": str(REPO), "NTUI_STATE_DIR": str(state)}
            with sshd_support.private_sshd(environment=cluster_env) as server:
                settings = remote_settings({name: (bin_dir, server)})
                counted = Counted(remote_runners(settings, server.directory / "rt")[name])
                app = clusters_app(local=None, clusters={name: counted}, settings=settings, clock=None,
                                   user=os.environ.get("USER", "root"))

                def agent_bytes() -> int:
                    files = getattr(app, "_cluster_files", {}).get(name)
                    return int(getattr(files, "bytes_in", 0) + getattr(files, "bytes_out", 0))

                meter = Meter(env, server, agent_bytes, counted)
                for row in asyncio.run(drive(app, f"{name}/{job_id}", args.hold, meter, sim, "over ssh", True)):
                    print(row, flush=True)
            from ntui.core.records.history import History

            local_settings = Settings(slurm=SlurmSettings(timeout=60),
                                      notify=NotifySettings(bell=False, desktop=False, states=()))
            here = Counted(cluster_runner(local_settings, None))
            local = clusters_app(local=here, clusters={}, settings=local_settings,
                                 clock=None, user=os.environ.get("USER", "root"), local_name=name,
                                 history_factory=lambda: History(state))
            meter = Meter(env, None, lambda: 0, here)
            for row in asyncio.run(drive(local, job_id, args.hold, meter, sim, "login node", False)):
                print(row, flush=True)
        finally:
            subprocess.run(["scancel", job_id], capture_output=True, timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
