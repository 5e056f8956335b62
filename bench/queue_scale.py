"""Queue scale: the jobs view on a held 10,000-task array (one row), then on 10,000 distinct held jobs (the
all-users view of a large site: every job a row), on the dev cluster.

    scripts/dev-cluster down; NTUI_DEV_CLUSTER_JOB_RANGE=25000 scripts/dev-cluster up
    eval "$(scripts/dev-cluster env)"
    python bench/queue_scale.py [--tasks 10000] [--distinct 10000] [--reps 7] [--presses 20]

For each of the two queues, in one run, one app:

* **refresh**: bare ``squeue`` (the exact argv ntui runs: ``--local --noheader --array --me -O <18 fields>``,
  ``--array`` = ``-r``: one line per task) against ntui's refresh (the same squeue + parse + format in the worker
  thread + diff and table update on the UI thread), interleaved rep by rep, medians and their ratio (target <= 3x);
* **key latency**: ``down`` pressed at a random moment of a running refresh, time until the table handled it
  (target <= 100 ms);
* **first paint**: a fresh app; from the first squeue answer's arrival to the table's first frame of 10,000 rows
  (target <= 1 s), and the same rows in Textual's ``DataTable`` for comparison.

The array is submitted with ``sbatch --hold`` (nothing runs) and cancelled at the end, whatever happens. The
distinct jobs are submitted the same way, eight ``sbatch`` at a time. The dev cluster keeps 5,000 jobs by default
(``MaxJobCount`` is capped at its job-id range, array tasks count, a larger array is refused): start it for this
benchmark with ``NTUI_DEV_CLUSTER_JOB_RANGE=25000 scripts/dev-cluster up`` (then ``down`` and ``up`` again for the
tests). The distinct jobs' view is the all-users one (``a``), where squeue lists every job on its own line; the
array's is the user's own.

**Before/after** (``--compare OLD_TREE [--after NEW_TREE]``): the refresh of two checkouts on the same queues, each
in a process of its own running its own code (``git worktree add /tmp/ntui-old <commit>``; the venv's packages are
shared, ``PYTHONPATH`` names the tree), one refresh each in turn, the order swapped every rep; medians, their
ratio and the median of the per-rep ratios. No key latency or first paint there: the refresh only.

**Offline** (``--offline [--compare OLD_TREE] [--after NEW_TREE]``; no cluster, nothing submitted): the same
before/after compare, squeue answered at the process edge. The lines are generated once, in the form ``squeue -O``
prints for ntui's argv (every field of ``SQUEUE_FIELDS`` followed by the separator): ``--tasks`` held tasks of one
array for the own view, ``--distinct`` held one-task jobs of 40 users for the all-users view, as the cluster runs
submit them. Each tree's serving process has a directory of stubs first on its ``PATH`` (``squeue`` prints the
file, the other Slurm clients print nothing), no ``SLURM_CONF`` and config/state/cache directories of its own; the
apps run their real ``SubprocessRunner``. Without ``--compare`` this tree is compared with itself (the noise floor).
Every serving process (offline or not) also wraps ``QueueFetcher.parse`` to say what a refresh's parse + format
costs around it: the worker thread's CPU time, the UI thread's CPU time meanwhile, the garbage collector's passes
and their time (``gc.callbacks``), and how many objects the collector tracks once the view settled.

Figures, 2026-12-05, dev cluster 26.05 (2 shared cores, load ~1.5), ``--compare`` f632d5d (before #46's reshape)
against 6ee7977, 9 reps, ms:

=====================================  ===========  ==========  ==========  ==========  =======
queue                                  refresh      before      after       ratio       paired
=====================================  ===========  ==========  ==========  ==========  =======
10,000-task held array (own view)      line cache   34.3        32.5        0.95x       1.00x
                                       every line   166.0       241.3       1.45x       1.46x
10,000 distinct held jobs (all users)  line cache   130.0       133.1       1.02x       1.02x
                                       every line   341.2       493.6       1.45x       1.52x
=====================================  ===========  ==========  ==========  ==========  =======

The steady refresh (squeue's lines mostly unchanged) is no worse; the refresh where every line is new is ~1.5x
slower, all of it in the thread's parse + format (the row of one job: elapsed and limit are read to seconds
twice each and spelled again, ``queue_row`` 3.5x its old cost).

After the fix (a duration cell parsed and spelled once per distinct text), the same compare against cd3e6d0, 7 reps,
ms (medians; paired ratio in brackets): array, every line new 276.6 -> 263.6 (0.95x, 1.07x), line cache 55.4 -> 65.3
(1.18x, 1.26x: 0.1 ms of it ntui's, the rest squeue's own time); distinct jobs, every line new 337.5 -> 364.8 (1.08x,
1.17x; the thread's parse + format 1.31x, the UI's diff + table update 0.45x), line cache 147.4 -> 144.0 (0.98x).

Offline, 2026-12-05 (no cluster; 2 cores shared with other work, load ~2.5), against f632d5d, 21 reps, the refresh
with every line new, ms, medians (paired ratio; the means' ratio). Before the fix (ba35d11): array 139.9 -> 146.7
(1.09x; means 1.13x), distinct 148.2 -> 128.6 (1.02x; means 0.95x); an 11-rep run gave 1.06x and 1.18x (the thread's
parse + format 1.44x). What differed was the garbage collector's time inside the parse: the worker's CPU time less
gc at parity, the UI thread idle meanwhile (~1 ms of CPU: no GIL contention), the gc's full passes over the app's
~150k tracked objects 50-100 ms each, landing in half the refreshes or more (gc's mean 24 -> 29 and 35 -> 27 ms).
After the fix (3cbf7d5: the start-up heap frozen once the first frame shows; d0ea39c: one tracked object a cached
line instead of two): array 216.0 -> 187.2 (0.87x; means 0.82x), distinct 198.6 -> 176.9 (0.85x; means 0.87x);
the tracked objects once settled 118,571 -> 24,166 and 159,560 -> 60,169, gc's mean 48 -> 24 and 48 -> 36 ms; the
line-cache refresh 0.94x and 1.04x. The noise floor (this tree against itself, 11 reps): paired 0.98x and 1.05x,
the parse + format alone 0.85x-1.00x. (In the all-users view, these apps keep 10,000 more objects: with no user
set, the own view's jobs count as departed when the view changes; both trees alike.)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# NTUI_BENCH_TREE: the checkout whose ntui (and tests.support) this process measures; --compare starts one process a
# tree, this script's own and the older one's, so that both run their own code path
sys.path.insert(0, os.environ.get("NTUI_BENCH_TREE") or str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402

from ntui.core.config import QueueSettings, Settings  # noqa: E402
from ntui.core.jobs.queue import (  # noqa: E402
    QueueFetcher,
    queue_row,  # noqa: E402
    squeue_argv,
)
from ntui.core.slurm.runner import SubprocessRunner  # noqa: E402
from ntui.core.slurm.squeue import (  # noqa: E402
    SQUEUE_FIELDS,
    SQUEUE_SEPARATOR,
    build_squeue_argv,
    parse_squeue,
)
from ntui.ui.screens.jobs import JobsScreen  # noqa: E402
from ntui.ui.widgets.queue_table import QueueTable
from tests.support.screenshots_jobs import jobs_app, settle_jobs  # noqa: E402

QUIET = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))  # refreshes only when asked


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(list(argv), capture_output=True, text=True, errors="replace", timeout=120)
    if check and res.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {res.stderr.strip()}")
    return res


def submit_array(tasks: int) -> str:
    res = sh("sbatch", "--parsable", "--hold", f"--array=0-{tasks - 1}", "-J", "ntui-scale", "-o", "/dev/null",
             "-t", "1", "--wrap", "true")
    return res.stdout.strip().split(";")[0]


def count_tasks(array_id: str) -> int:
    out = sh("squeue", "--noheader", "--array", "-j", array_id, "-o", "%i").stdout
    return sum(1 for line in out.splitlines() if line.strip())


def submit_distinct(count: int) -> list[str]:
    """``count`` held one-task jobs, eight sbatch at a time; their ids."""
    argv = ["sbatch", "--parsable", "--hold", "-J", "ntui-scale-1", "-o", "/dev/null", "-t", "1", "--wrap", "true"]
    script = " ".join(argv) + " >> \"$0\""
    with tempfile.NamedTemporaryFile("r", prefix="ntui-scale-", suffix=".ids") as ids:
        seq = subprocess.Popen(["seq", str(count)], stdout=subprocess.PIPE)
        subprocess.run(["xargs", "-P", "8", "-I", "{}", "sh", "-c", script, ids.name], stdin=seq.stdout,
                       check=True, timeout=1800)
        seq.wait()
        return [line.split(";")[0] for line in open(ids.name).read().split() if line.strip()]


def bare_squeue(all_users: bool = False) -> tuple[float, int]:
    argv = squeue_argv(all_users=all_users)
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"squeue failed: {res.stderr.decode(errors='replace')}")
    return wall, res.stdout.count(b"\n")


def ms(x: float) -> str:
    return f"{x * 1000:8.1f}"


async def wait_refresh(pilot: Any, screen: JobsScreen, before: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while screen.refresh_count == before or screen.model.polling:
        if time.monotonic() > deadline:
            raise TimeoutError("refresh did not finish")
        await asyncio.sleep(0.01)
    await pilot.pause()


async def refresh_and_latency(reps: int, presses: int, all_users: bool = False) -> dict[str, Any]:
    app = jobs_app(runner=SubprocessRunner(), settings=QUIET, user=None, clock=None)
    out: dict[str, Any] = {"bare": [], "ntui": [], "fetch": [], "format": [], "apply": [], "lat": [], "phase": []}
    async with app.run_test(size=(160, 50)) as pilot:
        await settle_jobs(pilot, timeout=120)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        if all_users:
            before = screen.refresh_count
            screen.action_toggle_all_users()
            await wait_refresh(pilot, screen, before, timeout=120)
            await settle_jobs(pilot, timeout=120)
        out["rows"] = screen.table.total_count
        for key in ("cold", "cold_fetch", "cold_parse", "cold_apply"):
            out[key] = []
        for _ in range(reps):  # interleaved: bare squeue, ntui's refresh, ntui's refresh with every line new
            wall, lines = bare_squeue(all_users)
            out["bare"].append(wall)
            out["lines"] = lines
            before = screen.refresh_count
            screen.refresh_now()
            await wait_refresh(pilot, screen, before)
            st = screen.last_refresh
            assert st is not None
            out["ntui"].append(st.total_s)
            out["fetch"].append(st.squeue_s)
            out["format"].append(st.parse_s)
            out["apply"].append(st.apply_s)
            # worst case: every line differs from the last answer (e.g. 10,000 running tasks whose elapsed
            # time moved): no line cache, every row re-parsed, re-formatted and diffed
            screen.model.fetcher = QueueFetcher()
            before = screen.refresh_count
            screen.refresh_now()
            await wait_refresh(pilot, screen, before)
            st = screen.last_refresh
            assert st is not None
            out["cold"].append(st.total_s)
            out["cold_fetch"].append(st.squeue_s)
            out["cold_parse"].append(st.parse_s)
            out["cold_apply"].append(st.apply_s)
        # key latency while a refresh runs: "down" arrives from the driver, as a terminal's key would
        table = screen.table
        handled: list[float] = []
        original = table.action_cursor_down

        def down() -> None:
            handled.append(time.perf_counter())
            original()

        table.action_cursor_down = down  # type: ignore[method-assign]

        def send_key() -> float:
            key = events.Key("down", None)
            key.set_sender(app)
            assert app._driver is not None
            t = time.perf_counter()
            app._driver.send_message(key)
            return t

        async def handled_after(t_press: float, n: int) -> float:
            while len(handled) == n:
                await asyncio.sleep(0.0005)
            return handled[-1] - t_press

        fetch_span = statistics.median(out["fetch"])
        for _ in range(presses):  # at a random moment of the worker's squeue + parse
            before = screen.refresh_count
            screen.refresh_now()
            await asyncio.sleep(random.uniform(0.0, 0.9 * fetch_span))
            n = len(handled)
            t_press = send_key()
            out["lat"].append(await handled_after(t_press, n))
            await wait_refresh(pilot, screen, before)
            st = screen.last_refresh
            assert st is not None
            if t_press < st.started_at + st.squeue_s + st.parse_s:
                out["phase"].append("worker")
            elif t_press < st.finished_at:
                out["phase"].append("apply")
            else:
                out["phase"].append("after")
        # worst case: the key arrives just as the UI thread starts applying the refresh
        original_apply = screen._apply
        presses_at_apply: list[tuple[float, int]] = []

        def apply_with_key(msg: Any) -> None:
            presses_at_apply.append((send_key(), len(handled)))
            original_apply(msg)

        screen._apply = apply_with_key  # type: ignore[method-assign]
        out["lat_apply"] = []
        for _ in range(max(3, presses // 4)):
            before = screen.refresh_count
            screen.refresh_now()
            await wait_refresh(pilot, screen, before)
            t_press, n = presses_at_apply[-1]
            out["lat_apply"].append(await handled_after(t_press, n))
        screen._apply = original_apply  # type: ignore[method-assign]
    return out


async def first_paint() -> dict[str, float]:
    marks: dict[str, float] = {}
    renders: list[float] = []
    original_render = QueueTable.render_line
    original_apply = QueueTable.apply

    def render_line(self: QueueTable, y: int) -> Any:
        if self.total_count:
            renders.append(time.perf_counter())
        return original_render(self, y)

    def apply(self: QueueTable, rows: Any, tags: Any = None) -> Any:
        if "apply_start" not in marks:
            marks["apply_start"] = time.perf_counter()
        return original_apply(self, rows, tags)

    QueueTable.render_line = render_line  # type: ignore[method-assign]
    QueueTable.apply = apply  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        app = jobs_app(runner=SubprocessRunner(), settings=QUIET, user=None, clock=None)
        async with app.run_test(size=(160, 50)) as pilot:
            while "apply_start" not in marks:
                await asyncio.sleep(0.001)
            await pilot.pause()
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, JobsScreen) and screen.last_refresh is not None
            marks["painted"] = max(renders)
            marks["from_fetched"] = marks["painted"] - marks["apply_start"]
            marks["from_start"] = marks["painted"] - t0
            marks["squeue"] = screen.last_refresh.squeue_s
            marks["rows"] = float(screen.table.total_count)
    finally:
        QueueTable.render_line = original_render  # type: ignore[method-assign]
        QueueTable.apply = original_apply  # type: ignore[method-assign]
    return marks


async def datatable_paint(rows: list[tuple[str, ...]]) -> float:
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

    app = One()
    async with app.run_test(size=(160, 50)) as pilot:
        table = app.query_one(DataTable)
        table.add_columns("ID", "Name", "State", "Elapsed", "Limit", "Nodes", "Nodelist (reason)", "Partition", "QOS")
        await pilot.pause()
        t0 = time.perf_counter()
        table.add_rows(rows)
        await pilot.pause()
        await pilot.pause()
        return time.perf_counter() - t0


def report_refresh(res: dict[str, Any], reps: int) -> None:
    med = statistics.median
    bare, ntui = med(res["bare"]), med(res["ntui"])
    print(f"rows in the table: {res['rows']}   squeue lines: {res['lines']}   reps: {reps}\n")
    cold = med(res["cold"])
    print("per refresh (ms, medians)        bare squeue   ntui refresh   ntui, every line changed")
    print(f"  wall                            {ms(bare)}      {ms(ntui)}       {ms(cold)}")
    print(f"    squeue (thread)                              {ms(med(res['fetch']))}       "
          f"{ms(med(res['cold_fetch']))}")
    print(f"    parse + format new lines (thread)            {ms(med(res['format']))}       "
          f"{ms(med(res['cold_parse']))}")
    print(f"    diff + table update (UI)                     {ms(med(res['apply']))}       "
          f"{ms(med(res['cold_apply']))}")
    print(f"  ratio ntui / bare               {ntui / bare:8.2f}x  (target <= 3x)   {cold / bare:8.2f}x")
    lat = sorted(res["lat"])
    phases = {p: res["phase"].count(p) for p in ("worker", "apply", "after")}
    print(f"\nkey latency while a refresh runs ({len(lat)} presses; landed in {phases})")
    print(f"  median {ms(med(lat))} ms   p90 {ms(lat[int(0.9 * (len(lat) - 1))])} ms   max {ms(lat[-1])} ms"
          "   (target <= 100 ms)")
    worst = sorted(res["lat_apply"])
    print(f"  key arriving as the UI thread starts the table update ({len(worst)} presses): median "
          f"{ms(med(worst))} ms   max {ms(worst[-1])} ms")


def distinct_jobs(count: int, reps: int, presses: int) -> dict[str, Any]:
    """``count`` distinct held jobs in the all-users view."""
    try:
        t0 = time.monotonic()
        ids = submit_distinct(count)
        print(f"{len(ids)} held jobs submitted in {time.monotonic() - t0:.0f} s")
        deadline = time.monotonic() + 300
        while len(sh("squeue", "--noheader", "-n", "ntui-scale-1", "-o", "%i").stdout.split()) < count:
            if time.monotonic() > deadline:
                raise SystemExit("squeue did not list every job")
            time.sleep(1)
        return asyncio.run(refresh_and_latency(reps, presses, all_users=True))
    finally:
        sh("scancel", "-n", "ntui-scale-1", check=False)
        print("(the distinct jobs cancelled)")


# -- before/after: one process a tree, the same queue, refreshes alternated ---------------------------------------

_MARK = "QS "  # a line of the serving process's answer (anything else on its stdout is passed over)


class Probe:
    """What one refresh's parse + format costs around it, read in the worker thread (both trees' ``QueueFetcher.parse``
    is wrapped the same way): the worker's own CPU time, the UI thread's CPU time meanwhile, and the garbage
    collector's passes (any thread's) and their time."""

    def __init__(self) -> None:
        self.main = threading.main_thread().ident
        self.gc_s = 0.0
        self.gc_runs = [0, 0, 0]
        self.gc_gen_s = [0.0, 0.0, 0.0]
        self._gc_t0 = 0.0
        self.last: dict[str, float] = {}
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_t0 = time.perf_counter()
        else:
            spent = time.perf_counter() - self._gc_t0
            self.gc_s += spent
            self.gc_runs[info["generation"]] += 1
            self.gc_gen_s[info["generation"]] += spent

    def wrap(self, parse: Any) -> Any:
        def probed(fetcher: Any, *args: Any, **kwargs: Any) -> Any:
            assert self.main is not None
            ui_clock = time.pthread_getcpuclockid(self.main)
            gc_s, runs, gen_s = self.gc_s, list(self.gc_runs), list(self.gc_gen_s)
            t0, c0, u0 = time.perf_counter(), time.thread_time(), time.clock_gettime(ui_clock)
            try:
                return parse(fetcher, *args, **kwargs)
            finally:
                wall = time.perf_counter() - t0
                self.last = {"p_wall": wall, "p_cpu": time.thread_time() - c0,
                             "p_ui_cpu": time.clock_gettime(ui_clock) - u0, "p_gc_s": self.gc_s - gc_s,
                             "p_gc2": float(self.gc_runs[2] - runs[2]),
                             "p_gc01": float(self.gc_runs[0] + self.gc_runs[1] - runs[0] - runs[1]),
                             "p_gc2_s": self.gc_gen_s[2] - gen_s[2]}

        return probed


async def serve(all_users: bool) -> None:
    """One app of this process's tree, settled on the queue; then one refresh per line on stdin (``warm``: with the
    line cache, ``cold``: every line new), each answered with its timings (and :class:`Probe`'s) as one JSON line."""
    probe = Probe()
    QueueFetcher.parse = probe.wrap(QueueFetcher.parse)  # type: ignore[method-assign]
    app = jobs_app(runner=SubprocessRunner(), settings=QUIET, user=None, clock=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle_jobs(pilot, timeout=300)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        if all_users:
            before = screen.refresh_count
            screen.action_toggle_all_users()
            await wait_refresh(pilot, screen, before, timeout=300)
            await settle_jobs(pilot, timeout=300)
        print(_MARK + json.dumps({"rows": screen.table.total_count, "objects": len(gc.get_objects())}), flush=True)
        loop = asyncio.get_running_loop()
        while (cmd := (await loop.run_in_executor(None, sys.stdin.readline)).strip()) in ("warm", "cold"):
            if cmd == "cold":
                screen.model.fetcher = QueueFetcher()
            before = screen.refresh_count
            screen.refresh_now()
            await wait_refresh(pilot, screen, before, timeout=300)
            st = screen.last_refresh
            assert st is not None
            print(_MARK + json.dumps({"total": st.total_s, "squeue": st.squeue_s, "parse": st.parse_s,
                                      "apply": st.apply_s, **probe.last}), flush=True)


class Side:
    """A serving process of one tree."""

    def __init__(self, name: str, tree: Path, all_users: bool, env: dict[str, str] | None = None) -> None:
        self.name = name
        env = {**(env or os.environ), "NTUI_BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve",
                                      "all" if all_users else "own"], cwd=tree, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.times: dict[str, list[float]] = {}

    def answer(self) -> dict[str, float]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(_MARK):
                return dict(json.loads(line[len(_MARK):]))
        raise SystemExit(f"the {self.name} process ended (exit {self.proc.wait()})")

    def ask(self, cmd: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        for key, value in self.answer().items():
            self.times.setdefault(f"{cmd}_{key}", []).append(value)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def compare_view(trees: tuple[Path, Path], reps: int, all_users: bool,
                 env: dict[str, str] | None = None) -> dict[str, Any]:
    """The old tree's refresh and the new one's on the same queue, rep by rep, the order swapped each rep."""
    sides = [Side("before", trees[0], all_users, env), Side("after", trees[1], all_users, env)]
    try:
        settled = [side.answer() for side in sides]
        rows = [int(answer["rows"]) for answer in settled]
        bare: list[float] = []
        for rep in range(reps):
            bare.append(bare_squeue(all_users)[0] if env is None else 0.0)
            for side in sides if rep % 2 == 0 else sides[::-1]:
                side.ask("warm")
                side.ask("cold")
        return {"rows": rows, "objects": [answer.get("objects", 0) for answer in settled], "bare": bare,
                "before": sides[0].times, "after": sides[1].times}
    finally:
        for side in sides:
            side.close()


def report_compare(title: str, res: dict[str, Any]) -> None:
    med = statistics.median
    before, after = res["before"], res["after"]
    print(f"\n== {title}: rows in the table before {res['rows'][0]}, after {res['rows'][1]}; "
          f"bare squeue {ms(med(res['bare']))} ms; {len(res['bare'])} reps, alternated")
    print("  ms, medians                          before      after   after/before   paired ratio (median)")
    for key, label in (("warm_total", "refresh (line cache)"), ("warm_parse", "  parse + format (thread)"),
                       ("warm_apply", "  diff + table update (UI)"), ("cold_total", "refresh, every line new"),
                       ("cold_parse", "  parse + format (thread)"), ("cold_apply", "  diff + table update (UI)")):
        b, a = before[key], after[key]
        paired = med([y / x for x, y in zip(b, a, strict=True) if x > 0])
        print(f"  {label:<32} {ms(med(b))}   {ms(med(a))}   {med(a) / med(b):8.2f}x      {paired:8.2f}x")
    mean = statistics.fmean
    b, a = mean(before["cold_total"]), mean(after["cold_total"])
    print(f"  refresh, every line new, means: before {ms(b)}, after {ms(a)}, {a / b:.2f}x (a full gc pass lands in some"
          " refreshes only: the medians can miss it, the means spread it)")
    if "cold_p_cpu" not in before or "cold_p_cpu" not in after:
        return
    print("  every line new, around the thread's parse + format (medians, paired ratio; gc: means and totals)")
    for key, label in (("cold_p_wall", "wall"), ("cold_p_cpu", "  the worker's CPU time"),
                       ("cold_p_ui_cpu", "  the UI thread's CPU time meanwhile"), ("cold_p_gc_s", "  in gc")):
        b, a = before[key], after[key]
        paired = med([y / x for x, y in zip(b, a, strict=True) if x > 0] or [float("nan")])
        print(f"  {label:<36} {ms(med(b))}   {ms(med(a))}   {med(a) / max(med(b), 1e-9):8.2f}x      {paired:8.2f}x")
    b, a = mean(before["cold_p_gc_s"]), mean(after["cold_p_gc_s"])
    print(f"  in gc, mean: before {ms(b)}, after {ms(a)} ms")
    print(f"  in gc's generation-2 passes, sum over the reps: before {sum(before['cold_p_gc2_s']) * 1000:.1f} ms, "
          f"after {sum(after['cold_p_gc2_s']) * 1000:.1f} ms; generations 0-1: before "
          f"{(sum(before['cold_p_gc_s']) - sum(before['cold_p_gc2_s'])) * 1000:.1f} ms, after "
          f"{(sum(after['cold_p_gc_s']) - sum(after['cold_p_gc2_s'])) * 1000:.1f} ms")
    print(f"  objects the gc tracks, settled: before {res['objects'][0]:,.0f}, after {res['objects'][1]:,.0f}")
    print(f"  gc passes: generation 2 before {sum(before['cold_p_gc2']):.0f}, after {sum(after['cold_p_gc2']):.0f};"
          f" generations 0-1 before {sum(before['cold_p_gc01']):.0f}, after {sum(after['cold_p_gc01']):.0f}")


def compare(args: argparse.Namespace) -> int:
    trees = (Path(args.compare).resolve(), Path(args.after or Path(__file__).resolve().parents[1]).resolve())
    for tree in trees:
        if not (tree / "ntui" / "ui" / "screens" / "jobs.py").is_file():
            raise SystemExit(f"{tree}: not an ntui checkout (git worktree add {tree} <commit>)")
    results: list[tuple[str, dict[str, Any]]] = []
    if args.tasks:
        array_id = submit_array(args.tasks)
        try:
            deadline = time.monotonic() + 120
            while count_tasks(array_id) < args.tasks:
                if time.monotonic() > deadline:
                    raise SystemExit("the array did not show all its tasks")
                time.sleep(1)
            results.append((f"a {args.tasks}-task held array (the user's own view)",
                            compare_view(trees, args.reps, all_users=False)))
        finally:
            sh("scancel", array_id, check=False)
    if args.distinct:
        try:
            ids = submit_distinct(args.distinct)
            deadline = time.monotonic() + 300
            while len(sh("squeue", "--noheader", "-n", "ntui-scale-1", "-o", "%i").stdout.split()) < len(ids):
                if time.monotonic() > deadline:
                    raise SystemExit("squeue did not list every job")
                time.sleep(1)
            results.append((f"{len(ids)} distinct held jobs (the all-users view)",
                            compare_view(trees, args.reps, all_users=True)))
        finally:
            sh("scancel", "-n", "ntui-scale-1", check=False)
    for title, res in results:
        report_compare(title, res)
    return 0


# -- offline: the same compare, squeue answered by a stub on PATH (no cluster, nothing submitted) -----------------

#: the Slurm clients the app may run; each stub prints nothing and succeeds, except squeue, which prints its file
_STUBBED = ("squeue", "sacct", "scontrol", "sinfo", "sacctmgr", "sprio", "sshare", "sstat", "sbatch", "scancel",
            "srun", "sdiag")


def held_line(job_id: str, user: str, *, array: tuple[str, str] | None = None) -> str:
    """One line in the form ``squeue -O`` prints for ntui's argv (:data:`SQUEUE_FIELDS`, each field followed by the
    separator), for a held one-task job, or an array's task, as the cluster benchmark submits them."""
    values = {"JobID": job_id, "ArrayJobID": array[0] if array else job_id, "ArrayTaskID": array[1] if array else "N/A",
              "Name": "ntui-scale" if array else "ntui-scale-1", "StateCompact": "PD", "State": "PENDING",
              "Reason": "JobHeldUser", "TimeUsed": "0:00", "TimeLimit": "1:00", "StartTime": "N/A", "NumNodes": "1",
              "NodeList": "", "tres-alloc": "", "Partition": "debug", "QOS": "normal",
              "WorkDir": f"/home/{user}/scale", "UserName": user, "exit_code": "0:0"}
    return "".join(values[f] + SQUEUE_SEPARATOR for f in SQUEUE_FIELDS)


def offline_queues(root: Path, tasks: int, distinct: int) -> dict[str, Path]:
    """The squeue answers, written once: ``tasks`` lines of one held array (own view: ``--array``, one line a task)
    and ``distinct`` held jobs of 40 users (the all-users view)."""
    files: dict[str, Path] = {}
    if tasks:
        files["own"] = root / "array.out"
        files["own"].write_text("".join(held_line(f"30000_{i}", "scale", array=("30000", str(i))) + "\n"
                                        for i in range(tasks)))
    if distinct:
        files["all"] = root / "distinct.out"
        files["all"].write_text("".join(held_line(str(40000 + i), f"user{i % 40:02d}") + "\n"
                                        for i in range(distinct)))
    return files


def offline_env(root: Path, answer: Path) -> dict[str, str]:
    """The serving processes' environment: the stubs first on PATH (the apps run their real SubprocessRunner),
    no SLURM_CONF, their own config/state/cache directories under ``root``."""
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in _STUBBED:
        stub = bin_dir / name
        stub.write_text('#!/bin/sh\nexec cat "$NTUI_BENCH_SQUEUE_OUT"\n' if name == "squeue" else "#!/bin/sh\n")
        stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NTUI_BENCH_SQUEUE_OUT=str(answer),
               XDG_CONFIG_HOME=str(root / "config"), XDG_STATE_HOME=str(root / "state"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_DATA_HOME=str(root / "data"))
    return env


def offline(args: argparse.Namespace) -> int:
    here = Path(__file__).resolve().parents[1]
    trees = (Path(args.compare or here).resolve(), Path(args.after or here).resolve())
    with tempfile.TemporaryDirectory(prefix="ntui-qs-offline-") as tmp:
        root = Path(tmp)
        files = offline_queues(root, args.tasks, args.distinct)
        results: list[tuple[str, dict[str, Any]]] = []
        for view, title in (("own", f"a {args.tasks}-task held array (the user's own view)"),
                            ("all", f"{args.distinct} distinct held jobs (the all-users view)")):
            if view in files:
                env = offline_env(root, files[view])
                results.append((f"offline, {title}", compare_view(trees, args.reps, view == "all", env)))
    print(f"before: {trees[0]}\nafter:  {trees[1]}")
    for title, res in results:
        report_compare(title, res)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--distinct", type=int, default=10_000, help="distinct jobs (0: skip that part)")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--compare", metavar="OLD_TREE",
                        help="before/after: an older checkout's refresh against this one's, alternated (ratios)")
    parser.add_argument("--after", metavar="NEW_TREE",
                        help="with --compare: the newer checkout (default: this script's own)")
    parser.add_argument("--offline", action="store_true",
                        help="no cluster: squeue answered by a stub from generated lines (with --compare, or this "
                             "tree against itself)")
    parser.add_argument("--serve", choices=("own", "all"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve == "all"))
        return 0
    if args.offline:
        return offline(args)
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit('run: eval "$(scripts/dev-cluster env)"')
    random.seed(5)
    need = max(args.tasks, args.distinct) + 100
    conf = sh("scontrol", "show", "config").stdout
    most = next((int(line.split("=")[1]) for line in conf.splitlines() if line.split("=")[0].strip() == "MaxJobCount"),
                0)
    if most < need:
        raise SystemExit(f"the cluster keeps at most {most} jobs (MaxJobCount, capped at its job-id range); start it "
                         f"with a wider range: scripts/dev-cluster down && NTUI_DEV_CLUSTER_JOB_RANGE=25000 "
                         f"scripts/dev-cluster up")
    return compare(args) if args.compare else run(args)


def run(args: argparse.Namespace) -> int:
    array_id = submit_array(args.tasks)
    try:
        deadline = time.monotonic() + 120
        while count_tasks(array_id) < args.tasks:
            if time.monotonic() > deadline:
                raise SystemExit("the array did not show all its tasks")
            time.sleep(1)
        print(f"held array {array_id}: {args.tasks} tasks; squeue -r shows one line per task\n")
        res = asyncio.run(refresh_and_latency(args.reps, args.presses))
        paint = asyncio.run(first_paint())
        jobs = parse_squeue(subprocess.run(build_squeue_argv(), capture_output=True).stdout)
        dt = asyncio.run(datatable_paint([queue_row(j) for j in jobs]))
    finally:
        sh("scancel", array_id, check=False)
        print(f"(scancel {array_id} done)")
    print(f"\n== a {args.tasks}-task array (the user's own view; it folds into one row)")
    report_refresh(res, args.reps)
    print(f"\nfirst paint of {int(paint['rows'])} rows")
    print(f"  squeue answer -> first frame     {ms(paint['from_fetched'])} ms   (target <= 1000 ms)")
    print(f"  app start -> first frame         {ms(paint['from_start'])} ms   (incl. squeue {ms(paint['squeue'])} ms)")
    print(f"  DataTable add_rows + first paint {ms(dt)} ms   (same rows, for comparison)")
    if args.distinct:
        print()
        distinct = distinct_jobs(args.distinct, args.reps, args.presses)
        print(f"\n== {args.distinct} distinct jobs (the all-users view: every job a row)")
        report_refresh(distinct, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
