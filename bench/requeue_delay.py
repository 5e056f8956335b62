"""Requeue delay: how long a requeued job waits before it runs again, at Slurm's default and as the dev clusters run.

    python bench/requeue_delay.py [--slurm 22.05] [--short 10]

Slurm holds a requeued job pending (``Reason=BeginTime``) for the step credential's lifetime, slurm.conf
``AuthInfo=cred_expire`` (default 120 s). The dev clusters run ``cred_expire=10`` so that the long-run tests
(a requeue every allocation) take minutes less; this measures both on private clusters of one version, started
one after the other beside any running dev cluster (own state dir, ports 14897-14901, job ids from 15001 —
the range the three version clusters leave free; scripts/test's private cluster takes it too, so not beside a full
test run), one job each: submitted, running, ``scontrol requeue``, then the seconds until
it runs again. Prints both delays and their ratio. Needs root (it starts Slurm's daemons), like scripts/dev-cluster.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "dev-cluster"
PORT_BASE = "14897"
FIRST_JOB_ID = "15001"
DEFAULT_CRED_EXPIRE = 120  # Slurm's default (slurm.conf(5), AuthInfo)


def _cluster_env(version: str, state: Path, cred_expire: int) -> dict[str, str]:
    env = dict(os.environ, NTUI_DEV_SLURM=version, NTUI_DEV_CLUSTER_DIR=str(state),
               NTUI_DEV_CLUSTER_PORT_BASE=PORT_BASE, NTUI_DEV_CLUSTER_FIRST_JOB_ID=FIRST_JOB_ID,
               NTUI_DEV_CLUSTER_CRED_EXPIRE=str(cred_expire))
    exports = subprocess.run([str(SCRIPT), "env"], env=env, capture_output=True, text=True, check=True,
                             timeout=60).stdout
    for line in exports.splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = subprocess.run(["bash", "-c", f"printf %s {value}"], capture_output=True, text=True,
                                      check=True, timeout=10).stdout
        elif line.startswith("unset "):
            env.pop(line.split()[1], None)
    return env


def _state(env: dict[str, str], job: str) -> tuple[str, str]:
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T %r"], env=env, capture_output=True, text=True,
                         timeout=30).stdout.split()
    return (out[0], out[1]) if len(out) >= 2 else ("", "")


def _wait(env: dict[str, str], job: str, want: str, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if _state(env, job)[0] == want:
            return time.monotonic()
        time.sleep(0.5)
    raise SystemExit(f"job {job} never {want} within {timeout:.0f} s")


def measure(version: str, cred_expire: int) -> float:
    """Seconds from ``scontrol requeue`` until the job runs again, on a private cluster with ``cred_expire``."""
    state = Path(tempfile.mkdtemp(prefix="ntui-bench-requeue-", dir="/var/tmp"))
    env = _cluster_env(version, state, cred_expire)
    try:
        subprocess.run([str(SCRIPT), "up", "--no-accounting"], env=env, check=True, timeout=600,
                       capture_output=True, text=True)
        sub = subprocess.run(["sbatch", "--parsable", "--requeue", "-N1", "-o", "/dev/null", "-t", "10",
                              "--wrap", "sleep 600"], env=env, capture_output=True, text=True, check=True,
                             timeout=60)
        job = sub.stdout.strip().split(";")[0]
        _wait(env, job, "RUNNING", 120)
        subprocess.run(["scontrol", "requeue", job], env=env, check=True, timeout=30)
        t0 = time.monotonic()
        _wait(env, job, "PENDING", 60)
        reason = _state(env, job)[1]
        back = _wait(env, job, "RUNNING", cred_expire + 180)
        subprocess.run(["scancel", job], env=env, timeout=30, check=False)
        print(f"  cred_expire={cred_expire:>3} s: pending ({reason}) then running again after {back - t0:.1f} s")
        return back - t0
    finally:
        subprocess.run([str(SCRIPT), "down"], env=env, timeout=300, capture_output=True, check=False)
        shutil.rmtree(state, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slurm", default="22.05", help="the Slurm version (22.05, 24.11, 26.05)")
    ap.add_argument("--short", type=int, default=10, help="the dev clusters' cred_expire (default 10)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/requeue_delay.py starts Slurm's daemons: run it as root", file=sys.stderr)
        return 2
    print(f"requeue delay, Slurm {args.slurm}, one job each:")
    default = measure(args.slurm, DEFAULT_CRED_EXPIRE)
    short = measure(args.slurm, args.short)
    print(f"at Slurm's default {default:.1f} s, at the dev clusters' {short:.1f} s: "
          f"{default / short:.2f}x ({default - short:.0f} s saved per requeue)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
