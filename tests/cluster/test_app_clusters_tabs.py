"""The Sweep and Stacks tabs and ``x`` of a job on a real cluster reached over ssh (issue #45): the lane's own dev
cluster behind a private sshd on the loopback address (as ``tests/cluster/test_app_clusters.py``'s ``own``), whose
sessions log in as a second local user (``ntuiremote``), the app's side running no Slurm client; every Slurm call,
file read and the shell go over that cluster's one master. The jobs are that user's, submitted on its side.

* **Sweep**: a 2-task sweep submitted on the cluster by ntui there (its record in the cluster's history, in the
  login user's home), one task at a time, the first one running: the tab (``v`` on a task's row) shows both tasks
  with their values, read from copies of the sweep's files there, and the running task's metric from its log there.
* **Stacks**: a running job whose one rank waits in a function of its own: the tab (``k``) takes its stack with the
  cluster's own interpreter and py-spy, as its agent says them. Where the node refuses ptrace (a container without
  ``SYS_PTRACE``), the refusal is what the tab shows, said with its reason (as ``tests/cluster/test_stacks.py``
  reads the refused node's answer).
* **x**: the app steps aside for ``srun --pty`` on that job over ``ssh -t`` through the master (no new login), and
  comes back when the shell ends (its standard input at its end here: the shell exits at once). The terminal's
  hand-over is a stand-in (a headless app cannot suspend).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import ClusterSettings, NotifySettings, Settings, SlurmSettings, cluster_runner
from ntui.core.slurm.runner import CommandRunner
from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_app_clusters import WAIT_S, _behind_sshd, _bin_dir, _laptop, _name, _state
from tests.support import sshd as sshd_support
from tests.support.notes import notified
from tests.support.screenshots_clusters import clusters_app
from tests.support.screenshots_jobs import settle_jobs, wait_until

pytestmark = pytest.mark.cluster

#: The rank of the stacks job: one Python process waiting in a function of its own.
WAITER = """import sys, time
def wait_here():
    print("ready", flush=True)
    time.sleep(600)
wait_here()
"""


@dataclass
class There:
    name: str
    cluster: DevCluster
    server: sshd_support.Sshd  # its sessions: the login user's, its history in that user's home


@pytest.fixture
def there(dev_cluster: DevCluster, remote_login: str, tmp_path_factory: pytest.TempPathFactory,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[There]:
    """The lane's own dev cluster behind a private sshd (the one cluster where these tests run jobs)."""
    with _behind_sshd({_name(dev_cluster): dev_cluster}, remote_login) as found:
        _laptop(monkeypatch, tmp_path_factory)
        name = next(iter(found))
        cluster, server = found[name]
        yield There(name, cluster, server)


def _app(there: There) -> Any:
    runtime = Path(there.server.directory) / f"rt-{os.getpid()}"  # short: the master's socket
    runtime.mkdir(mode=0o700, exist_ok=True)
    settings = Settings(
        slurm=SlurmSettings(timeout=60), notify=NotifySettings(bell=False, desktop=False, states=()),
        clusters=(ClusterSettings(name=there.name, ssh=sshd_support.HOST, bin_dir=_bin_dir(there.cluster),
                                  ssh_config=str(there.server.ssh_config), persist=900,
                                  agent=(sys.executable, "-m", "ntui", "agent", "--stdio")),))
    runners: dict[str, CommandRunner] = {
        there.name: cluster_runner(settings, there.name, environ={"XDG_RUNTIME_DIR": str(runtime)})}
    return clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                        clock=None)


