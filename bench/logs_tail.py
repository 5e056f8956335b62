"""Benchmark: the log pane on 8 big rank files, against ``tail -n 100`` and toolong, in one run.

    python bench/logs_tail.py [--sizes 32,256] [--files 8] [--dir /tmp] [--no-toolong] [--keep]

For each size it writes ``--files`` rank logs the way ntui lays them out (``bench-<job>-rank-N.out``,
``ntui: rank N on NODE`` first, realistic training lines, 1 MiB writes) in a temporary directory, then
measures, each in a fresh Python process so that memory figures do not leak between runs:

* **open**: from mounting a :class:`~ntui.ui.widgets.log_pane.LogPane` in a headless ``App.run_test`` and
  calling ``show_job`` to rank 0's last line being in the view (the ``Log`` scrolled to it); also until
  every rank's row is filled (all files polled and triaged);
* **RSS growth**: ``VmRSS`` (and ``RssAnon``) after the pane settled minus before it was mounted;
* **append latency**: a line appended to the followed file until it is in the view (10 times, at random
  phases of the 0.5 s poll);
* **tail -n 100** of one file and of all files (subprocess wall time);
* **toolong** (PyPI, installed into a temporary venv, never into the project): time until its scan of the
  files completes and its RSS; toolong mmaps the files, so its ``VmRSS`` includes the mapped pages
  (``RssFile``) and ``RssAnon`` is its own heap.

Targets (issue 7): tail visible <= 150 ms and independent of file size (32 MB vs 256 MB); RSS growth <= 50
MB; appended line visible <= 1 s. The files are deleted at the end (``--keep`` keeps them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
JOB = "90001"
STEM = "bench"
MiB = 1024 * 1024


# ------------------------------------------------------------------------------------------ files


def _block(rank: int) -> bytes:
    """About 1 MiB of realistic training output (varying numbers, a tqdm bar with \\r, warnings)."""
    lines: list[str] = []
    size = 0
    step = 0
    while size < MiB:
        step += 1
        if step % 97 == 0:
            line = f"[rank{rank}]:[W601 09:{step % 60:02d}:11.2] ProcessGroupNCCL: no work in progress, skipping"
        elif step % 53 == 0:
            bar = f"epoch 3:  {step % 100:2d}%|{'#' * (step % 10):<10}| {step % 1000}/1000 [02:13<02:43, 3.37it/s]"
            line = f"{bar}\r" * 3  # a tqdm bar: only the last state is shown
        else:
            loss = 4.2 / (1 + step / 900) + 0.001 * rank
            line = (
                f"2026-06-01 09:{step // 600 % 60:02d}:{step // 10 % 60:02d},{step % 1000:03d} INFO step {step:7d} | "
                f"loss {loss:.4f} | lr 3.00e-04 | grad_norm {0.5 + step % 7 / 10:.2f} | {400 + rank} samples/s"
            )
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def last_line(rank: int, size_mb: int) -> str:
    return f"rank {rank}: last line of the {size_mb} MB file"


def make_files(root: Path, size_mb: int, files: int) -> Path:
    log_dir = root / f"logs-{size_mb}mb"
    log_dir.mkdir(parents=True)
    for rank in range(files):
        block = _block(rank)
        path = log_dir / f"{STEM}-{JOB}-rank-{rank}.out"
        with open(path, "wb") as fh:
            fh.write(f"ntui: rank {rank} on nid{rank // 4 + 1:03d}\n".encode())
            written = 0
            while written + len(block) <= size_mb * MiB:
                fh.write(block)
                written += len(block)
            fh.write(f"{last_line(rank, size_mb)}\n".encode())
    (log_dir / f"{STEM}-{JOB}.out").write_text(f"ntui: job {JOB}\n")
    return log_dir


# ------------------------------------------------------------------------------------------ memory


def proc_status() -> dict[str, int]:
    """VmRSS / RssAnon / RssFile / VmHWM of this process, in bytes."""
    out: dict[str, int] = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


# ------------------------------------------------------------------------------------------ child: ntui


async def _tick(since: float, limit: float = 60.0) -> None:
    if time.perf_counter() - since > limit:
        raise TimeoutError("the pane did not show the expected line")
    await asyncio.sleep(0.001)


async def _ntui(log_dir: Path, files: int, size_mb: int, appends: int) -> dict[str, Any]:
    import gc

    from textual.app import App

    from ntui.core.config import LogSettings
    from ntui.core.jobfiles.lognames import LogPaths
    from ntui.ui.widgets.log_pane import LogPane

    app: App[None] = App()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        gc.collect()
        before = proc_status()
        t0 = time.perf_counter()
        pane = LogPane(LogSettings(), id="pane")
        await app.mount(pane)
        pane.show_job(JOB, paths=LogPaths(str(log_dir), STEM), world_size=files, job_active=True)
        want = last_line(0, size_mb)
        while not (pane.visible_lines and pane.visible_lines[-1] == want):
            await _tick(t0)
        visible = time.perf_counter() - t0
        while not (pane.polls and all(r.exists and r.last_line for r in pane.rows.values())):
            await _tick(t0)
        rows = time.perf_counter() - t0
        await asyncio.sleep(1.0)
        gc.collect()
        after = proc_status()
        latencies = []
        path = log_dir / f"{STEM}-{JOB}-rank-0.out"
        for i in range(appends):
            await asyncio.sleep(random.uniform(0.05, 0.55))  # noqa: S311
            line = f"appended line {i} at {time.time():.3f}"
            t = time.perf_counter()
            with open(path, "a") as fh:
                fh.write(line + "\n")
            while not (pane.visible_lines and pane.visible_lines[-1] == line):
                await _tick(t)
            latencies.append(time.perf_counter() - t)
        end = proc_status()
    return {
        "visible_s": visible,
        "rows_s": rows,
        "rss_before": before["VmRSS"],
        "rss_after": after["VmRSS"],
        "anon_growth": after["RssAnon"] - before["RssAnon"],
        "rss_after_appends": end["VmRSS"],
        "hwm": end["VmHWM"],
        "append_s": latencies,
    }


# ------------------------------------------------------------------------------------------ child: toolong

TOOLONG_DRIVER = r"""
import asyncio, json, sys, time
def status():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[k] = int(v.split()[0]) * 1024
    return out
