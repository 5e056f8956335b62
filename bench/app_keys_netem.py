"""Benchmark: the app's keys with its cluster reached over ssh through 100 ms of round trip, against the same app on
the login node (Slurm here, no ssh), in one run (issue #45: "keys answer as fast as locally").

    nice -n 19 .venv/bin/python bench/app_keys_netem.py [--moves 40] [--delay-ms 50] [--link auto|netem|userspace]

Needs root (a network namespace, a private sshd), ``ip`` and ``tc``, Debian's openssh-server and the 22.05 dev
cluster up (it is never started nor stopped here); otherwise it says why and exits 0.

The link is ``bench/ssh_netem.py``'s (:func:`~bench.ssh_netem.delayed_link`: a namespace of its own for the
*laptop*, ``--delay-ms`` each way, netem where the kernel has it, else a user-space delay line) and so is the sshd on
the cluster's side (:func:`~bench.ssh_netem.cluster_sshd`, its sessions see the dev cluster's ``SLURM_CONF``). Three
held jobs are submitted (cancelled at the end), so the queue has rows to move between.

Each side runs the real app headless in a process of its own (``--child``): the jobs view, its queue polled in
workers. *local*: this machine's Slurm through the usual runner. *remote*: the cluster as ``clusters: far`` of the
settings, reached through ssh over the delayed link, from the laptop's namespace (no Slurm client on its PATH).
Once the held jobs are listed, ``--moves`` cursor moves (down, up, ...) are timed: from the key to the table's
cursor on the next row (the UI thread's work: what the user sees move); then, per move, the time until the details
panel shows the newly selected job's ``scontrol show job`` (that crosses the link: one channel over the master,
after the view's 0.15 s debounce). Printed: medians and 90th percentiles, remote / local, and the time to the first
rows (the master's login included on the remote side).

What it does not measure: the other panes over ssh (logs through the agent are bench/ssh_channels.py's); a
cluster whose link drops (tests/ui/test_app_clusters.py shows that it holds up nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.ssh_netem import HOST, cluster_is_up, cluster_sshd, delayed_link, dev_cluster_env, sh, tcp_rtt  # noqa: E402
from bench.ssh_netem import why_not as netem_why_not  # noqa: E402

JOBS = 3
#: a bound on every wait of the child (a shared machine), not a figure
WAIT_S = 240.0


def say(words: str) -> None:
    print(f"app_keys_netem: {words}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the child: one app, its keys timed


async def _measure(mode: str, moves: int, jobs: list[str], cfg: dict[str, str]) -> dict[str, Any]:
    from ntui.core.config import ClusterSettings, NotifySettings, Settings, SlurmSettings, cluster_runner
    from ntui.core.slurm.runner import CommandRunner
    from ntui.ui.widgets.job_details import JobDetailsPanel
    from tests.support.screenshots_clusters import clusters_app
    from tests.support.screenshots_jobs import wait_until

    quiet = NotifySettings(bell=False, desktop=False, states=())
    if mode == "remote":
        settings = Settings(slurm=SlurmSettings(timeout=60), notify=quiet, clusters=(
            ClusterSettings(name=HOST, ssh=HOST, bin_dir=cfg["bin_dir"], ssh_config=cfg["ssh_config"], persist=600),))
        runners: dict[str, CommandRunner] = {HOST: cluster_runner(settings, HOST, environ=os.environ)}
        app = clusters_app(local=None, clusters=runners, settings=settings, user="root", clock=None)
        keys = [f"{HOST}/{j}" for j in jobs]
    else:
        from ntui.core.config import slurm_runner

        settings = Settings(slurm=SlurmSettings(timeout=60), notify=quiet)
        app = clusters_app(local=slurm_runner(settings.slurm), clusters={}, settings=settings, user="root",
                           clock=None)
        keys = list(jobs)
    started = time.perf_counter()
    out: dict[str, Any] = {"mode": mode}
    async with app.run_test(size=(120, 36)) as pilot:
        screen: Any = pilot.app.screen
        table = screen.table
        await wait_until(pilot, lambda: all(k in table.rows for k in keys), timeout=WAIT_S)
        out["first_rows_s"] = time.perf_counter() - started
        details = screen.query_one(JobDetailsPanel)
        table.focus()
        table.move_cursor(key=keys[0])
        await pilot.pause(0.5)
        key_s: list[float] = []
        details_s: list[float] = []
        for _ in range(moves):
            before = table.cursor_key
            press = "down" if table.cursor_row < table.row_count - 1 else "up"
            t0 = time.perf_counter()
            await pilot.press(press)
            while table.cursor_key == before:
                if time.perf_counter() - t0 > WAIT_S:
                    raise TimeoutError(f"{press} did not move the cursor")
                await pilot.pause(0)
            key_s.append(time.perf_counter() - t0)
            now_key = table.cursor_key
            job_id = now_key.rpartition("/")[2] if now_key else ""

            def shown(job_id: str = job_id) -> bool:
                view = details.view
                return view is not None and view.job_id == job_id and view.details is not None

            await wait_until(pilot, shown, timeout=WAIT_S)
            details_s.append(time.perf_counter() - t0)
            # the details are cached per job and state: each row's first selection is the one that crosses
            # the link; later ones are served from the cache (both counted, as a user would meet them)
        out["key_s"] = key_s
        out["details_s"] = details_s
    return out


def child(args: argparse.Namespace) -> int:
    cfg = json.loads(args.config)
    got = asyncio.run(_measure(args.child, args.moves, cfg["jobs"], cfg))
    print(json.dumps(got))
    return 0


# ---------------------------------------------------------------- the parent: the link, the jobs, the report


def _run_child(mode: str, moves: int, cfg: dict[str, Any], env: dict[str, str], preexec: Any = None
               ) -> dict[str, Any]:
    res = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", mode, "--moves", str(moves),
                          "--config", json.dumps(cfg)], env=env, capture_output=True, text=True,
                         timeout=WAIT_S * 3, preexec_fn=preexec, cwd=REPO, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"the {mode} app failed: {res.stderr.strip()[-2000:]}")
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(local: dict[str, Any], remote: dict[str, Any], rtt: float, link: str, moves: int) -> None:
    print(f"app keys over ssh: {moves} cursor moves each, link {link}, TCP round trip {1000 * rtt:.0f} ms")
    print(f"{'':34}{'local':>10}{'remote':>10}{'remote/local':>14}")
    for label, field, q in (("key -> cursor moved, median (ms)", "key_s", 0.5),
                            ("key -> cursor moved, p90 (ms)", "key_s", 0.9),
                            ("key -> details shown, median (ms)", "details_s", 0.5),
                            ("key -> details shown, p90 (ms)", "details_s", 0.9)):
        a, b = _ms(local[field], q), _ms(remote[field], q)
        print(f"{label:34}{a:10.1f}{b:10.1f}{b / a if a else float('nan'):14.2f}")
    a, b = 1000 * local["first_rows_s"], 1000 * remote["first_rows_s"]
    print(f"{'start -> first rows (ms)':34}{a:10.0f}{b:10.0f}{b / a if a else float('nan'):14.2f}")
    first = [d for d, k in zip(remote["details_s"], range(moves), strict=False) if k < JOBS - 1]
    if first:
        print(f"remote details that crossed the link (first selection of a row): "
              f"{', '.join(f'{1000 * d:.0f}' for d in first)} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--delay-ms", type=float, default=50.0, help="added delay each way (50: a 100 ms round trip)")
    ap.add_argument("--link", choices=("auto", "netem", "userspace"), default="auto")
    ap.add_argument("--subnet", default="10.254.46")
    ap.add_argument("--child", choices=("local", "remote"), help=argparse.SUPPRESS)
    ap.add_argument("--config", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    reason = netem_why_not()
    if reason is not None:
        say(f"{reason}: nothing measured")
        return 0
    env = dev_cluster_env()
    if not cluster_is_up(env):
        say("the 22.05 dev cluster is not up (scripts/dev-cluster up): nothing measured")
        return 0
    squeue = shutil.which("squeue", path=env.get("PATH"))
    if squeue is None:
        say("no squeue on the dev cluster's PATH: nothing measured")
        return 0
    jobs: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="ntui-keys-"))
    try:
        for i in range(JOBS):
            jobs.append(sh(["sbatch", "--parsable", "--hold", "-J", f"ntui-keys-{i}", "-o", "/dev/null", "-D",
                            "/tmp", "--wrap", "true"], env=env).stdout.strip().split(";")[0])
        say(f"held jobs {', '.join(jobs)}")
        common = {"HOME": str(work), "XDG_CONFIG_HOME": str(work / "config"), "XDG_STATE_HOME": str(work / "state"),
                  "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
        local = _run_child("local", args.moves, {"jobs": jobs}, {**env, **common})
        say("local done")
        with delayed_link(args.link, args.subnet, args.delay_ms) as link, \
                cluster_sshd(link, env["SLURM_CONF"]) as server:
            runtime = server.directory / "rt"
            runtime.mkdir(mode=0o700)
            laptop_bin = work / "laptop-bin"
            laptop_bin.mkdir()
            (laptop_bin / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
            laptop = {**common, "PATH": str(laptop_bin), "XDG_RUNTIME_DIR": str(runtime)}
            rtt = tcp_rtt(link, server.port)
            cfg = {"jobs": jobs, "bin_dir": os.path.dirname(squeue), "ssh_config": str(server.ssh_config)}
            remote = _run_child("remote", args.moves, cfg, laptop, preexec=link.enter)
            kind = link.kind
        report(local, remote, rtt, kind, args.moves)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        say(f"failed: {exc}")
        return 1
    finally:
        for job in jobs:
            sh(["scancel", job], check=False, env=env)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
