"""Benchmark: file-system metadata operations of the job log watcher for 8 / 128 / 1,024 ranks.

    python bench/logs_watch_ops.py [--ranks 8,128,1024] [--seconds 300] [--dir /tmp] [--strace]

On Lustre every ``open`` and ``stat`` is an RPC to the metadata server, so the watcher's politeness is counted
in opens + stats per second (the tailer counts them: ``FileTail.opens`` / ``.stats``, plus the rank-header
reads). For each rank count it writes a job's logs the way ntui lays them out (batch log + one file per rank,
``ntui: rank N on NODE`` first), then drives :class:`~ntui.core.logs.watch.JobLogWatcher` exactly as the log
pane does (one poll per 0.5 s tick, rank 0 shown), with the real file IO but a simulated clock, so 300 s of
watching take a few seconds. Rank 0 appends a line every tick (the followed rank), the other ranks are quiet.

Measured per configuration, in steady state (the last two thirds of the run):

* **ops/s** pane open (rank 0 shown) and pane hidden, for the polite watcher (the pane's: shown rank and batch
  log every tick, other ranks backing off 2 s -> 30 s, descriptors held within :class:`FdBudget`) and for the
  previous policy (every file every 4th tick, open + fstat + close each time);
* **failure named**: a rank raises at a known time (the worst one: its next back-off poll is the furthest
  away); seconds until the watcher's triage names it,
  (a) with srun's ``task N: Exited`` line in the batch log, as Slurm writes it, (b) with only the rank's own
  file changing (the worst case: its back-off runs out first).

Targets (issue 16): <= 50 ops/s with the pane open for 1,024 ranks, <= 2/s hidden, a failure named within 10 s.
``--strace`` cross-checks the counters once with
``strace -c -f -e trace=openat,newfstatat,fstat,statx,read,pread64`` (real time, 20 s, 1,024 ranks, pane open).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ntui.core.jobfiles.lognames import LogPaths, rank_header  # noqa: E402
from ntui.core.logs.fdbudget import FdBudget  # noqa: E402
from ntui.core.logs.schedule import FixedScheduler, PoliteScheduler, PollScheduler  # noqa: E402
from ntui.core.logs.watch import JobLogWatcher, watch_files  # noqa: E402

JOB = "777"
TICK = 0.5
TRACEBACK = ["Traceback (most recent call last):", '  File "/opt/train.py", line 9, in <module>',
             '    raise RuntimeError("bench failure")', "RuntimeError: bench failure"]


def make_job(root: Path, ranks: int) -> LogPaths:
    paths = LogPaths(str(root), "bench")
    Path(paths.batch(JOB)).write_text(f"ntui: job {JOB}, {ranks} ranks\n")
    for r in range(ranks):
        node = f"nid{r // 4 + 1:06d}"
        body = "".join(f"rank {r} init {i}\n" for i in range(20))
        Path(paths.rank(JOB, r)).write_text(rank_header(r, node) + "\n" + body)
    return paths


def append(path: str, *lines: str) -> None:
    with open(path, "a") as fh:
        fh.write("".join(x + "\n" for x in lines))


class SimClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def watcher_for(paths: LogPaths, ranks: int, policy: str, clock: SimClock, job: str = JOB) -> JobLogWatcher:
    files, _ = watch_files(paths, job, ranks)
    sched: PollScheduler
    budget = None
    if policy == "polite":
        sched = PoliteScheduler(TICK, 4 * TICK, 30.0)
        budget = FdBudget()
    else:
        sched = FixedScheduler(TICK, 4)
    return JobLogWatcher(job, files, paths=paths, launcher="srun", scheduler=sched, budget=budget,
                         clock=clock, monotonic=clock)


def run(paths: LogPaths, ranks: int, policy: str, hidden: bool, seconds: float, job: str = JOB) -> dict[str, Any]:
    clock = SimClock()
    w = watcher_for(paths, ranks, policy, clock, job)
    w.set_hidden(hidden)
    ticks = int(seconds / TICK)
    warm = ticks // 3
    start_ops = (0, 0)
    start_reads = 0
    cpu0 = time.process_time()
    for i in range(ticks):
        if i == warm:
            start_ops = w.ops()
            start_reads = w.reads()
            cpu0 = time.process_time()
        append(paths.rank(job, 0), f"rank 0 step {i}")
        w.poll(() if hidden else (0,))
        clock.t += TICK
    opens, stats = w.ops()
    span = (ticks - warm) * TICK
    cpu = time.process_time() - cpu0
    held = w.tails.budget.held if w.tails.budget else 0
    w.close()
    return {"opens_s": (opens - start_ops[0]) / span, "stats_s": (stats - start_ops[1]) / span,
            "ops_s": (opens + stats - sum(start_ops)) / span, "reads_s": (w.reads() - start_reads) / span,
            "cpu_ms_per_tick": 1000 * cpu / (ticks - warm),
            "held_fds": held}


def time_to_name(paths: LogPaths, ranks: int, policy: str, hidden: bool, with_srun_line: bool,
                 job: str = JOB) -> float:
    clock = SimClock()
    w = watcher_for(paths, ranks, policy, clock, job)
    w.set_hidden(hidden)
    for _ in range(200):  # 100 s of quiet watching: every quiet file is backed off to the maximum
        w.poll(() if hidden else (0,))
        clock.t += TICK
    look = getattr(w.scheduler, "next_look", None)  # when a rank's new bytes are next read (polite policy)
    keys = w.keys()
    nexts: dict[object, float] = {k: t for k in keys if look is not None and (t := look(k)) is not None}
    # the worst case: the rank whose next read is furthest away (the last rank for the old policy)
    candidates = [k for k in nexts if isinstance(k, int) and k != 0]
    bad = int(max(candidates, key=lambda k: nexts[k])) if candidates else ranks - 1
    append(paths.rank(job, bad), *TRACEBACK)
    if with_srun_line:
        append(paths.batch(job), f"srun: error: nid{bad // 4 + 1:06d}: task {bad}: Exited with exit code 1")
    t0 = clock.t
    while clock.t - t0 < 120:
        w.poll(() if hidden else (0,))
        tri = w.triage_line()
        if tri.failed and tri.rank == bad:
            break
        clock.t += TICK
    w.close()
    return clock.t - t0


def _strace_calls(text: str) -> dict[str, int]:
    calls: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3])
    return calls


def strace_check(root: Path) -> dict[str, Any]:
    """Real time: count openat/stat calls of a 20 s pane-open run for 1,024 ranks, against the counters; the
    same child with a 0 s run gives Python's own calls (imports), subtracted."""
    runs = {}
    for seconds in (20, 0):
        runs[seconds] = _strace_child(root, seconds)
    (ops20, calls20), (ops0, calls0) = runs[20], runs[0]
    net = {k: v - calls0.get(k, 0) for k, v in calls20.items()}
    return {"counters": {"opens": ops20[0] - ops0[0], "stats": ops20[1] - ops0[1], "preads": ops20[2] - ops0[2]},
            "strace_net": net}


