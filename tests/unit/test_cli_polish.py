"""Issue 15 ([polish]) on the CLI and the runner: status that tells the truth, exit codes, wording.

The subprocess tests run ``python -m ntui`` from this checkout; those that need Slurm's own behaviour run the
real client (installed with the dev cluster) and skip without it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ntui.core.slurm.runner as runner_mod
from ntui.core.problems import Problem, Source
from ntui.core.slurm.runner import SlurmConfigError, SubprocessRunner, classify
from tests.cluster import conftest as cluster_fixtures
from tests.cluster.conftest import DevCluster
from tests.support.fakes import result

REPO = Path(__file__).resolve().parents[2]
dev_cluster = cluster_fixtures.dev_cluster  # the dev cluster fixture (skips without a cluster)


def ntui_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    full["PATH"] = f"{Path(sys.executable).parent}:{full.get('PATH', '')}"  # the job's python has torch
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


# ---------------------------------------------------------------- hold, logs, show, help


def test_every_exit_code_is_documented_in_help_and_readme() -> None:
    """Before: `--triage` exited 1 and nothing said so; --help listed no exit code."""
    from ntui.cli.common import EXIT_CODES

    helptext = ntui_cli("--help").stdout
    readme = (REPO / "README.md").read_text()
    for code, text in EXIT_CODES:
        assert f"{code:>3}  {text}" in helptext
        assert f"| {code} | " in readme
    documented = {code for code, _ in EXIT_CODES}
    returned: set[int] = set()
    for path in (REPO / "ntui" / "cli").glob("*.py"):  # every literal code a subcommand returns
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Return) and node.value is not None:
                values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
                returned |= {v.value for v in values if isinstance(v, ast.Constant) and type(v.value) is int}
    assert {0, 1, 2} <= returned and returned <= documented, returned - documented


def test_presets_description_column_is_aligned() -> None:
    res = ntui_cli("presets")
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    starts = {ln.rindex(re.split(r"\s{2,}", ln)[-1]) for ln in lines}
    assert res.returncode == 0 and len(lines) >= 2 and len(starts) == 1, res.stdout


def _isolated(dev: DevCluster, tmp_path: Path) -> dict[str, str]:
    return {**dev.env, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.cluster
def test_hold_on_a_running_job_says_what_hold_does(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """Before: "hold: job 102", exit 0, and nothing happened (Slurm accepts it and changes nothing)."""
    script = tmp_path / "sleep.sh"
    script.write_text("#!/bin/bash\n#SBATCH -o /dev/null\nsleep 60\n")
    job = dev_cluster.run("sbatch", "--parsable", str(script)).stdout.strip()
    try:
        import time

        state = ""
        for _ in range(240):  # the dev cluster is shared: other jobs may hold its two nodes for a while
            state = dev_cluster.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()
            if state == "RUNNING":
                break
            time.sleep(0.5)
        assert state == "RUNNING", f"job {job} never started (last: {state}); the test needs a running job"
        res = ntui_cli("hold", job, env=_isolated(dev_cluster, tmp_path))
        assert res.returncode == 2
        assert f"job {job} is RUNNING: hold only keeps a pending job from starting" in res.stderr
        reason = dev_cluster.run("squeue", "-h", "-j", job, "-o", "%r").stdout.strip()
        assert "JobHeld" not in reason
        pending = dev_cluster.run("sbatch", "--parsable", "--begin=now+3600", str(script)).stdout.strip()
        try:
            assert ntui_cli("hold", pending, env=_isolated(dev_cluster, tmp_path)).returncode == 0
            # a user hold, even when run as root: the owner can release it
            assert dev_cluster.run("squeue", "-h", "-j", pending, "-o", "%r").stdout.strip() == "JobHeldUser"
        finally:
            dev_cluster.run("scancel", pending)
    finally:
        dev_cluster.run("scancel", job)


@pytest.mark.cluster
def test_logs_rank_range_follow_stops_and_show_names_the_final_script(dev_cluster: DevCluster,
                                                                      tmp_path: Path) -> None:
    """Before: `--rank 7` (world size 4) said "no such file (yet)"; `--follow` never stopped; `show` printed
    the temporary `.local-srun-….sbatch` and empty "GPUs nid001:" lines for a CPU job."""
    env = _isolated(dev_cluster, tmp_path)
    sub = ntui_cli("submit", "local-srun", "--set", f"logs.dir={tmp_path / 'logs'}", env=env, timeout=120)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().splitlines()[0]
    try:
        out = ntui_cli("logs", job, "--rank", "7", env=env)
        assert out.returncode == 2 and "rank 7 is out of range (world size 4: ranks 0-3)" in out.stderr
        show = ntui_cli("show", job, env=env)
        assert show.returncode == 0, show.stderr
        command = next(ln for ln in show.stdout.splitlines() if ln.strip().startswith("Command:"))
        assert command.rstrip().endswith(f"local-srun-{job}.sbatch"), command
        assert not re.search(r"GPUs \S+:\s*$", show.stdout, re.MULTILINE), show.stdout
        import time

        for _ in range(300):  # the dev cluster is shared: wait for the job to be over (then --follow must stop)
            if not dev_cluster.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip():
                break
            time.sleep(1)
        follow = ntui_cli("logs", job, "--follow", env=env, timeout=60)  # stops by itself: over and drained
        assert follow.returncode == 0, follow.stderr
        assert re.search(r"job ended \([A-Z_]+\); its log is drained", follow.stderr), follow.stderr
    finally:
        dev_cluster.run("scancel", job)


@pytest.mark.cluster
def test_logs_triage_follow_stops_with_the_final_verdict(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """Before: `logs JOB --triage --follow` followed an ended job until Ctrl-C. Started while the job is queued
    or running, it must end by itself once the job is over and its logs are drained, the final verdict
    (rank 3 raised) last, exit 1 (a failure)."""
    env = _isolated(dev_cluster, tmp_path)
    sub = ntui_cli("submit", "local-srun", "--set", f"logs.dir={tmp_path / 'logs'}",
                   "--set", "env.NTUI_CHECK_FAIL_RANK=3", "--set", "env.NTUI_CHECK_SLEEP=5", env=env, timeout=120)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().splitlines()[0]
    try:
        # the dev cluster is shared: the job may wait for nodes first; --follow waits with it
        follow = ntui_cli("logs", job, "--triage", "--follow", env=env, timeout=400)
        assert follow.returncode == 1, follow.stdout + follow.stderr
        assert re.search(r"job ended \([A-Z_]+\); its logs are drained", follow.stderr), follow.stderr
        assert not dev_cluster.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()  # it was over
        # the last line is the ended job's verdict: what a one-shot --triage says now, with the same exit code
        once = ntui_cli("logs", job, "--triage", env=env, timeout=60)
        last = follow.stdout.strip().splitlines()[-1]
        assert once.returncode == 1 and last.split(" ", 1)[1] == once.stdout.strip(), follow.stdout + once.stdout
        assert "failed first" in last, follow.stdout  # a rank's error (rank 3's, unless the cluster had another)
    finally:
        dev_cluster.run("scancel", job)


def test_presets_lines_fit_an_80_column_terminal_and_name_no_path_unless_asked() -> None:
    """Before: every line carried the preset file's whole path before its description (230 columns wide)."""
    from ntui.cli.compose import preset_lines
    from ntui.core.compose.presets import list_presets

    rows = list_presets()
    cut = preset_lines(rows, paths=False, width=80)
    assert cut and all(len(line) <= 80 for line in cut), [len(line) for line in cut]
    assert not any(str(r.path) in line for r in rows for line in cut)
    whole = preset_lines(rows, paths=True, width=None)
    assert all(str(r.path) in line and line.endswith(r.description) for r, line in zip(rows, whole, strict=True)
               if not r.problem)
    res = ntui_cli("presets", "--paths")
    assert res.returncode == 0 and any(str(rows[0].path) in ln for ln in res.stdout.splitlines()), res.stdout
