"""``ntui --cluster NAME`` against the real dev cluster, reached through a private sshd on the loopback address:
the "laptop" side (root, these tests' own user) runs ntui with a PATH that holds ssh and no Slurm client; the
"cluster" side (the sshd's sessions) logs in as a second local user (``ntuiremote``, made by ``scripts/dev-cluster
remote-user``) whose home holds the records its agent writes, sees the dev cluster's ``SLURM_CONF`` and runs its
clients from the cluster's ``bin-dir``. The jobs these tests follow, watch or cancel over ssh are that user's.

A held job is submitted (the script on sbatch's standard input), listed, shown and cancelled; nothing of it runs.
A short job's batch log is followed from the laptop side through ``ntui agent --stdio`` on the cluster's side
(one channel of the master) until the job ends: every line once; again with the link blocked for 30 s mid-follow
(the sshd processes serving it stopped): the follow resumes from its offset, no line lost or doubled.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import DevCluster
from tests.support import sshd as sshd_support
from tests.support.remote_app import cluster_record, cluster_side_env, laptop_path, session_processes

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
#: ps, found once: a test may give this process the laptop's PATH (ssh alone)
PS = shutil.which("ps") or "/bin/ps"


@pytest.fixture(scope="module")
def cluster_sshd(dev_cluster: DevCluster, remote_login: str) -> Iterator[sshd_support.Sshd]:
    """The cluster's side: sessions of the second user, its history (written and read by the agent) in its home."""
    # the simulated nvidia-smi on the sessions' PATH: srun gives its PATH to the GPU watch step's tasks
    sim = dev_cluster.env.get("NTUI_DEV_SIM_PATH") or str(dev_cluster.state_dir / "simbin")
    env = cluster_side_env(dev_cluster.slurm_conf, _slurm_bin_dir(dev_cluster), sim)
    with sshd_support.private_sshd(environment=env, login_user=remote_login) as server:
        yield server


def _slurm_bin_dir(dev_cluster: DevCluster) -> str:
    """Where this lane's Slurm clients are (another version's under NTUI_SLURM_BIN_DIR)."""
    chosen = dev_cluster.env.get("NTUI_SLURM_BIN_DIR", "").strip()
    if chosen:
        return chosen
    found = shutil.which("squeue", path=dev_cluster.env.get("PATH"))
    assert found, "squeue not on the dev cluster's PATH"
    return os.path.dirname(found)


@pytest.fixture
def laptop(dev_cluster: DevCluster, cluster_sshd: sshd_support.Sshd, tmp_path: Path) -> dict[str, str]:
    """The environment of ntui on the "laptop": ssh on PATH, no Slurm, no SLURM_CONF, the cluster in its settings."""
    bin_dir = laptop_path(tmp_path / "laptop-bin")
    config = tmp_path / "config" / "ntui"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text(
        f"clusters:\n  dev:\n    ssh: {sshd_support.HOST}\n    bin-dir: {_slurm_bin_dir(dev_cluster)}\n"
        f"    ssh-config: {cluster_sshd.ssh_config}\n    persist: 900\n")
    runtime = cluster_sshd.directory / f"rt-{os.getpid()}-{tmp_path.name[-6:]}"  # short: the master's socket
    runtime.mkdir(mode=0o700)
    return {"PATH": bin_dir, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_RUNTIME_DIR": str(runtime), "NTUI_STATE_DIR": str(tmp_path / "state"), "LANG": "C.UTF-8",
            "PYTHONPATH": str(ROOT), "NTUI_REMOTE_AGENT": f"{sys.executable} -m ntui agent --stdio"}


def ntui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", "--cluster", "dev", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, errors="replace", timeout=300, stdin=subprocess.DEVNULL)


def dev_cluster_name(dev_cluster: DevCluster) -> str | None:
    from ntui.core.slurm.scontrol import cluster_name

    return cluster_name(env={"SLURM_CONF": str(dev_cluster.slurm_conf)})


def _cluster_dir(server: sshd_support.Sshd, tmp_path: Path) -> Path:
    """This test's directory on the cluster's side, the login user's (its jobs write their logs there)."""
    return server.user_dir(tmp_path.name)


