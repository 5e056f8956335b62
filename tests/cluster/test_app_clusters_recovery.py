"""The app's link to a cluster reached over ssh breaks and recovers (issue #45): the lane's own dev cluster behind a
private sshd on the loopback address, the app's side running no Slurm client (as ``test_app_clusters.py``), the
cluster's agent started over the master (``tests/support/remote_app.py``).

* The Logs tab follows a running job's rank log (two ranks printing numbered lines, submitted by the app's compose
  view so the cluster's history names its log directory) while the link breaks: the ssh master is killed, or the
  sshd processes serving it are stopped for 30 s. The follow recovers: the rank's lines keep coming, and once the
  job ended the pane's lines are the file's lines, none lost, none doubled. The view says the link dropped while it
  is down (a row's status, the triage line, the jobs banner or a notification).
* A submit whose sbatch answer is lost with the link (sbatch ran there, its answer held until the master is killed)
  is looked for by its comment after the link is back, never sent again: one job of that name in the cluster's
  queue, the compose view's line names it, and the cluster's history records it submitted once.

Nothing here stops a daemon of the cluster: only this test's own sshd and ssh master are broken.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import re
import shutil
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import DevCluster
from tests.support import sshd as sshd_support
from tests.support.notes import notified
from tests.support.remote_app import (
    cluster_side_env,
    compose_submit,
    master_pid,
    remote_runners,
    remote_settings,
    session_processes,
    submitted_id,
    write_numbered_preset,
)
from tests.support.screenshots_clusters import clusters_app
from tests.support.screenshots_jobs import settle_jobs, wait_until

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
#: a bound on the waits (a controller and an ssh login on a shared machine), not a claim about their speed
WAIT_S = 240.0
#: what the view says of a dropped link, in any of its places (rows, triage line, banner, notifications)
LINK_WORDS = re.compile(r"link down|dropped|reconnect|reopen|cannot reach|not answer", re.IGNORECASE)


class SaidNothing(AssertionError):
    """The link dropped and came back, and the view never said so."""


def _bin_dir(cluster: DevCluster) -> str:
    chosen = cluster.env.get("NTUI_SLURM_BIN_DIR", "").strip()
    if chosen:
        return chosen
    found = shutil.which("squeue", path=cluster.env.get("PATH"))
    assert found, "squeue not on the dev cluster's PATH"
    return os.path.dirname(found)


def _name(cluster: DevCluster) -> str:
    version = cluster.run("sinfo", "--version").stdout.split()[-1]
    return "c" + "".join(version.split(".")[:2])


@pytest.fixture
def remote(dev_cluster: DevCluster, remote_login: str) -> Iterator[tuple[str, DevCluster, sshd_support.Sshd, Path]]:
    """The lane's cluster behind a private sshd of its own, its sessions the second local user's: (its name in the
    app, the cluster, the sshd, the cluster side's state directory in that user's home, where its agent keeps the
    history)."""
    sim = dev_cluster.env.get("NTUI_DEV_SIM_PATH") or str(dev_cluster.state_dir / "simbin")
    env = cluster_side_env(dev_cluster.slurm_conf, _bin_dir(dev_cluster), sim)
    with sshd_support.private_sshd(environment=env, login_user=remote_login) as server:
        yield _name(dev_cluster), dev_cluster, server, server.state_dir


def _state(cluster: DevCluster, job_id: str) -> str:
    shown = cluster.run("squeue", "-h", "-j", job_id, "-o", "%T")
    return shown.stdout.strip() if shown.returncode == 0 else ""


def _file_lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def _numbered(lines: Any, rank: int) -> int:
    """How many of ``lines`` are the rank's numbered lines."""
    return sum(1 for x in lines if x.startswith(f"rank {rank} line "))


class Watch:
    """What the view says of the link, read at every step of a wait: the Logs tab's rows and triage line, the
    jobs banner and status line, the app's notifications."""

    def __init__(self, app: Any, screen: Any, pane: Any) -> None:
        self.app, self.screen, self.pane = app, screen, pane
        self.seen: list[str] = []

    def look(self) -> bool:
        texts = [f"row {k}: {r.status} | {r.last_line}" for k, r in self.pane.rows.items()]
        texts.append(f"triage: {self.pane.triage_line.text}")
        texts.append(f"banner: {self.screen.query_one('#jobs-banner').content}")
        texts.append(f"status: {self.screen.query_one('#jobs-status').content}")
        texts += [f"note: {n.title}: {n.message}" for n in notified(self.app)]
        for t in texts:
            if t not in self.seen:
                self.seen.append(t)
        return False

    def said(self) -> list[str]:
        return [t for t in self.seen if LINK_WORDS.search(t.split(": ", 1)[1] if ": " in t else t)]


