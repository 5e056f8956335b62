"""The jobs view says when a cluster's link drops and when it is back (issue #45), at the fake edge: the app's own
files of the cluster (:func:`ntui.core.remote.files.connect`, the agent client with its reconnects), over an ssh
runner whose channel is the real agent started here on a pipe, and whose channels are refused while the test holds
the link down. The follow of the job's log waits inside the agent client's reconnects meanwhile: the view says so
from the link's state (the banner, the status line, the Logs tab's rows), and clears it once the link is back."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from textual.widgets import Static

from ntui.core.remote.link import ROW_DOWN
from ntui.core.slurm.runner import CommandResult
from ntui.core.slurm.ssh import SshRunner, SshTarget
from ntui.ui.widgets.log_pane import LogPane
from tests.support.clusters_view import clusters_view, status_text
from tests.support.fakes import FakeRunner
from tests.support.screenshots_clusters import cluster_runner, clusters_app, job_line, link_down, show_job
from tests.support.screenshots_jobs import wait_until

ROOT = Path(__file__).resolve().parents[2]
SIZE = (150, 36)


class _AgentOverPipe(SshRunner):
    """A cluster's ssh runner at the fake edge: its Slurm answers a :class:`FakeRunner`'s, its channel the real
    agent run here (``python -m ntui agent --stdio``, its history in ``state``); ``down``: every channel refused as
    ssh refuses one when the master is gone."""

    def __init__(self, inner: FakeRunner, state: Path) -> None:
        super().__init__(SshTarget(host="beta", control_dir=state / "sockets"), name="beta")
        self.inner, self.state = inner, state
        self.down = False
        self.procs: list[subprocess.Popen[bytes]] = []

    def run(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
            input: str | None = None) -> CommandResult:  # noqa: A002
        return self.inner.run(argv, timeout=timeout, env=env, input=input)

    def open_channel(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        if self.down:
            raise link_down("beta")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NTUI_STATE_DIR": str(self.state)}
        proc = subprocess.Popen([sys.executable, "-m", "ntui", "agent", "--stdio"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
        self.procs.append(proc)
        return proc

    def drop(self) -> None:
        """The link drops: the agent's channel ends, and no new one opens until :attr:`down` is False."""
        self.down = True
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _banner(screen: object) -> str:
    return str(screen.query_one("#jobs-banner", Static).content)  # type: ignore[attr-defined]


async def test_the_view_says_the_link_dropped_while_the_follow_reconnects_and_clears_when_it_is_back(
        tmp_path: Path) -> None:
    log = tmp_path / "train-1234.out"
    log.write_text("step 1\nstep 2\n")
    beta = _AgentOverPipe(cluster_runner(job_line("1234", "train", "RUNNING", reason="None"),
                                         shows={"1234": show_job("1234", "train", "RUNNING", out=str(log))}),
                          tmp_path / "beta-home")
    app = clusters_app(local=None, clusters={"beta": beta})
    try:
        async with clusters_view(app, "beta/1234", size=SIZE, select="beta/1234") as (pilot, screen):
            await pilot.press("l")
            pane = screen.query_one(LogPane)
            await wait_until(pilot, lambda: "batch" in pane.rows and pane.rows["batch"].last_line == "step 2")
            assert pane.rows["batch"].status == "following"
            assert _banner(screen) == ""
            assert "link" not in status_text(screen)

            beta.drop()
            with log.open("a") as f:
                f.write("step 3\n")
            # the follow's request broke and waits in its reconnects: the banner, the status line and the row say so
            await wait_until(pilot, lambda: "beta: link down" in _banner(screen))
            await wait_until(pilot, lambda: pane.rows["batch"].status == ROW_DOWN)
            assert "reconnecting" in _banner(screen)
            assert "beta: link down" in status_text(screen)
            assert list(pane.log_lines) == ["step 1", "step 2"]

            beta.down = False  # the channel opens again: the follow resumes at its offset, the view says it is back
            await wait_until(pilot, lambda: list(pane.log_lines) == ["step 1", "step 2", "step 3"], timeout=60)
            await wait_until(pilot, lambda: pane.rows["batch"].status == "following")
            await wait_until(pilot, lambda: _banner(screen) == "")
            assert "link down" not in status_text(screen)
            with log.open("a") as f:
                f.write("step 4\n")
            await wait_until(pilot, lambda: list(pane.log_lines)[-1:] == ["step 4"], timeout=60)
            assert list(pane.log_lines) == ["step 1", "step 2", "step 3", "step 4"]  # each line once
            assert app.links.of("beta").drops == 1
    finally:
        for proc in beta.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
