"""Benchmark: a big job (tests/support/bigjob.py) at 8, 128 and 1,024 ranks, and how each figure grows.

    python bench/bigjob.py [--ranks 8,128,1024] [--seconds 300] [--strace] [--json OUT]

Per rank count (4 ranks and 4 GPUs per node):

* **ops/s** open / hidden: file-system metadata operations (open + stat, counted by the tailer, plus the
  rank-header reads) per second of the log watcher as the pane drives it (0.5 s ticks, rank 0 shown and
  appending, the other ranks quiet), simulated clock over ``--seconds``, real file IO, steady state;
* **reads/s** open / hidden: ``pread`` calls per second of the same runs (the polls through held
  descriptors: no metadata operation, on Lustre an object-server matter at most, but not free), and the
  descriptors held;
* **failure named**: seconds (simulated) from a rank's traceback to the triage naming it, (a) with srun's
  ``task N: Exited`` line in the batch log, (b) only the rank's own file: the rank whose next read is the
  furthest away when it fails (bench/logs_watch_ops.py's measure), and the fixture's failing rank (517 at
  1,024 ranks) failing just after a poll read its file (the longest wait for the next read, whatever the
  phase);
* **triage**: real seconds for a fresh watcher to read every file once and name the failing rank (what
  ``ntui logs --triage`` and the pane's first poll do);
* **tail visible** / **pane triage** / **RSS**: the real log pane (Textual, headless, 120x36) opening the job:
  seconds to the shown rank's lines, to every row read and the failure named, and the RSS growth (VmRSS);
* **table**: milliseconds to compute the grouped rank table (:func:`ntui.core.logs.ranktable.table_lines`);
* **heatmap**: milliseconds to lay out and draw the GPU heatmap (:func:`ntui.ui.widgets.gpu_render.render_heatmap`)
  for the job's GPUs, and the outliers it names;
* **sample files**: metadata ops/s of :class:`ntui.core.gpu.sampletail.SampleTail` over the nodes' GPU sample files
  (10 s interval), simulated clock.

Targets (issue 16, for 1,024 ranks): <= 50 ops/s open, <= 2 hidden, a failure named within 10 s, triage over
1,024 files <= 2 s. ``--strace`` cross-checks the counters once (bench/logs_watch_ops.py's check: 20 s real time,
1,024 ranks, ``strace -c -f -e trace=openat,newfstatat,fstat,statx,read,pread64``; Python's ``os.fstat`` shows
as ``newfstatat``, ``os.pread`` as ``pread64``). Ratios within one run, not absolute times,
are what to compare between machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.logs_tail import proc_status  # noqa: E402
from bench.logs_watch_ops import TICK, SimClock, make_job, run, strace_check, time_to_name, watcher_for  # noqa: E402
from ntui.core.gpu.heatmap import heatmap  # noqa: E402
from ntui.core.gpu.sampletail import SampleTail  # noqa: E402
from ntui.core.gpu.smi import GpuBoard  # noqa: E402
from ntui.core.logs.fdbudget import FdBudget  # noqa: E402
from ntui.core.logs.ranktable import table_lines  # noqa: E402
from ntui.core.logs.watch import JobLogWatcher, watch_files  # noqa: E402
from tests.support.bigjob import BigJob, make_bigjob  # noqa: E402

PER_NODE = 4


def _job(root: Path, ranks: int, **kw: Any) -> BigJob:
    nodes = max(1, ranks // PER_NODE)
    kw.setdefault("fail_rank", min(517, ranks - 3))
    return make_bigjob(root, nodes=nodes, per_node=PER_NODE, **kw)


def named_after_read(job: BigJob, rank: int, *, srun_line: bool) -> float:
    """Seconds (simulated) from ``rank``'s traceback to the triage naming it, the traceback written just after
    a poll read the rank's file (after 100 s of quiet watching: every back-off at its cap)."""
    clock = SimClock()
    w = watcher_for(job.paths, job.ranks, "polite", clock, job.job_id)
    try:
        for _ in range(200):
            w.poll((0,))
            clock.t += TICK
        for _ in range(400):  # until a poll reads the rank's file
            clock.t += TICK
            if rank in w.poll((0,)):
                break
        job.inject_failure(rank, srun_line=srun_line)
        t0 = clock.t
        while clock.t - t0 < 120:
            clock.t += TICK
            w.poll((0,))
            tri = w.triage_line()
            if tri.failed and tri.rank == rank:
                break
        return clock.t - t0
    finally:
        w.close()


