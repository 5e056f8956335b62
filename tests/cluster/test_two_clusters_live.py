"""Two real clusters of different Slurm versions, one state dir, one job id on both (issue #28): a home shared by two
machines, as at centres with several. ``ntui history``, ``show``, ``logs`` and the jobs view tell the two jobs
apart, each cluster's shell finds its own job first and names the other.

The clusters number their jobs in disjoint ranges (scripts/dev-cluster), so this cluster (the lane's own) is
steered to the other's job id for one job (``dev-cluster job-ids``), then back past where it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.records.history import History
from ntui.core.slurm.runner import SubprocessRunner
from ntui.core.slurm.scontrol import cluster_name
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.log_pane import LogPane
from ntui.ui.widgets.recent_jobs import RecentJobsTable
from tests.cluster.conftest import DevCluster
from tests.support.notes import notified
from tests.support.screenshots_jobs import jobs_app, settle_jobs

pytestmark = [pytest.mark.cluster, pytest.mark.two_clusters]

REPO = Path(__file__).resolve().parents[2]
PROGRAM = "import os\nprint('cluster=' + os.environ.get('SLURM_CLUSTER_NAME', '?'), flush=True)\n"


def _ntui(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full = dict(env, PYTHONPATH=str(REPO), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    # two clusters' controllers and accounting on one machine, its cores shared: a Slurm call's bound, not a claim
    # about its speed (this test is about telling the clusters apart; the timeout's own tests are elsewhere)
    full.setdefault("NTUI_SLURM_TIMEOUT", "60")
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=full, capture_output=True, text=True,
                          errors="replace", timeout=timeout, cwd=str(REPO))


def _submit(env: dict[str, str], program: Path, logs: Path) -> str:
    sets = {"script": str(program), "sbatch.nodes": "1", "sbatch.ntasks-per-node": "1", "logs.dir": str(logs),
            "sbatch.job-name": "twin"}
    res = _ntui(env, "submit", "local-srun", *[a for k, v in sets.items() for a in ("--set", f"{k}={v}")])
    assert res.returncode == 0, res.stderr
    return res.stdout.split()[0]


def _held_job(cluster: DevCluster) -> int:
    """A held job submitted and cancelled at once: the id the cluster numbered last."""
    res = cluster.run("sbatch", "--parsable", "--hold", "-o", "/dev/null", "--wrap", "true")
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip().split(";")[0]
    cluster.run("scancel", job_id)
    return int(job_id)


def _job_ids(cluster: DevCluster, *args: str) -> None:
    res = cluster.run(str(cluster.script), "job-ids", *args, timeout=180)
    assert res.returncode == 0, f"dev-cluster job-ids {' '.join(args)}: {res.stdout}{res.stderr}"


async def test_two_clusters_same_job_id_told_apart_in_history_show_logs_and_the_app(
        dev_cluster: DevCluster, other_dev_cluster: DevCluster, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    here, there = dev_cluster, other_dev_cluster
    name_here, name_there = cluster_name(env=here.env), cluster_name(env=there.env)
    assert name_here and name_there and name_here != name_there
    state = tmp_path / "state"
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    env_here = dict(here.env, NTUI_STATE_DIR=str(state))
    env_there = dict(there.env, NTUI_STATE_DIR=str(state))

    job_id = _submit(env_there, program, tmp_path / "logs-there")
    last_here = _held_job(here)
    # numbered from the other cluster's id once past MaxJobId: this cluster's own ids are all above the other's
    # (disjoint ranges), so a maximum just past the last one wraps the next job to FirstJobId (and MaxJobCount, the
    # range's size, stays above the jobs the controller still holds)
    assert int(job_id) < last_here
    _job_ids(here, job_id, str(last_here + 1))
    try:
        assert _submit(env_here, program, tmp_path / "logs-here") == job_id
    finally:  # numbering goes on past where it was, in the cluster's own range
        _job_ids(here, str(last_here + 1), str(last_here + 4000))
        resumed = _held_job(here)  # takes the numbering past the steered job for good
        _job_ids(here)
        assert last_here < resumed < _held_job(here)
    for env in (env_here, env_there):  # the other cluster runs its own lane's jobs too: its job may wait a while
        res = _ntui(env, "wait", job_id, timeout=1200)
        assert res.returncode == 0, res.stdout + res.stderr

    # history: both rows, each named by its cluster, from either cluster's shell
    for env in (env_here, env_there):
        res = _ntui(env, "history")
        assert res.returncode == 0, res.stderr
        ids = [line.split()[0] for line in res.stdout.splitlines()[1:]]
        assert sorted(ids) == sorted([f"{job_id}@{name_here}", f"{job_id}@{name_there}"]), res.stdout
    # show and logs: this cluster's job first, the other named; --cluster picks it
    for env, mine, other in ((env_here, name_here, name_there), (env_there, name_there, name_here)):
        res = _ntui(env, "show", job_id)
        assert res.returncode == 0 and f"logs-{'here' if mine == name_here else 'there'}" in res.stdout, res
        assert f"also has a job {job_id} of {other}" in res.stderr
        res = _ntui(env, "logs", job_id, "--rank", "0")
        assert res.returncode == 0 and f"cluster={mine}" in res.stdout, res
        res = _ntui(env, "logs", job_id, "--rank", "0", "--cluster", other)
        assert res.returncode == 0 and f"cluster={other}" in res.stdout, res

    # the app, on this cluster: two rows, each opening its own job's record and logs
    monkeypatch.setenv("NTUI_STATE_DIR", str(state))
    settings = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))
    app = jobs_app(runner=SubprocessRunner(), settings=settings, user=None, clock=None,
                   history_factory=lambda: History(state, cluster=name_here))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot, timeout=60)
        screen: Any = app.screen
        assert isinstance(screen, JobsScreen)
        recent = screen.query_one("#jobs-recent", RecentJobsTable)
        rows = {str(recent.get_row(k)[0]): k for k in recent.jobs}
        assert {f"{job_id}@{name_here}", f"{job_id}@{name_there}"} <= set(rows), rows
        await pilot.press("tab")
        for cluster, where in ((name_here, "logs-here"), (name_there, "logs-there")):
            recent.move_cursor(row=recent.get_row_index(rows[f"{job_id}@{cluster}"]))
            await settle_jobs(pilot, timeout=60)
            view = screen.query_one(JobDetailsPanel).view
            assert view is not None and view.job_id == job_id
            target = screen.query_one(LogPane).target
            assert target is not None and target.paths is not None
            assert Path(target.paths.log_dir).name == where, (cluster, target.paths.log_dir)
        errors = [n.message for n in notified(app) if n.severity == "error"]
        assert errors == []
