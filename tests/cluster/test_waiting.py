"""Issue 24 ([waiting]) on the real dev cluster (two nodes of 2 CPUs): why a job waits and when it starts, a
dependency that can never be met, what would start sooner, ``ntui wait``'s exit codes, and the app in a real
terminal (tmux, its output captured raw): the bell and an OSC notification when a job ends, and the shell key.

The cluster is shared: every test touches only the jobs it submits (cancelled at the end), and a blocker waits its
turn behind other work (it needs the nodes free) before the test goes on.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_sampler import _held

pytestmark = pytest.mark.cluster

#: A blocker may wait this long for other work on the shared cluster to free the nodes.
NODES_FREE_S = 600


def ntui(cluster: DevCluster, *args: str, env: dict[str, str] | None = None, timeout: float = 300
         ) -> subprocess.CompletedProcess[str]:
    full = dict(cluster.env)
    full["PATH"] = f"{Path(sys.executable).parent}:{full.get('PATH', '')}"
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=full, capture_output=True, text=True,
                          errors="replace", timeout=timeout, cwd=str(REPO))


class Jobs:
    """The jobs one test submits (cancelled when it ends)."""

    def __init__(self, cluster: DevCluster, out: Path) -> None:
        self.cluster, self.out, self.ids = cluster, out, []  # type: ignore[var-annotated]

    def submit(self, *args: str) -> str:
        res = self.cluster.run("sbatch", "--parsable", "-o", str(self.out / "%x-%j.out"), *args)
        assert res.returncode == 0, res.stderr
        job = res.stdout.strip().split(";")[0]
        self.ids.append(job)
        return job

    def state(self, job: str) -> tuple[str, str]:
        res = self.cluster.run("squeue", "-h", "-j", job, "-t", "all", "-o", "%T|%r")
        line = res.stdout.strip().splitlines()[0] if res.stdout.strip() else "|"
        state, _, reason = line.partition("|")
        return state, reason

    def wait_for(self, job: str, ok: Callable[[str, str], bool], timeout: float, what: str) -> tuple[str, str]:
        deadline = time.monotonic() + timeout
        seen = ("", "")
        while time.monotonic() < deadline:
            seen = self.state(job)
            if ok(*seen):
                return seen
            time.sleep(1)
        raise AssertionError(f"job {job} never {what} (last: {seen})")

    def cancel(self) -> None:
        if self.ids:
            self.cluster.run("scancel", *self.ids)


@pytest.fixture
def jobs(dev_cluster: DevCluster, tmp_path: Path) -> Iterator[Jobs]:
    j = Jobs(dev_cluster, tmp_path)
    try:
        yield j
    finally:
        j.cancel()


def _estimate(jobs: Jobs, job: str) -> str:
    res = jobs.cluster.run("squeue", "-h", "-j", job, "-o", "%S")
    return res.stdout.strip()


# ---------------------------------------------------------------- why it waits


def test_a_job_behind_a_blocker_waits_for_resources_with_an_estimate(dev_cluster: DevCluster, jobs: Jobs) -> None:
    blocker = jobs.submit("-J", "wt-blocker", "-N2", "-n4", "-t", "00:05:00", "--wrap", "sleep 300")
    jobs.wait_for(blocker, lambda s, r: s == "RUNNING", NODES_FREE_S, "started (the cluster is busy)")
    waiting = jobs.submit("-J", "wt-waiting", "-N1", "-n1", "-t", "00:10:00", "--wrap", "true")
    _, reason = jobs.wait_for(waiting, lambda s, r: s == "PENDING" and r in ("Resources", "Priority")
                              and _estimate(jobs, waiting) not in ("", "N/A"), 60,
                              "got its reason and a start estimate")
    # Resources when it is first in line; Priority when other users' jobs on the shared cluster wait ahead of it
    said = "waiting for resources — 1 node to free up; estimated start " if reason == "Resources" else \
        "waiting in line: jobs with a higher priority are ahead of it for the resources it needs; estimated start "
    res = ntui(dev_cluster, "why", waiting)
    assert res.returncode == 0, res.stderr
    assert f"job {waiting} wt-waiting: {said}" in res.stdout, res.stdout
    data = json.loads(ntui(dev_cluster, "why", waiting, "--json").stdout)
    assert data["reason"] == reason and data["estimated_start"] and not data["never"]
    # 22.05's dev cluster runs Slurm's old default, priority/basic; 24.11 and 26.05 default to priority/multifactor
    config = jobs.cluster.run("scontrol", "show", "config").stdout
    if "priority/multifactor" in config:
        assert any(line.startswith("priority ") and "in partition debug" in line for line in data["lines"]), data
    else:
        assert any("not priority/multifactor" in line for line in data["lines"]), data
    every = ntui(dev_cluster, "why")  # all pending jobs of the user, one squeue --start
    assert f"job {waiting}: {said}" in every.stdout
    show = ntui(dev_cluster, "show", waiting)
    assert f"Why: {said}" in show.stdout
    _details_say(dev_cluster, waiting, said[:1].upper() + said[1:].rstrip())


def _details_say(cluster: DevCluster, job: str, words: str) -> None:
    """The app's details pane, against the real cluster (Pilot, the real runner)."""
    import asyncio

    from ntui.core.config import QueueSettings, Settings, slurm_runner
    from ntui.ui.widgets.job_details import JobDetailsPanel
    from tests.support.screenshots_jobs import jobs_app, settle_jobs

    async def run() -> str:
        os.environ["SLURM_CONF"] = str(cluster.slurm_conf)
        settings = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))
        app = jobs_app(runner=slurm_runner(settings.slurm), settings=settings, user=os.environ.get("USER", "root"),
                       clock=None)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle_jobs(pilot, timeout=60)
            screen = app.screen
            screen.table.move_cursor(key=job)  # type: ignore[attr-defined]
            await settle_jobs(pilot, timeout=60)
            screen._tick()  # type: ignore[attr-defined]
            await pilot.pause()
            box = screen.query_one(JobDetailsPanel).query_one("#details-why")
            return str(box.render())

    assert words in asyncio.run(run())