def triage_time(job: BigJob) -> dict[str, Any]:
    files, _ = watch_files(job.paths, job.job_id, job.ranks)
    t0 = time.perf_counter()
    w = JobLogWatcher(job.job_id, files, paths=job.paths, launcher="srun", clock=lambda: job.now)
    w.poll_all()
    tri = w.triage_line()
    took = time.perf_counter() - t0
    rows = w.rows(job_active=True)
    t1 = time.perf_counter()
    for _ in range(10):
        lines = table_lines(rows, now=job.now)
    table_ms = (time.perf_counter() - t1) / 10 * 1000
    return {"triage_s": took, "named": tri.rank, "table_ms": table_ms, "table_lines": len(lines)}


def heatmap_time(job: BigJob) -> dict[str, Any]:
    from ntui.ui.widgets.gpu_render import render_heatmap

    board = GpuBoard(job.nodes, interval_s=10)
    for s in range(3):
        board.feed_many(job.watch_lines(s), now=100.0 + 10 * s)
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        content = render_heatmap(board, 118)
    render_ms = (time.perf_counter() - t0) / reps * 1000
    heat = heatmap(board.latest(), 118)
    return {"heatmap_ms": render_ms, "heat_lines": len(heat.lines), "outliers": list(heat.outliers),
            "cells": len(str(content))}


def sample_ops(job: BigJob, seconds: float = 120.0, max_per_s: float | None = None) -> float:
    tail = SampleTail(job.sample_files, job.interval, tick_s=0.5, budget=FdBudget(), max_per_s=max_per_s)
    t = 0.0
    warm = seconds / 3
    start = (0, 0)
    while t < seconds:
        if abs(t - warm) < 1e-9:
            start = tail.ops()
        tail.poll(t)
        t += 0.5
    opens, stats = tail.ops()
    tail.close()
    return (opens + stats - sum(start)) / (seconds - warm)


async def _pane(job: BigJob) -> dict[str, Any]:
    from tests.support.screenshots_logs import LogPaneHost

    before = proc_status()
    app = LogPaneHost(now=job.now)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.pane
        await pilot.pause()
        t0 = time.perf_counter()
        pane.show_job(job.job_id, paths=job.paths, world_size=job.ranks, job_active=True)
        visible = rows = None
        while time.perf_counter() - t0 < 120:
            if visible is None and len(pane.log_lines) > 0:
                visible = time.perf_counter() - t0
            if pane.triage_line.failed and len(pane.rows) == job.ranks + 1 and all(
                    r.exists for r in pane.rows.values()):
                rows = time.perf_counter() - t0
                break
            await pilot.pause(0.005)
        await pilot.pause(0.5)
        after = proc_status()
    return {"tail_visible_s": visible, "pane_triage_s": rows, "rss_growth": after["VmRSS"] - before["VmRSS"]}


