"""Capture the triage test logs of ``tests/data/logs/<case>/`` from REAL runs on the dev cluster.

Not a test: run it by hand when the logs must be re-captured (it takes a few minutes and, for
``node-fail``, SIGKILLs nid002's slurmd once, which briefly disturbs other users of the dev cluster)::

    eval "$(scripts/dev-cluster env)"
    python tests/cluster/capture_triage_logs.py [CASE ...]     # default: every case
    python tests/cluster/capture_triage_logs.py --into slurm-26.05 signal-abort-srun ...   # another version's
    python tests/cluster/capture_triage_logs.py --torch /path/to/venv [CASE ...]   # that venv's torch, accelerate

``--torch VENV`` runs the jobs with another Python environment (its ``bin`` first on the PATH the job inherits, so
its ``python``, ``torchrun`` and ``accelerate``) and writes into ``tests/data/logs/torch-<version>/<case>/``: the torch
version matrix (``scripts/torch-matrix`` makes the venvs).

Each case submits one job through ``ntui submit`` (the shipped ``local-*`` presets running
``examples/ddp_check.py``), makes it end the way the case is named, and copies the batch log, the rank logs
and Slurm's own final word (``scontrol show job -o``; ``sacct`` too where accounting exists) into
``tests/data/logs/<case>/`` with a ``case.json`` (job id, launcher, world size, what was done).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "logs"
DEV_CLUSTER = Path(os.environ.get("NTUI_DEV_CLUSTER_SCRIPT", REPO / "scripts" / "dev-cluster"))


#: ``--torch VENV``: the job's Python environment (its bin first on the job's PATH); None: this interpreter's
JOB_VENV: Path | None = None


def ntui(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    if JOB_VENV is not None:
        env["PATH"] = f"{JOB_VENV / 'bin'}:{env['PATH']}"
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, errors="replace", timeout=timeout)


def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, errors="replace", timeout=timeout)


def state(job_id: str) -> str:
    out = run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip()
    if out:
        return out
    show = run("scontrol", "show", "job", "-o", job_id).stdout
    for word in show.split():
        if word.startswith("JobState="):
            return word.split("=", 1)[1]
    return ""


def wait_state(job_id: str, wanted: set[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        now = state(job_id)
        if now in wanted or time.monotonic() > deadline:
            return now
        time.sleep(1)


ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
         "DEADLINE", ""}


def submit(preset: str, log_dir: Path, *sets: str) -> str:
    args = ["submit", preset, "--set", f"logs.dir={log_dir}"]
    for s in sets:
        args += ["--set", s]
    res = ntui(*args, cwd=log_dir, timeout=120)
    if res.returncode != 0:
        raise SystemExit(f"submit failed: {res.stdout}{res.stderr}")
    return res.stdout.strip().splitlines()[0]


def collect(case: str, preset: str, log_dir: Path, job_id: str, world: int, launcher: str, note: str,
            **extra: object) -> None:
    time.sleep(2)  # let slurmstepd finish writing
    dest = OUT / case
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for p in sorted(log_dir.glob(f"{preset}-{job_id}*.out")):  # names as ntui wrote them: LogPaths(dest, preset)
        shutil.copy2(p, dest / p.name)  # keep the mtime: it dates lines that carry no timestamp
    show = run("scontrol", "show", "job", "-o", job_id).stdout.strip()
    (dest / "scontrol.txt").write_text(show + "\n")
    sacct = run("sacct", "-n", "-P", "-j", job_id, "-o", "JobID,State,ExitCode,Reason,NodeList,Start,End")
    if sacct.returncode == 0 and sacct.stdout.strip():
        (dest / "sacct.txt").write_text(sacct.stdout)
    if JOB_VENV is not None:
        extra = {**extra, "torch": _venv_versions(JOB_VENV)}
    meta = {"job_id": job_id, "preset": preset, "launcher": launcher, "world_size": world, "what": note,
            "captured": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "mtimes": {p.name: round(p.stat().st_mtime, 6) for p in sorted(dest.glob("*.out"))}, **extra}
    (dest / "case.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{case}: job {job_id} -> {dest} ({state(job_id)})", flush=True)


def case_fail(case: str, preset: str, launcher: str, rank: int, tmp: Path) -> None:
    log_dir = tmp / case
    log_dir.mkdir()
    job = submit(preset, log_dir, f"env.NTUI_CHECK_FAIL_RANK={rank}")
    wait_state(job, ENDED, 180)
    collect(case, preset, log_dir, job, 4, launcher, f"rank {rank} raises RuntimeError (NTUI_CHECK_FAIL_RANK)",
            failing_rank=rank)


def case_signal(case: str, preset: str, launcher: str, rank: int, how: str, tmp: Path, *sets: str) -> None:
    """Rank ``rank`` kills itself by a signal (``NTUI_CHECK_FAIL_HOW``) while the others wait in a barrier."""
    log_dir = tmp / case
    log_dir.mkdir()
    job = submit(preset, log_dir, f"env.NTUI_CHECK_FAIL_RANK={rank}", f"env.NTUI_CHECK_FAIL_HOW={how}", *sets)
    wait_state(job, ENDED, 180)
    signal = SIGNALS[how]
    collect(case, preset, log_dir, job, 4, launcher,
            f"rank {rank} kills itself by {signal} (NTUI_CHECK_FAIL_HOW={how})" + (f", {' '.join(sets)}" if sets
                                                                                   else ""),
            failing_rank=rank, signal=signal)


#: NTUI_CHECK_FAIL_HOW -> the signal that ends the rank
SIGNALS = {"abort": "SIGABRT", "segv": "SIGSEGV", "kill": "SIGKILL"}
#: the signal cases: (how, failing rank, extra --set); the segfaults run with Python's faulthandler (ntui's scripts
#: set it, D3), so the rank's own log ends in "Fatal Python error: Segmentation fault"; abort runs without it, as a
#: script of a user's would, so the rank's log stops silent (and SIGKILL leaves nothing to say in any case)
SIGNAL_CASES = {"abort": (3, ("env.PYTHONFAULTHANDLER=0",)), "segv": (1, ("env.PYTHONFAULTHANDLER=1",)),
                "kill": (2, ("env.PYTHONFAULTHANDLER=0",))}


def case_cancel(case: str, preset: str, launcher: str, tmp: Path) -> None:
    log_dir = tmp / case
    log_dir.mkdir()
    job = submit(preset, log_dir, "env.NTUI_CHECK_SLEEP=300")
    wait_state(job, {"RUNNING"}, 120)
    time.sleep(8)  # ranks up and sleeping
    res = ntui("cancel", job, cwd=log_dir, timeout=60)
    wait_state(job, ENDED, 120)
    collect(case, preset, log_dir, job, 4, launcher, f"ntui cancel {job} while every rank sleeps",
            cancelled_by=os.environ.get("USER") or str(os.getuid()), cancel_rc=res.returncode)


def case_timeout(tmp: Path) -> None:
    log_dir = tmp / "timeout-srun"
    log_dir.mkdir()
    job = submit("local-srun", log_dir, "sbatch.time=00:01:00", "env.NTUI_CHECK_SLEEP=600")
    wait_state(job, ENDED, 400)
    collect("timeout-srun", "local-srun", log_dir, job, 4, "srun", "--time=00:01:00 while every rank sleeps 600 s")


def case_node_fail(tmp: Path) -> None:
    log_dir = tmp / "node-fail"
    log_dir.mkdir()
    job = submit("local-torchrun", log_dir, "env.NTUI_CHECK_SLEEP=300")
    wait_state(job, {"RUNNING"}, 120)
    time.sleep(8)
    run(str(DEV_CLUSTER), "kill-node", "nid002", timeout=60)
    try:
        final = wait_state(job, ENDED | {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}, 180)
        collect("node-fail", "local-torchrun", log_dir, job, 4, "torchrun",
                "dev-cluster kill-node nid002 while every rank sleeps", state_seen=final)
    finally:
        run(str(DEV_CLUSTER), "start-node", "nid002", timeout=180)
        run("scancel", job)


CASES = {
    "fail-srun": lambda tmp: case_fail("fail-srun", "local-srun", "srun", 2, tmp),
    "fail-torchrun": lambda tmp: case_fail("fail-torchrun", "local-torchrun", "torchrun", 3, tmp),
    "fail-accelerate": lambda tmp: case_fail("fail-accelerate", "local-accelerate", "accelerate", 3, tmp),
    "cancel-srun": lambda tmp: case_cancel("cancel-srun", "local-srun", "srun", tmp),
    "cancel-torchrun": lambda tmp: case_cancel("cancel-torchrun", "local-torchrun", "torchrun", tmp),
    **{f"signal-{how}-{launcher}": (lambda tmp, how=how, launcher=launcher, rank=rank, sets=sets: case_signal(
        f"signal-{how}-{launcher}", f"local-{launcher}", launcher, rank, how, tmp, *sets))
       for how, (rank, sets) in SIGNAL_CASES.items() for launcher in ("srun", "torchrun", "accelerate")},
    "timeout-srun": case_timeout,
    "node-fail": case_node_fail,
}


def _venv_versions(venv: Path) -> dict[str, str]:
    """torch's and accelerate's versions in a venv (``2.0.1+cu117`` -> ``2.0.1``)."""
    code = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p).split('+')[0] "
            "for p in ('torch', 'accelerate')}))")
    return dict(json.loads(run(str(venv / "bin" / "python"), "-c", code).stdout))


def main(argv: list[str]) -> int:
    global OUT, JOB_VENV
    if argv[:1] == ["--into"]:  # tests/data/logs/<SUBDIR>/<case>/: the captures of another Slurm version
        OUT, argv = OUT / argv[1], argv[2:]
    if argv[:1] == ["--torch"]:  # tests/data/logs/torch-<version>/<case>/: another torch version's
        JOB_VENV, argv = Path(argv[1]).resolve(), argv[2:]
        OUT = OUT / f"torch-{_venv_versions(JOB_VENV)['torch']}"
    names = argv or list(CASES)
    with tempfile.TemporaryDirectory(prefix="ntui-capture-") as tmp:
        for name in names:
            CASES[name](Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
