"""The long-run lines of the generated script (T10), run by real bash with stub srun/torchrun/accelerate/scontrol/
sbatch: the stubs start every task at once and srun relays a signal to every process of its step, as Slurm does;
the agents are plain Python processes that install no handler, so a checkpoint signal they did not ignore would
kill them (as it kills torchrun's agent). Covered: the trap and the forward (also a signal that comes before the
ranks installed their handlers), the grace, requeue under the cap and at the cap, the chain and its done marker,
a program that ignores the signal, one that fails after it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.journal import journal_path, read_journal
from ntui.core.jobfiles.runfile import read_run
from tests.support.waits import WAIT_BOUND_S

JOB_ID = "4242"

SRUN = r'''
import os, signal, subprocess, sys
args = sys.argv[1:]
opts = {}
i = 0
while i < len(args) and args[i].startswith("--"):
    k, _, v = args[i][2:].partition("="); opts[k] = v; i += 1
cmd = args[i:]
nodes = int(os.environ["SLURM_JOB_NUM_NODES"]); per = int(opts["ntasks-per-node"])
procs = []
def relay(sig, _frame):  # srun relays a signal to every process of the step (proctrack)
    with open(os.environ["LR_LOG"], "a") as fh:
        fh.write(f"srun relays {signal.Signals(sig).name}\n")
    for p in procs:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM):  # before any task: a signal never finds it without
    signal.signal(s, relay)
for node in range(nodes):
    for local in range(per):
        env = dict(os.environ, SLURM_PROCID=str(node * per + local), SLURM_LOCALID=str(local),
                   SLURM_NODEID=str(node), SLURM_NTASKS=str(nodes * per), SLURMD_NODENAME=f"nid{node + 1:03d}")
        procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))
rc = 0
for p in procs:
    while True:
        try:
            r = p.wait(); break
        except InterruptedError:
            continue
    rc = rc or (r if r >= 0 else 128 - r)
sys.exit(rc)
'''

AGENT = r'''
import os, subprocess, sys
args = sys.argv[1:]
cut = next(i for i, a in enumerate(args) if a in ("--no-python", "--no_python"))
cmd = args[cut + 1:]
nproc = 2
node = int(os.environ["SLURM_NODEID"]); nodes = int(os.environ["SLURM_JOB_NUM_NODES"])
procs = [subprocess.Popen(cmd, env=dict(os.environ, RANK=str(node * nproc + k), LOCAL_RANK=str(k),
                                        WORLD_SIZE=str(nodes * nproc))) for k in range(nproc)]
rc = 0
for p in procs:
    r = p.wait()
    rc = rc or (r if r >= 0 else 128 - r)
with open(os.environ["LR_LOG"], "a") as fh:
    fh.write(f"agent on node {node} exits {rc}\n")
sys.exit(rc)
'''

SCONTROL = r'''
import os, sys
if sys.argv[1:3] == ["show", "hostnames"]:
    for n in range(int(os.environ["SLURM_JOB_NUM_NODES"])):
        print(f"nid{n + 1:03d}")
    sys.exit(0)
with open(os.environ["LR_LOG"], "a") as fh:
    fh.write("scontrol " + " ".join(sys.argv[1:]) + "\n")
'''

SBATCH = r'''
import os, sys
with open(os.environ["LR_LOG"], "a") as fh:
    fh.write("sbatch " + " ".join(sys.argv[1:]) + "\n")
    fh.write("sbatch env SLURM_JOB_ID=" + os.environ.get("SLURM_JOB_ID", "-") + "\n")
print("5151;dev")
'''

PROGRAM = r'''
import os, signal, sys, time
mode, out, rank = os.environ["LR_MODE"], os.environ["LR_OUT"], os.environ.get("RANK", "?")
def note(text):
    with open(out, "a") as fh:
        fh.write(f"{rank} {text}\n")
got = []
time.sleep(float(os.environ.get("LR_START_DELAY", "0")))
if mode != "ignore":
    signal.signal(getattr(signal, "SIG" + os.environ["NTUI_CHECKPOINT_SIGNAL"]), lambda *_: got.append(1))
note(f"start {os.environ['NTUI_RUN_ID']} {os.environ['NTUI_RESTART']} {os.environ['NTUI_CHECKPOINT_SIGNAL']}")
if mode == "done":
    sys.exit(0)
end = time.time() + 40
while time.time() < end:
    if got:
        note("saved")
        sys.exit(3 if mode == "fail" else 0)
    time.sleep(0.05)
note("no signal")
'''


@pytest.fixture(scope="module")
def stub_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("longrunbin")
    for name, code in (("srun", SRUN), ("torchrun", AGENT), ("accelerate", AGENT), ("scontrol", SCONTROL),
                       ("sbatch", SBATCH)):
        (d / f"{name}.py").write_text(code)
        p = d / name
        p.write_text(f'#!/bin/sh\nexec {sys.executable} {d / (name + ".py")} "$@"\n')
        p.chmod(0o755)
    (d / "program.py").write_text(PROGRAM)
    return d


def spec_for(launcher: str, tmp: Path, stub_bin: Path, **run: Any) -> Any:
    launcher_map: dict[str, Any] = {"type": launcher, "python": sys.executable}
    if launcher != "srun":
        launcher_map["nproc-per-node"] = 2
    data: dict[str, Any] = {
        "name": "lr", "launcher": launcher_map, "script": str(stub_bin / "program.py"),
        "sbatch": {"nodes": 2, "ntasks-per-node": 2 if launcher == "srun" else 1, "time": "00:02:00"},
        "logs": {"dir": str(tmp / "logs")}, "monitor": {"gpu": False},
        "run": {"warning": 60, "grace": 30, **run},  # the most the ranks get to save: a loaded host needs it
    }
    spec, problems = validate(LoadedPreset("lr", None, data))
    assert spec is not None, [str(p) for p in problems]
    (tmp / "logs").mkdir(exist_ok=True)
    return spec


class Job:
    def __init__(self, script: str, tmp: Path, stub_bin: Path, mode: str, *args: str, **env: str) -> None:
        self.tmp, self.out, self.log = tmp, tmp / "ranks.txt", tmp / "stubs.log"
        path = tmp / "job.sbatch"
        path.write_text(script)
        full = {"PATH": f"{stub_bin}:/usr/bin:/bin", "HOME": str(tmp), "SLURM_JOB_ID": JOB_ID,
                "SLURM_JOB_NODELIST": "nid[001-002]", "SLURM_JOB_NUM_NODES": "2", "SLURM_CPUS_PER_TASK": "1",
                "LR_MODE": mode, "LR_OUT": str(self.out), "LR_LOG": str(self.log), **env}
        self.proc = subprocess.Popen(["bash", str(path), *args], env=full, cwd=tmp, start_new_session=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def stubs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def wait_for(self, what: str, count: int, timeout: float = WAIT_BOUND_S) -> None:
        end = time.monotonic() + timeout
        while sum(what in line for line in self.lines()) < count:
            assert time.monotonic() < end, (what, self.lines())
            time.sleep(0.05)

    def wait_ranks_launched(self, count: int, timeout: float = WAIT_BOUND_S) -> None:
        """Until ``count`` ranks' logs are there (the launch line opens them just before the program): the shell's
        trap is set and the step's srun relays, while the programs have not yet installed their handlers."""
        logs = self.tmp / "logs"
        end = time.monotonic() + timeout
        while len(list(logs.glob(f"lr-{JOB_ID}-rank-*.out"))) < count:
            assert time.monotonic() < end, sorted(p.name for p in logs.iterdir())
            time.sleep(0.05)

    def signal(self, sig: int = signal.SIGUSR2) -> None:
        os.kill(self.proc.pid, sig)  # --signal=B: the batch shell only

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.returncode, out

    def run_events(self) -> list[dict[str, Any]]:
        path = self.tmp / "logs" / f"lr-{JOB_ID}.run"
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("launcher", ["srun", "torchrun", "accelerate"])
def test_signal_reaches_every_rank_agents_survive_and_the_job_requeues(launcher: str, stub_bin: Path,
                                                                        tmp_path: Path) -> None:
    job = Job(render(spec_for(launcher, tmp_path, stub_bin)), tmp_path, stub_bin, "save")
    job.wait_for("start", 4)
    job.signal()
    rc, out = job.finish()
    assert rc == 0, out
    assert sum(line.endswith("saved") for line in job.lines()) == 4, job.lines()
    assert all(line.split()[1:] == ["start", JOB_ID, "0", "USR2"] for line in job.lines() if "start" in line)
    stubs = job.stubs()
    assert f"scontrol requeue {JOB_ID}" in stubs, stubs
    if launcher != "srun":  # the agents saw the signal go by and ended with their workers' status
        assert sorted(s for s in stubs if s.startswith("agent")) == ["agent on node 0 exits 0",
                                                                       "agent on node 1 exits 0"], stubs
    events = job.run_events()
    assert [e["ev"] for e in events] == ["alloc", "signal", "continue"], events
    assert events[1]["sig"] == "USR2" and events[2]["how"] == "requeue" and events[2]["count"] == 1
    state = read_run(tmp_path / "logs" / f"lr-{JOB_ID}.run", JOB_ID)
    assert state is not None and state.allocations[0].ended_by == "time limit, checkpointed, requeued"
    # The job's own journal has the run's events: a requeued allocation has not ended the job.
    journal = read_journal(journal_path(str(tmp_path / "logs"), "lr", JOB_ID), JOB_ID)
    assert journal is not None and journal.bad_lines == 0
    assert (journal.run_id, journal.checkpoint_signal, journal.continued) == (JOB_ID, "USR2", "requeue")
    assert journal.final() is None


