"""Issue 15 ([polish]) on the CLI and the runner: status that tells the truth, exit codes, wording.

The subprocess tests run ``python -m ntui`` from this checkout; those that need Slurm's own behaviour run the
real client (installed with the dev cluster) and skip without it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ntui.core.runner as runner_mod
from ntui.core.problems import Problem, Source
from ntui.core.runner import SlurmConfigError, SubprocessRunner, classify
from tests.cluster import conftest as cluster_fixtures
from tests.cluster.conftest import DevCluster
from tests.support.fakes import result

REPO = Path(__file__).resolve().parents[2]
dev_cluster = cluster_fixtures.dev_cluster  # the dev cluster fixture (skips without a cluster)


def ntui_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=full, capture_output=True, text=True,
                          errors="replace", timeout=timeout, cwd=str(REPO))


# ---------------------------------------------------------------- a config source that is not there


def test_cannot_stat_slurm_conf_is_a_config_error_not_unreachable() -> None:
    """Before: squeue's "cannot stat file" line was an unknown error (rc != 0) or, killed after the timeout,
    "squeue did not answer within 15 s" with a hint to wait longer."""
    err = classify(result("squeue", returncode=1, stderr=(
        "squeue: error: s_p_parse_file: cannot stat file /nonexistent: No such file or directory, "
        "retrying in 1sec up to 60sec\n")))
    assert type(err) is SlurmConfigError
    assert "cannot stat file /nonexistent" in str(err) and "retrying" not in str(err)


def test_the_config_source_is_checked_before_any_slurm_call(tmp_path: Path) -> None:
    runner = SubprocessRunner()
    with pytest.raises(SlurmConfigError, match="cannot stat file /nonexistent"):
        runner.run(["squeue"], timeout=15, env={"SLURM_CONF": "/nonexistent", "PATH": os.environ["PATH"]})
    assert runner.calls == 0  # nothing ran: the answer is at once, not after Slurm's minute of retries


@pytest.mark.skipif(shutil.which("squeue") is None, reason="the Slurm client is not installed")
def test_a_killed_client_that_was_retrying_slurm_conf_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real squeue retries a missing slurm.conf for a minute; killed at the timeout, its stderr says why."""
    monkeypatch.setattr(runner_mod, "config_source_problem", lambda argv, env: None)
    with pytest.raises(SlurmConfigError, match="cannot stat file /nonexistent"):
        SubprocessRunner().run(["squeue"], timeout=3, env={"SLURM_CONF": "/nonexistent",
                                                          "PATH": os.environ["PATH"]})


def test_cli_with_a_missing_slurm_conf_shows_slurms_message() -> None:
    """Before: "ntui: Slurm timed out: squeue did not answer within 15 s (… to wait longer)" after 15 s."""
    res = ntui_cli("jobs", env={"SLURM_CONF": "/nonexistent"})
    assert res.returncode == 3, res.stderr
    assert "cannot stat file /nonexistent" in res.stderr
    assert "unreachable" not in res.stderr and "longer" not in res.stderr and "timed out" not in res.stderr


# ---------------------------------------------------------------- check runs the cluster-aware checks


@pytest.mark.cluster
def test_check_refuses_what_the_cluster_would_refuse(dev_cluster: DevCluster) -> None:
    """Before: `ntui check … --set sbatch.partition=nopart` printed "ok" (only the form and submit checked the
    partitions); and the problem read "--set sbatch.nodes: sbatch.nodes: …"."""
    env = {**dev_cluster.env}
    res = ntui_cli("check", "local-srun", "--set", "sbatch.partition=nopart", env=env)
    assert res.returncode == 2 and "ok:" not in res.stdout
    assert "no partition nopart on this cluster" in res.stderr
    res = ntui_cli("check", "local-srun", "--set", "sbatch.nodes=3", env=env)
    assert res.returncode == 2 and "3 nodes, but the default partition debug has 2" in res.stderr
    assert "sbatch.nodes: sbatch.nodes" not in res.stderr and "--set sbatch.nodes: 3 nodes" in res.stderr
    ok = ntui_cli("check", "local-srun", env=env)
    assert ok.returncode == 0 and ok.stdout.startswith("ok:"), ok.stderr


def test_a_set_problem_names_its_field_once() -> None:
    p = Problem(Source("--set sbatch.nodes"), "sbatch.nodes", "3 nodes, but …")
    assert str(p) == "--set sbatch.nodes: 3 nodes, but …"
    assert str(Problem(Source("x.yaml", 3), "sbatch.nodes", "bad")) == "x.yaml:3: sbatch.nodes: bad"