from textual.app import App
from toolong.ui import UI
files = sys.argv[1:]
async def main():
    if not files:  # the baseline: an empty Textual app of the same version, running
        async with App().run_test(size=(160, 50)):
            await asyncio.sleep(1.0)
            print(json.dumps({"in_app": status()}))
        return
    app = UI(files)
    t0 = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        first = None
        while True:
            lines = list(app.screen.query("LogLines"))
            done = [l for l in lines if not l.has_class("-scanning") and not l.loading]
            if first is None and done:
                first = time.perf_counter() - t0
            if len(lines) == len(files) and len(done) == len(files):
                break
            if time.perf_counter() - t0 > 300:
                break
            await asyncio.sleep(0.01)
        total = time.perf_counter() - t0
        await asyncio.sleep(1.0)
        print(json.dumps({"first_s": first, "all_s": total, "tabs": len(lines), "in_app": status()}))
asyncio.run(main())
"""


def toolong_venv(root: Path) -> tuple[Path | None, str]:
    venv = root / "toolong-venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        pip = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "toolong"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"venv/pip failed: {exc}"
    if pip.returncode != 0:
        return None, f"pip install toolong failed: {(pip.stderr or pip.stdout).strip()[-300:]}"
    return venv / "bin" / "python", ""


def run_toolong(python: Path, root: Path, log_dir: Path, files: int) -> dict[str, Any]:
    driver = root / "toolong_driver.py"
    driver.write_text(TOOLONG_DRIVER)
    paths = [str(log_dir / f"{STEM}-{JOB}-rank-{r}.out") for r in range(files)]
    out: dict[str, Any] = {}
    for key, argv in (("baseline", []), ("run", paths)):
        res = subprocess.run([str(python), str(driver), *argv], capture_output=True, text=True, timeout=400)
        if res.returncode != 0:
            return {"error": (res.stderr or res.stdout).strip()[-400:]}
        out[key] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


# ------------------------------------------------------------------------------------------ parent


def child_ntui(log_dir: Path, files: int, size_mb: int, appends: int) -> dict[str, Any]:
    res = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(log_dir),
            "--files",
            str(files),
            "--child-size",
            str(size_mb),
            "--appends",
            str(appends),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    if res.returncode != 0:
        raise RuntimeError(f"ntui child failed:\n{res.stderr[-2000:]}")
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def time_tail(paths: list[Path], reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run(["tail", "-n", "100", *map(str, paths)], capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def mb(n: float) -> str:
    return f"{n / MiB:.1f} MB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="32,256", help="file sizes in MB (comma-separated)")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--dir", default=None, help="where to put the temporary files")
    ap.add_argument("--reps", type=int, default=3, help="open measurements per size (median)")
    ap.add_argument("--appends", type=int, default=10)
    ap.add_argument("--no-toolong", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-size", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        sys.path.insert(0, str(REPO))
        print(json.dumps(asyncio.run(_ntui(Path(args.child), args.files, args.child_size, args.appends))))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s]
    root = Path(tempfile.mkdtemp(prefix="ntui-bench-logs-", dir=args.dir))
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    results: dict[int, dict[str, Any]] = {}
    try:
        tl_python: Path | None = None
        if not args.no_toolong:
            print("installing toolong into a temporary venv …", file=sys.stderr)
            tl_python, why = toolong_venv(root)
            if tl_python is None:
                notes.append(f"toolong not measured: {why}")
        for size in sizes:
            t = time.perf_counter()
            log_dir = make_files(root, size, args.files)
            print(f"wrote {args.files} x {size} MB in {time.perf_counter() - t:.1f} s", file=sys.stderr)
            paths = [log_dir / f"{STEM}-{JOB}-rank-{r}.out" for r in range(args.files)]
            # appends change rank 0's last line: only in the last run
            last = args.reps - 1
            runs = [child_ntui(log_dir, args.files, size, args.appends if i == last else 0) for i in range(args.reps)]
            med = {
                k: statistics.median(r[k] for r in runs)
                for k in ("visible_s", "rows_s", "rss_before", "rss_after", "anon_growth")
            }
            lat = runs[-1]["append_s"]
            growth = med["rss_after"] - med["rss_before"]
            tail1 = time_tail(paths[:1])
            tail_all = time_tail(paths)
            results[size] = {"visible": med["visible_s"], "growth": growth}
            rows.append(
                (
                    f"ntui pane, {size} MB x {args.files}",
                    f"{med['visible_s'] * 1000:.0f} ms",
                    f"{med['rows_s'] * 1000:.0f} ms",
                    f"{mb(growth)} (anon {mb(med['anon_growth'])})",
                    f"median {statistics.median(lat) * 1000:.0f} / max {max(lat) * 1000:.0f} ms" if lat else "–",
                )
            )
            rows.append(
                (
                    f"tail -n 100, {size} MB",
                    f"{tail1 * 1000:.1f} ms (1 file)",
                    f"{tail_all * 1000:.1f} ms ({args.files} files)",
                    "–",
                    "–",
                )
            )
            if tl_python is not None:
                tl = run_toolong(tl_python, root, log_dir, args.files)
                if "error" in tl:
                    notes.append(f"toolong failed on {size} MB: {tl['error']}")
                else:
                    run, b, a = tl["run"], tl["baseline"]["in_app"], tl["run"]["in_app"]
                    rows.append(
                        (
                            f"toolong 1.5, {size} MB x {args.files}",
                            f"{run['first_s'] * 1000:.0f} ms (1st tab scanned)" if run["first_s"] else "–",
                            f"{run['all_s'] * 1000:.0f} ms ({run['tabs']} tabs scanned)",
                            f"{mb(a['VmRSS'] - b['VmRSS'])} (anon {mb(a['RssAnon'] - b['RssAnon'])})",
                            "–",
                        )
                    )
                    results[size]["toolong_growth"] = a["VmRSS"] - b["VmRSS"]
            for p in log_dir.iterdir():  # free the disk before the next size
                p.unlink()
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)

    head = ("", "tail visible", "all rows / done", "RSS growth", "appended line visible")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print()
    if len(sizes) >= 2:
        small, big = results[min(sizes)], results[max(sizes)]
        ratio = big["visible"] / small["visible"]
        print(f"size independence: visible {max(sizes)} MB / {min(sizes)} MB = {ratio:.2f}x (target ~1)")
    for size, r in results.items():
        ok = "OK" if r["visible"] <= 0.150 else "MISS"
        mem_ok = "OK" if r["growth"] <= 50 * MiB else "MISS"
        line = (
            f"{size} MB: visible {r['visible'] * 1000:.0f} ms [{ok} <= 150 ms], "
            f"RSS +{mb(r['growth'])} [{mem_ok} <= 50 MB]"
        )
        if "toolong_growth" in r and r["growth"] > 0:
            line += f"; toolong RSS growth / ntui = {r['toolong_growth'] / r['growth']:.1f}x"
        print(line)
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
