"""``ntui gpus JOBID [--once]``: per-node GPU usage of a running job, as a table (rich).

One ``scontrol show job -d`` to plan, then one overlapping ``srun`` step streaming
``nvidia-smi -l``: no RPC per refresh. The step is stopped on exit (Ctrl-C included). Over ``--cluster`` the step
runs on the cluster's login node, its output streamed over one channel of the ssh master; it ends there too when
this side stops reading (:meth:`~ntui.core.slurm.ssh.SshRunner.stream_argv`).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import Any

from ntui.cli.common import remote_cluster
from ntui.cli.ctrlc import CtrlC
from ntui.cli.slurm import cli_runner, cli_settings
from ntui.core.gpu.smi import GpuBoard, sparkline
from ntui.core.gpu.stream import GpuStream, NotWatchable, plan_gpu_watch
from ntui.core.slurm.runner import SlurmError


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id")
    p.add_argument("--once", action="store_true", help="print one sample of every GPU and exit")
    p.add_argument("--interval", type=int, default=None,
                   help="seconds between samples (nvidia-smi -l; default: the settings' gpu.interval, 2)")
    p.add_argument("--timeout", type=float, default=60.0, help="--once: give up after this many seconds")
    p.set_defaults(func=cmd_gpus)


def board_table(board: GpuBoard, job_id: str) -> Any:
    from rich.table import Table

    s = board.summary()
    util = f"{s.util_gpu_mean:.0f}%" if s.util_gpu_mean is not None else "?"
    mem = (f"{(s.mem_used_mib or 0) / 1024:.1f}/{(s.mem_total_mib or 0) / 1024:.1f} GiB"
           if s.mem_total_mib else "?")
    title = f"job {job_id}: {s.gpus} GPUs on {s.nodes} node(s), mean util {util}, memory {mem}"
    if s.simulated:
        title += "  [SIMULATED nvidia-smi]"
    table = Table(title=title, title_justify="left")
    for col in ("node", "gpu", "util", "mem", "temp", "power", "history"):
        table.add_column(col, justify="right" if col not in ("node", "history") else "left")
    for node, gpus in sorted(board.latest().items()):
        for idx, g in sorted(gpus.items()):
            table.add_row(
                node, str(idx),
                f"{g.util_gpu:.0f}%" if g.util_gpu is not None else "n/a",
                f"{g.mem_used_mib:.0f}/{g.mem_total_mib:.0f} MiB" if g.mem_used_mib is not None
                and g.mem_total_mib is not None else "n/a",
                f"{g.temp_c:.0f}C" if g.temp_c is not None else "n/a",
                f"{g.power_w:.0f}W" if g.power_w is not None else "n/a",
                sparkline(board.util_history(node, idx)[-30:]),
            )
    for issue in board.issues():
        table.caption = (table.caption + "\n" if table.caption else "") + issue.message
    return table


def cmd_gpus(args: argparse.Namespace) -> int:
    settings = cli_settings()
    runner = cli_runner(settings)
    if args.interval is None:
        args.interval = settings.gpu.interval
    try:
        plan = plan_gpu_watch(runner, args.job_id, interval_s=args.interval)
    except (SlurmError, NotWatchable) as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return 3
    if remote_cluster() is not None:  # the step runs on the cluster's login node; its output streams over ssh
        from dataclasses import replace

        from ntui.core.remote.files import ssh_runner_of

        ssh = ssh_runner_of(runner)
        assert ssh is not None  # --cluster: the runner is ssh's
        try:
            plan = replace(plan, argv=tuple(ssh.stream_argv(plan.argv)), env=dict(os.environ))
        except SlurmError as exc:
            print(f"ntui: {exc}", file=sys.stderr)
            return 3
    board = GpuBoard(plan.task_nodes, expected=plan.expected, interval_s=args.interval)
    lock = threading.Lock()
    done = threading.Event()
    ended: list[tuple[int, str]] = []
    want = sum(len(v) for v in plan.expected.values()) or len(plan.nodes)

    def on_line(line: str) -> None:
        with lock:
            board.feed(line)
            if args.once and sum(len(g) for g in board.latest().values()) >= want:
                done.set()

    def on_exit(rc: int, err: str) -> None:
        ended.append((rc, err))
        done.set()

    stream = GpuStream(plan.argv, env=plan.env, on_line=on_line, on_exit=on_exit)
    try:
        stream.start()
    except FileNotFoundError:
        print("ntui: srun not found; cannot start the GPU watch step", file=sys.stderr)
        return 3
    from rich.console import Console
    from rich.live import Live

    console = Console()
    try:
        with CtrlC() as ctrl_c:
            if args.once:
                ctrl_c.wait(done, args.timeout)
            else:
                with Live(console=console, auto_refresh=False) as live:
                    while not done.is_set() and not ctrl_c.pressed:
                        with lock:
                            live.update(board_table(board, plan.job_id), refresh=True)
                        ctrl_c.wait(done, 1.0)
    finally:
        stream.stop()
    with lock:
        if board.latest():
            console.print(board_table(board, plan.job_id))
    if ended and not board.latest():
        rc, err = ended[0]
        alloc = ", ".join(f"{n}: GPUs {','.join(map(str, i))}" for n, i in plan.expected.items()) or "none"
        print(f"ntui: the GPU watch step ended (exit {rc}): {err.strip() or 'no output'}\n"
              f"allocation: {alloc}", file=sys.stderr)
        return 3
    return 0 if board.latest() else 3
