"""ntui.core.slurm against the real dev cluster: submit held, see it queued, test-only, release, details,
cancel; plus an unreachable controller. Skipped without a cluster (see conftest.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from ntui.core.slurm.actions import cancel, release
from ntui.core.slurm.runner import ControllerUnreachable, JobNotFound, SubprocessRunner, scrubbed_env
from ntui.core.slurm.sacct import final_state
from ntui.core.slurm.sacctmgr import user_associations
from ntui.core.slurm.sbatch import submit, test_only
from ntui.core.slurm.scontrol import list_partitions, show_job
from ntui.core.slurm.sdiag import rpc_counts_by_user
from ntui.core.slurm.sinfo import sinfo_partitions
from ntui.core.slurm.squeue import probe_squeue_fields, query_queue
from ntui.core.slurm.version import installed_version, slurm_version

from .conftest import DevCluster

pytestmark = [pytest.mark.cluster, pytest.mark.accounting_agnostic]


@pytest.fixture()
def env(dev_cluster: DevCluster) -> dict[str, str]:
    kept, _removed = scrubbed_env(dev_cluster.env)
    return kept


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "held job.sbatch"  # a space in the path on purpose
    script.write_text(
        "#!/bin/bash\n"
        '#SBATCH --job-name="ntui-layer test"\n'
        "#SBATCH --nodes=2\n"
        "#SBATCH --ntasks-per-node=1\n"
        "#SBATCH --gpus-per-node=1\n"
        "#SBATCH --time=00:02:00\n"
        f"#SBATCH --output={tmp_path}/%x-%j.out\n"
        f"#SBATCH --chdir={tmp_path}\n"
        "sleep 60\n"
    )
    return script


def _wait(runner: SubprocessRunner, env: dict[str, str], job_id: str, want: str, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    state = ""
    while time.monotonic() < deadline:
        jobs = query_queue(runner, job_ids=[job_id], states="all", env=env)
        state = jobs[0].state if jobs else "GONE"
        if re.fullmatch(want, state):
            return state
        time.sleep(0.5)
    pytest.fail(f"job {job_id} never reached {want} (last: {state})")


def test_slurm_layer_lifecycle(dev_cluster: DevCluster, env: dict[str, str], tmp_path: Path) -> None:
    runner = SubprocessRunner()
    assert slurm_version(runner, env=env) >= (22, 5)
    # the version ntui says it talks to is the cluster's (scripts/dev-cluster env --slurm V sets NTUI_DEV_SLURM)
    assert str(installed_version(runner, env=env)).startswith(dev_cluster.env.get("NTUI_DEV_SLURM", "22.05") + ".")
    assert probe_squeue_fields(runner, env=env) == ()  # every SQUEUE_FIELDS name is accepted

    parts = list_partitions(runner, env=env)
    default = next(p for p in parts if p.default)
    assert default.up and len(default.node_names) >= 2
    sinfo = sinfo_partitions(runner, env=env)
    assert any(p.name == default.name and p.default for p in sinfo)

    script = _script(tmp_path)
    check = test_only(runner, str(script), env=env)
    assert check.ok, check.raw
    assert check.processors == 2 and check.partition == default.name
    too_big = test_only(runner, str(script), extra_args=["--gpus-per-node=99"], env=env)
    assert not too_big.ok and too_big.reason

    before = rpc_counts_by_user(runner, env=env)
    sub = submit(runner, str(script), extra_args=["--hold"], env=env)
    assert sub.job_id.isdigit()
    try:
        (job,) = query_queue(runner, job_ids=[sub.job_id], env=env)
        assert job.job_id == sub.job_id
        assert job.name == "ntui-layer test"
        assert job.state == "PENDING" and job.reason == "JobHeldUser"
        assert job.workdir == str(tmp_path) and job.num_nodes == 2 and job.nodes == ()
        assert job.exit_code is not None  # the exit_code field works on 22.05
        assert sub.job_id in {j.job_id for j in query_queue(runner, env=env)}  # --me

        held = show_job(runner, sub.job_id, env=env)
        assert held.reason == "JobHeldUser" and held.std_out == f"{tmp_path}/ntui-layer test-{sub.job_id}.out"

        release(runner, sub.job_id, env=env)
        _wait(runner, env, sub.job_id, "RUNNING")
        details = show_job(runner, sub.job_id, env=env)
        assert details.state == "RUNNING"
        assert len(details.nodes) == 2
        assert set(details.gres_by_node) == set(details.nodes)
        assert all(len(idx) == 1 for idx in details.gres_by_node.values()), details.gres_by_node
        assert details.command == str(script)  # path with a space

        cancel(runner, sub.job_id, signal="USR1", env=env)
        cancel(runner, sub.job_id, env=env)
        state = _wait(runner, env, sub.job_id, "CANCELLED|COMPLETING|GONE")
        assert state in {"CANCELLED", "COMPLETING", "GONE"}
    finally:
        dev_cluster.run("scancel", sub.job_id)

    after = rpc_counts_by_user(runner, env=env)
    user = env.get("USER") or next(iter(after))
    if user in before and user in after:
        assert after[user] > before[user]
    if dev_cluster.accounting:
        # slurmdbd learns the end from slurmctld asynchronously: a moment after squeue shows it.
        deadline = time.monotonic() + 60
        rec = final_state(runner, sub.job_id, env=env)
        while (rec is None or rec.state != "CANCELLED") and time.monotonic() < deadline:
            time.sleep(1)
            rec = final_state(runner, sub.job_id, env=env)
        assert rec is not None and rec.state == "CANCELLED", rec
        assoc = user_associations(runner, env=env)
        assert assoc.available and {"ntuidev", "ntuiother"} <= set(assoc.accounts), assoc
        assert {"normal", "ntuilow"} <= set(assoc.qos), assoc
        assert ("ntuiother", ("normal", "ntuilow")) in assoc.pairs, assoc.pairs
    else:
        assert final_state(runner, sub.job_id, env=env) is None  # up --no-accounting: no slurmdbd
        assert not user_associations(runner, env=env).available
    with pytest.raises(JobNotFound):
        show_job(runner, "999999", env=env)
    with pytest.raises(JobNotFound):
        release(runner, "999999", env=env)


def test_unreachable_controller(dev_cluster: DevCluster, env: dict[str, str], tmp_path: Path) -> None:
    conf = dev_cluster.slurm_conf.read_text()
    conf = re.sub(r"(?m)^SlurmctldPort=.*$", "SlurmctldPort=16899", conf)
    conf = re.sub(r"(?m)^MessageTimeout=.*$", "", conf) + "\nMessageTimeout=2\n"
    dead = dev_cluster.slurm_conf.parent / f"dead-{tmp_path.name}.conf"
    dead.write_text(conf)
    try:
        runner = SubprocessRunner()
        with pytest.raises(ControllerUnreachable):
            query_queue(runner, env={**env, "SLURM_CONF": str(dead)}, timeout=30)
    finally:
        dead.unlink()


def _run_until_gone(dev_cluster: DevCluster, tmp_path: Path, sbatch_args: list[str], wrap: str,
                    poll: float = 0.5) -> str:
    """Submit ``--wrap WRAP`` and wait until the job has left the queue; its id."""
    sub = dev_cluster.run("sbatch", "--parsable", *sbatch_args, "-o", str(tmp_path / "%j.out"), "--wrap", wrap)
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 120
    while dev_cluster.run("squeue", "-h", "-j", job_id).stdout.strip():
        assert time.monotonic() < deadline, f"job {job_id} never left the queue"
        time.sleep(poll)
    return job_id


def test_a_job_that_just_left_the_queue_has_its_final_state_not_a_lagging_one(
    dev_cluster: DevCluster, env: dict[str, str], tmp_path: Path
) -> None:
    """Right after a job leaves squeue, slurmdbd may not have its end yet (sacct still says RUNNING or even
    PENDING: seen on the dev cluster for about half of such jobs). The final state ntui shows must be the
    controller's COMPLETED, never the lagging record; five jobs make a lag all but certain to occur."""
    from ntui.core.records.outcome import finished_outcome

    runner = SubprocessRunner()
    for i in range(5):
        job_id = _run_until_gone(dev_cluster, tmp_path, ["-N2", "-J", f"ntui-lag-{i}"], "srun sleep 1", poll=0.05)
        out = finished_outcome(runner, job_id, env=env)
        assert (out.state, out.finished, out.exit_code) == ("COMPLETED", True, "0:0"), out