def _until(what: str, check: Any, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(1)
    return got


async def _select(pilot: Any, key_of: Any) -> tuple[Any, str]:
    screen: Any = pilot.app.screen
    table = screen.table
    await wait_until(pilot, lambda: key_of(table.rows) is not None, timeout=WAIT_S)
    key = key_of(table.rows)
    table.move_cursor(key=key)
    await settle_jobs(pilot, timeout=WAIT_S)
    return screen, key


async def test_the_sweep_tab_reads_a_sweep_on_its_cluster_over_ssh(there: There, tmp_path: Path) -> None:
    from ntui.ui.widgets.sweep_pane import SweepPane

    here = there.server.user_dir(tmp_path.name)  # the login user's: its jobs write there
    logs = here / "logs"
    preset = here / "sweep.yaml"
    preset.write_text(json.dumps({
        "extends": str(REPO / "presets" / "local-sweep.yaml"), "name": "tabs-sweep", "logs": {"dir": str(logs)},
        "launcher": {"type": "srun", "python": sys.executable}, "env": {"NTUI_TRAIN_STEP_S": "1"},
        "args": ["--lr", "{lr}", "--seed", "{seed}", "--steps", "90"],
        "sweep": {"grid": {"lr": ["3e-4", "1e-4"], "seed": ["7"]}, "parallel": 1}}))
    # ntui on the cluster's side, as the login user (a login of its own): the record in its history there
    sub = there.server.run(sys.executable, "-m", "ntui", "submit", str(preset), timeout=120)
    assert sub.returncode == 0, sub.stdout + sub.stderr
    job = sub.stdout.strip().splitlines()[-1]
    try:
        _until("the first task's loss line", lambda: any(
            "loss=" in p.read_text(errors="replace") for p in logs.glob(f"tabs-sweep-{job}_0-rank-0.out")))
        app = _app(there)
        async with app.run_test(size=(150, 40)) as pilot:
            screen, key = await _select(pilot, lambda rows: next(
                (k for k in rows if str(k).startswith(f"{there.name}/{job}_")), None))
            await pilot.press("v")
            pane = screen.query_one(SweepPane)
            # accounting lists a task a moment after it starts (slurmdbd hears of it later than the controller;
            # on a busy 22.05 lane for over a minute): the tab takes the controller's word for the tasks sacct has
            # not seen end, so the first table already says RUNNING (the task runs 90 s)
            try:
                await wait_until(pilot, lambda: pane.table is not None and any(
                    r.metric is not None for r in pane.table.rows) and any(
                    r.index == 0 and r.state == "RUNNING" for r in pane.table.rows), timeout=WAIT_S)
            except TimeoutError:
                raise AssertionError(f"the tab never said task 0 RUNNING with a metric: {pane.table!r} "
                                     f"{pane.error!r}") from None
            table = pane.table
            assert table is not None and table.job_id == job and pane.failure is None, pane.error
            rows = {r.index: r for r in table.rows}
            assert set(rows) == {0, 1}
            assert dict(rows[0].values) == {"lr": "3e-4", "seed": "7"} and dict(rows[1].values)["lr"] == "1e-4"
            assert rows[0].state == "RUNNING" and rows[0].metric is not None and float(rows[0].metric) < 2.1, table
            assert rows[1].metric is None  # waits for the first (parallel: 1)
            assert "ntui-remote-" not in repr(table)
            assert str(pane.query_one("#sweep-head").render()).startswith(f"sweep {job} on {there.name}")
    finally:
        there.cluster.run("scancel", job)


@contextlib.contextmanager
def _stdin_at_its_end() -> Iterator[None]:
    """This process's standard input at its end (/dev/null) for the block: the shell run on it exits at once."""
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(null)


async def test_stacks_and_a_shell_of_a_running_job_over_ssh(there: There, tmp_path: Path) -> None:
    from ntui.core.stacks.group import Stacks
    from ntui.ui.widgets.stacks_pane import StacksPane

    here = there.server.user_dir(tmp_path.name)  # the login user's: its job writes there
    script = here / "waiter.py"
    script.write_text(WAITER)
    out = here / "waiter.out"
    # the login user's job (a step joins only its owner's job), submitted on its side (a login of its own)
    sub = there.server.run("sbatch", "--parsable", "-N", "1", "-n", "1", "-J", "ntui-tabs-stacks", "-t", "5",
                            "-o", str(out), "--wrap", f"srun {sys.executable} {script}")
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    try:
        _until("the job's rank to start", lambda: _state(there.cluster, job) == "RUNNING" and out.exists()
               and "ready" in out.read_text(errors="replace"))
        app = _app(there)
        handed: list[str] = []

        @contextlib.contextmanager
        def suspend() -> Iterator[None]:
            handed.append("suspended")
            yield
            handed.append("resumed")

        app.suspend = suspend
        async with app.run_test(size=(150, 40), notifications=True) as pilot:
            key = f"{there.name}/{job}"
            screen, _ = await _select(pilot, lambda rows: key if key in rows else None)
            await pilot.press("k")
            pane = screen.query_one(StacksPane)
            await wait_until(pilot, lambda: key in pane.taken or pane.failure is not None
                             or "No stacks" in pane._note, timeout=WAIT_S)
            assert key in pane.taken, pane._note
            stacks = pane.taken[key].value
            assert isinstance(stacks, Stacks) and stacks.job_id == job
            said = "\n".join(stacks.lines())
            # the rank's stack, or where the node refuses ptrace, that refusal in words (never nothing)
            assert any("wait_here" in c.where for c in stacks.classes) or any(
                "ptrace" in p for p in stacks.problems), said

            logins = there.server.logins()
            screen.table.focus()
            with _stdin_at_its_end():
                await pilot.press("x")
                await wait_until(pilot, lambda: any("back from the shell" in n.message for n in notified(app)),
                                 timeout=WAIT_S)
            assert handed == ["suspended", "resumed"]
            assert there.server.logins() == logins  # ssh -t over the master: no new login
        assert _state(there.cluster, job) == "RUNNING"  # the shell's step ended; the job goes on
    finally:
        there.cluster.run("scancel", job)