def test_the_cluster_side_is_a_second_user_and_the_laptop_has_no_slurm(cluster_sshd: sshd_support.Sshd,
                                                                      laptop: dict[str, str],
                                                                      remote_login: str) -> None:
    """The sessions run as the second user, in its own home; the laptop's PATH finds ssh and no Slurm client."""
    me = pwd.getpwuid(os.getuid()).pw_name
    assert remote_login != me
    said = cluster_sshd.run("sh", "-c", 'id -un; echo "$HOME"; command -v squeue')
    assert said.returncode == 0, said.stderr
    user, home, squeue = said.stdout.split()
    assert (user, home) == (remote_login, pwd.getpwnam(remote_login).pw_dir)
    assert cluster_sshd.state_dir.is_relative_to(home)
    assert os.path.basename(squeue) == "squeue"  # the cluster side has its Slurm
    assert shutil.which("ssh", path=laptop["PATH"]) is not None
    assert all(shutil.which(c, path=laptop["PATH"]) is None for c in ("squeue", "sbatch", "scontrol", "srun"))
    assert "SLURM_CONF" not in laptop


def test_submit_list_show_and_cancel_a_held_job_over_ssh(dev_cluster: DevCluster, cluster_sshd: sshd_support.Sshd,
                                                         laptop: dict[str, str], tmp_path: Path,
                                                         remote_login: str) -> None:
    there = _cluster_dir(cluster_sshd, tmp_path)
    logs = there / "cluster-logs"
    marker = there / "pwned"
    logins = cluster_sshd.logins()
    sub = ntui(laptop, "submit", str(ROOT / "presets/local-accelerate.yaml"), "--hold",
               "--set", f"logs.dir={logs}", "--set", f"env.NOTE=x; touch {marker}")
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip()
    assert job_id.isdigit(), sub.stdout
    try:
        assert logs.is_dir()  # made on the cluster's side before sbatch
        assert not (tmp_path / "state").exists()  # no history entry on the laptop: it is the cluster's
        before = cluster_sshd.logins()
        entry = cluster_record(cluster_sshd, job_id)
        reads = cluster_sshd.logins() - before  # the record read in a session of its own, not ntui's
        assert entry is not None and entry.get("status") == "submitted"
        assert entry.get("cluster") == dev_cluster_name(dev_cluster)
        # the records are the second user's, in its home (not root's): every file its agent wrote is its own
        user = pwd.getpwnam(remote_login)
        assert cluster_sshd.state_dir.is_relative_to(user.pw_dir)
        assert not cluster_sshd.state_dir.is_relative_to(pwd.getpwuid(os.getuid()).pw_dir)
        written = [p for p in cluster_sshd.state_dir.rglob("*")]
        assert any(p.parent.name == "records" and p.suffix == ".json" for p in written), written
        assert {p.stat().st_uid for p in written} == {user.pw_uid}
        assert logs.stat().st_uid == user.pw_uid
        owner = dev_cluster.run("squeue", "-h", "-j", job_id, "-o", "%u")
        assert owner.stdout.strip() == remote_login, owner  # submitted as that user
        held = dev_cluster.run("scontrol", "write", "batch_script", job_id, "-")
        assert held.returncode == 0, held.stderr
        assert "#SBATCH" in held.stdout and f"x; touch {marker}" in held.stdout  # the rendered script, via stdin

        listed = ntui(laptop, "jobs", job_id)
        assert listed.returncode == 0, listed.stderr
        assert job_id in listed.stdout and "PENDING" in listed.stdout

        shown = ntui(laptop, "show", job_id)
        assert shown.returncode == 0, shown.stderr
        assert "PENDING" in shown.stdout
        # the cluster's own Slurm version (this lane's; the laptop has no sinfo), asked with the job's scontrol
        version = dev_cluster.run(os.path.join(_slurm_bin_dir(dev_cluster), "sinfo"), "--version")
        assert version.returncode == 0, version.stderr
        assert f"Slurm: {version.stdout.split()[-1]}" in shown.stdout, shown.stdout

        history = ntui(laptop, "history", "--json", "-n", "5")  # the cluster's history, read by its agent
        assert history.returncode == 0, history.stderr
        assert f'"job_id": "{job_id}"' in history.stdout

        report = ntui(laptop, "report", job_id, "--json")  # its record there, its (absent) GPU samples there
        assert report.returncode == 0, report.stderr
        assert f'"job_id": "{job_id}"' in report.stdout and '"state": "PENDING"' in report.stdout, report.stdout
        assert str(logs) in report.stdout and "ntui-remote-" not in report.stdout  # the cluster's paths

    finally:
        cancelled = ntui(laptop, "cancel", job_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert not marker.exists()
    # one login for the ntui processes, their Slurm calls and the agent's channel: the master outlives each process
    assert cluster_sshd.logins() - logins - reads == 1


@pytest.mark.parametrize("blocked_s", [0, 30])
def test_a_jobs_log_is_followed_on_the_cluster_through_the_agent(dev_cluster: DevCluster, laptop: dict[str, str],
                                                                 cluster_sshd: sshd_support.Sshd, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 blocked_s: int) -> None:
    """``ntui --cluster dev logs JOB --follow`` in this process (the laptop's settings and sockets; no Slurm
    client on its side): the job is not in the cluster's history, so Slurm there names its batch log; the log is
    read by the agent and the follow ends with the job. ``blocked_s``: the link is blocked that long mid-follow
    (every sshd process serving it stopped), while the job goes on writing."""
    from ntui.cli import common, logs
    from ntui.core.remote.files import AGENT_ENV

    out_file = cluster_sshd.user_dir(f"{tmp_path.name}/cluster-logs") / "wrap-%j.out"
    lines = 40 if not blocked_s else 4 * (blocked_s + 15)
    # the second user's job, submitted on the cluster's side (a login of its own, before the follow's)
    sub = cluster_sshd.run("sbatch", "--parsable", "-o", str(out_file), "-J", "ntui-ssh-follow",
                           "--wrap", f"for i in $(seq 1 {lines}); do echo line $i; sleep 0.25; done")
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip().split(";")[0]
    for key in ("PATH", "HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "NTUI_STATE_DIR"):
        monkeypatch.setenv(key, laptop[key])
    monkeypatch.delenv("SLURM_CONF", raising=False)
    monkeypatch.setenv(AGENT_ENV, f"{sys.executable} -m ntui agent --stdio")
    monkeypatch.setattr(logs, "JOB_CHECK_S", 1.0)
    stopped: list[int] = []

    def block() -> None:
        time.sleep(5)
        stopped.extend(session_processes(cluster_sshd))
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(blocked_s)
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)

    blocker = threading.Thread(target=block, daemon=True)
    common.select_cluster("dev")
    try:
        args = argparse.Namespace(job_id=job_id, rank=None, follow=True, lines=1000, triage=False, cluster=None)
        if blocked_s:
            blocker.start()
        code = logs.cmd_logs(args)
    finally:
        if blocked_s:
            blocker.join(blocked_s + 60)
        for pid in stopped:  # never leave a stopped process behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        common.select_cluster(None)
        dev_cluster.run("scancel", job_id)
    said = capsys.readouterr()
    assert code == 0, said.err
    assert said.out.splitlines() == [f"line {i}" for i in range(1, lines + 1)], said.err
    assert "job ended (COMPLETED)" in said.err
    assert not blocked_s or stopped, "no sshd process was stopped"


def test_gpus_over_ssh_streams_the_step_and_the_step_ends_on_the_cluster(dev_cluster: DevCluster,
                                                                        cluster_sshd: sshd_support.Sshd,
                                                                        laptop: dict[str, str]) -> None:
    """``ntui --cluster dev gpus JOB --once``: the watch step runs on the cluster's side, its lines come over one
    channel; once ntui has its sample and stops reading, the step ends there (no ``ntui-gpu-watch`` step left).
    The job is the second user's (a step joins only its owner's job)."""
    sub = cluster_sshd.run("sbatch", "--parsable", "-N", "2", "--gres=gpu:4", "-J", "ntui-ssh-gpus", "-o", "/dev/null",
                          "--wrap", "sleep 240")
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip().split(";")[0]

    def steps() -> list[str]:
        return dev_cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i %j").stdout.splitlines()

    try:
        deadline = time.monotonic() + 120
        while dev_cluster.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip() != "RUNNING":
            assert time.monotonic() < deadline, "the job did not start"
            time.sleep(1)
        res = ntui({**laptop, "COLUMNS": "200"}, "gpus", job_id, "--once", "--timeout", "90")
        assert res.returncode == 0, res.stderr
        assert f"job {job_id}: 8 GPUs on 2 node(s)" in res.stdout and "SIMULATED" in res.stdout, res.stdout
        deadline = time.monotonic() + 60  # the relay stops srun at the next line it cannot write
        while any("ntui-gpu-watch" in s for s in steps()):
            assert time.monotonic() < deadline, steps()
            time.sleep(1)
    finally:
        dev_cluster.run("scancel", job_id)


def test_a_sweep_over_ssh_runs_its_manifest_there_and_its_failed_task_is_resubmitted_there(
        dev_cluster: DevCluster, cluster_sshd: sshd_support.Sshd, laptop: dict[str, str], tmp_path: Path) -> None:
    """``ntui --cluster dev submit`` of a 2 x 3 sweep: its manifest and records are written on the cluster's side by
    the agent, the array is submitted once (checked against the cluster's MaxArraySize, asked there), every task
    reads its values from the manifest there; ``sweep`` shows the tasks from the cluster's files, ``resubmit
    --failed`` runs the failed task alone there (``--test-only`` first: sbatch reads the script on its standard
    input)."""
    import json

    from ntui.core.jobfiles.manifest import job_file_path, read_job_file

    there = _cluster_dir(cluster_sshd, tmp_path)
    logs = there / "cluster-logs"
    fail = cluster_sshd.user_dir(f"{tmp_path.name}/fail")
    sets = ["--set", f"logs.dir={logs}", "--set", f"launcher.python={sys.executable}",
            "--set", "env.NTUI_TRAIN_FAIL_TASK=4", "--set", f"env.NTUI_TRAIN_FAIL_DIR={fail}",
            "--set", "env.NTUI_TRAIN_STEP_S=0.2"]
    preset = str(ROOT / "presets/local-sweep.yaml")
    jobs: list[str] = []

    def ended(job: str) -> dict[str, object]:
        deadline = time.monotonic() + 240
        while True:
            res = ntui(laptop, "sweep", job, "--json")
            assert res.returncode == 0, res.stderr
            data = json.loads(res.stdout)
            if all(t["state"] not in (None, "PENDING", "RUNNING", "COMPLETING") for t in data["tasks"]):
                return data
            assert time.monotonic() < deadline, data["counts"]
            time.sleep(2)

    try:
        tried = ntui(laptop, "submit", preset, "--test-only", *sets)
        assert tried.returncode == 0 and tried.stdout.startswith("ok: dev would start it at"), tried.stderr
        sub = ntui(laptop, "submit", preset, *sets)
        assert sub.returncode == 0, sub.stderr
        job = sub.stdout.strip()
        jobs.append(job)
        assert job.isdigit() and "kept in its history there" in sub.stderr, sub.stderr
        assert len(list(logs.glob("local-sweep-sweep-*.manifest"))) == 1  # written there before sbatch
        data = ended(job)
        rows = {t["task"]: t for t in data["tasks"]}  # type: ignore[attr-defined]
        assert sorted(rows) == list(range(6)) and rows[5]["values"] == {"lr": "1e-4", "seed": "3"}
        assert rows[4]["state"] == "FAILED" and all(rows[i]["state"] == "COMPLETED" for i in (0, 1, 2, 3, 5)), rows
        assert float(rows[0]["metric"]) > 0  # its rank-0 log there: the task ran with its values
        entry = cluster_record(cluster_sshd, job)
        assert entry is not None and "#SBATCH --array=0-5%2" in entry["script"]
        assert not (tmp_path / "state").exists()  # nothing on the laptop's side

        again = ntui(laptop, "resubmit", job, "--failed")
        assert again.returncode == 0, again.stderr
        second = again.stdout.strip()
        jobs.append(second)
        assert f"resubmitted tasks 4 of sweep {job} as {second} on dev" in again.stderr, again.stderr
        assert len(list(logs.glob("local-sweep-sweep-*.manifest"))) == 1  # the same manifest
        redo = read_job_file(job_file_path(str(logs), "local-sweep", second))
        assert redo is not None and redo.indices == (4,) and redo.resubmit_of == job
        data2 = ended(second)
        assert [(t["task"], t["state"]) for t in data2["tasks"]] == [(4, "COMPLETED")]  # type: ignore[attr-defined]
        assert data2["resubmit_of"] == job
    finally:
        for j in jobs:
            dev_cluster.run("scancel", j)
