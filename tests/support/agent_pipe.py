"""The real agent (``ntui agent --stdio``) started here over a pipe, as :class:`~ntui.core.remote.files.AgentFiles`
talks to it over an ssh master's channel, from a cluster's own state directory; the link dropped by killing that
channel and refusing new ones as ssh does (for the unit tests of what reads a cluster's files through its agent)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace

from ntui.core.remote.files import AgentFiles
from ntui.core.slurm.ssh import SshError

AGENT = (sys.executable, "-m", "ntui", "agent", "--stdio")


def link_down(host: str) -> SshError:
    """ssh's failure when the link is down, as the ssh runner raises it."""
    return SshError(f"ssh to {host}: the connection dropped", host=host,
                    words="the connection dropped (ssh: Broken pipe)")


class PipeRunner:
    """The ssh runner's channel, here: the agent started over a pipe with the cluster's state directory as its home's.
    ``drop()`` kills the open channels and refuses new ones (ssh's link-down failure) until ``down`` is cleared."""

    def __init__(self, name: str, state: Path) -> None:
        self.name = name
        self.target = SimpleNamespace(host=name)
        self.state = state
        self.down = False
        self.opened: list[subprocess.Popen[bytes]] = []

    def open_channel(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        if self.down:
            raise link_down(self.name)
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "NTUI_STATE_DIR": str(self.state)}, start_new_session=True)
        self.opened.append(proc)
        return proc

    def classify(self, returncode: int, stderr: str) -> None:
        return None

    def drop(self) -> None:
        self.down = True
        for proc in self.opened:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def agent_cluster(home: Path, name: str = "beta") -> Iterator[tuple[PipeRunner, AgentFiles]]:
    """A cluster's files through the real agent over a pipe (one reconnect, no back-off sleep), its state in ``home``;
    every channel closed at the end."""
    runner = PipeRunner(name, home)
    files = AgentFiles(runner, command=AGENT, reconnects=1, sleep=lambda _s: None)  # type: ignore[arg-type]
    try:
        yield runner, files
    finally:
        runner.down = False
        files.close()
        runner.drop()
