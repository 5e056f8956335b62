"""``ntui stacks``: the probe's classification and transport, the grouping of real captures, the step's argv and
its failures (tests/data/stacks/: the dev cluster's real answers, its README says how they are made)."""

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

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.slurm.runner import CommandResult, SlurmTimeout, TimeoutRunner
from ntui.core.stacks import probe
from ntui.core.stacks.group import Frame, ProcStack, StackClass, place, rank_ranges, read_docs
from ntui.core.stacks.probe import CHUNK, MARK, Proc, classify, decode_lines, encode_lines
from ntui.core.stacks.take import NotRunning, build_stacks_argv, parse_stacks_output, take_stacks
from tests.support.fakes import FakeRunner, result
from tests.support.waits import WAIT_BOUND_S

DATA = Path(__file__).resolve().parents[1] / "data" / "stacks"
HANG = Path(__file__).resolve().parents[2] / "examples" / "hang_train.py"
SLEEP_LINE = next(i for i, line in enumerate(HANG.read_text().splitlines(), 1) if "time.sleep(0.2)" in line)


def _proc(pid: int, ppid: int, **env: str) -> Proc:
    return Proc(pid, ppid, env, "/usr/bin/python3.11", "python train.py")


# ---------------------------------------------------------------- the probe: which process is what


def test_srun_ranks_are_told_by_their_slurm_procid_and_their_children_are_workers() -> None:
    procs = classify([_proc(10, 1, SLURM_PROCID="2", SLURM_LOCALID="0"), _proc(11, 10, SLURM_PROCID="2"),
                      _proc(12, 11, SLURM_PROCID="2"), _proc(20, 1, SLURM_PROCID="3", SLURM_LOCALID="1")])
    got = {p.pid: (p.role, p.rank, p.owner) for p in procs}
    assert got == {10: ("rank", 2, None), 11: ("worker", 2, 10), 12: ("worker", 2, 10), 20: ("rank", 3, None)}


def test_torchruns_agent_is_no_rank_and_its_workers_ranks_come_from_rank() -> None:
    elastic = {"TORCHELASTIC_RUN_ID": "42"}
    procs = classify([_proc(5, 1, SLURM_PROCID="1"), _proc(6, 5, SLURM_PROCID="1", RANK="2", LOCAL_RANK="0", **elastic),
                      _proc(7, 5, SLURM_PROCID="1", RANK="3", LOCAL_RANK="1", **elastic),
                      _proc(8, 7, SLURM_PROCID="1", RANK="3", LOCAL_RANK="1", **elastic)])
    got = {p.pid: (p.role, p.rank, p.local_rank, p.owner) for p in procs}
    assert got == {5: ("agent", 1, None, None), 6: ("rank", 2, 0, None), 7: ("rank", 3, 1, None),
                   8: ("worker", 3, 1, 7)}


def test_a_script_that_exports_rank_before_torchrun_still_has_its_agent_told_apart() -> None:
    """The agent carries RANK too (the user's export), but it started elastic workers: an agent."""
    procs = classify([_proc(5, 1, RANK="0"), _proc(6, 5, RANK="0", TORCHELASTIC_RUN_ID="x"),
                      _proc(7, 5, RANK="1", TORCHELASTIC_RUN_ID="x")])
    assert [(p.pid, p.role, p.rank) for p in procs] == [(5, "agent", 0), (6, "rank", 0), (7, "rank", 1)]


def test_the_document_travels_in_short_lines_and_comes_back_whole_from_interleaved_nodes() -> None:
    big = {"v": 1, "node": "nid001", "blob": [os.urandom(8).hex() for _ in range(2000)]}
    small = {"v": 1, "node": "nid002"}
    a, b = encode_lines("nid001", big), encode_lines("nid002", small)
    assert len(a) > 3 and all(len(line) <= len(MARK) + 30 + CHUNK for line in a)
    mixed = [a[0], "srun: warning: something", b[0], *a[1:]]
    assert decode_lines(mixed) == {"nid001": big, "nid002": small}
    assert decode_lines(mixed[:2] + mixed[3:]) == {"nid001": big}  # a node with a lost line is left out
    damaged = [line.replace(line[-5:], "!!!!!") if i == 0 else line for i, line in enumerate(a)]
    assert decode_lines(damaged) == {}


