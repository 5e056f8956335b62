"""Benchmark: a command over ntui's shared ssh master vs. a fresh ssh login per command, in one run.

    python bench/ssh_master.py [--calls 30]

Starts the tests' private sshd on 127.0.0.1 (``tests/support/sshd.py``; needs root), then times ``--calls``
runs of ``true`` on the far side three ways, interleaved so that the machine's load weighs on each alike:

* **master**: :class:`~ntui.core.slurm.ssh.SshRunner`, every call a channel over one master (opened before);
* **fresh**: the same ssh argv with ``ControlMaster=no`` and no socket: a login (key exchange, authentication,
  a session) per call, as a tool without ControlMaster pays it;
* **local**: ``true`` run here through :class:`~ntui.core.slurm.runner.SubprocessRunner` (the floor).

Prints the medians and the ratio fresh / master, and the logins sshd accepted during each part (master: 0 after
the first). Loopback only: a real link adds its round trips to every fresh login (several per login, one per
channel), so the ratio here is a floor.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ntui.core.slurm.runner import SubprocessRunner  # noqa: E402
from ntui.core.slurm.ssh import SshRunner, SshTarget  # noqa: E402
from tests.support import sshd as sshd_support  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    reason = sshd_support.why_not()
    if reason is not None:
        print(f"bench/ssh_master.py: {reason}", file=sys.stderr)
        return 2
    with sshd_support.private_sshd() as server:
        runner = SshRunner(SshTarget(host=sshd_support.HOST, control_dir=server.directory / "ctl", persist_s=120,
                                     config_file=str(server.ssh_config)))
        t0 = time.perf_counter()
        runner.run(["true"], timeout=120)
        first = time.perf_counter() - t0
        fresh_argv = ["ssh", "-F", str(server.ssh_config), "-o", "ControlMaster=no", "-o", "ControlPath=none",
                      "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", sshd_support.HOST, "--", "true"]
        local = SubprocessRunner()
        times: dict[str, list[float]] = {"master": [], "fresh": [], "local": []}
        logins = {"master": 0, "fresh": 0}
        for _ in range(args.calls):
            before = server.logins()
            t = time.perf_counter()
            runner.run(["true"], timeout=120)
            times["master"].append(time.perf_counter() - t)
            logins["master"] += server.logins() - before
            before = server.logins()
            t = time.perf_counter()
            subprocess.run(fresh_argv, check=True, timeout=120, stdin=subprocess.DEVNULL, capture_output=True)
            times["fresh"].append(time.perf_counter() - t)
            logins["fresh"] += server.logins() - before
            t = time.perf_counter()
            local.run(["true"], timeout=120)
            times["local"].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"first call (opens the master): {first * 1000:.1f} ms")
        for k in ("master", "fresh", "local"):
            extra = f", logins {logins[k]}" if k in logins else ""
            print(f"{k:>7}: median {med[k] * 1000:7.1f} ms over {args.calls} calls{extra}")
        print(f"fresh login / call over the master: {med['fresh'] / med['master']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