def test_a_signal_before_the_ranks_have_handlers_is_sent_again(stub_bin: Path, tmp_path: Path) -> None:
    job = Job(render(spec_for("torchrun", tmp_path, stub_bin, grace=30)), tmp_path, stub_bin, "save",
              LR_START_DELAY="1.5")
    job.wait_ranks_launched(4)  # not a fixed sleep: too early, the shell has no trap yet and dies of the signal
    job.signal()  # the ranks ignore it until their handler is in (ignored, not killed), then get it again
    rc, out = job.finish()
    assert rc == 0, out
    assert sum(line.endswith("saved") for line in job.lines()) == 4, (job.lines(), out)
    assert f"scontrol requeue {JOB_ID}" in job.stubs()


def test_requeue_count_and_cap(stub_bin: Path, tmp_path: Path) -> None:
    spec = spec_for("srun", tmp_path, stub_bin, **{"max-restarts": 2})
    run_file = tmp_path / "logs" / f"lr-{JOB_ID}.run"
    with run_file.open("w") as fh:  # two earlier allocations ended at the limit and were continued
        for n in (1, 2):
            fh.write(json.dumps({"v": 1, "ev": "continue", "t": 1.0, "job": JOB_ID, "run": JOB_ID, "how": "requeue",
                                 "cause": "timelimit", "count": n}) + "\n")
    job = Job(render(spec), tmp_path, stub_bin, "save", SLURM_RESTART_COUNT="2")
    job.wait_for("start", 4)
    assert all(line.split()[1:] == ["start", JOB_ID, "2", "USR2"] for line in job.lines())
    job.signal()
    rc, out = job.finish()
    assert rc == 0, out
    assert not any(s.startswith("scontrol requeue") for s in job.stubs())
    assert job.run_events()[-1]["why"] == "max-restarts"
    assert "max-restarts (2) reached" in out


