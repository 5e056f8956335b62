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

``--follow SECONDS`` then follows one growing log (a line every ``--every`` seconds) for that long the two ways
``ntui --cluster NAME logs -f`` can: through ``ntui agent --stdio`` on one channel (a request waits on the cluster
up to 2 s for new lines) and through plain commands (one channel per poll, every 5 s); per minute: ssh logins,
channels opened, requests, the bytes of the agent's lines both ways, and the median delay from a line's write to
its arrival here.
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


def follow_costs(server: sshd_support.Sshd, seconds: float, every: float, way: str) -> None:
    """Follow a growing file ``seconds`` long through the agent or plain commands; print the costs per minute."""
    import tempfile
    import threading

    from ntui.core.remote.files import AgentFiles, CommandFiles
    from ntui.core.remote.logs import RemoteTail

    runner = SshRunner(SshTarget(host=sshd_support.HOST, control_dir=server.directory / f"f-{way}", persist_s=120,
                                 config_file=str(server.ssh_config)))
    files: AgentFiles | CommandFiles
    if way == "agent":
        files = AgentFiles(runner, command=(sys.executable, "-m", "ntui", "agent", "--stdio"))
    else:
        files = CommandFiles(runner, name="bench")
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "job.out"
        log.write_bytes(b"")
        written: dict[int, float] = {}
        stop = threading.Event()

        def write() -> None:
            i = 0
            with open(log, "ab", buffering=0) as f:
                while not stop.is_set():
                    written[i] = time.monotonic()
                    f.write(b"step %d loss 0.123\n" % i)
                    i += 1
                    stop.wait(every)

        logins0 = server.logins()
        tail = RemoteTail(files, str(log))
        tail.start()
        calls0 = runner.calls
        writer = threading.Thread(target=write, daemon=True)
        t0 = time.monotonic()
        writer.start()
        delays: list[float] = []
        polls = 0
        while time.monotonic() - t0 < seconds:
            update = tail.poll(wait=2.0 if files.live else 0.0)
            polls += 1
            now = time.monotonic()
            for line in update.lines:
                n = int(line.split()[1])
                delays.append(now - written[n])
            if not files.live:
                time.sleep(5.0)
        stop.set()
        minutes = (time.monotonic() - t0) / 60
        files.close()
    channels = files.channels if isinstance(files, AgentFiles) else runner.calls - calls0
    line = (f"{way:>8}: per minute: logins {(server.logins() - logins0) / minutes:.1f}, channels "
            f"{channels / minutes:.1f}, requests {polls / minutes:.0f}")
    if isinstance(files, AgentFiles):
        line += f", bytes out {files.bytes_out / minutes:.0f}, in {files.bytes_in / minutes:.0f}"
    print(f"{line}; a line's delay median {statistics.median(delays) * 1000:.0f} ms ({len(delays)} lines)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--follow", type=float, default=0.0, metavar="SECONDS")
    ap.add_argument("--every", type=float, default=1.0, metavar="SECONDS")
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
        if args.follow > 0:
            for way in ("agent", "commands"):
                follow_costs(server, args.follow, args.every, way)
    return 0


if __name__ == "__main__":
    sys.exit(main())
