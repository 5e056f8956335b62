"""Sweep scale: the jobs view on a held 1,000-task sweep, on the dev cluster.

    scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"
    python bench/sweep_scale.py [--tasks 1000] [--reps 7]

The sweep is ``presets/local-sweep.yaml`` with a 2 x (tasks / 2) grid, submitted by ntui with ``--hold`` (nothing
runs: one squeue line per task, as ``squeue --array --me`` lists an own array) and cancelled at the end, whatever
happens. In one run, one app (ratios within the run):

* **Slurm calls per refresh**: squeue calls counted by the runner over the refreshes (target: exactly 1 each, no
  other call for the folded row: the counts come from the squeue answer);
* **refresh**: bare ``squeue`` (ntui's exact argv) against ntui's refresh with the array folded into one row, and
  with the array opened into its 1,000 task rows, interleaved rep by rep, medians and ratios (queue_scale's budget:
  ntui's refresh <= 3x the bare squeue); the fold's own share (:func:`ntui.core.jobs.arrays.fold`);
* **memory**: the table's rows and the Python heap allocated by a refresh (tracemalloc peak, in refreshes of their
  own: tracemalloc slows Python down), folded vs open.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.queue_scale import bare_squeue, wait_refresh  # noqa: E402
from ntui.core.config import QueueSettings, Settings  # noqa: E402
from ntui.core.jobs.queue import QueueFetcher  # noqa: E402
from ntui.core.slurm.runner import CommandResult, SubprocessRunner  # noqa: E402
from ntui.ui.screens.jobs import JobsScreen  # noqa: E402
from tests.support.screenshots_jobs import jobs_app, settle_jobs  # noqa: E402

QUIET = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))  # refreshes only when asked
REPO = Path(__file__).resolve().parents[1]


class CountingRunner(SubprocessRunner):
    """Counts the Slurm commands the view runs (by program name)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_program: dict[str, int] = {}

    def run(self, argv: Any, **kw: Any) -> CommandResult:
        name = os.path.basename(str(list(argv)[0]))
        self.by_program[name] = self.by_program.get(name, 0) + 1
        return super().run(argv, **kw)


def submit_sweep(tasks: int, log_dir: str, state: str) -> str:
    seeds = ", ".join(f'"{i}"' for i in range(tasks // 2))
    env = dict(os.environ, XDG_STATE_HOME=state)
    res = subprocess.run(
        [sys.executable, "-m", "ntui", "submit", "local-sweep", "--hold", "--set", f"logs.dir={log_dir}",
         "--set", f"sweep.grid.seed=[{seeds}]", "--set", "sbatch.job-name=ntui-sweep-scale"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    if res.returncode != 0:
        raise SystemExit(f"ntui submit failed: {res.stderr.strip()}")
    return res.stdout.strip().splitlines()[-1]


async def measure(reps: int, array_id: str) -> dict[str, Any]:
    runner = CountingRunner()
    app = jobs_app(runner=runner, settings=QUIET, user=None, clock=None)
    out: dict[str, Any] = {k: [] for k in ("bare", "folded", "open", "fold", "open_fold", "heap_folded",
                                           "heap_open", "warm_folded", "warm_open")}
    async with app.run_test(size=(160, 50)) as pilot:
        await settle_jobs(pilot, timeout=120)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        table = screen.table
        box = screen.queue_box
        runner.by_program.clear()
        refreshes = 0

        async def one_refresh(cold: bool = False) -> float:
            nonlocal refreshes
            if cold:  # every line new: nothing reused from the last answer
                screen.model.fetcher = QueueFetcher()
            before = screen.refresh_count
            screen.refresh_now()
            await wait_refresh(pilot, screen, before)
            refreshes += 1
            st = screen.last_refresh
            assert st is not None
            return st.total_s

        def fold_time() -> float:
            t0 = time.perf_counter()
            box.fold()
            return time.perf_counter() - t0

        for _ in range(reps):
            wall, lines = bare_squeue()
            out["bare"].append(wall)
            out["lines"] = lines
            # folded: the array is one row
            box.set_open(array_id, is_open=False)
            out["rows_folded"] = table.total_count
            out["warm_folded"].append(await one_refresh())  # the same answer again: nothing to redo
            out["folded"].append(await one_refresh(cold=True))  # every line new (running tasks' elapsed moved)
            tracemalloc.start()
            await one_refresh(cold=True)
            out["heap_folded"].append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            out["fold"].append(fold_time())
            # open: every task a row under it
            box.set_open(array_id, is_open=True)
            out["rows_open"] = table.total_count
            out["warm_open"].append(await one_refresh())
            out["open"].append(await one_refresh(cold=True))
            tracemalloc.start()
            await one_refresh(cold=True)
            out["heap_open"].append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            out["open_fold"].append(fold_time())
        out["calls"] = dict(runner.by_program)
        out["refreshes"] = refreshes
        out["folded_row"] = table.get_row(array_id) if array_id in table else None
    return out


def ms(x: float) -> str:
    return f"{x * 1000:8.1f} ms"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/sweep_scale.py")
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args(argv)
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit('run: scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"')
    with tempfile.TemporaryDirectory(prefix="ntui-sweep-scale-") as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        job = submit_sweep(args.tasks, str(Path(tmp) / "logs"), os.environ["XDG_STATE_HOME"])
        try:
            got = asyncio.run(measure(args.reps, job))
        finally:
            subprocess.run(["scancel", job], capture_output=True, timeout=60)
    med = {k: statistics.median(v) for k, v in got.items() if isinstance(v, list) and v}
    print(f"sweep {job}: {args.tasks} tasks held; squeue lists {got['lines']} lines")
    print(f"folded row: {got['folded_row']}")
    per = {k: v / got["refreshes"] for k, v in got["calls"].items()}
    print(f"Slurm calls over {got['refreshes']} refreshes: {got['calls']} -> squeue per refresh "
          f"{per.get('squeue', 0):.2f} (the others: the selected task's details, once per state)")
    print(f"rows in the table: folded {got['rows_folded']}, open {got['rows_open']}")
    print(f"bare squeue                  {ms(med['bare'])}")
    print(f"ntui refresh, same answer    folded {ms(med['warm_folded'])}  ({med['warm_folded'] / med['bare']:.2f}x), "
          f"open {ms(med['warm_open'])}  ({med['warm_open'] / med['bare']:.2f}x bare squeue)")
    print(f"ntui refresh, every line new folded {ms(med['folded'])}  ({med['folded'] / med['bare']:.2f}x), "
          f"open {ms(med['open'])}  ({med['open'] / med['bare']:.2f}x bare squeue)")
    print(f"fold() alone, folded / open  {ms(med['fold'])} / {ms(med['open_fold'])}")
    print(f"heap peak of a refresh       folded {med['heap_folded'] / 1e6:.2f} MB, open {med['heap_open'] / 1e6:.2f} MB"
          f" ({med['heap_open'] / max(1, med['heap_folded']):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