def test_chain_submits_its_successor_and_a_done_run_stops_the_chain(stub_bin: Path, tmp_path: Path) -> None:
    script = render(spec_for("torchrun", tmp_path, stub_bin, **{"continue": "chain"}))
    assert "--requeue" not in script
    job = Job(script, tmp_path, stub_bin, "save", SLURM_RESTART_COUNT="0", SLURM_MEM_PER_CPU="100")
    job.wait_for("start", 4)
    job.signal()
    rc, out = job.finish()
    assert rc == 0, out
    stubs = job.stubs()
    sub = [s for s in stubs if s.startswith("sbatch --")]
    assert sub == [f"sbatch --parsable --dependency=afterany:{JOB_ID} {tmp_path / 'job.sbatch'} ntui-chain "
                   f"{JOB_ID} 1"], stubs
    assert "sbatch env SLURM_JOB_ID=-" in stubs  # the successor does not inherit this job's SLURM_*
    assert job.run_events()[-1] == {**job.run_events()[-1], "ev": "continue", "how": "chain", "next": "5151"}

    # The successor: same run id, allocation index 1; its program finishes: the run is done.
    job.out.unlink()
    succ = Job(script, tmp_path, stub_bin, "done", "ntui-chain", JOB_ID, "1", SLURM_JOB_ID="5151")
    rc, out = succ.finish()
    assert rc == 0, out
    assert all(line.split()[1:] == ["start", JOB_ID, "1", "USR2"] for line in succ.lines()), succ.lines()
    assert (tmp_path / "logs" / f"lr-{JOB_ID}.done").exists()
    # A later link (submitted before the run finished) ends at once: the program never starts.
    succ.out.unlink()
    late = Job(script, tmp_path, stub_bin, "save", "ntui-chain", JOB_ID, "2", SLURM_JOB_ID="5152")
    rc, out = late.finish()
    assert rc == 0 and not late.lines() and "is done" in out, out
    state = read_run(tmp_path / "logs" / f"lr-{JOB_ID}.run", JOB_ID)
    assert state is not None
    assert [(a.job_id, a.restart, a.ended_by) for a in state.allocations] == [
        (JOB_ID, 0, "time limit, checkpointed, chained"), ("5151", 1, "done")]
    assert state.done