def test_py_spys_error_is_said_in_one_line_without_its_backtrace() -> None:
    """py-spy 0.4's own stderr when the kernel refuses ptrace (tests/data/stacks/py-spy-eperm.stderr)."""
    text = (DATA / "py-spy-eperm.stderr").read_text()
    assert "Stack backtrace" in text  # the real output carries one
    assert probe._error(text) == "Failed to get stack traces: EPERM: Operation not permitted"


def test_the_probe_samples_a_running_interpreter_twice_and_leaves_it_running(tmp_path: Path) -> None:
    """The probe's main, here: a process of 'job 77' waits in a function of its own; py-spy (ntui's dependency)
    takes its stack twice; it is still running, not stopped, afterwards."""
    script = tmp_path / "waits.py"
    # the ready file is made in the function the stack shows: sampled before, the stack is the interpreter's start
    ready = tmp_path / "ready"
    script.write_text("import os, sys, time\n\ndef waits_here():\n    os.close(os.open(sys.argv[1], os.O_CREAT))\n"
                      "    while True:\n        time.sleep(0.1)\n\nwaits_here()\n")
    env = {**os.environ, "SLURM_JOB_ID": "77", "SLURM_PROCID": "5", "SLURM_STEP_ID": "0"}
    target = subprocess.Popen([sys.executable, str(script), str(ready)], env=env)
    try:
        deadline = time.monotonic() + WAIT_BOUND_S
        while not ready.exists():
            assert time.monotonic() < deadline and target.poll() is None, "the sampled process never got going"
            time.sleep(0.05)
        out = subprocess.run([sys.executable, "-m", "ntui.core.stacks.probe", "--interval", "0.2",
                              "--py-spy", str(Path(sys.executable).parent / "py-spy")],
                             env={**env, "SLURM_STEP_ID": "9", "SLURMD_NODENAME": ""}, capture_output=True,
                             text=True, timeout=60)
        docs = decode_lines(out.stdout.splitlines())
        assert len(docs) == 1, out.stdout + out.stderr
        stacks = read_docs("77", docs)
        assert [c.words for c in stacks.classes] == ["rank 5: waits_here (waits.py:6) ← <module> · waiting"]
        assert probe.state_of(target.pid) in ("S", "R")
        assert target.poll() is None
    finally:
        target.send_signal(signal.SIGKILL)
        target.wait()


# ---------------------------------------------------------------- grouping the dev cluster's real answers


def _case(name: str) -> tuple[dict[str, Any], str, str]:
    where = DATA / name
    return (json.loads((where / "case.json").read_text()), (where / "srun.stdout").read_text(),
            (where / "srun.stderr").read_text())


@pytest.mark.parametrize("name", ["srun-stuck", "torchrun-stuck", "accelerate-stuck"])
def test_a_captured_hang_groups_into_the_waiting_three_and_the_stuck_one(name: str) -> None:
    case, out, err = _case(name)
    stacks = parse_stacks_output(case["job_id"], out, err, ["nid001", "nid002"])
    assert [(c.ranks, c.state) for c in stacks.classes] == [((3,), "waiting"), ((0, 1, 2), "waiting")]
    stuck, waiting = stacks.classes
    assert stuck.where == f"wait_for_release (hang_train.py:{SLEEP_LINE}) ← train_step"
    assert waiting.where.startswith("all_reduce ← train_step (hang_train.py:")
    assert stacks.problems == ()
    assert [n.agents for n in stacks.nodes] == ([0, 0] if name.startswith("srun") else [1, 1])
    assert stacks.lines()[0] == f"Job {case['job_id']}: 4 ranks on 2 nodes, sampled twice 3 s apart"


