"""The app with real clusters reached over ssh (issue #45): a private sshd per cluster on the loopback address, whose
sessions log in as a second local user (``ntuiremote``: ``scripts/dev-cluster remote-user``), its home holding the
records, and see that cluster's ``SLURM_CONF``; the app's side runs no Slurm client (the local cluster is off, its
PATH holds ssh alone), each cluster polled through its own ssh master. The jobs the app acts on are that user's.

Jobs that run (the GPU tab, compose to cancel) run on the lane's own cluster only, in every lane (22.05, 24.11,
26.05): scripts/test runs the lanes side by side, and a job on another lane's cluster would take the nodes its
timing-sensitive tests need. The two-cluster view (``two_clusters``: the 26.05 lane beside 24.11) submits only held
jobs on the borrowed cluster: a held job on each shows in the queue with its cluster; cancelling one (``c`` then
``y`` on its row) cancels it on its own cluster only: the other cluster's job is still pending there."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import ClusterSettings, NotifySettings, Settings, SlurmSettings, cluster_runner
from ntui.core.jobs.queue import ENDED
from ntui.core.slurm.runner import CommandRunner
from ntui.ui.widgets.job_details import JobDetailsPanel
from tests.cluster.conftest import DevCluster
from tests.support import sshd as sshd_support
from tests.support.remote_app import AGENT, cluster_record, cluster_side_env, laptop_path
from tests.support.screenshots_clusters import clusters_app
from tests.support.screenshots_jobs import settle_jobs, wait_until

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
#: a bound on the waits (two controllers and two ssh logins on a shared machine), not a claim about their speed
WAIT_S = 240.0


def _bin_dir(cluster: DevCluster) -> str:
    chosen = cluster.env.get("NTUI_SLURM_BIN_DIR", "").strip()
    if chosen:
        return chosen
    found = shutil.which("squeue", path=cluster.env.get("PATH"))
    assert found, "squeue not on the dev cluster's PATH"
    return os.path.dirname(found)


def _name(cluster: DevCluster) -> str:
    """The cluster's name in the app: its Slurm version's (``c2205``), as ``sinfo --version`` says it."""
    version = cluster.run("sinfo", "--version").stdout.split()[-1]
    return "c" + "".join(version.split(".")[:2])


@contextmanager
def _behind_sshd(found: dict[str, DevCluster], login_user: str) -> Iterator[dict[str, tuple[DevCluster,
                                                                                           sshd_support.Sshd]]]:
    """Each cluster behind a private sshd of its own, whose sessions log in as ``login_user`` (its records in that
    user's home) and see that cluster's SLURM_CONF and Slurm clients."""
    reason = sshd_support.why_not(login_user)
    if reason is not None:
        pytest.skip(reason)
    with contextlib.ExitStack() as stack:
        yield {name: (cluster, stack.enter_context(sshd_support.private_sshd(environment=cluster_side_env(
            cluster.slurm_conf, _bin_dir(cluster), cluster.env.get("NTUI_DEV_SIM_PATH")
            or str(cluster.state_dir / "simbin")), login_user=login_user)))
               for name, cluster in found.items()}


def _laptop(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """This process (the app's side) with the laptop's PATH: ssh, no Slurm client."""
    path = laptop_path(tmp_path_factory.mktemp("laptop-bin"))
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("SLURM_CONF", raising=False)
    assert shutil.which("squeue") is None and shutil.which("ssh") is not None


@pytest.fixture
def own(dev_cluster: DevCluster, remote_login: str, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, tuple[DevCluster, sshd_support.Sshd]]]:
    """The lane's own dev cluster behind a private sshd: the one cluster where these tests run jobs."""
    with _behind_sshd({_name(dev_cluster): dev_cluster}, remote_login) as found:
        _laptop(monkeypatch, tmp_path_factory)
        yield found


@pytest.fixture
def clusters(dev_cluster: DevCluster, other_dev_cluster: DevCluster, remote_login: str,
             tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[dict[str, tuple[DevCluster, sshd_support.Sshd]]]:
    """The lane's own cluster and another lane's of another version (held with its disruption lock shared), each
    behind a private sshd of its own."""
    found = {_name(dev_cluster): dev_cluster, _name(other_dev_cluster): other_dev_cluster}
    assert len(found) == 2, "two clusters of different versions"
    with _behind_sshd(found, remote_login) as both:
        _laptop(monkeypatch, tmp_path_factory)
        yield both


def _state_cell(table: Any, key: str) -> str:
    """The State cell of a row, wherever the Cluster column puts it."""
    return str(table.get_row(key)[[c.key for c in table.columns].index("state")])


def _submit_held(server: sshd_support.Sshd, name: str) -> str:
    """A held job of the login user, submitted on the cluster's side (a login of its own)."""
    done = server.run("sbatch", "--parsable", "--hold", f"--job-name={name}", "--time=5", "--nodes=1",
                       "--output=/dev/null", "--wrap", "sleep 30")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _state(cluster: DevCluster, job_id: str) -> str:
    shown = cluster.run("squeue", "-h", "-j", job_id, "-o", "%T")
    return shown.stdout.strip() if shown.returncode == 0 else ""


@pytest.mark.two_clusters
async def test_two_clusters_in_one_queue_and_cancel_on_its_own_cluster(
        clusters: dict[str, tuple[DevCluster, sshd_support.Sshd]], tmp_path: Path) -> None:
    here, other = list(clusters)  # the lane's own cluster first
    runtime = Path(next(iter(clusters.values()))[1].directory) / f"rt-{os.getpid()}"  # short: the masters' sockets
    runtime.mkdir(mode=0o700, exist_ok=True)
    settings = Settings(
        slurm=SlurmSettings(timeout=60), notify=NotifySettings(bell=False, desktop=False, states=()),
        clusters=tuple(ClusterSettings(name=name, ssh=sshd_support.HOST, bin_dir=_bin_dir(cluster),
                                       ssh_config=str(server.ssh_config), persist=900)
                       for name, (cluster, server) in clusters.items()))
    environ = {"XDG_RUNTIME_DIR": str(runtime)}
    runners: dict[str, CommandRunner] = {name: cluster_runner(settings, name, environ=environ) for name in clusters}
    jobs = {name: _submit_held(server, f"ntui-two-{name}") for name, (_, server) in clusters.items()}
    logins = {name: server.logins() for name, (_, server) in clusters.items()}
    app = clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                       clock=None)
    try:
        async with app.run_test(size=(150, 36)) as pilot:
            screen: Any = pilot.app.screen
            table = screen.table
            keys = {name: f"{name}/{job_id}" for name, job_id in jobs.items()}
            await wait_until(pilot, lambda: all(k in table.rows for k in keys.values()), timeout=WAIT_S)
            assert [c.key for c in table.columns][:2] == ["cluster", "id"]
            for name, key in keys.items():
                row = table.get_row(key)
                assert row[:3] == [name, jobs[name], f"ntui-two-{name}"]
                assert "PENDING" in row
            # the details of the other cluster's job: scontrol show job asked of that cluster, over its master
            details = screen.query_one(JobDetailsPanel)
            table.move_cursor(key=keys[other])
            # (the panel shows the row the cursor was on until the selection settles: another lane's held job of the
            # same name on that cluster, a job id apart, had been shown; so the view waited for is this job's)
            await wait_until(pilot, lambda: details.view is not None and details.view.details is not None
                             and details.view.cluster == other and details.view.job_id == jobs[other], timeout=WAIT_S)
            assert details.view is not None and details.view.details is not None
            assert details.view.details.job_id == jobs[other] and details.view.details.name == f"ntui-two-{other}"
            table.move_cursor(key=keys[here])
            await settle_jobs(pilot, timeout=WAIT_S)
            await pilot.press("c")
            await pilot.press("y")
            await wait_until(pilot, lambda: _state(clusters[here][0], jobs[here]) in ("", "CANCELLED"),
                             timeout=WAIT_S)
            await settle_jobs(pilot, timeout=WAIT_S)
            # the other cluster's job is untouched, and still listed with its cluster
            assert _state(clusters[other][0], jobs[other]) == "PENDING"
            assert table.get_row(keys[other])[0] == other
            # the cancelled job keeps an ended row with the final state its own cluster gave
            await wait_until(pilot, lambda: table.row_tag(keys[here]) == ENDED
                             and _state_cell(table, keys[here]) == "CANCELLED", timeout=WAIT_S)
    finally:
        for name, (cluster, _) in clusters.items():
            cluster.run("scancel", jobs[name])
    # one login per cluster for every squeue, details and the cancel: the master is reused
    for name, (_, server) in clusters.items():
        assert server.logins() - logins[name] == 1, name


async def test_the_gpu_tab_streams_a_remote_jobs_gpus_and_the_step_ends_on_its_cluster(
        own: dict[str, tuple[DevCluster, sshd_support.Sshd]]) -> None:
    """A running GPU job on the lane's cluster, reached over ssh: the GPU tab (``g`` on its row) streams its watch
    step over that cluster's ssh master (the SIMULATED nvidia-smi on its nodes), and once the tab is hidden the relay
    ends the step there (no ``ntui-gpu-watch`` step left)."""
    import time

    from ntui.ui.widgets.gpu_pane import GpuPane

    clusters = own
    name = next(iter(clusters))
    cluster = clusters[name][0]
    runtime = Path(clusters[name][1].directory) / f"rt-{os.getpid()}"
    runtime.mkdir(mode=0o700, exist_ok=True)
    settings = Settings(
        slurm=SlurmSettings(timeout=60), notify=NotifySettings(bell=False, desktop=False, states=()),
        clusters=tuple(ClusterSettings(name=n, ssh=sshd_support.HOST, bin_dir=_bin_dir(c),
                                       ssh_config=str(server.ssh_config), persist=900)
                       for n, (c, server) in clusters.items()))
    runners: dict[str, CommandRunner] = {n: cluster_runner(settings, n, environ={"XDG_RUNTIME_DIR": str(runtime)})
                                         for n in clusters}
    sim = cluster.env.get("NTUI_DEV_SIM_PATH") or str(cluster.state_dir / "simbin")
    sub = clusters[name][1].run("sbatch", "--parsable", "-N", "1", "--gres=gpu:4", "-J", "ntui-two-gpus", "-t", "5",
                                "-o", "/dev/null", "--wrap", "sleep 240")  # the login user's: the step joins it
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip().split(";")[0]

    def steps() -> list[str]:
        return [s for s in cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i %j").stdout.splitlines()
                if "ntui-gpu-watch" in s]

    try:
        deadline = time.monotonic() + WAIT_S
        while _state(cluster, job_id) != "RUNNING":
            assert time.monotonic() < deadline, "the job did not start"
            time.sleep(1)
        app = clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                           clock=None)
        async with app.run_test(size=(150, 40)) as pilot:
            screen: Any = pilot.app.screen
            table = screen.table
            key = f"{name}/{job_id}"
            await wait_until(pilot, lambda: key in table.rows, timeout=WAIT_S)
            table.move_cursor(key=key)
            await settle_jobs(pilot, timeout=WAIT_S)
            pane = screen.query_one(GpuPane)
            pane.gpu_watch.nvidia_smi = f"{sim}/nvidia-smi"  # the nodes' SIMULATED tool (not on the login's PATH)
            await pilot.press("g")
            await wait_until(pilot, lambda: pane.state == "streaming" and pane.board is not None
                             and sum(len(g) for g in pane.board.latest().values()) == 4, timeout=WAIT_S)
            assert (pane.cluster, pane.job_id) == (name, job_id)
            assert pane.board is not None and pane.board.summary().simulated
            assert steps(), "the watch step runs on the cluster"
            await pilot.press("d")  # hidden: the local ssh ends, the relay stops srun at its next line
            await wait_until(pilot, lambda: pane.state == "paused", timeout=WAIT_S)
            assert pane.wait_stopped(30)
            deadline = time.monotonic() + 60
            while steps():
                assert time.monotonic() < deadline, steps()
                time.sleep(1)
    finally:
        cluster.run("scancel", job_id)


PRESET = """name: ntui-remote
description: one rank of the distributed check, sleeping so that it can be cancelled (submitted over ssh)
launcher:
  type: srun
  python: PYTHON
sbatch:
  nodes: 1
  ntasks-per-node: 1
  cpus-per-task: 1
  time: "00:05:00"
env:
  OMP_NUM_THREADS: "1"
  NTUI_CHECK_SLEEP: "300"
setup:
  - echo ntui-remote-ready
script: SCRIPT
args: []
logs:
  dir: LOGS
"""


async def test_compose_check_submit_queue_logs_and_cancel_over_ssh(
        own: dict[str, tuple[DevCluster, sshd_support.Sshd]], tmp_path: Path) -> None:
    """The app's own path to a cluster reached over ssh: the compose view chooses it (``c``), ``t`` asks sbatch
    --test-only there, ``s`` then ``y`` submits there; the jobs view (``2``) lists the job with its cluster, its
    Logs tab (``l``) shows the line the job printed on that cluster, and ``c`` then ``y`` cancels it there: an
    ended row with CANCELLED. ntui is installed there (its agent): the job's record is in the cluster's history, in
    the login user's home."""
    from ntui.core.paths import user_presets_dir
    from ntui.ui.screens.compose import ComposeScreen
    from ntui.ui.screens.confirm import ConfirmSubmitScreen
    from ntui.ui.widgets.log_pane import LogPane

    clusters = own
    name = next(iter(clusters))
    cluster = clusters[name][0]
    logs = clusters[name][1].user_dir(tmp_path.name) / "logs"  # made there, by the login user
    presets = user_presets_dir()
    presets.mkdir(parents=True, exist_ok=True)
    (presets / "ntui-remote.yaml").write_text(PRESET.replace("PYTHON", sys.executable).replace(
        "SCRIPT", str(ROOT / "examples" / "ddp_check.py")).replace("LOGS", str(logs)))
    runtime = Path(clusters[name][1].directory) / f"rt-{os.getpid()}"
    runtime.mkdir(mode=0o700, exist_ok=True)
    settings = Settings(
        slurm=SlurmSettings(timeout=60), notify=NotifySettings(bell=False, desktop=False, states=()),
        clusters=tuple(ClusterSettings(name=n, ssh=sshd_support.HOST, bin_dir=_bin_dir(c),
                                       ssh_config=str(server.ssh_config), persist=900, agent=AGENT)
                       for n, (c, server) in clusters.items()))
    runners: dict[str, CommandRunner] = {n: cluster_runner(settings, n, environ={"XDG_RUNTIME_DIR": str(runtime)})
                                         for n in clusters}
    app = clusters_app(local=None, clusters=runners, settings=settings, user=os.environ.get("USER", "root"),
                       clock=None)
    app.initial_preset = "ntui-remote"
    job_id = ""
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            await pilot.press("1")
            compose = next(s for s in pilot.app.screen_stack if isinstance(s, ComposeScreen))
            await wait_until(pilot, lambda: compose.cluster is not None and compose.rendered is not None
                             and compose.rendered.spec is not None, timeout=WAIT_S)
            assert compose.destinations == tuple(clusters)  # no Slurm here: only the clusters over ssh
            while compose.destination != name:
                await pilot.press("c")
                await wait_until(pilot, lambda: compose.cluster is not None, timeout=WAIT_S)
            assert compose.cluster is not None and compose.cluster.partitions  # asked of that cluster
            await pilot.press("t")
            await wait_until(pilot, lambda: compose.check_line is not None
                             and "running" not in compose.check_line.plain, timeout=WAIT_S)
            assert compose.check_line is not None and "would start" in compose.check_line.plain, \
                compose.check_line.plain
            await pilot.press("s")
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmSubmitScreen), timeout=WAIT_S)
            assert pilot.app.screen.destination == name  # type: ignore[attr-defined]
            await pilot.press("y")
            await wait_until(pilot, lambda: compose.submit_line is not None
                             and "submitting" not in compose.submit_line.plain, timeout=WAIT_S)
            submitted = compose.submit_line.plain if compose.submit_line is not None else ""
            assert f"to {name}" in submitted, submitted
            job_id = submitted.split("submitted job ", 1)[1].split()[0]
            assert job_id.isdigit() and _state(cluster, job_id) in ("PENDING", "RUNNING")

            await pilot.press("2")
            screen: Any = pilot.app.screen
            table = screen.table
            key = f"{name}/{job_id}"
            await wait_until(pilot, lambda: key in table.rows, timeout=WAIT_S)
            assert table.get_row(key)[:2] == [job_id, "ntui-remote"]  # one cluster: no Cluster column
            table.move_cursor(key=key)
            await settle_jobs(pilot, timeout=WAIT_S)
            await pilot.press("l")
            pane = screen.query_one(LogPane)
            # the batch log (the tab's first log over ssh) on that cluster: the line the job's setup printed there
            await wait_until(pilot, lambda: "ntui-remote-ready" in pane.log_lines, timeout=WAIT_S)
            assert f"on {name}" in pane.triage_line.text and str(logs) in pane.triage_line.text

            table.focus()
            table.move_cursor(key=key)
            await settle_jobs(pilot, timeout=WAIT_S)
            await pilot.press("c")
            await pilot.press("y")
            await wait_until(pilot, lambda: _state(cluster, job_id) in ("", "CANCELLED"), timeout=WAIT_S)
            await wait_until(pilot, lambda: key in table.rows and table.row_tag(key) == ENDED
                             and _state_cell(table, key) == "CANCELLED", timeout=WAIT_S)
    finally:
        if job_id:
            cluster.run("scancel", job_id)
    # the job's record: in the cluster's history, in the login user's home
    server = clusters[name][1]
    record = cluster_record(server, job_id)
    assert record is not None and record["job_name"] == "ntui-remote" and record["cluster"], record
    assert server.state_dir.is_relative_to(pwd.getpwnam(server.user).pw_dir)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