def test_a_dependency_on_a_failed_job_is_said_to_never_start(dev_cluster: DevCluster, jobs: Jobs) -> None:
    failed = jobs.submit("-J", "wt-fails", "-t", "00:02:00", "--wrap", "exit 3")
    jobs.wait_for(failed, lambda s, r: s == "FAILED", NODES_FREE_S, "failed")
    after = jobs.submit("-J", "wt-after", "-t", "00:02:00", f"--dependency=afterok:{failed}", "--wrap", "true")
    jobs.wait_for(after, lambda s, r: r == "DependencyNeverSatisfied", 60, "was found never satisfiable")
    res = ntui(dev_cluster, "why", after)
    assert (f"waiting for job {failed} to end OK (COMPLETED, exit code 0) — it FAILED, so this one will never "
            "start: cancel it or change its dependency") in res.stdout, res.stdout + res.stderr
    data = json.loads(ntui(dev_cluster, "why", after, "--json").stdout)
    assert data["never"] and data["reason"] == "DependencyNeverSatisfied"


# ---------------------------------------------------------------- what would start sooner


def test_what_if_a_two_node_job_with_one_node_busy_starts_now_on_one(dev_cluster: DevCluster, jobs: Jobs,
                                                                       tmp_path: Path) -> None:
    busy = jobs.submit("-J", "wt-half", "-w", "nid001", "-N1", "-n2", "-t", "00:05:00", "--wrap", "sleep 300")
    jobs.wait_for(busy, lambda s, r: s == "RUNNING", NODES_FREE_S, "started on nid001")
    # nid002 free (other users' jobs on the shared cluster may hold it for a while)
    _until(lambda: dev_cluster.run("sinfo", "-h", "-n", "nid002", "-o", "%T").stdout.strip() == "idle",
           NODES_FREE_S, "nid002 idle")
    res = ntui(dev_cluster, "check", "local-srun", "--what-if", "--set", f"logs.dir={tmp_path}",
               "--set", "sbatch.time=00:10:00")
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    one = next(line for line in lines if line.startswith("1 node instead of 2"))
    assert "starts now" in one and "nid002" in one and "--set sbatch.nodes=1" in one
    base = next(line for line in lines if line.startswith("as it is"))
    assert "starts now" not in base
    assert lines[-1].startswith("1 node instead of 2 starts now:")


# ---------------------------------------------------------------- ntui wait


def test_wait_exits_with_the_jobs_outcome(dev_cluster: DevCluster, jobs: Jobs) -> None:
    ok = jobs.submit("-J", "wt-ok", "-t", "00:02:00", "--wrap", "true")
    bad = jobs.submit("-J", "wt-bad", "-t", "00:02:00", "--wrap", "exit 3")
    done = ntui(dev_cluster, "wait", ok, "--interval", "1", timeout=NODES_FREE_S)
    assert done.returncode == 0, done.stderr
    assert f"job {ok} ended: COMPLETED" in done.stderr
    failed = ntui(dev_cluster, "wait", ok, bad, "--interval", "1", timeout=NODES_FREE_S)
    assert failed.returncode == 4, failed.stderr
    assert f"job {bad} ended: FAILED (exit code 3:0)" in failed.stderr


