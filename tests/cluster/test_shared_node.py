"""On the real dev cluster: jobs that share a node, and accelerate beside a hostile default config.

Two single-node jobs of the same launcher run on nid001 at the same time (as on Perlmutter's shared
QOS); both must complete: their rendezvous ports differ (R4, R5; one-node accelerate used to listen
on c10d's default 29400 and the second job died with EADDRINUSE). An accelerate job whose HF_HOME
holds a default_config.yaml from `accelerate config` (gpu_ids '0', debug, a key this accelerate
does not know) must still run with the right world size (A1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import rank_records

pytestmark = pytest.mark.cluster

SHARED = ["--set", "sbatch.nodes=1", "--set", "sbatch.cpus-per-task=1", "--set", "sbatch.nodelist=nid001"]


def _submit(cluster: DevCluster, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    full = dict(cluster.env)
    full["PATH"] = f"{Path(sys.executable).parent}:{full.get('PATH', '')}"
    full.update(env or {})
    return subprocess.Popen([sys.executable, "-m", "ntui", "submit", *args, "--wait"], env=full, cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")


def _job_id(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # `submit --wait` prints the id first, then waits
    assert line.isdigit(), line
    return line


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out + err
    assert "COMPLETED" in err, err
    return err


def _ran_together(cluster: DevCluster, job_ids: list[str], timeout: float = 240) -> bool:
    """Whether squeue ever showed both jobs RUNNING at once (one look a second)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = cluster.run("squeue", "-h", "-o", "%i %T", "-j", ",".join(job_ids))
        states = dict(line.split() for line in res.stdout.splitlines() if len(line.split()) == 2)
        if [states.get(j) for j in job_ids] == ["RUNNING", "RUNNING"]:
            return True
        if res.returncode == 0 and not states:
            return False  # both gone
        time.sleep(1)
    return False


@pytest.mark.parametrize("preset", ["local-srun", "local-torchrun", "local-accelerate"])
def test_two_single_node_jobs_share_a_node(dev_cluster: DevCluster, tmp_path: Path, preset: str) -> None:
    layout = ["--set", "sbatch.ntasks-per-node=1"] if preset == "local-srun" else []
    world = 1 if preset == "local-srun" else 2
    tried: list[list[str]] = []
    for attempt in range(3):  # other users' jobs on nid001 may keep the pair from overlapping: try again
        dirs = [tmp_path / f"{attempt}-{i}" for i in range(2)]
        procs = [
            _submit(dev_cluster, preset, *SHARED, *layout, "--set", f"logs.dir={d}",
                    "--set", "env.NTUI_CHECK_SLEEP=8")
            for d in dirs
        ]
        jobs = [_job_id(p) for p in procs]
        together = _ran_together(dev_cluster, jobs)
        for p in procs:
            _finish(p)  # both COMPLETED, overlapping or not
        for d, job_id in zip(dirs, jobs, strict=True):
            records = rank_records(d, preset, job_id)
            assert sorted(r["rank"] for r in records) == list(range(world)), records
            assert all(r["ok"] and r["world_size"] == world and r["node"] == "nid001" for r in records)
        tried.append(jobs)
        if together:
            # Each job held its rendezvous port while it slept: this was the collision case.
            print(f"\n[shared-node] {preset}: jobs {jobs[0]} and {jobs[1]} ran together on nid001, both COMPLETED")
            return
    pytest.fail(f"no pair of jobs {tried} ever ran at the same time on nid001 (busy with other jobs?)")


def test_accelerate_ignores_a_hostile_default_config(dev_cluster: DevCluster, tmp_path: Path) -> None:
    hf_home = tmp_path / "hf"
    (hf_home / "accelerate").mkdir(parents=True)
    (hf_home / "accelerate" / "default_config.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\ngpu_ids: '0'\ndebug: true\n"
        "num_processes: 1\nntui_unknown_key: 1\n"
    )
    log_dir = tmp_path / "logs"
    proc = _submit(dev_cluster, "local-accelerate", "--set", f"logs.dir={log_dir}",
                   env={"HF_HOME": str(hf_home)})
    job_id = _job_id(proc)
    _finish(proc)
    records = rank_records(log_dir, "local-accelerate", job_id)
    assert sorted(r["rank"] for r in records) == [0, 1, 2, 3], records
    assert all(r["world_size"] == 4 and r["ok"] for r in records)
    assert os.path.exists(log_dir / f"local-accelerate-{job_id}-accelerate.yaml")