def test_a_captured_dataloader_deadlock_shows_the_worker_under_its_rank() -> None:
    case, out, err = _case("srun-dataloader")
    stacks = parse_stacks_output(case["job_id"], out, err, ["nid001", "nid002"])
    assert stacks.classes[0].ranks == (3,)
    assert stacks.classes[0].where.startswith("_MultiProcessingDataLoaderIter._try_get_data ← load_batch (")
    (worker,) = stacks.worker_classes
    assert worker.who.startswith("rank 3's worker (pid ") and worker.frames[0].name == "wait_for_release"


def test_a_captured_refusal_keeps_the_other_nodes_stacks() -> None:
    case, out, err = _case("srun-refused")
    stacks = parse_stacks_output(case["job_id"], out, err, ["nid001", "nid002"])
    assert [c.ranks for c in stacks.classes] == [(0, 1)]
    assert len(stacks.problems) == 2 and "seccomp filter" in stacks.problems[0], stacks.problems
    nid002 = next(n for n in stacks.nodes if n.node == "nid002")
    assert nid002.seccomp == 2 and nid002.cap_sys_ptrace


def test_a_node_that_never_answered_is_named_and_the_others_are_kept() -> None:
    case, out, _ = _case("srun-stuck")
    one = [line for line in out.splitlines() if line.startswith(f"{MARK} nid001 ")]
    stacks = parse_stacks_output(case["job_id"], "\n".join(one), "srun: error: nid002: task 1: Killed\n",
                                 ["nid001", "nid002"])
    assert [c.ranks for c in stacks.classes] == [(0, 1)]
    assert stacks.problems[0].startswith("nid002: no answer")
    assert stacks.problems[-1] == "srun said: srun: error: nid002: task 1: Killed"


def test_rank_ranges_fold_runs() -> None:
    assert rank_ranges([8, 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15]) == "0-6, 8-15"
    assert rank_ranges([7]) == "7"


def test_a_class_is_said_by_the_library_call_the_users_code_waits_in() -> None:
    lib = "/venv/lib/python3.11/site-packages/"
    frames = (Frame("select", "selectors.py", "/usr/lib/python3.11/selectors.py", 415),
              Frame("Queue.get", "multiprocessing/queues.py", "/usr/lib/python3.11/multiprocessing/queues.py", 113),
              Frame("_Iter._get_data", "torch/utils/data/dataloader.py", lib + "torch/utils/data/dataloader.py", 1464),
              Frame("_Iter.__next__", "torch/utils/data/dataloader.py", lib + "torch/utils/data/dataloader.py", 725),
              Frame("load_batch", "train.py", "/home/u/train.py", 41))
    assert StackClass((), frames).where == "_Iter._get_data ← load_batch (train.py:41)"
    assert StackClass((), ()).where == "(no Python frame)"


def _polled(*samples: tuple[Frame, ...]) -> ProcStack:
    return ProcStack("nid002", 40, "rank", 3, 1, "python train.py", samples, None, 1)


