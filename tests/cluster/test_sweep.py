"""A sweep on the real dev cluster: a 2 x 3 grid with ``parallel: 2`` on the local presets, as one job array.

Each task's program receives exactly its own values (hostile strings included: spaces, quotes, ``$()``,
backquotes), in its arguments and in its environment; never more than 2 tasks run at once (the tasks' own start
and end times, and sacct's); one task made to fail is resubmitted alone with ``ntui resubmit --failed`` (same
values, linked to the sweep) and completes; ``ntui history`` shows the sweep with its counts; ``ntui sweep`` shows
the six tasks with their values and metric. Tasks are tiny (1 node, 1 task, about 2 s): the cluster is shared.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui

pytestmark = pytest.mark.cluster

LRS = ["3e-4", "1e-4 $(touch CANARY)"]
SEEDS = ["1", "it's \"2\"", "`id` x;y"]
FAIL_TASK = 4


def _preset(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(json.dumps({
        "extends": str(REPO / "presets" / "local-sweep.yaml"),
        "name": "cl-sweep",
        "env": {"RUN_TAG": "<{lr}|{seed}>"},
        "logs": {"dir": str(tmp_path / "logs")},
        "sweep": {"grid": {"lr": LRS, "seed": SEEDS}, "parallel": 2},
    }))
    return path


def _records(log_dir: Path, job: str) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(log_dir.glob(f"cl-sweep-{job}_*-rank-0.out")):
        rec: dict[str, Any] = {}
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("NTUI_SWEEP "):
                rec.update(json.loads(line[len("NTUI_SWEEP "):]))
            elif line.startswith("NTUI_SWEEP_END "):
                rec["end"] = json.loads(line[len("NTUI_SWEEP_END "):])["end"]
        if rec:
            out[int(rec["task"])] = rec
    return out


def _wait(cluster: DevCluster, job: str, env: dict[str, str], timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        res = ntui(cluster, "sweep", job, "--json", env=env)
        assert res.returncode == 0, res.stderr
        data = json.loads(res.stdout)
        states = [t["state"] for t in data["tasks"]]
        if all(s not in (None, "PENDING", "RUNNING", "COMPLETING") for s in states):
            return data
        if time.monotonic() > deadline:
            pytest.fail(f"sweep {job} did not end: {data['counts']}")
        time.sleep(2)


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def test_sweep_grid_parallel_resubmit_failed(dev_cluster: DevCluster, tmp_path: Path) -> None:
    (tmp_path / "fail").mkdir()
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "NTUI_TRAIN_FAIL_TASK": str(FAIL_TASK), "NTUI_TRAIN_FAIL_DIR": str(tmp_path / "fail"),
           "NTUI_TRAIN_STEP_S": "0.3", "NTUI_TEST_CWD": str(tmp_path)}
    preset = _preset(tmp_path)
    jobs: list[str] = []
    try:
        res = ntui(dev_cluster, "submit", str(preset), env=env)
        assert res.returncode == 0, res.stderr
        job = res.stdout.strip().splitlines()[-1]
        jobs.append(job)
        data = _wait(dev_cluster, job, env)

        # each task's program received exactly its own values, in argv and in its environment
        log_dir = tmp_path / "logs"
        records = _records(log_dir, job)
        expected = [(lr, seed) for lr in LRS for seed in SEEDS]  # grid order: the first parameter slowest
        assert sorted(records) == list(range(6)), sorted(records)
        for task, (lr, seed) in enumerate(expected):
            rec = records[task]
            assert rec["argv"] == ["--lr", lr, "--seed", seed, "--steps", "5"], (task, rec["argv"])
            assert rec["env"]["RUN_TAG"] == f"<{lr}|{seed}>"
            assert rec["array_job_id"] == job
        assert not (tmp_path / "CANARY").exists() and not (log_dir / "CANARY").exists()

        # never more than 2 at once: the tasks' own clocks, and sacct's (second resolution) where it answers
        intervals = [(r["start"], r.get("end", r["start"] + 0.1)) for r in records.values()]
        assert _max_overlap(intervals) <= 2, intervals
        if dev_cluster.accounting:
            out = dev_cluster.run("sacct", "-j", job, "-X", "-P", "-n", "-o", "JobID,Start,End").stdout
            spans = []
            for line in out.splitlines():
                _, start, end = line.split("|")
                to_s = time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%S"))
                to_e = time.mktime(time.strptime(end, "%Y-%m-%dT%H:%M:%S"))
                spans.append((to_s, to_e))
            assert len(spans) == 6 and _max_overlap(spans) <= 2, out
        # the tasks' logs carry the task (W11)
        assert {p.name for p in log_dir.glob(f"cl-sweep-{job}_*.out") if "-rank-" not in p.name} == {
            f"cl-sweep-{job}_{i}.out" for i in range(6)}

        # ntui sweep: six tasks, their values as written, the metric; the failed one alone, with its verdict
        rows = {t["task"]: t for t in data["tasks"]}
        assert len(rows) == 6 and data["names"] == ["lr", "seed"]
        for task, (lr, seed) in enumerate(expected):
            assert rows[task]["values"] == {"lr": lr, "seed": seed}
            if task == FAIL_TASK:
                assert rows[task]["state"] == "FAILED" and rows[task]["metric"] is None
                assert rows[task]["step"] is None  # it failed before its first step
            else:
                assert rows[task]["state"] == "COMPLETED" and float(rows[task]["metric"]) > 0
                assert (rows[task]["step"], rows[task]["total"]) == (5, 5), rows[task]  # its progress, side by side
        assert [g["tasks"] for g in data["failed_groups"]] == [[FAIL_TASK]]
        text = ntui(dev_cluster, "sweep", job, "--sort", "metric", env=env)
        assert text.returncode == 0 and f"sweep {job}: 6 tasks: 5 completed, 1 failed" in text.stdout, text.stdout

        # ntui history: the sweep as one entry, with its counts
        hist = ntui(dev_cluster, "history", "-n", "5", env=env)
        assert hist.returncode == 0, hist.stderr
        line = next(ln for ln in hist.stdout.splitlines() if ln.startswith(job))
        assert "FAILED" in line and "6 tasks: 5 completed, 1 failed" in line

        # the failed task alone, same values, linked to the sweep
        again = ntui(dev_cluster, "resubmit", job, "--failed", env=env)
        assert again.returncode == 0, again.stderr
        assert f"resubmitting tasks {FAIL_TASK}" in again.stderr
        second = again.stdout.strip().splitlines()[-1]
        jobs.append(second)
        data2 = _wait(dev_cluster, second, env)
        assert [(t["task"], t["state"]) for t in data2["tasks"]] == [(FAIL_TASK, "COMPLETED")]
        assert data2["resubmit_of"] == job and data2["tasks"][0]["values"] == rows[FAIL_TASK]["values"]
        rerun = _records(log_dir, second)
        assert list(rerun) == [FAIL_TASK]
        assert rerun[FAIL_TASK]["argv"] == records[FAIL_TASK]["argv"]
        hist = ntui(dev_cluster, "history", "-n", "5", env=env)
        line = next(ln for ln in hist.stdout.splitlines() if ln.startswith(second))
        assert "COMPLETED" in line and "1 task: 1 completed" in line and f"resubmit of {job}" in line
    finally:
        for j in jobs:
            subprocess.run(["scancel", j], env=dev_cluster.env, capture_output=True, timeout=60)
