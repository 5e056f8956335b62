"""`ntui gpus` on the real cluster: one overlapping step over both nodes, gone afterwards.

The dev cluster has no GPUs: its 4 GRES GPUs per node are placeholders, and the SIMULATED
nvidia-smi (scripts/simulated-nvidia-smi, via NTUI_DEV_SIM_PATH) answers inside the step.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import DevCluster
from tests.cluster.test_e2e import _state, ntui

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def gpu_job(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("gpulogs")
    res = ntui(dev_cluster, "submit", "local-torchrun", "--set", f"logs.dir={logs}",
               "--set", "sbatch.gpus-per-node=4", "--set", "launcher.nproc-per-node=4",
               "--set", "env.NTUI_CHECK_SLEEP=240",
               "--set", "monitor.gpu=false", timeout=60)  # no in-job sampler: these tests watch the overlap step
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    deadline = time.monotonic() + 120
    while _state(dev_cluster, job_id) != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(1)
    yield job_id
    ntui(dev_cluster, "cancel", job_id, timeout=60)


def _steps(cluster: DevCluster, job_id: str) -> list[str]:
    out = cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i %j")
    return out.stdout.split("\n")


def test_gpus_once_sees_8_simulated_gpus_and_leaves_no_step(dev_cluster: DevCluster, gpu_job: str) -> None:
    sim = dev_cluster.env.get("NTUI_DEV_SIM_PATH") or str(dev_cluster.state_dir / "simbin")
    env = {"PATH": f"{sim}:{os.environ['PATH']}", "COLUMNS": "200"}
    res = ntui(dev_cluster, "gpus", gpu_job, "--once", timeout=90, env=env)
    assert res.returncode == 0, res.stderr
    assert f"job {gpu_job}: 8 GPUs on 2 node(s)" in res.stdout
    assert "SIMULATED" in res.stdout
    for node in ("nid001", "nid002"):
        assert res.stdout.count(node) == 4
    time.sleep(1)
    assert not any("ntui-gpu-watch" in s for s in _steps(dev_cluster, gpu_job))


def test_gpus_without_nvidia_smi_says_why(dev_cluster: DevCluster, gpu_job: str, tmp_path: Path) -> None:
    # No simulated tool on PATH: nvidia-smi is missing on the nodes, the step fails.
    path = ":".join(p for p in os.environ["PATH"].split(":") if not p.endswith("simbin"))
    res = ntui(dev_cluster, "gpus", gpu_job, "--once", timeout=90, env={"PATH": path})
    assert res.returncode == 3
    assert "GPU watch step ended" in res.stderr
    assert "allocation: nid001: GPUs 0,1,2,3, nid002: GPUs 0,1,2,3" in res.stderr
    assert not any("ntui-gpu-watch" in s for s in _steps(dev_cluster, gpu_job))