async def _until(pilot: Any, check: Any, watch: Watch, timeout: float) -> None:
    await wait_until(pilot, lambda: watch.look() or check(), timeout=timeout)


@pytest.mark.parametrize("fault", ["kill-master", "block-30s"])
async def test_the_logs_tab_follows_a_rank_log_through_a_broken_link(
        remote: tuple[str, DevCluster, sshd_support.Sshd, Path], tmp_path: Path, fault: str) -> None:
    """``kill-master``: the ssh master (the ControlMaster process) is killed mid-follow; ``block-30s``: every sshd
    process serving the link is stopped (SIGSTOP) for 30 s mid-follow, while the job goes on writing. Either way
    the rank's new lines come again after it, and the pane's lines end equal to the file's."""
    from ntui.ui.widgets.log_pane import LogPane

    name, cluster, server, _state_dir = remote
    blocked_s = 30 if fault == "block-30s" else 0
    lines = 4 * (blocked_s + 45)  # one every 0.25 s: the job outlives the fault by half a minute or more
    here = server.user_dir(tmp_path.name)  # the login user's: its job writes there
    logs = here / "logs"
    write_numbered_preset("ntui-recover", here / "job", logs, lines=lines)
    settings = remote_settings({name: (_bin_dir(cluster), server)})
    runners = remote_runners(settings, server.directory / f"rt-{os.getpid()}")
    app = clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                       clock=None)
    app.initial_preset = "ntui-recover"
    job_id = ""
    stopped: list[int] = []
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            compose = await compose_submit(pilot, name, timeout=WAIT_S)
            job_id = submitted_id(compose.submit_line.plain) or ""
            assert job_id, compose.submit_line.plain
            await pilot.press("2")
            screen: Any = pilot.app.screen
            table = screen.table
            key = f"{name}/{job_id}"
            await wait_until(pilot, lambda: key in table.rows, timeout=WAIT_S)
            table.move_cursor(key=key)
            await settle_jobs(pilot, timeout=WAIT_S)
            await pilot.press("l")
            pane = screen.query_one(LogPane)
            watch = Watch(pilot.app, screen, pane)
            await _until(pilot, lambda: 0 in pane.rows and 1 in pane.rows, watch, WAIT_S)
            pane.open_rank(0)
            await _until(pilot, lambda: pane.view_keys == (0,) and _numbered(pane.log_lines, 0) >= 20, watch,
                         WAIT_S)
            rank0 = logs / f"ntui-recover-{job_id}-rank-0.out"
            assert _state(cluster, job_id) == "RUNNING"

            before = _numbered(pane.log_lines, 0)
            logins = server.logins()
            watch.seen.clear()  # from here on: what the view says of the fault
            if fault == "kill-master":
                pid = master_pid(runners[name])
                assert pid is not None, "no master runs"
                os.kill(pid, signal.SIGKILL)
            else:
                stopped += session_processes(server)
                assert stopped, "no sshd process serves the link"
                for p in stopped:
                    os.kill(p, signal.SIGSTOP)
                loop = asyncio.get_running_loop()
                until = loop.time() + blocked_s
                while loop.time() < until:
                    watch.look()
                    await pilot.pause(0.1)
                for p in stopped:
                    os.kill(p, signal.SIGCONT)
            # recovered: the rank's lines come again, past what the file held when the link broke
            written = _numbered(_file_lines(rank0), 0)
            await _until(pilot, lambda: _numbered(pane.log_lines, 0) > max(before, written) + 8, watch, WAIT_S)
            assert pane.rows[0].status == "following", pane.rows[0]
            if fault == "kill-master":
                assert server.logins() - logins == 1, "one new login: the master opened again once"
            # the job ends: every line of the file, once, in order
            await _until(pilot, lambda: list(pane.log_lines)[-1:] == ["rank 0 done"], watch, WAIT_S)
            assert list(pane.log_lines) == _file_lines(rank0)
            assert _numbered(pane.log_lines, 0) == lines
            await _until(pilot, lambda: pane.rows[1].last_line == "rank 1 done", watch, WAIT_S)
            said = watch.said()
    finally:
        for p in stopped:  # never leave a stopped process behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)
        if job_id:
            cluster.run("scancel", job_id)
    if not said:
        raise SaidNothing(f"the view never said the link dropped ({fault}); it said: {watch.seen}")


