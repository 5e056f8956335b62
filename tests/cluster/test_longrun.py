"""Long runs on the real dev cluster (T10): a 2-minute limit, SIGUSR2 30 s before it, the example program
(examples/longrun_train.py) saving on it and resuming from its checkpoint.

Every case is submitted at once when the module starts (a requeued job waits about two minutes pending with
Reason=BeginTime even on an idle cluster, so the cases overlap that wait): each job takes one CPU per node,
so two run at a time.

* requeue, torchrun (2 nodes x 2 workers) and srun (2 nodes x 1 task): 185 one-second steps take at least 3
  allocations (the signal comes 30-60 s before the 2-minute limit, so one allocation does at most ~88 steps;
  165 fitted in two once, both signals late), each resumes from the saved step, no step is done
  twice, the run ends "done" and Slurm's accounting keeps the job's earlier allocations as REQUEUED;
* chain (torchrun): 100 steps over linked jobs (afterany; two links at least), the run id of the first in each;
* max-restarts: 1 reached ends the run after 2 allocations with that reason;
* a program that ignores the signal is stopped at the limit (TIMEOUT) and the run says so;
* accelerate (2 nodes x 2 workers, continue: none): every rank gets the signal and saves, the agents survive it.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ntui.core.jobfiles.runfile import RunState, read_run
from tests.cluster.conftest import DevCluster
from tests.cluster.test_e2e import ntui

pytestmark = pytest.mark.cluster

STEPS = 185
CHAIN_STEPS = 100
COMMON = ("sbatch.cpus-per-task=1", "sbatch.time=00:02:00", "run.warning=30", "run.grace=20")
#: How long one case may take: 4 allocations of 2 minutes, 3 requeue waits of ~2 minutes, the queue.
CASE_TIMEOUT_S = 26 * 60


@dataclass
class Case:
    name: str
    sets: tuple[str, ...]
    args: tuple[str, ...] = ("--steps", str(STEPS), "--step-seconds", "1")
    log_dir: Path = field(default_factory=Path)
    job_id: str = ""
    submitted: float = 0.0
    submitted_wall: float = 0.0  # time.time() at submission: sacct's -S (an earlier job with the same id is not ours)
    state_dir: Path = field(default_factory=Path)


CASES = {
    "requeue-torchrun": Case("requeue-torchrun", ()),
    "requeue-srun": Case("requeue-srun", ("launcher.type=srun",)),
    # a chain proves its links with two: an allocation does at most ~88 one-second steps, so 100 take two (or three)
    "chain-torchrun": Case("chain-torchrun", ("run.continue=chain",), ("--steps", str(CHAIN_STEPS), "--step-seconds",
                                                                         "1")),
    "max-restarts": Case("max-restarts", ("launcher.type=srun", "sbatch.nodes=1", "run.max-restarts=1"),
                         ("--steps", "1000", "--step-seconds", "1")),
    "ignored": Case("ignored", ("launcher.type=srun", "sbatch.nodes=1"),
                    ("--steps", "1000", "--step-seconds", "1", "--ignore-signal")),
    "saved-accelerate": Case("saved-accelerate", ("launcher.type=accelerate", "env.ACCELERATE_USE_CPU=true",
                                                  "run.continue=none"), ("--steps", "1000", "--step-seconds", "1")),
}


@pytest.fixture(scope="module")
def runs(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    state = tmp_path_factory.mktemp("longrun-state")
    for case in CASES.values():
        case.log_dir = tmp_path_factory.mktemp(f"longrun-{case.name}")
        args = ", ".join(f'"{a}"' for a in (*case.args, "--ckpt-dir", str(case.log_dir)))
        res = ntui(dev_cluster, "submit", "local-longrun", "--set", f"logs.dir={case.log_dir}",
                   "--set", f"args=[{args}]", *(x for s in (*COMMON, *case.sets) for x in ("--set", s)),
                   env={"XDG_STATE_HOME": str(state)}, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        case.job_id = res.stdout.strip().splitlines()[-1]
        case.state_dir = state
        case.submitted = time.monotonic()
        case.submitted_wall = time.time()
    return CASES


def wait_stopped(case: Case, cluster: DevCluster) -> RunState:
    """The run file once the run stopped (its last allocation's stop), within the case's time."""
    path = case.log_dir / f"local-longrun-{case.job_id}.run"
    deadline = case.submitted + CASE_TIMEOUT_S  # a bound on the wait, not a claim about the run's speed
    while True:
        state = read_run(path, case.job_id)
        if state is not None and state.stopped is not None and state.stopped != "ignored":
            return state
        if state is not None and state.stopped == "ignored" and _job_gone(case, cluster):
            return state
        assert time.monotonic() < deadline, (case.name, state)
        time.sleep(5)


def _job_gone(case: Case, cluster: DevCluster) -> bool:
    return not cluster.run("squeue", "-h", "-j", case.job_id, "-o", "%T").stdout.strip()


def steps_done(case: Case, job_ids: tuple[str, ...]) -> list[int]:
    steps: list[int] = []
    for job in job_ids:
        path = case.log_dir / f"local-longrun-{job}-rank-0.out"
        if not path.exists():  # srun: rank 0 writes to ...-rank-0.out too (%t)
            continue
        text = path.read_text()
        # "step 12/185": 12 steps done, the last one step 11
        steps += [int(m.group(1)) - 1 for m in re.finditer(r"^step (\d+)/\d+ loss \S+$", text, re.MULTILINE)]
    return steps


def _sacct_states(cluster: DevCluster, case: Case) -> list[str]:
    """The case's job's records in accounting, every allocation (-D); from its submission on: a cluster reuses job
    ids (MaxJobId wraps; a cluster started clean numbers from FirstJobId again) and sacct -j lists them all."""
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(case.submitted_wall - 60))
    res = cluster.run("sacct", "-n", "-X", "-D", "-P", "-S", since, "-j", case.job_id, "-o", "State")
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["requeue-torchrun", "requeue-srun"])
def test_requeue_completes_over_three_allocations_resuming_each_time(runs: dict[str, Case], name: str,
                                                                    dev_cluster: DevCluster) -> None:
    case = runs[name]
    state = wait_stopped(case, dev_cluster)
    allocs = state.allocations
    assert state.stopped == "done", state
    assert len(allocs) >= 3, allocs
    assert {a.job_id for a in allocs} == {case.job_id}  # requeue keeps the id
    assert [a.restart for a in allocs] == list(range(len(allocs)))
    assert all(a.ended_by == "time limit, checkpointed, requeued" for a in allocs[:-1]), allocs
    assert allocs[-1].ended_by == "done"
    steps = steps_done(case, (case.job_id,))
    assert sorted(steps) == list(range(STEPS)), Counter(steps).most_common(3)  # each step once
    rank0 = (case.log_dir / f"local-longrun-{case.job_id}-rank-0.out").read_text()
    resumed = re.findall(r"^resumed from step (\d+) \(restart (\d+)\)$", rank0, re.MULTILINE)
    assert [int(r) for _s, r in resumed] == list(range(1, len(allocs))), rank0[-2000:]
    # Every allocation's start is marked in the appended batch log.
    batch = (case.log_dir / f"local-longrun-{case.job_id}.out").read_text(errors="replace")
    assert len(re.findall(rf"^ntui: run {case.job_id}, allocation \d+ ", batch, re.MULTILINE)) == len(allocs)
    if dev_cluster.accounting:
        states = _sacct_states(dev_cluster, case)
        assert states.count("REQUEUED") == len(allocs) - 1 and states[-1] == "COMPLETED", states
    said = history_of(dev_cluster, case)
    assert f"run {case.job_id}: {len(allocs)} allocations (job {case.job_id}), done" in said, said
    assert said.count("time limit, checkpointed, requeued") == len(allocs) - 1, said
    # One progress series over the allocations (the preset's progress: pattern, the rank header marking each start)
    progress = ntui(dev_cluster, "progress", case.job_id, "--json", env={"XDG_STATE_HOME": str(case.state_dir)},
                    timeout=120)
    assert progress.returncode == 0, progress.stdout + progress.stderr
    got = json.loads(progress.stdout)
    assert (got["step"], got["total"], got["restarts"]) == (STEPS, STEPS, len(allocs) - 1), got
    assert got["words"] == f"step {STEPS} of {STEPS}: done" and "loss" in got["metrics"], got


def history_of(cluster: DevCluster, case: Case) -> str:
    """What ``ntui history`` says of the case's job: its line and the run's lines under it."""
    res = ntui(cluster, "history", "-n", "50", env={"XDG_STATE_HOME": str(case.state_dir)}, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(case.job_id + " "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1].strip()), len(lines))
    return "\n".join(lines[start:end])


def test_chain_completes_over_linked_jobs(runs: dict[str, Case], dev_cluster: DevCluster) -> None:
    case = runs["chain-torchrun"]
    state = wait_stopped(case, dev_cluster)
    assert state.stopped == "done", state
    jobs = state.job_ids
    assert len(jobs) >= 2 and jobs[0] == case.job_id, state
    for a, b in zip(state.allocations, state.allocations[1:], strict=False):
        assert a.continued == "chain" and a.next_job == b.job_id, (a, b)
    assert sorted(steps_done(case, jobs)) == list(range(CHAIN_STEPS))
    for job in jobs[1:]:
        rank0 = (case.log_dir / f"local-longrun-{job}-rank-0.out").read_text()
        assert f"run {case.job_id}, allocation" in rank0  # NTUI_RUN_ID is the first job's
    assert (case.log_dir / f"local-longrun-{case.job_id}.done").exists()
    said = history_of(dev_cluster, case)
    assert f"run {case.job_id}: {len(jobs)} allocations (jobs {', '.join(jobs)}), done" in said, said
    show = ntui(dev_cluster, "show", jobs[-1], env={"XDG_STATE_HOME": str(case.state_dir)}, timeout=120)
    assert f"Run: run {case.job_id}: {len(jobs)} allocations" in show.stdout, show.stdout + show.stderr
    # the last link (not in the history: the job before it submitted it) reports as its run's last allocation
    rep = ntui(dev_cluster, "report", jobs[-1], "--json", env={"XDG_STATE_HOME": str(case.state_dir)}, timeout=120)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    run = json.loads(rep.stdout)["run"]
    assert run["jobs"] == list(jobs) and run["this_report_allocations"] == [len(jobs)], run


def test_max_restarts_reached_ends_the_run(runs: dict[str, Case], dev_cluster: DevCluster) -> None:
    case = runs["max-restarts"]
    state = wait_stopped(case, dev_cluster)
    assert state.stopped == "max-restarts", state
    assert len(state.allocations) == 2
    assert state.allocations[-1].ended_by == "time limit, max-restarts reached"
    assert not (case.log_dir / f"local-longrun-{case.job_id}.done").exists()
    assert "stopped: max-restarts reached" in history_of(dev_cluster, case)


def test_a_program_that_ignores_the_signal_meets_the_time_limit(runs: dict[str, Case],
                                                               dev_cluster: DevCluster) -> None:
    case = runs["ignored"]
    state = wait_stopped(case, dev_cluster)
    assert len(state.allocations) == 1
    assert state.allocations[0].ended_by == "time limit (the program ignored the signal)", state
    batch = (case.log_dir / f"local-longrun-{case.job_id}.out").read_text(errors="replace")
    assert "did not exit within 20 s of SIGUSR2" in batch
    assert "stopped: the program ignored the checkpoint signal" in history_of(dev_cluster, case)
    if dev_cluster.accounting:
        deadline = time.monotonic() + 60
        while _sacct_states(dev_cluster, case)[-1:] != ["TIMEOUT"]:
            assert time.monotonic() < deadline, _sacct_states(dev_cluster, case)
            time.sleep(3)


def test_accelerate_ranks_get_the_signal_and_its_agents_survive(runs: dict[str, Case], dev_cluster: DevCluster) -> None:
    case = runs["saved-accelerate"]
    state = wait_stopped(case, dev_cluster)
    assert state.stopped == "saved", state
    assert len(state.allocations) == 1 and state.allocations[0].signal_at is not None
    rank0 = (case.log_dir / f"local-longrun-{case.job_id}-rank-0.out").read_text()
    assert re.search(r"^checkpoint at step \d+: saved", rank0, re.MULTILINE), rank0[-1500:]
    batch = (case.log_dir / f"local-longrun-{case.job_id}.out").read_text(errors="replace")
    assert f"run {case.job_id} saved; continue: none" in batch, batch[-3000:]
