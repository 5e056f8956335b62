"""The app on a real pseudo-terminal that goes away (an ssh connection dropped, a tmux server killed): the process
ends, whatever Textual's shutdown does with output it can no longer write. Seen in a full test run: an app whose tmux
server was killed hung in its driver's close and went on polling the controller."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from ntui.ui.app import EXIT_GRACE_S
from tests.conftest import REPO
from tests.support.waits import WAIT_BOUND_S


def _app_on_a_pty() -> tuple[subprocess.Popen[bytes], int]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="36")
    proc = subprocess.Popen([sys.executable, "-m", "ntui"], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=REPO, start_new_session=True)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + WAIT_BOUND_S
    while b"Presets" not in seen:
        assert time.monotonic() < deadline, f"no first frame: {seen[-300:]!r}"
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 65536)
    return proc, master


def _ended_within(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return proc.returncode
        time.sleep(0.1)
    return None


@pytest.mark.parametrize("how", ["hangup", "sigterm"])
def test_the_app_ends_when_its_terminal_goes_or_it_is_told_to(how: str) -> None:
    proc, master = _app_on_a_pty()
    try:
        if how == "hangup":
            time.sleep(1.5)  # output goes on being drawn and not read: the terminal's buffer fills, as in tmux's end
            os.close(master)
            master = -1
        else:
            proc.send_signal(signal.SIGTERM)
        code = _ended_within(proc, max(WAIT_BOUND_S, EXIT_GRACE_S + 10))  # ends it does: not a claim of how soon
        assert code is not None, "the app did not end"
        assert code != 0 or how == "sigterm"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if master >= 0:
            os.close(master)
