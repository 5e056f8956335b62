"""On the dev cluster: a job's GPU usage summary reaches its history record when the record is resolved.

The job samples the dev-only simulated nvidia-smi with a scripted profile (one idle GPU per node, low memory, a
straggler node); ``ntui history --json`` resolves its record and carries the summary, the table shows its mean.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ntui.core.gpu.usage import JobFacts, build_report
from ntui.core.jobfiles.samplefiles import find_sample_files
from tests.cluster.conftest import DevCluster
from tests.cluster.test_e2e import ntui
from tests.cluster.test_sampler import (
    END_STATES,
    STEM,
    _held,
    _record_history,
    _release_after_samples,
    _script,
    _sim_dir,
    _submit,
    _wait_state,
)

pytestmark = pytest.mark.cluster


def test_the_history_record_of_an_ended_job_carries_its_gpu_summary(dev_cluster: DevCluster, tmp_path: Path) -> None:
    release = tmp_path / "release"
    script = _script(tmp_path, _held(release), path_dir=_sim_dir(tmp_path),
                     profile="idle-gpu,low-mem,straggler=nid002")
    job_id = _submit(dev_cluster, tmp_path, script)
    try:
        _record_history(job_id, tmp_path, script)
    finally:  # released whatever happens: a held job would keep both nodes until its limit
        _release_after_samples(dev_cluster, tmp_path, job_id, release, 8)
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert info["JobState"] == "COMPLETED"
    env = {"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    # the controller has the end; accounting may lag behind it (slurmdbd on a loaded machine): until sacct has it
    # too, ntui leaves the record unresolved and says so, and the next look resolves it
    deadline = time.monotonic() + 120
    while True:
        res = ntui(dev_cluster, "history", "--json", timeout=120, env=env)
        assert res.returncode == 0, res.stderr
        row = next(r for r in json.loads(res.stdout) if r["job_id"] == job_id)
        if row["final_state"] is not None or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert row["final_state"] == "COMPLETED", (row, res.stderr)
    gpu = row["gpu"]
    assert gpu is not None, res.stderr
    # the same numbers as the full report over the same files
    report = build_report(find_sample_files(str(tmp_path), STEM, job_id), JobFacts(job_id, "COMPLETED", True))
    assert gpu["gpus"] == report.gpus == 4
    assert gpu["util_mean"] == pytest.approx(report.util_mean)
    assert gpu["findings"] >= 3 and gpu["first_finding"] == report.findings[0].message
    assert 0.2 <= gpu["idle_fraction"] <= 0.6  # one GPU of two idle on each node
    table = ntui(dev_cluster, "history", "--no-resolve", timeout=60, env=env)
    line = next(ln for ln in table.stdout.splitlines() if ln.startswith(job_id + " "))
    assert f"{gpu['util_mean']:.0f}%" in line.split()
