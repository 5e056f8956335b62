"""The in-job GPU sampler on the real Slurm 22.05 dev cluster, in a hand-written sbatch script.

The dev cluster's GPUs are GRES placeholders; the SIMULATED nvidia-smi (scripts/simulated-nvidia-smi) on the
job's PATH counts the GPUs its step was given (SLURM_GPUS_ON_NODE, set by slurmd for the step), so "the sampler
sees exactly the job's GPUs" shows as 2 GPUs per node for a ``--gpus-per-node=2`` job on 4-GPU nodes.
Every job uses every CPU of both nodes in its launch step, so a sampler step that held a CPU without sharing
would keep the launch pending.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from ntui.core.compose.sampler import sampler_lines
from ntui.core.gpu.usage import JobFacts, build_report
from ntui.core.jobfiles.journal import (
    compose_line,
    journal_lines,
    journal_path,
    launch_begin_line,
    launch_end_line,
    read_journal,
)
from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLER_NAME, find_sample_files, sample_prefix
from ntui.core.records.history import History
from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui

pytestmark = pytest.mark.cluster

STEM = "smp"
END_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")


def _sim_dir(tmp: Path) -> Path:
    d = tmp / "simbin"
    d.mkdir(exist_ok=True)
    link = d / "nvidia-smi"
    if not link.exists():
        link.symlink_to(REPO / "scripts" / "simulated-nvidia-smi")
    return d


def _script(log_dir: Path, work: str, *, path_dir: Path | None, profile: str = "", after: str = "",
            time_min: int = 5, setup: str = "", journal: bool = False) -> str:
    path = f"export PATH={path_dir}:$PATH" if path_dir else "export PATH=/usr/bin:/bin  # no nvidia-smi anywhere"
    lines = [
        "#!/bin/bash",
        "#SBATCH --job-name=ntui-sampler-test",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=2",
        "#SBATCH --gpus-per-node=2",
        f"#SBATCH --time={time_min}",
        f"#SBATCH --output={log_dir}/{STEM}-%j.out",
        "set -euo pipefail",
        path,
        f"export NTUI_SIM_GPU_PROFILE={profile}" if profile else "",
        *(journal_lines(str(log_dir), STEM) if journal else ()),
        *sampler_lines(str(log_dir), STEM, interval_s=1),
        compose_line() if journal else "",
        setup,
        launch_begin_line("srun") if journal else "",
        f"srun --ntasks-per-node=2 --kill-on-bad-exit=1 bash -c {work!r}",
        launch_end_line() if journal else "",
        after,
        "",
    ]
    return "\n".join(lines)


def _submit(cluster: DevCluster, tmp: Path, script: str) -> str:
    path = tmp / "job.sbatch"
    path.write_text(script)
    res = cluster.run("sbatch", "--parsable", str(path))
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().split(";")[0]


def _job(cluster: DevCluster, job_id: str) -> dict[str, str]:
    out = cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def _wait_state(cluster: DevCluster, job_id: str, states: tuple[str, ...], timeout: float = 900) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        info = _job(cluster, job_id)
        if info.get("JobState") in states:
            return info
        assert time.monotonic() < deadline, f"job {job_id} still {info.get('JobState')}"
        time.sleep(1)


def _held(release: Path) -> str:
    """A launch step's work that runs until the test creates ``release`` (never a duration racing the sampler)."""
    return f"while [ ! -e {shlex.quote(str(release))} ]; do sleep 0.5; done"


def _release_after_samples(cluster: DevCluster, tmp: Path, job_id: str, release: Path, samples: int) -> None:
    """Create ``release`` once every GPU of both nodes has ``samples`` samples in the job's files: how many the run
    holds is the test's to choose, however slowly a busy machine samples."""
    deadline = time.monotonic() + 600  # a bound on the wait (the job may queue), not a claim about its speed
    try:
        while True:
            files = find_sample_files(str(tmp), STEM, job_id)
            if len(files) == 2:
                report = build_report(files, JobFacts(job_id, "RUNNING", False))
                gpus = [g for node in report.nodes for g in node.gpus]
                if len(gpus) == 4 and min(g.samples for g in gpus) >= samples:
                    return
            assert time.monotonic() < deadline, f"job {job_id}: fewer than {samples} samples a GPU: {files}"
            time.sleep(1)
    finally:
        release.touch()