def _strace_child(root: Path, seconds: int) -> tuple[list[int], dict[str, int]]:
    child = (f"import sys,time,json; sys.path.insert(0, {str(REPO)!r}); sys.argv=['x']\n"
             "from bench.logs_watch_ops import *\n"
             "from pathlib import Path\n"
             f"paths = LogPaths({str(root)!r}, 'bench'); w = watcher_for(paths, 1024, 'polite', SimClock())\n"
             "w.monotonic = time.monotonic; w.clock = time.time\n"
             f"end = time.monotonic() + {seconds}\n"
             "while time.monotonic() < end:\n"
             "    append(paths.rank(JOB, 0), 'x'); w.poll((0,)); time.sleep(0.5)\n"
             "print(json.dumps([*w.ops(), w.reads()]))\n")
    res = subprocess.run(["strace", "-c", "-f", "-e", "trace=openat,newfstatat,fstat,statx,stat,read,pread64",
                          sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    counted = json.loads(res.stdout.strip().splitlines()[-1])
    return list(counted), _strace_calls(res.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="8,128,1024")
    ap.add_argument("--seconds", type=float, default=300.0, help="simulated watching time per configuration")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--strace", action="store_true")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ntui-ops-", dir=args.dir))
    results: dict[str, Any] = {}
    try:
        for n in [int(x) for x in args.ranks.split(",")]:
            row: dict[str, Any] = {}
            for policy in ("polite", "every-4th-tick"):
                for hidden in (False, True):
                    d = root / f"{n}-{policy}-{hidden}"
                    d.mkdir()
                    row[f"{policy} {'hidden' if hidden else 'open'}"] = run(make_job(d, n), n, policy, hidden,
                                                                          args.seconds)
            for srun_line in (True, False):
                d = root / f"{n}-fail-{srun_line}"
                d.mkdir()
                row[f"failure named, {'srun line' if srun_line else 'rank file only'} (s)"] = time_to_name(
                    make_job(d, n), n, "polite", False, srun_line)
            results[str(n)] = row
            print(f"\n== {n} ranks")
            for k, v in row.items():
                if isinstance(v, dict):
                    print(f"  {k:24} {v['ops_s']:8.1f} ops/s (opens {v['opens_s']:.1f}/s, stats {v['stats_s']:.1f}/s)"
                          f"  cpu {v['cpu_ms_per_tick']:.2f} ms/tick  held fds {v['held_fds']}")
                else:
                    print(f"  {k:40} {v:.1f}")
        if args.strace:
            d = root / "strace"
            d.mkdir()
            make_job(d, 1024)
            results["strace"] = strace_check(d)
            print("\n== strace cross-check (1,024 ranks, pane open, 20 s real time)")
            print("  counters:", results["strace"]["counters"])
            print("  strace (minus a 0 s run):", results["strace"]["strace_net"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
