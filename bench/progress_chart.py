"""The Progress tab's chart: drawing the loss of a long run (ntui.core.progress.chart.chart_lines: plotext's figure
of the series thinned to the width first; 2,000 points, the most a series keeps, or 10^5 with ``--points``) against
plotext drawing every point at the same size, in one run, as a ratio: what thinning saves.

    python bench/progress_chart.py [--points 2000] [--width 118] [--height 16] [--reps 50]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ntui.core.progress.chart import chart_lines  # noqa: E402
from ntui.core.progress.series import Sample, Series  # noqa: E402


def series(points: int) -> Series:
    """A falling, noisy loss over ``points`` steps (the shape of the captures', longer)."""
    out = Series(total=points)
    out.samples = [Sample(float(i), i, {"loss": 2.0 / (1 + i / 50) + 0.05 * math.sin(i * 1.7)}) for i in range(points)]
    out.metrics = dict(out.samples[-1].metrics)
    return out


def timed(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--width", type=int, default=118)
    ap.add_argument("--height", type=int, default=16)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args(argv)
    s = series(args.points)
    ours = timed(lambda: chart_lines(s, width=args.width, height=args.height), args.reps)
    print(f"ntui chart_lines: {1000 * ours:.2f} ms for {args.points} points at {args.width}x{args.height}")
    import plotext as plt
    steps = [x.step for x in s.samples]
    losses = [x.metrics["loss"] for x in s.samples]

    def plotext() -> str:
        plt.clf()
        plt.plotsize(args.width, args.height)
        plt.plot(steps, losses, marker="braille")
        plt.theme("clear")
        return str(plt.build())

    theirs = timed(plotext, args.reps)
    print(f"plotext, every point: {1000 * theirs:.2f} ms (plotext {getattr(plt, '__version__', '?')})")
    print(f"ratio every point / thinned: {theirs / ours:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
