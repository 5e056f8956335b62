"""Submission history under ``kill -9`` during submit, on the real dev cluster: no accepted job is lost.

``python -m ntui submit local-srun --hold`` is started ``KILLS`` times and SIGKILLed after a random delay
: every other run anywhere in one whole submit (calibrated by an uninterrupted run first), the others
0-25 ms after the staging script appears, so kills land before the intent row, between the intent and
sbatch, while sbatch runs, and between sbatch and the history update. ntui
runs sbatch in its own session, so a killed ntui does not take sbatch with it: the job may be accepted
while nobody records it, which is the case reconcile exists for.

"Accepted" is decided by Slurm, not by ntui: after the loop (and after every orphaned sbatch process
has exited) it is every job of ours that ``squeue --me --states=all`` lists with a batch script (Command)
in this test's private log directory. ntui is then "restarted" (intent rows are backdated past the grace
period, as if ntui started again later) and ``ntui history --reconcile`` runs; every accepted job id must
then be in the history (submitted or recovered), with its script under the final name, mode 0600. All
those jobs are held, and cancelled at the end.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ntui.core.records.history import History
from ntui.core.records.reconcile import staging_name
from tests.reliability.conftest import REPO, DevCluster, ntui_env, run_ntui

pytestmark = pytest.mark.cluster

KILLS = 40
SEP = "\x1f"


def _sbatch_running(log_dir: Path) -> list[int]:
    """PIDs of sbatch processes still working on a script in ``log_dir`` (orphans of killed ntuis)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"sbatch" and any(str(log_dir).encode() in a for a in argv):
            pids.append(int(entry.name))
    return pids


def _accepted(cluster: DevCluster, log_dir: Path) -> dict[str, str]:
    """Job id -> Command of our jobs whose batch script lies in ``log_dir``."""
    res = cluster.run("squeue", "--me", "--noheader", "--states=all", "-O", f"JobID:{SEP},Command:{SEP}")
    assert res.returncode == 0, res.stderr
    jobs = {}
    for line in res.stdout.splitlines():
        parts = line.split(SEP)
        if len(parts) >= 2 and parts[1].startswith(f"{log_dir}/"):
            jobs[parts[0].strip()] = parts[1]
    return jobs


def test_submit_killed_at_random_moments_loses_no_job(dev_cluster: DevCluster, tmp_path: Path) -> None:
    home = tmp_path / "home"
    log_dir = tmp_path / "logs"
    stem = f"relkill-{uuid.uuid4().hex[:6]}"
    env = ntui_env(home, dev_cluster.env)
    argv = [sys.executable, "-m", "ntui", "submit", "local-srun", "--hold",
            "--set", f"logs.dir={log_dir}", "--set", f"sbatch.job-name={stem}"]
    rng = random.Random(os.environ.get("NTUI_RELIABILITY_SEED", "4321"))
    printed: set[str] = set()
    try:
        start = time.monotonic()
        done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
        full = time.monotonic() - start
        assert done.returncode == 0, done.stderr
        printed.add(done.stdout.strip())
        killed = 0
        loop_start = time.monotonic()
        for i in range(KILLS):
            before = set(log_dir.glob(".*.sbatch"))
            child = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if i % 2:  # anywhere in the run (mostly interpreter start-up and imports)
                time.sleep(rng.uniform(0, 1.2 * full))
            else:  # inside the critical section: from the staging script's appearance (intent, sbatch, ...)
                t0 = time.monotonic()
                while child.poll() is None and not set(log_dir.glob(".*.sbatch")) - before:
                    if time.monotonic() - t0 > 10:
                        break
                    time.sleep(0.001)
                time.sleep(rng.uniform(0, 0.025))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
                killed += 1
            out, _ = child.communicate(timeout=30)
            if child.returncode == 0 and out.strip():
                printed.add(out.decode().strip())
        deadline = time.monotonic() + 60
        while _sbatch_running(log_dir):
            assert time.monotonic() < deadline, "orphaned sbatch processes did not finish"
            time.sleep(0.2)
        loop_s = time.monotonic() - loop_start

        accepted = _accepted(dev_cluster, log_dir)
        assert printed <= set(accepted), "a job id ntui printed is not in the queue"
        assert all(staging_name(cmd) is not None for cmd in accepted.values())

        state = home / "state" / "ntui"
        # "restart" ntui later: every intent is past the grace period (the files backdated, the index rebuilt)
        for intent in (state / "records").glob("*.intent.*.json"):
            doc = json.loads(intent.read_text())
            doc["created_at"] -= 3600
            intent.write_text(json.dumps(doc))
        shutil.rmtree(state / "index")
        res = run_ntui("history", "--reconcile", "-n", "100000", "--json", env=env)
        assert res.returncode == 0, res.stderr.decode()
        report = res.stderr.decode()

        rows = {e["job_id"]: e for e in json.loads(res.stdout) if e["job_id"] in accepted}
        missing = sorted(set(accepted) - set(rows), key=int)
        assert not missing, f"accepted by sbatch but not in the history after reconcile: {missing}\n{report}"
        recovered = sorted((j for j, e in rows.items() if e["status"] == "recovered"), key=int)
        assert {e["status"] for e in rows.values()} <= {"submitted", "recovered"}
        for job_id in accepted:
            final = log_dir / f"{stem}-{job_id}.sbatch"
            assert final.is_file(), f"job {job_id}: no script {final.name}"
            assert stat.S_IMODE(final.stat().st_mode) == 0o600
            assert rows[job_id]["script_path"] == str(final)
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert {stat.S_IMODE(p.stat().st_mode) for p in (state / "records").iterdir()} == {0o600}

        again = run_ntui("history", "--reconcile", "-n", "1", env=env)
        assert again.returncode == 0 and b"recovered job" not in again.stderr, again.stderr.decode()
        with History(state) as h:
            statuses = [e.status for e in h.entries()]
        intents, failed = statuses.count("intent"), statuses.count("failed")
        strays = sorted(p.name for p in log_dir.glob(".*.sbatch"))
        print(f"\n[reliability] submit kill -9: {KILLS} runs ({killed} killed) in {loop_s:.1f}s, one submit "
              f"{full * 1000:.0f} ms; accepted {len(accepted)}, printed {len(printed)}, recovered "
              f"{len(recovered)} {recovered}; intents left (sbatch never ran) {intents}, failed {failed}, "
              f"staging scripts left {len(strays)}")
    finally:
        ids = sorted(_accepted(dev_cluster, log_dir), key=int)
        if ids:
            dev_cluster.run("scancel", *ids)