def measure(root: Path, ranks: int, seconds: float, steps: int = 12) -> dict[str, Any]:
    out: dict[str, Any] = {}
    quiet = _job(root / "quiet", ranks, fail_rank=None, silent_rank=None, samples=False)
    for hidden in (False, True):
        r = run(quiet.paths, ranks, "polite", hidden, seconds, job=quiet.job_id)
        side = "hidden" if hidden else "open"
        out[f"{side}_ops_s"], out[f"{side}_reads_s"], out[f"{side}_held"] = r["ops_s"], r["reads_s"], r["held_fds"]
    fail_rank = min(517, ranks - 3)
    out["fail_rank"] = fail_rank
    for srun_line in (True, False):
        d = root / f"fail-{srun_line}"
        job = _job(d, ranks, fail_rank=None, silent_rank=None, samples=False)
        key = "named_srun_s" if srun_line else "named_rank_file_s"
        out[key] = time_to_name(job.paths, ranks, "polite", False, srun_line, job=job.job_id)
        job = _job(root / f"after-read-{srun_line}", ranks, fail_rank=None, silent_rank=None, samples=False)
        out[key + "_after_read"] = named_after_read(job, fail_rank, srun_line=srun_line)
    big = _job(root / "big", ranks, steps=steps)
    out["rank_file_bytes"] = big.rank_path(0).stat().st_size
    out.update(triage_time(big))
    out.update(heatmap_time(big))
    out["sample_ops_s"] = sample_ops(big)
    out["sample_capped_ops_s"] = sample_ops(big, max_per_s=10.0)
    out.update(asyncio.run(_pane(big)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="8,128,1024")
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--steps", type=int, default=12,
                    help="training-step lines per rank log (12: ~0.6 KB files; 2000: ~90 KB) for triage and the pane")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ntui-bigjob-", dir=args.dir))
    results: dict[str, Any] = {}
    try:
        for n in [int(x) for x in args.ranks.split(",")]:
            d = root / str(n)
            d.mkdir()
            results[str(n)] = measure(d, n, args.seconds, args.steps)
        if args.strace:
            d = root / "strace"
            d.mkdir()
            make_job(d, 1024)
            results["strace"] = strace_check(d)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    cols = list(results)
    rows = [
        ("metadata ops/s, pane open (<= 50)", "open_ops_s", "{:.1f}"),
        ("metadata ops/s, pane hidden (<= 2)", "hidden_ops_s", "{:.1f}"),
        ("reads/s (pread), pane open", "open_reads_s", "{:.1f}"),
        ("reads/s (pread), pane hidden", "hidden_reads_s", "{:.1f}"),
        ("descriptors held", "open_held", "{}"),
        ("failure named, srun line (s, <= 10)", "named_srun_s", "{:.1f}"),
        ("  the same, just after a read (s)", "named_srun_s_after_read", "{:.1f}"),
        ("failure named, rank file only (s, <= 10)", "named_rank_file_s", "{:.1f}"),
        ("  the same, just after a read (s)", "named_rank_file_s_after_read", "{:.1f}"),
        ("rank log size (bytes)", "rank_file_bytes", "{}"),
        ("triage, every file once (s, <= 2)", "triage_s", "{:.3f}"),
        ("pane: tail visible (s)", "tail_visible_s", "{:.3f}"),
        ("pane: every row + failure named (s)", "pane_triage_s", "{:.3f}"),
        ("pane: RSS growth (MB)", "rss_growth", "{:.1f}"),
        ("rank table lines", "table_lines", "{}"),
        ("rank table compute (ms)", "table_ms", "{:.2f}"),
        ("heatmap render (ms)", "heatmap_ms", "{:.2f}"),
        ("GPU sample files ops/s (10 s interval)", "sample_ops_s", "{:.1f}"),
        ("  the same, capped at 10 reads/s", "sample_capped_ops_s", "{:.1f}"),
    ]
    ranks = [c for c in cols if c != "strace"]
    print(f"{'':42}" + "".join(f"{c + ' ranks':>14}" for c in ranks))
    for label, key, fmt in rows:
        cells = []
        for c in ranks:
            v = results[c].get(key)
            if key == "rss_growth" and v is not None:
                v = v / 1e6
            cells.append("-" if v is None else fmt.format(v))
        print(f"{label:42}" + "".join(f"{x:>14}" for x in cells))
    for c in ranks:
        print(f"  {c} ranks: triage named rank {results[c]['named']}; failing just after a read: rank "
              f"{results[c]['fail_rank']}; outliers: {results[c]['outliers']}")
    if len(ranks) >= 2:
        a, b = results[ranks[0]], results[ranks[-1]]
        print(f"growth {ranks[0]} -> {ranks[-1]} ranks (x{int(ranks[-1]) // int(ranks[0])}): "
              f"ops open x{b['open_ops_s'] / max(0.01, a['open_ops_s']):.1f}, "
              f"reads open x{b['open_reads_s'] / max(0.01, a['open_reads_s']):.1f}, "
              f"triage x{b['triage_s'] / a['triage_s']:.1f}, "
              f"heatmap x{b['heatmap_ms'] / a['heatmap_ms']:.1f}, RSS x{b['rss_growth'] / max(1, a['rss_growth']):.1f}")
    if "strace" in results:
        print("strace cross-check (1,024 ranks, pane open, 20 s real time):", results["strace"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
