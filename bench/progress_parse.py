"""Progress parsing cost: reading a log for its progress (ntui.core.progress.read.read_progress over the real
captures of tests/data/progress/, repeated to SIZE MB) against the bare read of the same bytes split into lines, in
one run, as a ratio, and the time per MB. ``--shapes``: the same for a log only the last reader reads (the shape
of a loop's own sentence, :mod:`ntui.core.progress.shapes`: every line of it taken apart at its numbers).

    python bench/progress_parse.py [--mb 64] [--reps 5] [--shapes]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ntui.core.progress.read import read_progress  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "progress"


def bare(path: Path) -> int:
    """The floor: the bytes read and split at newlines and carriage returns, nothing parsed."""
    n = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1024 * 1024):
            n += len(chunk.replace(b"\r", b"\n").split(b"\n"))
    return n


def _shape_lines() -> bytes:
    """A loop's own sentence at each record, which no form reads (the shapes do), with a line between them."""
    lines = []
    for k in range(1, 5001):
        lines.append(f"2026-03-02 10:{k % 60:02d}:{k % 59:02d} trainer: done with iteration {k * 10} "
                     f"({1242.5 + k % 7:.1f} samples/s), the loss is now {3 - k / 5000:.4f}")
        if k % 10 == 0:
            lines.append(f"2026-03-02 10:{k % 60:02d}:{k % 59:02d} saving a snapshot to /scratch/run/snap-{k}.pt")
    return ("\n".join(lines) + "\n").encode()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", action="store_true", help="a log the shapes read, not the captures")
    args = ap.parse_args(argv)
    sample = _shape_lines() if args.shapes else b"".join(p.read_bytes() for p in sorted(DATA.glob("*/*.out")))
    with tempfile.TemporaryDirectory(prefix="ntui-bench-progress-") as tmp:
        log = Path(tmp) / "train.out"
        with log.open("wb") as fh:
            written = 0
            while written < args.mb * 1024 * 1024:
                fh.write(sample)
                written += len(sample)
        size_mb = log.stat().st_size / 1024 / 1024
        floor, ours = [], []
        for _ in range(args.reps):  # interleaved
            t = time.perf_counter()
            bare(log)
            floor.append(time.perf_counter() - t)
            t = time.perf_counter()
            series = read_progress(log, tail_bytes=log.stat().st_size)
            ours.append(time.perf_counter() - t)
        f, o = statistics.median(floor), statistics.median(ours)
        what = "a loop's own sentences" if args.shapes else "the progress captures"
        print(f"log {size_mb:.0f} MB of {what} ({len(sample) / 1024:.0f} KB repeated), {args.reps} reps, medians")
        print(f"bare read + split      {f * 1000:8.1f} ms   {f / size_mb * 1000:6.2f} ms/MB")
        print(f"read_progress          {o * 1000:8.1f} ms   {o / size_mb * 1000:6.2f} ms/MB   ({o / f:.1f}x bare)")
        print(f"series: step {series.step}, {len(series.samples)} points kept")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
