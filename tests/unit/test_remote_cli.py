"""``ntui --cluster NAME logs`` through a real sshd on the loopback address: the job's entry is read from the history
kept in the cluster's home (by the agent: the laptop's own history stays empty) and its logs on the cluster."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui.cli import common, logs
from ntui.core.records.history import History
from ntui.core.remote.files import AGENT_ENV
from tests.support import sshd as sshd_support

ROOT = Path(__file__).resolve().parents[2]
JOB = "5150"


@pytest.fixture(scope="module")
def cluster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster-home")


@pytest.fixture(scope="module")
def sshd(cluster_home: Path) -> Iterator[sshd_support.Sshd]:
    reason = sshd_support.why_not()
    if reason is not None:
        pytest.skip(reason)
    env = {"PYTHONPATH": str(ROOT), "NTUI_STATE_DIR": str(cluster_home / "state")}
    with sshd_support.private_sshd(environment=env) as server:
        yield server


@pytest.fixture
def job_logs(cluster_home: Path, sshd: sshd_support.Sshd) -> Path:
    """A job of the cluster's history (its records under the cluster's state dir) with a batch log and two ranks'."""
    log_dir = cluster_home / "logs"
    log_dir.mkdir(exist_ok=True)
    history = History(cluster_home / "state")
    try:
        if history.get(JOB) is None:
            history.record_intent(token="t5150", preset="train", preset_path=None, overrides=(), job_name="train",
                                  launcher="torchrun", nodes=1, world_size=2, log_dir=str(log_dir), log_stem="train",
                                  script="#!/bin/bash\n#SBATCH --job-name=train\n")
            history.record_submitted("t5150", JOB, "dev", str(log_dir / f"train-{JOB}.sbatch"))
    finally:
        history.close()
    (log_dir / f"train-{JOB}.out").write_text("".join(f"batch line {i}\n" for i in range(500)))
    (log_dir / f"train-{JOB}-rank-0.out").write_text("step 1\nstep 2\n")
    (log_dir / f"train-{JOB}-rank-1.out").write_text(
        "step 1\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        "    main()\nRuntimeError: CUDA error: an illegal memory access was encountered\n")
    return log_dir


@pytest.fixture
def laptop(sshd: sshd_support.Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This process as the laptop: the cluster in its settings, its own (empty) state dir, ``--cluster dev``."""
    config = tmp_path / "config" / "ntui"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text(
        f"clusters:\n  dev:\n    ssh: {sshd_support.HOST}\n    ssh-config: {sshd.ssh_config}\n    persist: 120\n")
    runtime = Path(sshd.directory) / f"rt-{tmp_path.name[-8:]}"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("NTUI_STATE_DIR", str(tmp_path / "laptop-state"))
    monkeypatch.setenv(AGENT_ENV, f"{sys.executable} -m ntui agent --stdio")
    common.select_cluster("dev")
    try:
        yield tmp_path
    finally:
        common.select_cluster(None)


def _args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"job_id": JOB, "rank": None, "follow": False, "lines": 3, "triage": False,
                               "cluster": None}
    return argparse.Namespace(**{**base, **kw})


def test_the_batch_logs_tail_is_read_on_the_cluster(job_logs: Path, laptop: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert logs.cmd_logs(_args()) == 0
    out = capsys.readouterr()
    assert out.out == "batch line 497\nbatch line 498\nbatch line 499\n", out.err
    assert not (laptop / "laptop-state" / "records").exists()  # nothing of the history on this side


def test_a_ranks_log_and_a_rank_out_of_range(job_logs: Path, laptop: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert logs.cmd_logs(_args(rank=0)) == 0
    assert capsys.readouterr().out == "step 1\nstep 2\n"
    assert logs.cmd_logs(_args(rank=2)) == 2
    assert "rank 2 is out of range (world size 2: ranks 0-1)" in capsys.readouterr().err


def test_triage_names_the_failed_rank_and_the_clusters_path(job_logs: Path, laptop: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert logs.cmd_logs(_args(triage=True)) == 1
    out = capsys.readouterr().out
    assert "rank 1" in out and "illegal memory access" in out, out
    assert "ntui-triage-" not in out  # the local copies' directory is never shown


def test_a_job_the_clusters_history_lacks_is_asked_of_slurm_there(job_logs: Path, laptop: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert logs.cmd_logs(_args(job_id="999999", triage=True)) == 2
    assert "not in the history on the cluster" in capsys.readouterr().err


def test_without_ntui_there_the_note_says_what_is_left_out(job_logs: Path, laptop: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(AGENT_ENV, "ntui-not-installed-here agent --stdio")
    common.select_cluster("dev")
    assert logs.cmd_logs(_args(triage=True)) == 2  # no history readable there: no per-rank logs known
    err = capsys.readouterr().err
    assert "not installed" in err and "no live follow" in err and "no ntui there to read it" in err


def test_a_ranks_log_for_progress_is_a_local_copy_of_the_clusters(job_logs: Path, laptop: Path) -> None:
    entry, path = common.job_log_file(_args(), JOB, 1)
    assert entry is not None and entry.world_size == 2 and entry.launcher == "torchrun"
    assert path is not None and path != job_logs / f"train-{JOB}-rank-1.out"  # a copy, not the file itself
    original = job_logs / f"train-{JOB}-rank-1.out"
    assert path.read_bytes() == original.read_bytes() and path.stat().st_mtime == original.stat().st_mtime
    assert common.job_log_file(_args(), "999999", 0) == (None, None)


def test_files_named_for_triage_are_copied_and_standard_input_stays(job_logs: Path, laptop: Path) -> None:
    batch = job_logs / f"train-{JOB}.out"
    copies = common.local_copies([str(batch), "-", str(job_logs / "not-there.out")])
    assert copies[0].read_bytes() == batch.read_bytes() and copies[0].parent.name.startswith("ntui-remote-")
    assert copies[1] == Path("-") and not copies[2].exists()


def test_progress_and_triage_of_a_clusters_files_read_them_there(job_logs: Path, laptop: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``ntui --cluster dev progress FILE`` / ``triage FILE``: the file is the cluster's (a copy read here), and
    the triage's JSON names the cluster's path, never the copy."""
    from ntui.cli import progress, triage

    copied: list[Path] = []

    def copies(paths: list[str]) -> list[Path]:
        made = common.local_copies(paths)
        copied.extend(made)
        return made

    monkeypatch.setattr(progress, "local_copies", copies)
    rank0 = job_logs / f"train-{JOB}-rank-0.out"
    said = progress.cmd_progress(argparse.Namespace(
        target=str(rank0), rank=0, pattern=r"^step (?P<step>\d+)$", time_left=None, json=True, chart=None,
        width=80, height=16, cluster=None))
    out = capsys.readouterr()
    assert said == 0 and '"step": 2' in out.out, out
    assert len(copied) == 1 and copied[0] != rank0 and copied[0].parent.name.startswith("ntui-remote-")
    rank1 = str(job_logs / f"train-{JOB}-rank-1.out")
    assert triage.cmd_triage(argparse.Namespace(files=[rank1], launcher=None, json=True)) == 1
    verdict = capsys.readouterr().out
    assert f'"path": "{rank1}"' in verdict and "ntui-remote-" not in verdict, verdict


# ---------------------------------------------------------------- history, report, sweep: the cluster's records


def _history_args(**kw: object) -> argparse.Namespace:
    from ntui.core.records.record import RECENT_ORDERS

    base: dict[str, object] = {"n": 20, "json": True, "reconcile": False, "no_resolve": False,
                               "sort": RECENT_ORDERS[0].name, "cluster": None}
    return argparse.Namespace(**{**base, **kw})


def test_history_is_the_clusters_read_by_its_agent(job_logs: Path, laptop: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from ntui.cli import history
    from ntui.core.records.record import RECENT_ORDERS

    args = _history_args(sort=RECENT_ORDERS[0].name)
    assert history.cmd_history(args) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert [r["job_id"] for r in rows if r["job_id"] == JOB] == [JOB] and rows[0]["log_stem"] is not None
    assert "as stored there" in out.err
    assert not (laptop / "laptop-state" / "records").exists()  # nothing of the history on this side
    assert history.cmd_history(_history_args(json=False, sort=RECENT_ORDERS[-1].name, no_resolve=True)) == 0
    table = capsys.readouterr().out
    assert table.startswith("JOBID") and re.search(rf"^{JOB}\s", table, re.MULTILINE), table
    assert history.cmd_history(_history_args(reconcile=True)) == 2  # it would write the cluster's records
    assert "on the cluster's login node" in capsys.readouterr().err


def _samples(log_dir: Path, job_id: str, node: str, util: int) -> None:
    from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS, sample_path

    rows = "".join(f"2026/06/01 10:{k // 6:02d}:{k % 6 * 10:02d}.000, {i}, GPU-{node}-{i}, {util}, 9000, 81559, "
                   "300.0, 50\n" for k in range(30) for i in range(2))
    header = f"{HEADER_TAG} v1 job={job_id} node={node} interval=10 status=sampling fields={','.join(SAMPLE_FIELDS)}\n"
    Path(sample_path(str(log_dir), "train", job_id, node)).write_text(header + rows + f"{HEADER_TAG} end\n")


def test_report_reads_the_gpu_samples_on_the_cluster(job_logs: Path, laptop: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from ntui.cli import report
    from tests.support.fakes import FakeRunner, capture

    fake = FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
                       "sacct": capture("sacct_no_accounting")})
    monkeypatch.setattr(report, "cli_runner", lambda: fake)
    _samples(job_logs, JOB, "c1", 37)
    _samples(job_logs, "5151", "c1", 99)  # another job's: not read
    args = argparse.Namespace(job_id=JOB, json=True, width=100, cluster=None)
    assert report.cmd_report(args) == 0
    data = json.loads(capsys.readouterr().out)
    (node,) = data["nodes"]
    assert node["node"] == "c1" and [g["util_mean"] for g in node["gpus"]] == [37, 37]
    assert node["path"] == str(job_logs / f"train-{JOB}-gpu-c1.csv")  # the cluster's path, never the copy's
    assert "ntui-remote-" not in json.dumps(data)
    assert not (laptop / "laptop-state" / "records").exists()
    assert report.cmd_report(argparse.Namespace(job_id="999999", json=False, width=100, cluster=None)) == 2
    assert "not in the history on the cluster" in capsys.readouterr().err


def test_a_sweeps_table_reads_its_manifest_logs_and_samples_on_the_cluster(
        cluster_home: Path, laptop: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from ntui.cli import sweep
    from tests.support.fakes import FakeRunner, result
    from tests.support.screenshots_sweep import SACCT_TASKS, SWEEP_ID, SWEEP_LOG_DIR, sweep_entry, write_sweep_files

    log_dir = cluster_home / "sweep-logs"
    write_sweep_files(str(log_dir))
    e = replace(sweep_entry(), log_dir=str(log_dir))
    history = History(cluster_home / "state")
    try:
        if history.get(SWEEP_ID) is None:
            history.record_intent(token="tsweep", preset=e.preset, preset_path=None, overrides=e.overrides,
                                  job_name=e.job_name, launcher=e.launcher, nodes=1, world_size=1,
                                  log_dir=str(log_dir), log_stem=e.log_stem,
                                  # the manifest the script names: a path no reader here may fall back on
                                  script=e.script.replace(SWEEP_LOG_DIR, "/nonexistent/logs"))
            history.record_submitted("tsweep", SWEEP_ID, "dev", None)
    finally:
        history.close()
    fake = FakeRunner({"sacct": result(stdout=SACCT_TASKS), "squeue": result(stdout="")})
    monkeypatch.setattr(sweep, "cli_runner", lambda: fake)
    args = argparse.Namespace(job_id=SWEEP_ID, json=True, sort="task", reverse=False)
    assert sweep.cmd_sweep(args) == 0, capsys.readouterr().err
    data = json.loads(capsys.readouterr().out)
    tasks = {t["task"]: t for t in data["tasks"]}
    assert tasks[0]["values"] == {"lr": "3e-4", "seed": "1"} and tasks[0]["metric"] == "1.7410"
    assert tasks[2]["metric"] == "2.3012" and tasks[2]["state"] == "FAILED" and tasks[3]["metric"] is None
    assert "ntui-remote-" not in json.dumps(data)
    assert sweep.cmd_sweep(argparse.Namespace(job_id="999998", json=True, sort="task", reverse=False)) == 2
    assert "not in the history on the cluster" in capsys.readouterr().err


def test_stacks_runs_the_clusters_own_interpreter_and_py_spy_on_the_nodes(laptop: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The probe runs on the job's nodes: the paths the cluster's agent says, never this machine's."""
    from types import SimpleNamespace

    from ntui.cli import stacks
    from tests.support.fakes import FakeRunner, capture, result

    fake = FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_running_2node_gpu", version="24.11"),
                       "srun": result(stdout="")})
    monkeypatch.setattr(stacks, "cli_runner", lambda: fake)
    there = SimpleNamespace(python="/cluster/venv/bin/python3", py_spy="/cluster/venv/bin/py-spy", note=None)
    monkeypatch.setattr(stacks, "cluster_files", lambda: there)
    args = argparse.Namespace(job_id="213", native=False, json=True, interval=0.0, timeout=1.0)
    stacks.cmd_stacks(args)
    (srun,) = [a for a in fake.argvs() if a[0] == "srun"]
    probe = srun[srun.index("-m") - 1:]
    assert probe[:3] == ("/cluster/venv/bin/python3", "-m", "ntui.core.stacks.probe")
    assert probe[probe.index("--py-spy") + 1] == "/cluster/venv/bin/py-spy"
    capsys.readouterr()
    monkeypatch.setattr(stacks, "cluster_files", lambda: SimpleNamespace(python=None, py_spy=None,
                                                                         note="ntui is not installed on dev"))
    assert stacks.cmd_stacks(args) == 2
    assert "ntui is not installed on dev; install ntui there" in capsys.readouterr().err


def test_resubmit_reads_the_record_there_and_records_the_new_job_there(cluster_home: Path, laptop: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The record is the cluster's (read by its agent), the preset this machine's (the file the record names); the
    new job's record, written there, says which job it resubmits."""
    from ntui.cli import history as cli_history
    from ntui.cli.compose import load_spec
    from ntui.core.compose.render import render
    from tests.support.fakes import FakeRunner, result

    preset = ROOT / "presets/local-accelerate.yaml"
    overrides = [f"logs.dir={cluster_home / 'resubmit-logs'}", "env.NOTE=x; touch /tmp/ntui-pwned-resubmit"]
    _, spec, _ = load_spec(str(preset), overrides)
    assert spec is not None
    state = History(cluster_home / "state")
    try:
        if state.get("6100") is None:
            state.record_intent(token="t6100", preset="local-accelerate", preset_path=str(preset),
                                overrides=overrides, job_name=spec.job_name, launcher=spec.launcher, nodes=spec.nodes,
                                world_size=spec.world_size, log_dir=spec.log_dir, log_stem="x", script=render(spec))
            state.record_submitted("t6100", "6100", "dev", None)
    finally:
        state.close()
    partitions = (ROOT / "tests/data/slurm/scontrol_show_partition.stdout").read_text()
    fake = FakeRunner({("scontrol", "show", "partition"): result(stdout=partitions), "mkdir": result(),
                       "sbatch": result(stdout="6101\n"), ("scontrol", "show", "config"): result(stdout="")},
                      default=result())
    monkeypatch.setattr(cli_history, "cli_runner", lambda: fake)
    args = argparse.Namespace(job_id="6100", overrides=[], test_only=False, cluster=None, failed=False)
    assert cli_history.cmd_resubmit(args) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    assert out.out.strip() == "6101" and "resubmitted job 6100 as 6101 on dev" in out.err
    (sbatch,) = [a for a in fake.argvs() if a[0] == "sbatch"]
    assert any(w.startswith("--comment=ntui-submit:") for w in sbatch)
    state = History(cluster_home / "state")
    try:
        new = state.get("6101")
    finally:
        state.close()
    assert new is not None and new.resubmit_of == "6100" and new.overrides == tuple(overrides)
    assert not Path("/tmp/ntui-pwned-resubmit").exists()
    assert not (laptop / "laptop-state" / "records").exists()
    assert cli_history.cmd_resubmit(argparse.Namespace(**{**vars(args), "failed": True})) == 2
    assert "job 6100 is not a sweep: --failed resubmits a sweep's failed tasks" in capsys.readouterr().err
    assert len([a for a in fake.argvs() if a[0] == "sbatch"]) == 1  # nothing more submitted