def test_a_program_that_ignores_the_signal_is_not_continued(stub_bin: Path, tmp_path: Path) -> None:
    job = Job(render(spec_for("torchrun", tmp_path, stub_bin, grace=10)), tmp_path, stub_bin, "ignore")
    job.wait_for("start", 4)
    job.signal()
    end = time.monotonic() + WAIT_BOUND_S
    while not any(e["ev"] == "stop" for e in (job.run_events() if (tmp_path / "logs" / f"lr-{JOB_ID}.run").exists()
                                              else [])):
        assert time.monotonic() < end
        time.sleep(0.1)
    assert job.run_events()[-1]["why"] == "ignored"
    os.killpg(job.proc.pid, signal.SIGTERM)  # the time limit
    job.finish()
    assert not any("saved" in line for line in job.lines())
    assert not any(s.startswith("scontrol requeue") for s in job.stubs())
    state = read_run(tmp_path / "logs" / f"lr-{JOB_ID}.run", JOB_ID)
    assert state is not None and state.allocations[0].ended_by == "time limit (the program ignored the signal)"


def test_a_failure_after_the_signal_stops_the_run(stub_bin: Path, tmp_path: Path) -> None:
    job = Job(render(spec_for("srun", tmp_path, stub_bin)), tmp_path, stub_bin, "fail")
    job.wait_for("start", 4)
    job.signal()
    rc, out = job.finish()
    assert rc == 3, out
    assert job.run_events()[-1] == {**job.run_events()[-1], "ev": "stop", "why": "failed", "rc": 3}
    assert not any(s.startswith("scontrol requeue") for s in job.stubs())


def test_done_without_the_signal_writes_the_marker(stub_bin: Path, tmp_path: Path) -> None:
    job = Job(render(spec_for("accelerate", tmp_path, stub_bin)), tmp_path, stub_bin, "done")
    rc, out = job.finish()
    assert rc == 0, out
    assert (tmp_path / "logs" / f"lr-{JOB_ID}.done").exists()
    assert [e["ev"] for e in job.run_events()] == ["alloc", "stop"] and job.run_events()[-1]["why"] == "done"