# ---------------------------------------------------------------- the app in a real terminal (tmux)


_SERVERS = itertools.count()


@contextmanager
def tmux_app(cluster: DevCluster, tmp_path: Path, *, interval: int = 2) -> Iterator[Callable[..., str]]:
    """The app in a private tmux server (its own socket), 120x36, its output piped raw to a file, squeue every
    ``interval`` seconds. Yields ``tmux(*args)``; the server (ours only) is killed at the end."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (scripts/bootstrap installs it)")
    # A server of its own per use: the one the last test killed may still be exiting under the same name (a new
    # session then joins a dying server and the pane stays empty)
    socket = f"ntui-wt-{os.getpid()}-{next(_SERVERS)}"
    config = tmp_path / "config" / "ntui"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text(f"queue: {{active-interval: {interval}, idle-interval: {interval}}}\n")
    env = {**cluster.env, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "PATH": f"{Path(sys.executable).parent}:{cluster.env.get('PATH', '')}", "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items() if k in (
        "SLURM_CONF", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "PATH", "NTUI_DEV_CLUSTER_DIR"))

    def tmux(*args: str) -> str:
        res = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=30,
                             env={**os.environ, "TERM": "xterm-256color"})
        return res.stdout

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "ntui", "-x", "120", "-y", "36",
         f"cd {_quote(str(REPO))} && env {exports} {_quote(sys.executable)} -m ntui; sleep 30")
    tmux("pipe-pane", "-O", "-t", "ntui", f"cat >> {_quote(str(tmp_path / 'raw.out'))}")
    try:
        yield tmux
    finally:
        tmux("kill-server")


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _until(check: Callable[[], bool], timeout: float, what: str, shown: Callable[[], str] | None = None) -> None:
    """Wait for ``check``; on a timeout the failure says what the terminal showed (``shown``: the pane)."""
    if not _within(check, timeout):
        screen = f"; the terminal showed:\n{shown()}" if shown is not None else ""
        raise AssertionError(f"never: {what}{screen}")


def _within(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return False


def _jobs_view(tmux: Callable[..., str], job: str | None) -> None:
    """Wait for the compose view to settle (its form takes the focus once the preset loads), leave the field, open
    the jobs view (it watches the queue from then on) and wait for ``job``'s row (None: for the view)."""
    def pane() -> str:
        return tmux("capture-pane", "-p", "-t", "ntui")

    _until(lambda: "Slurm: partitions" in pane(), 60, "the compose view loaded the cluster's partitions", pane)
    # The form takes the focus when its preset has loaded, at a moment the terminal does not show: a "2" typed
    # before that goes to the view, one typed into a field goes there. So: leave the field, ask for the view, and
    # ask again until it is there (on a busy machine the first try may land before the focus did).
    for _ in range(12):
        tmux("send-keys", "-t", "ntui", "Escape")
        time.sleep(0.5)
        tmux("send-keys", "-t", "ntui", "2")
        if _within(lambda: "Queue · my jobs" in pane(), 10):
            break
    else:
        raise AssertionError(f"never: the jobs view; the terminal showed:\n{pane()}")
    if job is None:
        return
    _until(lambda: any(line.startswith(f"│{job} ") for line in pane().splitlines()), 60, "the job's row", pane)


def test_the_app_rings_and_notifies_when_a_job_ends(dev_cluster: DevCluster, jobs: Jobs, tmp_path: Path) -> None:
    release = tmp_path / "release"
    job = jobs.submit("-J", "wt-notify", "-t", "00:05:00", "--wrap", _held(release))
    jobs.wait_for(job, lambda s, r: s == "RUNNING", NODES_FREE_S, "started")
    raw = tmp_path / "raw.out"
    with tmux_app(dev_cluster, tmp_path) as tmux:
        _jobs_view(tmux, job)  # the row is shown: the view follows the job
        release.touch()
        ended = f"ntui: job {job} COMPLETED"
        _until(lambda: ended.encode() in raw.read_bytes() if raw.exists() else False, 120, "the end notice")
    data = raw.read_bytes()
    # inside tmux ($TMUX is set) the OSC sequences come wrapped in its passthrough, each ESC doubled
    osc9 = f"\x1bPtmux;\x1b\x1b]9;{ended}: wt-notify\x07\x1b\\".encode()
    osc777 = f"\x1bPtmux;\x1b\x1b]777;notify;{ended};wt-notify\x07\x1b\\".encode()
    assert osc9 in data and osc777 in data, data[-2000:]
    at = data.index(osc9)
    assert data[at - 1:at] == b"\x07"  # the bell, just before


