"""Stuck jobs on the real dev cluster: said quiet after the threshold, every rank's stack taken and grouped, nothing
left stopped, and the job finishing normally once released.

``examples/hang_train.py`` runs 4 ranks on 2 nodes (gloo) and hangs at step 4 until a file exists:

* **stuck**, under srun, torchrun and accelerate: rank 3 waits in a function of its own (``wait_for_release``)
  before the ``all_reduce`` the other three wait in;
* **dataloader** (srun): rank 3's DataLoader worker waits in the dataset's ``__getitem__``, rank 3 for its worker;
* **steady** (srun): no hang, a step every 2 s, slower than the threshold: never called quiet;
* **refused** (srun, nid002's slurmd restarted under ``scripts/deny-ptrace``: the kernel refuses ptrace to every
  process of a job there): nid001's ranks are still shown; nid002's refusal is said with its reason and way out.

The cases are submitted at once (one job at a time fits the cluster) and followed in order with a
``progress: {quiet-after: 6}`` setting. ``NTUI_CAPTURE_STACKS=DIR`` also writes each case's real answers (the
step's output, ``squeue``, ``scontrol show job -d``, the rank-0 log, the script) under ``DIR/<case>/``: that is how
``tests/data/stacks/`` is made (its README).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ntui.core.slurm.scontrol import build_show_job_argv
from ntui.core.slurm.squeue import build_squeue_argv
from ntui.core.stacks.take import build_stacks_argv, py_spy_path
from tests.cluster.conftest import REPO, DevCluster, require_disruption_lock
from tests.cluster.test_e2e import ntui

pytestmark = pytest.mark.cluster

HANG = REPO / "examples" / "hang_train.py"
QUIET_AFTER_S = 6
#: The line of wait_for_release's sleep: where the stuck rank (and the DataLoader's worker) waits.
SLEEP_LINE = next(i for i, line in enumerate(HANG.read_text().splitlines(), 1) if "time.sleep(0.2)" in line)
CASE_TIMEOUT_S = 6 * 60
#: What the example prints, for the preset's progress: pattern (its steps are the quiet check's signs of life).
PLAIN = r"^step (?P<step>\d+)/(?P<total>\d+) loss (?P<loss>\S+)$"


@dataclass
class Case:
    name: str
    base: str
    mode: str
    args: list[str] = field(default_factory=list)
    preset: dict[str, Any] = field(default_factory=dict)  # more of the preset
    job_id: str = ""
    log: Path = field(default_factory=Path)
    release: Path = field(default_factory=Path)
    quiet: dict[str, Any] | None = None  # ntui progress --json once it said quiet
    quiet_after_s: float | None = None  # from the last step line to the first "quiet"
    quiet_seen: list[str] = field(default_factory=list)  # every quiet word said (steady: must stay empty)
    stacks: dict[str, Any] | None = None
    stacks_rc: int | None = None
    stacks_s: float | None = None
    stopped: list[str] = field(default_factory=list)  # the job's processes found stopped after the stacks
    state_after: str = ""  # the job's state right after the stacks
    show: str = ""
    why: str = ""
    final: str = ""


CASES = [
    Case("srun-stuck", "local-srun", "stuck"),
    # with monitor.allow-attach: its sitecustomize on every rank's PYTHONPATH changes nothing else (D2)
    Case("torchrun-stuck", "local-torchrun", "stuck", preset={"monitor": {"allow-attach": True}}),
    Case("accelerate-stuck", "local-accelerate", "stuck"),
    Case("srun-dataloader", "local-srun", "dataloader"),
    Case("srun-steady", "local-srun", "steady", ["--steps", "10", "--step-seconds", "2"]),
]
REFUSED = Case("srun-refused", "local-srun", "stuck")


def _env(tmp: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp / "state"), "XDG_CONFIG_HOME": str(tmp / "config")}


def _submit(cluster: DevCluster, case: Case, tmp: Path) -> None:
    logs = tmp / case.name
    case.release = tmp / f"{case.name}.release"
    preset = tmp / f"{case.name}.yaml"
    extra: dict[str, Any] = {}
    if case.base == "local-accelerate":
        extra["env"] = {"ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    preset.write_text(json.dumps({
        "extends": str(REPO / "presets" / f"{case.base}.yaml"), "name": f"hang-{case.name}", "script": str(HANG),
        "args": ["--mode", case.mode, "--release", str(case.release), "--steps", "8", *case.args],
        "logs": {"dir": str(logs)}, "progress": {"pattern": PLAIN}, **extra, **case.preset}))
    res = ntui(cluster, "submit", str(preset), env=_env(tmp), timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    case.job_id = res.stdout.strip().splitlines()[-1]
    case.log = logs / f"hang-{case.name}-{case.job_id}-rank-0.out"


def _state(cluster: DevCluster, job_id: str) -> str:
    out = cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    return next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")


def _job_procs(job_id: str) -> list[tuple[int, str]]:
    """(pid, state letter) of every process whose environment names the job (both nodes run on this host)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if f"SLURM_JOB_ID={job_id}".encode() in env:
            found.append((int(name), stat[stat.rfind(b")") + 2:].split()[0].decode()))
    return found