HELD_SBATCH = """#!/bin/sh
# sbatch, then its answer held until the test has killed the link under it (the answer is lost)
out=$("REAL" "$@")
rc=$?
touch "MARK"
sleep 45
printf '%s\\n' "$out"
exit $rc
"""

CLIENTS = ("squeue", "scontrol", "sinfo", "scancel", "sacct", "sacctmgr", "sprio", "sshare", "srun", "sstat",
           "sdiag", "sattach")


def _named(cluster: DevCluster, name: str) -> list[str]:
    """The ids of the jobs named ``name`` that the cluster's queue keeps, in any state."""
    return cluster.run("squeue", "-h", "--states=all", f"--name={name}", "-o", "%i").stdout.split()


def _held_bin(real: str, where: Path, mark: Path) -> Path:
    """A bin-dir of the cluster's own clients whose ``sbatch`` holds its answer (:data:`HELD_SBATCH`)."""
    where.mkdir(parents=True)
    for prog in CLIENTS:
        if os.path.exists(os.path.join(real, prog)):
            (where / prog).symlink_to(os.path.join(real, prog))
    sbatch = where / "sbatch"
    sbatch.write_text(HELD_SBATCH.replace("REAL", os.path.join(real, "sbatch")).replace("MARK", str(mark)))
    sbatch.chmod(0o755)
    return where


async def test_a_submit_whose_answer_is_lost_with_the_link_is_not_submitted_twice(
        remote: tuple[str, DevCluster, sshd_support.Sshd, Path], tmp_path: Path) -> None:
    """sbatch runs on the cluster; the master is killed before its answer comes back. The app writes the intent
    into the cluster's history first, so after the link is back it looks for the job by its comment, finds it
    and says it was submitted: one job of that name in the queue, the history's record submitted with its id."""
    from ntui.core.records.history import History

    name, cluster, server, state_dir = remote
    here = server.user_dir(tmp_path.name)  # the login user's: its sbatch and its job write there
    mark = here / "sbatch-ran"
    bin_dir = _held_bin(_bin_dir(cluster), here / "held-bin", mark)
    job_name = f"ntui-lost-{uuid.uuid4().hex[:8]}"  # its own: the queue keeps ended jobs of earlier runs a while
    write_numbered_preset(job_name, here / "job", here / "logs", lines=600)  # still queued at the end
    settings = remote_settings({name: (str(bin_dir), server)})
    runners = remote_runners(settings, server.directory / f"rt-{os.getpid()}")
    app = clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                       clock=None)
    app.initial_preset = job_name
    jobs: list[str] = []
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            compose = await compose_submit(pilot, name, timeout=WAIT_S, confirm=False)
            logins = server.logins()
            await pilot.press("y")
            await wait_until(pilot, mark.exists, timeout=WAIT_S)  # sbatch ran there; its answer is held
            jobs += _named(cluster, job_name)
            pid = master_pid(runners[name])
            assert pid is not None, "no master runs"
            os.kill(pid, signal.SIGKILL)
            await wait_until(pilot, lambda: compose.submit_line is not None
                             and "submitting" not in compose.submit_line.plain, timeout=WAIT_S)
            line = compose.submit_line.plain
            notes = [f"{n.title}: {n.message}" for n in notified(pilot.app)]
            job_id = submitted_id(line)
            jobs += [job_id] if job_id else []
            queued = _named(cluster, job_name)
            jobs += queued
            assert job_id is not None, (line, notes)
            assert queued == [job_id], (queued, line)
            assert f"to {name}" in line, line
            assert server.logins() - logins == 1, "the link came back through one new login"
            # the answer was lost, and the job found by its comment (not sbatch's answer, held until after the kill)
            assert any(job_id in n and "by its comment" in n for n in notes), notes
    finally:
        for j in dict.fromkeys(jobs):
            cluster.run("scancel", j)
    history = History(state_dir)  # the test's end: an index written here as root is removed with the user's dir
    try:
        mine = [e for e in history.entries() if e.job_name == job_name]
    finally:
        history.close()
    assert [(e.job_id, e.status) for e in mine] == [(job_id, "submitted")], mine
    assert state_dir.is_relative_to(pwd.getpwnam(server.user).pw_dir)  # the records: in the login user's home


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