def test_a_job_submitted_from_another_shell_rings_at_its_start_and_end(dev_cluster: DevCluster,
                                                                       tmp_path: Path) -> None:
    """The jobs view open in a real terminal (squeue once a minute: what it learns, it learns from the job's
    journal), then ``ntui submit`` from another shell into the same history: the start and the end are told, the
    bell and OSC 9/777 each, once."""
    release = tmp_path / "release"
    program = tmp_path / "held.py"  # runs until the test has seen the start told
    program.write_text(f"import os, time\nwhile not os.path.exists({str(release)!r}):\n    time.sleep(0.5)\n")
    raw = tmp_path / "raw.out"
    with tmux_app(dev_cluster, tmp_path, interval=60) as tmux:
        _jobs_view(tmux, None)
        res = ntui(dev_cluster, "submit", "local-srun", "--set", f"script={program}", "--set", "sbatch.nodes=1",
                   "--set", "sbatch.ntasks-per-node=1", "--set", f"logs.dir={tmp_path / 'logs'}",
                   "--set", "sbatch.job-name=wt-other-shell", env={"XDG_STATE_HOME": str(tmp_path / "state")})
        assert res.returncode == 0, res.stderr
        job = res.stdout.split()[0]
        started, ended = f"ntui: job {job} started", f"ntui: job {job} COMPLETED"
        try:
            _until(lambda: started.encode() in raw.read_bytes() if raw.exists() else False, NODES_FREE_S,
                   "the start notice")
            release.touch()
            _until(lambda: ended.encode() in raw.read_bytes() if raw.exists() else False, 120, "the end notice")
        finally:
            dev_cluster.run("scancel", job)
        time.sleep(3)  # a later journal tick or queue answer must not tell it again
    data = raw.read_bytes()
    for said in (started, ended):
        osc9 = f"\x1bPtmux;\x1b\x1b]9;{said}".encode()
        assert data.count(osc9) == 1, (said, data[-3000:])
        assert data[data.index(osc9) - 1:data.index(osc9)] == b"\x07"  # the bell, just before
        assert f"\x1bPtmux;\x1b\x1b]777;notify;{said}".encode() in data


def test_the_shell_key_opens_a_shell_in_the_job_and_comes_back(dev_cluster: DevCluster, jobs: Jobs,
                                                               tmp_path: Path) -> None:
    job = jobs.submit("-J", "wt-shell", "-N1", "-n1", "-t", "00:05:00", "--wrap", "sleep 300")
    jobs.wait_for(job, lambda s, r: s == "RUNNING", NODES_FREE_S, "started")
    node = dev_cluster.run("squeue", "-h", "-j", job, "-o", "%N").stdout.strip()
    with tmux_app(dev_cluster, tmp_path) as tmux:
        def pane() -> str:
            return tmux("capture-pane", "-p", "-t", "ntui")

        _jobs_view(tmux, job)
        tmux("send-keys", "-t", "ntui", "/")  # the filter: only this job (others share the cluster)
        time.sleep(1)  # the filter box takes the focus
        tmux("send-keys", "-t", "ntui", "-l", job)
        _until(lambda: f"filter '{job}': 1 shown" in pane(), 30, "the queue filtered to the job")
        tmux("send-keys", "-t", "ntui", "Enter")
        time.sleep(1)
        tmux("send-keys", "-t", "ntui", "x")
        try:
            _until(lambda: f"a shell in job {job} on {node}" in pane(), 60, "the shell's banner")
        except AssertionError:
            raise AssertionError(pane()) from None
        time.sleep(2)  # srun's pty is up
        tmux("send-keys", "-t", "ntui", "-l", 'echo "SJID=$SLURM_JOB_ID on $SLURMD_NODENAME"')
        tmux("send-keys", "-t", "ntui", "Enter")
        _until(lambda: f"SJID={job} on {node}" in pane(), 60, "the shell inside the job")
        tmux("send-keys", "-t", "ntui", "-l", "exit")
        tmux("send-keys", "-t", "ntui", "Enter")
        _until(lambda: "Queue · my jobs" in pane() and "back from the shell" in pane(), 60, "the app back")
