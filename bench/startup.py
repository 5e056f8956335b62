"""Start-up benchmark: time to first frame of ``ntui`` against a minimal Textual app.

    python bench/startup.py [--reps 7] [--size 120x36]

Each run starts a fresh interpreter (byte-code cache on, in a temporary prefix) on a pseudo-terminal of the
given size and measures the wall time from spawn until a marker of the first painted frame appears on the
terminal (the minimal app's text; ntui's "Presets" panel title), then kills it. ``ntui`` is started the way
the console script starts it (``ntui.__main__.main([])``, i.e. through the CLI's argument parsing); the
row "ntui (app only)" starts ``ntui.ui.app.run_app()`` directly, to separate the app from the CLI. Runs
alternate between the apps after one warm-up each. Prints medians and ratios; exits 1 when the ``ntui``
ratio is above the target (1.3x).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.3

MINIMAL = """
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("MINIMAL-READY")

Minimal().run()
"""
NTUI = "import sys\nfrom ntui.__main__ import main\nsys.exit(main([]))\n"
NTUI_APP = "import sys\nfrom ntui.ui.app import run_app\nsys.exit(run_app())\n"

APPS = {
    "minimal Textual app": (MINIMAL, b"MINIMAL-READY"),
    "ntui": (NTUI, b"Presets"),
    "ntui (app only)": (NTUI_APP, b"Presets"),
}


def first_frame_s(
    code: str, marker: bytes, cols: int, rows: int, pycache: str | None = None, timeout: float = 30.0
) -> float:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
    env.pop("TEXTUAL", None)
    if pycache is not None:
        # Byte-compiled modules, as an installed ntui has (kept out of the checkout).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    try:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                raise TimeoutError(f"no first frame within {timeout} s; output: {seen[-400:]!r}")
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise RuntimeError(f"exited before the first frame: {seen[-400:]!r}")
            seen += chunk
            if marker in seen:
                return time.perf_counter() - start
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # Drain and close the terminal.
        try:
            while select.select([master], [], [], 0)[0] and os.read(master, 65536):
                pass
        except OSError:
            pass
        os.close(master)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--size", default="120x36")
    args = parser.parse_args(argv)
    cols, rows = (int(x) for x in args.size.split("x"))
    times: dict[str, list[float]] = {name: [] for name in APPS}
    with tempfile.TemporaryDirectory(prefix="ntui-bench-pycache-") as pycache:
        for code, marker in APPS.values():  # warm-up: fills the byte-code cache
            first_frame_s(code, marker, cols, rows, pycache)
        for _ in range(args.reps):
            for name, (code, marker) in APPS.items():
                times[name].append(first_frame_s(code, marker, cols, rows, pycache))
    base = statistics.median(times["minimal Textual app"])
    print(f"time to first frame, {args.reps} runs each, {cols}x{rows} pty, Python {sys.version.split()[0]}")
    print(f"{'app':<22}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'ratio':>8}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<22}{med * 1000:>10.0f}{min(values) * 1000:>9.0f}{max(values) * 1000:>9.0f}{med / base:>8.2f}")
    ratio = statistics.median(times["ntui"]) / base
    verdict = "OK" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"ratio ntui / minimal = {ratio:.2f} (target <= {TARGET_RATIO}): {verdict}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