def test_a_rank_polling_in_its_own_loop_waits_though_one_sample_caught_the_check() -> None:
    """The second of two samples 3 s apart may find a polling rank in its check (``path.exists()``: the library's
    frames under the loop's line) rather than its sleep: it is still in the same place of its own code."""
    lib = "/usr/lib/python3.11/pathlib.py"
    calls = (Frame("train_step", "train.py", "/home/u/train.py", 60), Frame("main", "train.py", "/home/u/train.py", 90))
    sleeping = (Frame("wait_for_release", "train.py", "/home/u/train.py", 30), *calls)
    checking = (Frame("stat", "pathlib.py", lib, 1013), Frame("exists", "pathlib.py", lib, 1235),
                Frame("wait_for_release", "train.py", "/home/u/train.py", 29), *calls)
    assert place(sleeping) == place(checking)
    assert _polled(checking, sleeping).waiting is True
    assert StackClass((_polled(sleeping, checking), _polled(sleeping, sleeping)), sleeping).state == "waiting"
    # its own code went elsewhere: another function, or the same one called from another line
    saving = (Frame("save", "train.py", "/home/u/train.py", 12), *calls)
    assert _polled(sleeping, saving).waiting is False
    elsewhere = (sleeping[0], Frame("train_step", "train.py", "/home/u/train.py", 64), calls[1])
    assert _polled(sleeping, elsewhere).waiting is False
    assert StackClass((_polled(sleeping, saving),), saving).state == "moving"
    # no frame of the user's own: the stacks are compared whole
    inner = (Frame("select", "selectors.py", "/usr/lib/python3.11/selectors.py", 415),)
    moved = (Frame("select", "selectors.py", inner[0].path, 416),)
    assert place(inner) == inner and _polled(inner, moved).waiting is False
    assert _polled(sleeping).waiting is None  # one sample: nothing to compare


# ---------------------------------------------------------------- the step


def test_the_step_claims_one_task_per_node_and_none_of_the_gpus() -> None:
    argv = build_stacks_argv("123", ["nid002", "nid001"], python="/env/bin/python", py_spy="/env/bin/py-spy",
                             native=True, interval_s=2, timeout_s=5)
    assert argv[:10] == ["srun", "--jobid=123", "--overlap", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                         "--nodelist=nid[001-002]", "--gres=none", "--mem=100M", "--job-name=ntui-stacks"]
    assert argv[10:] == ["/env/bin/python", "-m", "ntui.core.stacks.probe", "--py-spy", "/env/bin/py-spy",
                         "--interval", "2", "--timeout", "5", "--native"]
    with pytest.raises(ValueError):
        build_stacks_argv("12; rm", ["nid001"], python="p", py_spy="s")


def test_a_job_that_is_not_running_has_no_stacks_and_says_what_to_do() -> None:
    pending = "JobId=9 JobName=x UserId=u(1) JobState=PENDING Reason=Priority NodeList=(null)\n"
    runner = FakeRunner({("scontrol", "show", "job"): result(stdout=pending)})
    with pytest.raises(NotRunning, match="job 9 is PENDING: it has not started"):
        take_stacks(runner, "9")
    ended = pending.replace("PENDING", "FAILED")
    with pytest.raises(NotRunning, match=r"`ntui triage 9` reads what its logs say"):
        take_stacks(FakeRunner({("scontrol", "show", "job"): result(stdout=ended)}), "9")


def test_a_step_killed_at_its_timeout_still_gives_the_nodes_that_answered() -> None:
    case, out, _ = _case("srun-stuck")
    show = (DATA / "srun-stuck" / "show_job.stdout").read_text()
    one = "\n".join(line for line in out.splitlines() if line.startswith(f"{MARK} nid001 "))

    def srun(argv: tuple[str, ...]) -> CommandResult:
        raise SlurmTimeout("srun did not answer within 56 s", timeout=56, stdout=one, argv=argv)

    runner = FakeRunner({("scontrol", "show", "job"): result(stdout=show), "srun": srun})
    stacks = take_stacks(runner, case["job_id"], environ={"PATH": "/usr/bin"})
    assert [c.ranks for c in stacks.classes] == [(0, 1)]
    assert stacks.problems[0].startswith("nid002: no answer")
    sent = next(c.argv for c in runner.history if c.argv[0] == "srun")
    assert "--nodelist=nid[001-002]" in sent


def test_the_configured_query_timeout_does_not_cut_a_step_short() -> None:
    runner = TimeoutRunner(FakeRunner(), query=15, submit=60)
    assert runner.timeout_for(["srun", "x"], 56) == 56
    assert runner.timeout_for(["srun", "x"], 5) == 15
    assert runner.timeout_for(["squeue"], 56) == 15


# ---------------------------------------------------------------- monitor.allow-attach (D2)


