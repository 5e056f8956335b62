"""How long ``ntui stacks`` takes to answer, for 4 and for 16 ranks on the dev cluster's 2 nodes.

    eval "$(scripts/dev-cluster env)"
    python bench/stacks.py [--repeat 3] [--interval 3]

Two hanging jobs of ``examples/hang_train.py`` under torchrun (the shipped ``local-torchrun`` preset), one after the
other: 2 nodes x 2 workers (4 ranks), then 2 nodes x 8 workers (16 ranks, oversubscribing the dev nodes' 2 CPUs each,
as 8 GPUs' ranks would not). Once each hangs (rank-0 at step 3), :func:`ntui.core.stacks.take.take_stacks` is timed
``--repeat`` times (the scontrol call, the srun step, py-spy on every rank twice ``--interval`` seconds apart), then
the job is released. Prints each median, the time beyond the interval (what the step and py-spy cost) and the ratio
16/4 of that cost, within this one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ntui.core.slurm.runner import SubprocessRunner
from ntui.core.stacks.take import take_stacks

REPO = Path(__file__).resolve().parent.parent
HANG = REPO / "examples" / "hang_train.py"


def _ntui(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def _state(job: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True, timeout=30).stdout
    return next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")


def _measure(tmp: Path, per_node: int, repeat: int, interval: float) -> list[float]:
    release = tmp / f"release-{per_node}"
    preset = tmp / f"hang-{per_node}.yaml"
    preset.write_text(json.dumps({
        "extends": str(REPO / "presets" / "local-torchrun.yaml"), "name": f"bench-stacks-{per_node}",
        "launcher": {"type": "torchrun", "nproc-per-node": per_node}, "script": str(HANG),
        "args": ["--mode", "stuck", "--release", str(release), "--steps", "6"], "logs": {"dir": str(tmp)}}))
    res = _ntui("submit", str(preset))
    if res.returncode != 0:
        raise SystemExit(res.stdout + res.stderr)
    job = res.stdout.strip().splitlines()[-1]
    log = tmp / f"bench-stacks-{per_node}-{job}-rank-0.out"
    try:
        begun = time.monotonic()
        while not (log.exists() and "step 3/" in log.read_text()):
            if time.monotonic() - begun > 600:
                raise SystemExit(f"job {job} never reached step 3")
            time.sleep(1)
        runner = SubprocessRunner()
        times = []
        for _ in range(repeat):
            t = time.monotonic()
            stacks = take_stacks(runner, job, interval_s=interval)
            times.append(time.monotonic() - t)
            if stacks.ranks != 2 * per_node or stacks.problems:
                raise SystemExit(f"job {job}: {stacks.ranks} ranks, {stacks.problems}")
        print(f"{2 * per_node:>3} ranks: {', '.join(f'{x:.2f}' for x in times)} s; "
              + "; ".join(stacks.lines()[1:]))
        return times
    finally:
        release.touch()
        while _state(job) in ("RUNNING", "PENDING", "COMPLETING"):
            time.sleep(1)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python bench/stacks.py")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--interval", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ntui-bench-stacks-") as tmp:
        small = statistics.median(_measure(Path(tmp), 2, args.repeat, args.interval))
        large = statistics.median(_measure(Path(tmp), 8, args.repeat, args.interval))
    cost_small, cost_large = small - args.interval, large - args.interval
    print(f"median: 4 ranks {small:.2f} s, 16 ranks {large:.2f} s (two samples {args.interval:g} s apart)")
    print(f"beyond the interval: 4 ranks {cost_small:.2f} s, 16 ranks {cost_large:.2f} s, "
          f"ratio 16/4 = {cost_large / cost_small:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