def _leftovers(cluster: DevCluster, job_id: str, log_dir: Path) -> tuple[list[str], list[str]]:
    """The job's steps still known to squeue, and processes still running this job's sampler."""
    steps = [s for s in cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i %j").stdout.splitlines() if s]
    prefix = sample_prefix(str(log_dir), STEM, job_id)
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    procs = [p for p in ps if prefix in p or (SAMPLER_NAME in p and f"job={job_id} " in p)]
    return steps, procs


def _no_leftovers(cluster: DevCluster, job_id: str, log_dir: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        steps, procs = _leftovers(cluster, job_id, log_dir)
        if not steps and not procs:
            return
        assert time.monotonic() < deadline, f"left behind: steps {steps}, processes {procs}"
        time.sleep(1)


def _record_history(job_id: str, log_dir: Path, script: str) -> None:
    h = History()
    token = f"sampler-test-{job_id}"
    h.record_intent(token=token, preset="local-srun", preset_path=None, overrides=[], job_name="ntui-sampler-test",
                    launcher="srun", nodes=2, world_size=4, log_dir=str(log_dir), log_stem=STEM, script=script)
    h.record_submitted(token, job_id, None, None)
    h.close()


def test_two_node_job_samples_exactly_its_gpus_and_report_finds_the_profile(
    dev_cluster: DevCluster, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    script = _script(tmp_path, _held(release), path_dir=_sim_dir(tmp_path),
                     profile="idle-gpu,low-mem,straggler=nid002", after='echo "after the launch"')
    job_id = _submit(dev_cluster, tmp_path, script)
    _release_after_samples(dev_cluster, tmp_path, job_id, release, 10)
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    assert "after the launch" in (tmp_path / f"{STEM}-{job_id}.out").read_text()
    _no_leftovers(dev_cluster, job_id, tmp_path)

    files = find_sample_files(str(tmp_path), STEM, job_id)
    assert list(files) == ["nid001", "nid002"]
    report = build_report(files, JobFacts(job_id, "COMPLETED", True, None, 300))
    for node in report.nodes:
        assert node.status == "ended" and node.bad_lines == 0, node.messages
        assert [g.index for g in node.gpus] == [0, 1], "the job's 2 GPUs per node, not the node's 4"
        for g in node.gpus:
            # held until the live files had 10 samples a GPU: the ended files' report reads no fewer
            assert g.samples >= 10 and g.simulated
    kinds = sorted({f.kind for f in report.findings})
    assert kinds == ["idle-gpu", "low-memory", "straggler"], report.findings
    idle = [f.message for f in report.findings if f.kind == "idle-gpu"]
    assert [m.split(" idle ")[0] for m in idle] == ["GPU 1 on nid001", "GPU 1 on nid002"]
    assert any(f.message.startswith("nid002 drew ") for f in report.findings)

    _record_history(job_id, tmp_path, script)
    res = ntui(dev_cluster, "report", job_id, "--width", "100", timeout=60,
               env={"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]})
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"job {job_id} (COMPLETED): 2 node(s), 4 GPU(s) sampled  [SIMULATED nvidia-smi]")
    assert "GPU 1 on nid002 idle" in res.stdout and "a straggler?" in res.stdout


def test_failing_launch_keeps_its_exit_code_and_set_e(dev_cluster: DevCluster, tmp_path: Path) -> None:
    script = _script(tmp_path, "sleep 3; exit 3", path_dir=_sim_dir(tmp_path), after='echo "NOT REACHED"')
    job_id = _submit(dev_cluster, tmp_path, script)
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert (info["JobState"], info["ExitCode"]) == ("FAILED", "3:0")
    assert "NOT REACHED" not in (tmp_path / f"{STEM}-{job_id}.out").read_text()
    _no_leftovers(dev_cluster, job_id, tmp_path)
    for path in find_sample_files(str(tmp_path), STEM, job_id).values():
        assert Path(path).read_text().rstrip("\n").endswith(f"{HEADER_TAG} end")


def test_nodes_without_nvidia_smi_complete_and_say_why(dev_cluster: DevCluster, tmp_path: Path) -> None:
    job_id = _submit(dev_cluster, tmp_path, _script(tmp_path, "sleep 2", path_dir=None))
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    _no_leftovers(dev_cluster, job_id, tmp_path)
    report = build_report(find_sample_files(str(tmp_path), STEM, job_id), JobFacts(job_id))
    assert report.gpus == 0
    assert report.no_data_reasons == tuple(
        f"{n}: no GPU tool on the node (nvidia-smi, amd-smi, rocm-smi, xpu-smi): no GPU samples"
        for n in ("nid001", "nid002")
    )


def test_live_report_then_cancel_leaves_no_sampler(dev_cluster: DevCluster, tmp_path: Path) -> None:
    script = _script(tmp_path, "sleep 300", path_dir=_sim_dir(tmp_path))
    job_id = _submit(dev_cluster, tmp_path, script)
    _wait_state(dev_cluster, job_id, ("RUNNING",))
    deadline = time.monotonic() + 60
    while True:  # both nodes' files with a few samples each
        files = find_sample_files(str(tmp_path), STEM, job_id)
        if len(files) == 2 and all(Path(p).read_text().count("\n") >= 7 for p in files.values()):
            break
        assert time.monotonic() < deadline, f"no samples yet: {files}"
        time.sleep(0.5)
    _record_history(job_id, tmp_path, script)
    live = ntui(dev_cluster, "report", job_id, "--json", timeout=60,
                env={"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]})
    assert live.returncode == 0, live.stderr
    data = json.loads(live.stdout)
    assert data["state"] == "RUNNING" and not data["finished"] and data["gpus"] == 4
    assert [n["status"] for n in data["nodes"]] == ["sampling", "sampling"]
    steps, _ = _leftovers(dev_cluster, job_id, tmp_path)
    assert any(SAMPLER_NAME[:8] in s for s in steps), steps  # squeue -s truncates the step name
    assert dev_cluster.run("scancel", job_id).returncode == 0
    _wait_state(dev_cluster, job_id, END_STATES, timeout=60)
    _no_leftovers(dev_cluster, job_id, tmp_path)


def test_job_killed_at_its_time_limit_leaves_no_sampler(dev_cluster: DevCluster, tmp_path: Path) -> None:
    job_id = _submit(dev_cluster, tmp_path, _script(tmp_path, "sleep 600", path_dir=_sim_dir(tmp_path), time_min=1))
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert info["JobState"] == "TIMEOUT"
    _no_leftovers(dev_cluster, job_id, tmp_path)
    report = build_report(find_sample_files(str(tmp_path), STEM, job_id), JobFacts(job_id))
    assert report.gpus == 4 and all(g.samples >= 30 for g in report.all_gpus)


@pytest.mark.parametrize("journal", [False, True], ids=["sampler-alone", "with-journal"])
def test_a_setup_exit_trap_runs_and_the_step_still_ends_with_the_job(dev_cluster: DevCluster, tmp_path: Path,
                                                                     journal: bool) -> None:
    """The sampler alone: a setup's EXIT trap replaces its trap and the step ends with the job. With the journal
    (J2), whose EXIT trap takes the sampler's and the setup's into its chain: the user's trap runs, the sampler ends
    its files cleanly (its end line), the journal has the job's end."""
    script = _script(tmp_path, "sleep 3", path_dir=_sim_dir(tmp_path), setup="trap 'echo USER TRAP' EXIT",
                     journal=journal)
    job_id = _submit(dev_cluster, tmp_path, script)
    info = _wait_state(dev_cluster, job_id, END_STATES)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    assert "USER TRAP" in (tmp_path / f"{STEM}-{job_id}.out").read_text()
    _no_leftovers(dev_cluster, job_id, tmp_path)
    files = find_sample_files(str(tmp_path), STEM, job_id)
    assert len(files) == 2
    if journal:
        for path in files.values():  # stopped by its trap (SIGUSR1), not killed with the job
            assert Path(path).read_text().rstrip("\n").endswith(f"{HEADER_TAG} end")
        state = read_journal(journal_path(str(tmp_path), STEM, job_id), job_id)
        assert state is not None and state.launch_rc == 0 and state.rc == 0 and state.nodes == "nid[001-002]"
