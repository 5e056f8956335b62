"""The sampler as ntui renders it: a GPU preset job submitted by ``ntui submit`` samples itself (monitor:, M2).

tests/cluster/test_sampler.py checks the sampler lines in a hand-written script; this is the path a user takes:
the shipped local-srun preset with GPUs asked for (``--set sbatch.gpus-per-node=2``; the dev cluster's nodes
have 4 GRES placeholders each), no ``monitor`` key (on by default for a GPU job), the SIMULATED nvidia-smi on
the job's PATH (sbatch exports the submitting environment), and real gloo training on both nodes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui, rank_records
from tests.cluster.test_sampler import END_STATES, STEM, _no_leftovers, _sim_dir, _wait_state

pytestmark = pytest.mark.cluster


def test_gpu_preset_job_samples_every_gpu_of_both_nodes(dev_cluster: DevCluster, tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    path = f"{_sim_dir(tmp_path)}:{Path(sys.executable).parent}:{dev_cluster.env.get('PATH', '')}"
    # PYTHONPATH: this checkout's ntui, also from the temporary working directory
    env = {"PATH": path, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"], "NTUI_TEST_CWD": str(tmp_path),
           "PYTHONPATH": str(REPO)}
    res = ntui(dev_cluster, "submit", "local-srun", "--set", f"logs.dir={log_dir}",
               "--set", "sbatch.gpus-per-node=2", "--set", "monitor.interval=1",
               # the job name is test_sampler's file stem, so its leftover check finds this job's files
               "--set", f"sbatch.job-name={STEM}",
               "--set", "env.NTUI_CHECK_SLEEP=8", timeout=120, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    assert job_id.isdigit(), res.stdout
    script = (log_dir / f"{STEM}-{job_id}.sbatch").read_text()
    assert "# [ntui] GPU usage for `ntui report`: one nvidia-smi -l 1 per node" in script  # rendered by default

    try:
        info = _wait_state(dev_cluster, job_id, END_STATES)
    finally:  # a busy shared queue must not keep a failed test's job
        dev_cluster.run("scancel", job_id)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0"), info
    records = rank_records(log_dir, STEM, job_id)
    assert sorted(r["rank"] for r in records) == [0, 1, 2, 3] and all(r["ok"] for r in records), records
    _no_leftovers(dev_cluster, job_id, log_dir)  # no sampler step in `squeue -s`, no sampler process in `ps`

    rep = ntui(dev_cluster, "report", job_id, "--json", timeout=60, env=env)
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert data["finished"] and data["simulated"] and data["gpus"] == 4
    assert [n["node"] for n in data["nodes"]] == ["nid001", "nid002"]
    for node in data["nodes"]:
        assert node["status"] == "ended" and node["bad_lines"] == 0, (node["messages"], node)
        assert [g["index"] for g in node["gpus"]] == [0, 1], "the job's 2 GPUs per node, not the node's 4"
        for g in node["gpus"]:
            assert g["samples"] >= 5, g  # 8 s of training (plus start-up) at 1 s
