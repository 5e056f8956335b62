"""Triage verdicts on the real dev cluster, live: a cancelled job and a failing rank (torchrun).

The watcher follows the job's logs while it runs (as the log pane and ``ntui logs --follow --triage`` do);
the verdict must be "cancelled" (not a rank's SIGTERM) and, for the failing job, the global rank that raised
and its node (not srun's ``task 1``, which is nid002's torchrun).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths, node_of
from ntui.core.logs.joblogs import job_verdict
from ntui.core.logs.watch import JobLogWatcher, watch_files
from tests.cluster.conftest import DevCluster
from tests.cluster.test_e2e import _state, ntui

pytestmark = pytest.mark.cluster


def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.5)


def test_cancel_is_the_verdict_live(dev_cluster: DevCluster, tmp_path: Path) -> None:
    res = ntui(dev_cluster, "submit", "local-srun", "--set", f"logs.dir={tmp_path}",
               "--set", "env.NTUI_CHECK_SLEEP=300", timeout=60)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    paths = LogPaths(str(tmp_path), "local-srun")
    files, discover = watch_files(paths, job_id, 4)
    watcher = JobLogWatcher(job_id, files, paths=paths, discover=discover, launcher="srun")

    def all_ranks_up() -> bool:
        watcher.poll_all()
        return all(watcher.node(r) for r in range(4))

    _until(all_ranks_up, 120, "every rank wrote its header")
    assert watcher.verdict().kind == "none"
    cancel = ntui(dev_cluster, "cancel", job_id, timeout=60)
    assert cancel.returncode == 0, cancel.stderr

    def cancelled() -> bool:
        watcher.poll_all()
        return watcher.verdict().kind == "cancelled"

    _until(cancelled, 60, "the batch log says CANCELLED")
    v = watcher.verdict()
    assert v.when and v.line.startswith(f"cancelled at {v.when}") and v.rank is None
    _until(lambda: _state(dev_cluster, job_id) in ("", "CANCELLED"), 60, "the job left the queue")
    out = ntui(dev_cluster, "logs", job_id, "--triage", timeout=60)
    assert out.returncode == 1 and out.stdout.startswith("cancelled at "), out.stdout + out.stderr


def test_failing_rank_is_the_verdict_live(dev_cluster: DevCluster, tmp_path: Path) -> None:
    res = ntui(dev_cluster, "submit", "local-torchrun", "--wait", "--set", f"logs.dir={tmp_path}",
               "--set", "env.NTUI_CHECK_FAIL_RANK=3")
    assert res.returncode == 4, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    paths = LogPaths(str(tmp_path), "local-torchrun")
    node3 = node_of(paths.rank(job_id, 3))
    assert node3 in ("nid001", "nid002")
    v = job_verdict(paths, job_id, 4, "torchrun")
    assert (v.kind, v.rank, v.node) == ("rank_error", 3, node3)
    assert "RuntimeError: ntui check: rank 3 fails on purpose" in v.line
    assert sorted(f.rank for f in v.consequences) == [0, 1, 2]
    out = ntui(dev_cluster, "logs", job_id, "--triage", timeout=60)
    assert out.returncode == 1 and out.stdout.startswith(f"rank 3 on {node3} failed first"), out.stdout
    hist = json.loads(ntui(dev_cluster, "history", "--json", timeout=60).stdout)
    assert any(e["job_id"] == job_id and e["launcher"] == "torchrun" for e in hist)
