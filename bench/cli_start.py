"""CLI start-up benchmark: ``ntui render``, ``ntui check`` and ``ntui jobs`` against ``python -c 'import yaml'``.

    python bench/cli_start.py [--reps 15] [--commands render,check,jobs] [--repo CHECKOUT]

Each run is a fresh interpreter started the way the console script starts ntui (``ntui.__main__.main(argv)``),
with the byte-code cache warm (one unmeasured run of each first). The baseline and each command are timed
alternately (baseline, command, baseline, command, ...), so machine load hits both alike; the medians and their
ratio are printed. ``check`` and ``jobs`` talk to Slurm when a cluster is reachable (``SLURM_CONF``): their
figures then include the partition listing / the squeue call, as a user sees them. Target: each ratio <= 2.0;
exits 1 when one is above. ``--repo`` times another checkout of ntui (e.g. an older commit, through
``PYTHONPATH``) with the same interpreter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 2.0
BASELINE = ["-c", "import yaml"]
COMMANDS = {
    "render": ["render", "local-srun"],
    "check": ["check", "local-srun"],
    "jobs": ["jobs"],
}


def _argv(words: list[str]) -> list[str]:
    return [sys.executable, "-c", f"import sys\nfrom ntui.__main__ import main\nsys.exit(main({words!r}))"]


def once(argv: list[str], repo: Path = REPO) -> float:
    env = dict(os.environ, PYTHONPATH=str(repo)) if repo != REPO else dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its byte code: so does the warm-up here
    t0 = time.perf_counter()
    # No timeout: Popen.wait(timeout) polls with sleeps of up to 50 ms, which would round every figure up.
    subprocess.run(argv, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--repo", type=Path, default=REPO, help="the ntui checkout to time (default: this one)")
    args = ap.parse_args()
    repo = args.repo.resolve()
    base = [sys.executable, *BASELINE]
    worst = 0.0
    print(f"{'command':<28} {'median ms':>10} {'baseline ms':>12} {'ratio':>6}")
    for name in args.commands.split(","):
        cmd = _argv(COMMANDS[name])
        once(base, repo), once(cmd, repo)  # warm the byte-code cache and the page cache
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.reps):
            theirs.append(once(base, repo))
            ours.append(once(cmd, repo))
        m_ours, m_base = statistics.median(ours), statistics.median(theirs)
        ratio = m_ours / m_base
        worst = max(worst, ratio)
        print(f"{'ntui ' + ' '.join(COMMANDS[name]):<28} {m_ours * 1000:>10.1f} {m_base * 1000:>12.1f} {ratio:>6.2f}")
    print(f"target: every ratio <= {TARGET_RATIO}; worst {worst:.2f}")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