def _wait(what: str, check: Any, timeout: float = CASE_TIMEOUT_S, step: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(step)
    return got


def _progress(cluster: DevCluster, case: Case, tmp: Path) -> dict[str, Any] | None:
    res = ntui(cluster, "progress", case.job_id, "--json", env=_env(tmp), timeout=120)
    if res.returncode not in (0, 1) or "{" not in res.stdout:
        return None
    got: dict[str, Any] = json.loads(res.stdout[: res.stdout.rindex("}") + 1])
    return got


def _capture(cluster: DevCluster, case: Case) -> None:
    """The case's real answers, for tests/data/stacks/ (module docstring)."""
    out = Path(os.environ["NTUI_CAPTURE_STACKS"]) / case.name
    out.mkdir(parents=True, exist_ok=True)
    nodes = cluster.run("scontrol", "show", "hostnames",
                        cluster.run("squeue", "-h", "-j", case.job_id, "-o", "%N").stdout.strip()).stdout.split()
    argv = build_stacks_argv(case.job_id, nodes, python=sys.executable, py_spy=py_spy_path(os.environ))
    for name, cmd in (("srun", argv), ("squeue", build_squeue_argv(job_ids=[case.job_id])),
                      ("show_job", build_show_job_argv(case.job_id))):
        res = cluster.run(*cmd, timeout=120)
        (out / f"{name}.stdout").write_text(res.stdout)
        (out / f"{name}.stderr").write_text(res.stderr)
    shutil.copyfile(case.log, out / "rank-0.out")
    shutil.copyfile(case.log.with_name(f"hang-{case.name}-{case.job_id}.sbatch"), out / "script.sbatch")
    (out / "case.json").write_text(json.dumps({"job_id": case.job_id, "mode": case.mode, "launcher": case.base,
                                              "log_mtime": case.log.stat().st_mtime,
                                              "stacks_argv": argv}, indent=1))


def _hang(cluster: DevCluster, case: Case, tmp: Path) -> None:
    """Follow a hanging case: quiet, stacks, nothing stopped, still running; then release it to its end."""
    _wait(f"{case.name} ({case.job_id}) at step 3", lambda: case.log.exists() and "step 3/" in case.log.read_text())
    last_step = case.log.stat().st_mtime
    case.quiet = _wait(f"{case.name} said quiet", lambda: (p := _progress(cluster, case, tmp)) and p["quiet"] and p,
                       timeout=120)
    case.quiet_after_s = time.time() - last_step
    if case.name == "srun-stuck":  # the same words where a user asks about a running job
        case.show = ntui(cluster, "show", case.job_id, env=_env(tmp)).stdout
        case.why = ntui(cluster, "why", case.job_id, env=_env(tmp)).stdout
    begun = time.monotonic()
    res = ntui(cluster, "stacks", case.job_id, "--json", env=_env(tmp), timeout=120)
    case.stacks_s = time.monotonic() - begun
    case.stacks_rc = res.returncode
    assert res.stdout.strip().startswith("{"), res.stdout + res.stderr
    case.stacks = json.loads(res.stdout)
    case.stopped = [f"{pid} {st}" for pid, st in _job_procs(case.job_id) if st in ("T", "t")]
    case.state_after = _state(cluster, case.job_id)
    if os.environ.get("NTUI_CAPTURE_STACKS"):
        _capture(cluster, case)
    case.release.touch()
    _wait(f"{case.name} to end", lambda: _state(cluster, case.job_id) not in ("RUNNING", "PENDING", "COMPLETING", ""))
    case.final = _state(cluster, case.job_id)


def _steady(cluster: DevCluster, case: Case, tmp: Path) -> None:
    """Follow the steady case to its end, asking whether it is quiet every 2 s; its stacks once, mid-run."""
    _wait(f"{case.name} ({case.job_id}) at step 2", lambda: case.log.exists() and "step 2/" in case.log.read_text())
    while _state(cluster, case.job_id) == "RUNNING":
        got = _progress(cluster, case, tmp)
        if got is not None and got["quiet"]:
            case.quiet_seen.append(got["quiet"])
        if case.stacks is None and got is not None and (got["step"] or 0) >= 4:
            res = ntui(cluster, "stacks", case.job_id, "--json", env=_env(tmp), timeout=120)
            case.stacks_rc = res.returncode
            case.stacks = json.loads(res.stdout) if res.stdout.strip().startswith("{") else None
        time.sleep(2)
    case.final = _state(cluster, case.job_id)


@pytest.fixture(scope="module")
def followed(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    tmp = tmp_path_factory.mktemp("stacks")
    (tmp / "config" / "ntui").mkdir(parents=True)
    (tmp / "config" / "ntui" / "config.yaml").write_text(f"progress:\n  quiet-after: {QUIET_AFTER_S}\n")
    for case in CASES:
        _submit(dev_cluster, case, tmp)
    try:
        for case in CASES:
            (_steady if case.mode == "steady" else _hang)(dev_cluster, case, tmp)
    finally:
        for case in CASES:
            case.release.touch()
    return {c.name: c for c in CASES}


def _cls(stacks: dict[str, Any], ranks: list[int]) -> dict[str, Any]:
    got = [c for c in stacks["classes"] if c["ranks"] == ranks]
    assert got, [(c["ranks"], c["where"]) for c in stacks["classes"]]
    return got[0]


@pytest.mark.parametrize("name", ["srun-stuck", "torchrun-stuck", "accelerate-stuck"])
def test_a_stuck_rank_is_named_apart_from_the_three_that_wait_for_it(followed: dict[str, Case], name: str) -> None:
    case = followed[name]
    assert case.stacks is not None and case.stacks_rc == 0, (case.stacks_rc, case.stacks)
    assert case.stacks["ranks"] == 4 and len(case.stacks["classes"]) == 2, case.stacks["classes"]
    waiting = _cls(case.stacks, [0, 1, 2])
    assert waiting["frames"][0]["name"] == "all_reduce" and waiting["state"] == "waiting", waiting
    assert waiting["where"] == f"all_reduce ← train_step (hang_train.py:{_line('dist.all_reduce(t)')})"
    stuck = _cls(case.stacks, [3])
    top = stuck["frames"][0]
    assert (top["name"], top["file"], top["line"]) == ("wait_for_release", "hang_train.py", SLEEP_LINE), stuck
    assert stuck["state"] == "waiting" and stuck["who"] == "rank 3"
    assert case.stacks["classes"][0]["ranks"] == [3]  # the odd class first
    agents = [n["agents"] for n in case.stacks["nodes"]]
    assert agents == ([0, 0] if name.startswith("srun") else [1, 1])  # torchrun's and accelerate's: no ranks
    assert {m["node"] for c in case.stacks["classes"] for m in c["members"]} == {"nid001", "nid002"}


def _line(text: str) -> int:
    return next(i for i, line in enumerate(HANG.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("name", ["srun-stuck", "torchrun-stuck", "accelerate-stuck", "srun-dataloader"])
def test_a_hang_is_said_quiet_after_the_threshold_and_nothing_is_left_stopped(followed: dict[str, Case],
                                                                              name: str) -> None:
    case = followed[name]
    assert case.quiet is not None and case.quiet["quiet"].startswith("quiet for "), case.quiet
    assert "no progress since step 3" in case.quiet["quiet"], case.quiet
    assert case.quiet_after_s is not None and QUIET_AFTER_S <= case.quiet_after_s < QUIET_AFTER_S + 30
    assert case.stopped == [], case.stopped
    assert case.state_after == "RUNNING"
    assert case.final == "COMPLETED"  # released, it finished normally


def test_show_and_why_say_a_running_job_is_quiet(followed: dict[str, Case]) -> None:
    case = followed["srun-stuck"]
    assert "Quiet: quiet for" in case.show and f"ntui stacks {case.job_id}" in case.show, case.show
    assert "is RUNNING, not waiting" in case.why and "no progress since step 3" in case.why, case.why


def test_a_deadlocked_dataloader_worker_is_shown_under_its_rank(followed: dict[str, Case]) -> None:
    case = followed["srun-dataloader"]
    assert case.stacks is not None and case.stacks_rc == 0, case.stacks
    rank3 = _cls(case.stacks, [3])
    names = [f["name"] for f in rank3["frames"]]
    assert "_BaseDataLoaderIter.__next__" in names and rank3["state"] == "waiting", names
    assert rank3["where"].endswith(f"← load_batch (hang_train.py:{_line('next(iter(loader))')})"), rank3["where"]
    assert _cls(case.stacks, [0, 1, 2])["frames"][0]["name"] == "all_reduce"
    workers = case.stacks["workers"]
    assert [w["ranks"] for w in workers] == [[3]], workers
    top = workers[0]["frames"][:2]
    assert [(f["name"], f["line"]) for f in top] == [("wait_for_release", SLEEP_LINE),
                                                      ("Slow.__getitem__", _line("wait_for_release(self.release)"))]
    assert workers[0]["who"].startswith("rank 3's worker (pid ")


def test_a_slow_but_steady_job_is_never_called_quiet(followed: dict[str, Case]) -> None:
    case = followed["srun-steady"]
    assert case.quiet_seen == []
    assert case.final == "COMPLETED"
    assert case.stacks is not None and case.stacks["ranks"] == 4, case.stacks


@pytest.mark.disrupts_cluster
def test_a_node_that_refuses_ptrace_is_said_with_the_way_out(dev_cluster: DevCluster,
                                                             followed: dict[str, Case],
                                                             tmp_path: Path) -> None:
    """nid002's slurmd under a seccomp filter refusing ptrace (scripts/deny-ptrace): every process of a job there,
    the probe included, is refused by the kernel; nid001's ranks are still shown. Runs after the other cases (the
    ``followed`` fixture) and restores nid002 whatever happens."""
    (tmp_path / "config" / "ntui").mkdir(parents=True)
    (tmp_path / "config" / "ntui" / "config.yaml").write_text(f"progress:\n  quiet-after: {QUIET_AFTER_S}\n")
    case = Case(REFUSED.name, REFUSED.base, REFUSED.mode)
    script = str(dev_cluster.script)
    try:
        for args in (("kill-node", "nid002"), ("start-node", "nid002", "--deny-ptrace")):
            require_disruption_lock(dev_cluster, args[0])
            res = dev_cluster.run(script, *args, timeout=180)
            assert res.returncode == 0, res.stdout + res.stderr
        _submit(dev_cluster, case, tmp_path)
        _wait(f"{case.name} at step 3", lambda: case.log.exists() and "step 3/" in case.log.read_text())
        res = ntui(dev_cluster, "stacks", case.job_id, env=_env(tmp_path), timeout=120)
        text = res.stdout
        stopped = [p for p in _job_procs(case.job_id) if p[1] in ("T", "t")]
        state = _state(dev_cluster, case.job_id)
        if os.environ.get("NTUI_CAPTURE_STACKS"):
            _capture(dev_cluster, case)
    finally:
        case.release.touch()
        if case.job_id:
            _wait(f"{case.name} to end", lambda: _state(dev_cluster, case.job_id) not in ("RUNNING", "PENDING",
                                                                                          "COMPLETING"))
            case.final = _state(dev_cluster, case.job_id)
        for args in (("kill-node", "nid002"), ("start-node", "nid002")):
            dev_cluster.run(script, *args, timeout=180)
    assert res.returncode == 1, text + res.stderr
    assert "ranks 0-1: all_reduce ← train_step" in text, text
    assert "nid002: attaching to rank 2 was refused (Failed to get stack traces: EPERM" in text, text
    assert "a seccomp filter on the node refuses ptrace" in text and "--cap-add SYS_PTRACE" in text, text
    assert "nid002: the same refusal for 1 more process" in text, text
    assert stopped == [] and state == "RUNNING"
    assert case.final == "COMPLETED"
