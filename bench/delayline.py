"""A user-space delay line between this network namespace and another: two TUN devices, every IP packet held
for a fixed delay before it is handed to the other side (what ``tc qdisc ... netem delay`` does, for kernels
built without ``sch_netem``). Used by ``bench/ssh_netem.py``; runs as its own process:

    python bench/delayline.py --netns NAME --here DEV --there DEV --delay-ms 50

Opens ``--here`` (a TUN device in the namespace it starts in), enters ``--netns`` (``setns``), opens ``--there``
(created inside that namespace), prints ``ready`` and forwards until SIGTERM or SIGINT; then prints one JSON line
of what it did: packets and bytes each way and how late the packets left (the scheduler's share of the delay, on
top of ``--delay-ms``). The addresses and ``up`` of both devices are the caller's business. Needs root.

Each direction is a FIFO with one fixed delay, so packets keep their order (netem's default without jitter).
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import json
import os
import select
import signal
import statistics
import struct
import sys
import time
from collections import deque
from types import FrameType

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
READ_SIZE = 65536
#: at most this many lateness samples are kept per direction (the statistics are of the first ones)
MAX_SAMPLES = 200_000


def setns(path: str) -> None:
    """Enter the network namespace at ``path`` (``/run/netns/NAME``): Python 3.11 has no ``os.setns``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def open_tun(name: str) -> int:
    """A TUN device ``name`` (IP packets, no header) in the current network namespace, non-blocking; it exists
    while the descriptor is open."""
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


class Direction:
    """Packets read from ``src``, written to ``dst`` ``delay`` seconds later."""

    def __init__(self, src: int, dst: int, delay: float) -> None:
        self.src, self.dst, self.delay = src, dst, delay
        self.queue: deque[tuple[float, bytes]] = deque()
        self.packets = 0
        self.bytes = 0
        self.late: list[float] = []

    def take(self, now: float) -> None:
        while True:
            try:
                packet = os.read(self.src, READ_SIZE)
            except BlockingIOError:
                return
            if not packet:
                return
            self.queue.append((now + self.delay, packet))

    def give(self, now: float) -> None:
        while self.queue and self.queue[0][0] <= now:
            due, packet = self.queue.popleft()
            try:
                os.write(self.dst, packet)
            except OSError:  # the other side is down or full: a lost packet, as on a real link
                continue
            self.packets += 1
            self.bytes += len(packet)
            if len(self.late) < MAX_SAMPLES:
                self.late.append(now - due)

    def summary(self) -> dict[str, float | int]:
        late = sorted(self.late) or [0.0]
        return {"packets": self.packets, "bytes": self.bytes,
                "late_median_ms": round(statistics.median(late) * 1000, 3),
                "late_p95_ms": round(late[int(0.95 * (len(late) - 1))] * 1000, 3),
                "late_max_ms": round(late[-1] * 1000, 3)}


def forward(here: int, there: int, delay: float) -> dict[str, dict[str, float | int]]:
    stop = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    out, back = Direction(here, there, delay), Direction(there, here, delay)
    print("ready", flush=True)
    while not stop:
        due = [d.queue[0][0] for d in (out, back) if d.queue]
        wait = max(0.0, min(due) - time.monotonic()) if due else 0.5
        try:
            readable, _, _ = select.select([here, there], [], [], wait)
        except InterruptedError:
            continue
        now = time.monotonic()
        if here in readable:
            out.take(now)
        if there in readable:
            back.take(now)
        now = time.monotonic()
        out.give(now)
        back.give(now)
    return {"out": out.summary(), "back": back.summary()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netns", required=True, help="the other side's network namespace (ip netns add NAME)")
    ap.add_argument("--here", required=True, help="the TUN device on this side")
    ap.add_argument("--there", required=True, help="the TUN device inside --netns")
    ap.add_argument("--delay-ms", type=float, required=True, help="the delay each way")
    args = ap.parse_args()
    here = open_tun(args.here)
    setns(f"/run/netns/{args.netns}")
    there = open_tun(args.there)
    print(json.dumps(forward(here, there, args.delay_ms / 1000)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