def test_allow_attach_runs_the_ranks_prctl_and_still_the_environments_own_sitecustomize(tmp_path: Path) -> None:
    """The script's own lines (rendered, then run by bash) write the sitecustomize and put it first on PYTHONPATH;
    an interpreter started then runs it and the environment's own sitecustomize after it. Its prctl's effect needs
    Yama, which this machine's kernel lacks (PR_SET_PTRACER then fails with EINVAL, ignored): that the call is made
    without harm is what can be checked here."""
    spec, problems = validate(load_preset("local-srun", ["monitor.allow-attach=true", f"logs.dir={tmp_path}"]))
    assert spec is not None, problems
    script = render(spec).splitlines()
    start = next(i for i, line in enumerate(script) if line.startswith("NTUI_PTRACER_DIR="))
    end = next(i for i, line in enumerate(script) if line.startswith('export PYTHONPATH="$NTUI_PTRACER_DIR'))
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITECUSTOMIZE'] = 'ran'\n")
    check = ("import os, sys, sitecustomize; print(os.environ.get('OWN_SITECUSTOMIZE'), "
             "sitecustomize.__file__, sys.path[1])")
    lines = "\n".join(script[start:end + 1])
    out = subprocess.run(["bash", "-euc", f'{lines}\nexec "{sys.executable}" -c "$1"', "bash", check],
                         env={"PATH": os.environ["PATH"], "SLURM_JOB_ID": "321", "PYTHONPATH": str(own)},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    ours = tmp_path / "local-srun-321-ptracer"
    assert out.stdout.split() == ["ran", str(own / "sitecustomize.py"), str(ours)]  # ours first, its own run
    assert (ours / "sitecustomize.py").read_text().startswith("# Written by ntui (monitor.allow-attach)")


def test_a_node_without_py_spy_says_how_to_get_it() -> None:
    env = {**os.environ, "SLURM_JOB_ID": "78", "SLURM_STEP_ID": "9", "SLURMD_NODENAME": "nid007"}
    out = subprocess.run([sys.executable, "-m", "ntui.core.stacks.probe", "--py-spy", "/nonexistent/py-spy"],
                         env=env, capture_output=True, text=True, timeout=60)
    stacks = read_docs("78", decode_lines(out.stdout.splitlines()))
    assert stacks.nodes[0].error == "py-spy not found (/nonexistent/py-spy)"
    assert stacks.problems[0].startswith("nid007: py-spy not found (/nonexistent/py-spy): install py-spy where ntui "
                                         "runs (pip install py-spy, in an environment the compute nodes see) or "
                                         "name it with NTUI_PY_SPY")


def test_a_rank_that_exited_or_timed_out_is_said_and_the_others_kept() -> None:
    """The probe's own document (its format, written here) for a node where rank 1 exited between the listing and
    its dump, and rank 2's dump timed out."""
    frames = [["all_reduce", "torch/distributed/distributed_c10d.py", "/v/site-packages/torch/distributed/x.py", 9]]
    doc = {"v": 1, "node": "nid001", "access": {"ptrace_scope": 0, "cap_sys_ptrace": False, "seccomp": 0},
           "py_spy": "/env/bin/py-spy",
           "procs": [{"pid": p, "ppid": 1, "role": "rank", "rank": r} for p, r in ((10, 0), (11, 1), (12, 2))],
           "samples": [{"at": 1.0, "stacks": {"10": [{"tid": 10, "frames": frames}]},
                        "errors": {"11": "gone: the process exited",
                                   "12": "timeout: py-spy did not answer within 10 s"}, "continued": [12]}]}
    stacks = read_docs("5", {"nid001": doc})
    assert [c.ranks for c in stacks.classes] == [(0,)]
    assert stacks.problems == ("nid001: rank 1 exited before it could be sampled",
                               "nid001: rank 2: timeout: py-spy did not answer within 10 s; it was left running",
                               "nid001: 1 process(es) py-spy left stopped were continued (pid 12)")
