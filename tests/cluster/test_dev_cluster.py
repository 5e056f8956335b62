"""The dev cluster itself: daemons up, two idle/busy nodes, idempotent ``up``, a 2-node x 2-task job; with
accounting (the default ``up``) also MariaDB + slurmdbd, the accounts in sacctmgr and enforced associations, and
without (``up --no-accounting``) none of that. Every test here runs in both modes (``accounting_agnostic``)."""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from ntui.core.slurm.scontrol import parse_cluster_name

from .conftest import DevCluster

pytestmark = [pytest.mark.cluster, pytest.mark.accounting_agnostic]

NODES = ("nid001", "nid002")
USABLE = {"idle", "mixed", "allocated", "completing"}
FINISHED = {
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE",
}  # fmt: skip


def _require_script_cluster(c: DevCluster) -> None:
    if not (c.state_dir / "run" / "slurmctld.pid").exists():
        pytest.skip(f"SLURM_CONF={c.slurm_conf} is not a scripts/dev-cluster cluster (no pid files)")


def test_status_reports_daemons_and_nodes(dev_cluster: DevCluster) -> None:
    _require_script_cluster(dev_cluster)
    res = dev_cluster.run(str(dev_cluster.script), "status", timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    daemons = ["munged", "slurmctld", "slurmd nid001", "slurmd nid002"]
    if dev_cluster.accounting:
        daemons += ["mariadbd", "slurmdbd"]
        assert "accounting: on" in res.stdout, res.stdout
    else:
        assert "accounting: off" in res.stdout, res.stdout
    for daemon in daemons:
        line = next((ln for ln in res.stdout.splitlines() if ln.startswith(daemon + " ")), "")
        assert line.endswith("alive"), f"{daemon!r} not alive in:\n{res.stdout}"
    states = _node_states(dev_cluster)
    assert set(states) >= set(NODES), states
    for node in NODES:
        assert states[node] in USABLE, f"{node} is {states[node]}"


def test_up_again_is_idempotent_and_starts_nothing(dev_cluster: DevCluster) -> None:
    _require_script_cluster(dev_cluster)
    if os.geteuid() != 0:
        pytest.skip("scripts/dev-cluster up needs root")
    pids_before = _pids(dev_cluster.state_dir)
    mode = [] if dev_cluster.accounting else ["--no-accounting"]
    res = dev_cluster.run(str(dev_cluster.script), "up", *mode, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "starting" not in res.stderr, res.stderr  # nothing was (re)started: quick by construction
    assert _pids(dev_cluster.state_dir) == pids_before


def test_up_in_the_other_mode_is_refused_while_running(dev_cluster: DevCluster) -> None:
    _require_script_cluster(dev_cluster)
    if os.geteuid() != 0:
        pytest.skip("scripts/dev-cluster up needs root")
    other = ["--no-accounting"] if dev_cluster.accounting else []
    pids_before = _pids(dev_cluster.state_dir)
    res = dev_cluster.run(str(dev_cluster.script), "up", *other, timeout=120)
    assert res.returncode != 0 and "down' first to switch" in res.stderr, res.stderr
    assert _pids(dev_cluster.state_dir) == pids_before
    mode = dev_cluster.run(str(dev_cluster.script), "accounting", timeout=30)
    assert mode.stdout.strip() == ("on" if dev_cluster.accounting else "off")


def test_accounting_associations_and_enforcement(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """With accounting: the cluster, both accounts and the user in slurmdbd, and an unknown account refused
    with Slurm's reason. Without: sacctmgr and sacct say accounting is off, and the account is not checked."""
    user = dev_cluster.run("id", "-un").stdout.strip()
    assoc = dev_cluster.run("sacctmgr", "-nP", "show", "assoc", "where", f"user={user}",
                             "format=cluster,account,qos")
    probe = dev_cluster.run("sbatch", "--test-only", "--account=nosuchacct", f"--chdir={tmp_path}", "--wrap=true")
    if dev_cluster.accounting:
        assert assoc.returncode == 0, assoc.stderr
        rows = {tuple(ln.split("|")) for ln in assoc.stdout.split()}
        name = parse_cluster_name(dev_cluster.slurm_conf.read_text())  # each version its own (ntuidev, ntuidev2411...)
        assert name is not None and name.startswith("ntuidev"), name
        assert {(name, "ntuidev", "normal"), (name, "ntuiother", "normal,ntuilow")} <= rows, rows
        assert probe.returncode != 0
        assert "Invalid account or account/partition combination specified" in probe.stderr, probe.stderr
    else:
        assert assoc.returncode != 0 and "accounting_storage" in assoc.stderr, assoc.stdout + assoc.stderr
        sacct = dev_cluster.run("sacct", "-X", "-n")
        assert "accounting storage is disabled" in sacct.stderr, sacct.stderr
        assert probe.returncode == 0, probe.stderr  # no associations to enforce


def test_env_prints_exports(dev_cluster: DevCluster) -> None:
    _require_script_cluster(dev_cluster)
    res = dev_cluster.run(str(dev_cluster.script), "env", timeout=30)
    assert res.returncode == 0, res.stderr
    assert f"export SLURM_CONF={dev_cluster.slurm_conf}" in res.stdout.splitlines()
    assert any(ln.startswith("export NTUI_DEV_SIM_PATH=") for ln in res.stdout.splitlines())


def test_two_nodes_two_tasks_each(dev_cluster: DevCluster, tmp_path: Path) -> None:
    out = tmp_path / "ranks-%j.out"
    sub = dev_cluster.run(
        "sbatch", "--parsable", "--job-name=ntui-test-2x2", "--nodes=2", "--ntasks-per-node=2",
        "--time=00:02:00", f"--output={out}", "--wrap", "srun -l printenv SLURMD_NODENAME",
        timeout=60,
    )  # fmt: skip
    assert sub.returncode == 0, sub.stderr
    job_id = sub.stdout.strip().split(";")[0]
    try:
        state = _wait_finished(dev_cluster, job_id, timeout=180)
        assert state == "COMPLETED", f"job {job_id} ended {state}"
        text = Path(str(out).replace("%j", job_id)).read_text(errors="replace")
        ranks = dict(ln.split(": ", 1) for ln in text.split("\n") if ": " in ln)
        assert sorted(ranks) == ["0", "1", "2", "3"], text
        assert Counter(ranks.values()) == {"nid001": 2, "nid002": 2}, text
    finally:
        dev_cluster.run("scancel", job_id, timeout=30)


def _node_states(c: DevCluster) -> dict[str, str]:
    res = c.run("sinfo", "-h", "-N", "-o", "%N %T", timeout=30)
    assert res.returncode == 0, res.stderr
    return dict(ln.split() for ln in res.stdout.splitlines() if ln.strip())


def _pids(state_dir: Path) -> dict[str, str]:
    return {p.name: p.read_text().strip() for p in sorted((state_dir / "run").glob("*.pid"))}


def _wait_finished(c: DevCluster, job_id: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        res = c.run("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T", timeout=30)
        state = res.stdout.strip()
        if state in FINISHED:
            return state
        time.sleep(1)
    pytest.fail(f"job {job_id} not finished after {timeout}s (last state {state!r})")


def test_job_ids_and_requeue_delay_as_configured(dev_cluster: DevCluster) -> None:
    """The cluster runs its own job-id range (so clusters side by side derive different rendezvous ports) and
    the short step-credential lifetime (the requeue delay) that scripts/dev-cluster configures."""
    _require_script_cluster(dev_cluster)
    res = dev_cluster.run("scontrol", "show", "config", timeout=30)
    assert res.returncode == 0, res.stderr
    conf = dict(re.findall(r"^(\w+)\s+=\s+(.*?)\s*$", res.stdout, flags=re.M))
    first, last = int(conf["FirstJobId"]), int(conf["MaxJobId"])
    # scripts/dev-cluster's default range, or the one a private cluster is given (scripts/test's NOACCT)
    assert last - first == int(os.environ.get("NTUI_DEV_CLUSTER_JOB_RANGE", "5000")) - 1, conf
    expire = os.environ.get("NTUI_DEV_CLUSTER_CRED_EXPIRE", "10")  # scripts/dev-cluster's default
    assert f"cred_expire={expire}" in conf["AuthInfo"], conf["AuthInfo"]
    sub = dev_cluster.run("sbatch", "--parsable", "--hold", "-N1", "-o", "/dev/null", "--wrap", "true", timeout=30)
    assert sub.returncode == 0, sub.stderr
    job = int(sub.stdout.strip().split(";")[0])
    dev_cluster.run("scancel", str(job), timeout=30)
    assert first <= job <= last, (first, job, last)