def test_a_task_killed_by_sigkill_reads_137_on_every_version(
    dev_cluster: DevCluster, env: dict[str, str], tmp_path: Path
) -> None:
    """srun returns 137 for a task killed by SIGKILL (the OOM killer's signal), and the batch shell exits with
    it. sacct before 25.11 prints that as 9:0 (128 taken off), 25.11+ and scontrol as 137:0: ntui's outcome
    says 137:0 (SIGKILL) on every version, from accounting when there is accounting, else the controller."""
    from ntui.core.records.outcome import finished_outcome
    from ntui.core.slurm.common import exit_code_meaning

    runner = SubprocessRunner()
    job_id = _run_until_gone(dev_cluster, tmp_path, ["-N1", "-J", "ntui-kill9"], 'srun bash -c "kill -9 \\$\\$"')
    deadline = time.monotonic() + 120
    want_source = "sacct" if dev_cluster.accounting else "scontrol"
    out = finished_outcome(runner, job_id, env=env)
    while (not out.finished or out.source != want_source) and time.monotonic() < deadline:
        time.sleep(1)  # slurmdbd learns the end a moment after the controller
        out = finished_outcome(runner, job_id, env=env)
    assert (out.state, out.exit_code, out.source) == ("FAILED", "137:0", want_source), out
    assert exit_code_meaning(out.exit_code) == "SIGKILL"
    if dev_cluster.accounting:  # what sacct itself prints depends on the version (the reason for the above)
        raw = dev_cluster.run("sacct", "-j", job_id, "-X", "-n", "-P", "-o", "ExitCode").stdout.strip()
        version = installed_version(runner, env=env)
        assert version is not None
        assert raw == ("137:0" if version.at_least((25, 11)) else "9:0"), (str(version), raw)
