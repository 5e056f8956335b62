"""Job records on the real dev cluster, with and without accounting (``accounting_agnostic``).

Four jobs are submitted with ``ntui submit`` (which exits at once) and end while no ntui process runs: one
COMPLETES, one FAILS (exit 3), one is CANCELLED with plain ``scancel`` while it runs, one hits its 1-minute
TIMEOUT. Each one's own journal (rule J2) gives its exact state and exit code (source ``job``), also with every
Slurm command refused (as after MinJobAge with the controller gone, or no accounting: nothing else could tell);
with accounting they agree with sacct's job lines, and ``ntui history`` (a fresh process) shows them confirmed by
**one** batched sacct call; without accounting it needs no squeue or scontrol at all. ``ntui resubmit``
re-renders the same script byte for byte, submits it and links the new job to the old one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ntui.core.jobfiles.journal import TIME_LIMIT_SLACK_S
from ntui.core.records.history import History
from ntui.core.records.record import resolve_records
from ntui.core.slurm.common import exit_code_meaning
from ntui.core.slurm.runner import CommandResult, CommandRunner, SubprocessRunner

from .conftest import REPO, DevCluster

pytestmark = [pytest.mark.cluster, pytest.mark.accounting_agnostic]

EXIT_PY = "import sys, time\ntime.sleep(float(sys.argv[1]))\nsys.exit(int(sys.argv[2]))\n"
# name -> (sleep s, exit code, time limit)
JOBS = {
    "rec-ok": ("1", "0", "00:05:00"),
    "rec-fail": ("1", "3", "00:05:00"),
    "rec-cancel": ("300", "0", "00:05:00"),
    "rec-timeout": ("300", "0", "00:01:00"),
}
WANT = {"rec-ok": "COMPLETED", "rec-fail": "FAILED", "rec-cancel": "CANCELLED", "rec-timeout": "TIMEOUT"}
#: Slurm's job-level exit codes of the four (sacct's job line; a job Slurm ended by a signal keeps 0:0 there)
CODES = {"rec-ok": "0:0", "rec-fail": "3:0", "rec-cancel": "0:0", "rec-timeout": "0:0"}
LIVE = {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED", "RESIZING"}


def _env(cluster: DevCluster, home: Path) -> dict[str, str]:
    env = dict(cluster.env)
    env["XDG_STATE_HOME"] = str(home / "state")
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["PYTHONPATH"] = str(REPO)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # the jobs' `python`
    return env


def ntui(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=env, capture_output=True, text=True,
                          errors="replace", timeout=timeout, cwd=str(REPO))


def _sets(script: Path, log_dir: Path, name: str, sleep: str, code: str, limit: str) -> list[str]:
    sets = {"script": str(script), "args": json.dumps([sleep, code]), "sbatch.nodes": "1",
            "sbatch.ntasks-per-node": "1", "logs.dir": str(log_dir), "sbatch.job-name": name, "sbatch.time": limit}
    return [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]


#: The shared cluster may be busy with other jobs (2 nodes x 2 CPUs): waits for a start are generous.
START_WAIT_S = 600


def _wait_gone(cluster: DevCluster, ids: Sequence[str], timeout: float = START_WAIT_S + 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = cluster.run("squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%T").stdout.split()
        if not any(s in LIVE for s in out):
            return
        time.sleep(2)
    pytest.fail(f"jobs {ids} did not end within {timeout} s")


def _wait_sacct(cluster: DevCluster, ids: Sequence[str], timeout: float = 60) -> None:
    """slurmdbd hears of an end from slurmctld asynchronously; wait until it knows them all."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = cluster.run("sacct", "-X", "-P", "-n", "-j", ",".join(ids), "-o", "JobID,State").stdout
        states = dict(ln.split("|", 1) for ln in out.splitlines() if "|" in ln)
        if all(states.get(i, "RUNNING").split()[0].rstrip("+") not in LIVE for i in ids):
            return
        time.sleep(1)
    pytest.fail(f"sacct does not know the end of {ids} after {timeout} s")


class RefusingRunner:
    """Every Slurm command fails as if the controller and slurmdbd were gone (and the job long forgotten)."""

    def __init__(self) -> None:
        self.argvs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], *, timeout: float, env: Any = None,
            input: str | None = None) -> CommandResult:  # noqa: A002 - mirrors CommandRunner
        self.argvs.append(tuple(argv))
        return CommandResult(tuple(argv), 1, "", "slurm_load_jobs error: Unable to contact slurm controller "
                             "(connect failure)", 0.0)


class CountingRunner:
    def __init__(self, inner: CommandRunner) -> None:
        self.inner = inner
        self.argvs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], *, timeout: float, env: Any = None,
            input: str | None = None) -> CommandResult:  # noqa: A002 - mirrors CommandRunner
        self.argvs.append(tuple(argv))
        return self.inner.run(argv, timeout=timeout, env=env, input=input)


def test_jobs_that_ended_while_ntui_was_closed_show_their_final_state(
        dev_cluster: DevCluster, tmp_path: Path) -> None:
    env = _env(dev_cluster, tmp_path / "home")
    script = tmp_path / "exit.py"
    script.write_text(EXIT_PY)
    log_dir = tmp_path / "logs"
    ids: dict[str, str] = {}
    try:
        for name, (sleep, code, limit) in JOBS.items():
            res = ntui(env, "submit", "local-srun", *_sets(script, log_dir, name, sleep, code, limit))
            assert res.returncode == 0, res.stderr
            ids[name] = res.stdout.split()[0]
        # ntui has exited; the jobs run and end on their own, one cancelled by plain scancel once its launch step
        # runs (squeue says RUNNING a moment before the batch shell starts: cancelled then, it has no journal)
        deadline = time.monotonic() + START_WAIT_S
        journal = log_dir / f"rec-cancel-{ids['rec-cancel']}.events"
        while not (journal.exists() and '"ev":"launch"' in journal.read_text()):
            assert time.monotonic() < deadline, "rec-cancel never started"
            time.sleep(0.5)
        dev_cluster.run("scancel", ids["rec-cancel"])
        _wait_gone(dev_cluster, list(ids.values()))
        if dev_cluster.accounting:
            _wait_sacct(dev_cluster, list(ids.values()))

        state_dir = tmp_path / "home" / "state" / "ntui"
        # 1. The journals alone, on a copy of the store, with every Slurm command refused: exact states and codes.
        alone = copy_store(state_dir, tmp_path / "alone")
        refusing = RefusingRunner()
        report = resolve_records(alone, refusing, env=dev_cluster.env)
        by_id = dict(report.resolved)
        missing = {n: (log_dir / f"{n}-{i}.events") for n, i in ids.items() if i not in by_id}
        assert not missing, {n: p.read_text() if p.exists() else "no journal" for n, p in missing.items()}
        print(f"\n[record] journals alone: {[(n, by_id[i].state, by_id[i].exit_code) for n, i in ids.items()]}; "
              f"Slurm asked {[a[0] for a in refusing.argvs]}")
        for name, state in WANT.items():
            got = by_id[ids[name]]
            assert (got.state, got.exit_code, got.source) == (state, CODES[name], "job"), (name, got)
            assert got.elapsed_s is not None and got.node_list in ("nid001", "nid002"), (name, got)
        # the journal's clock starts when the batch shell wrote alloc, a moment after Slurm's (59 s seen once)
        assert by_id[ids["rec-timeout"]].elapsed_s >= 60 - TIME_LIMIT_SLACK_S
        alone.close()
        if dev_cluster.accounting:  # the same four as sacct's job lines say
            out = dev_cluster.run("sacct", "-X", "-P", "-n", "-j", ",".join(ids.values()), "-o",
                                  "JobID,State,ExitCode").stdout
            sacct = {ln.split("|")[0]: (ln.split("|")[1].split()[0], ln.split("|")[2]) for ln in out.splitlines()}
            for name in WANT:
                got = by_id[ids[name]]
                assert (got.state, got.exit_code) == sacct[ids[name]], (name, got, sacct[ids[name]])

        # 2. In-process on another copy: how many Slurm calls one resolution makes.
        src = copy_store(state_dir, tmp_path / "copy")
        counting = CountingRunner(SubprocessRunner())
        report = resolve_records(src, counting, env=dev_cluster.env)
        src.close()
        kinds = [a[0] for a in counting.argvs]
        print(f"[record] accounting={'on' if dev_cluster.accounting else 'off'}: one resolve of 4 jobs ran "
              f"{kinds}; sources {sorted({r.source for _, r in report.resolved})}")
        assert kinds == ["sacct"]  # one batched call (it confirms, or says there is no accounting); no squeue

        res = ntui(env, "history", "--json")
        assert res.returncode == 0, res.stderr
        rows = {e["job_name"]: e for e in json.loads(res.stdout)}
        for name, state in WANT.items():
            row = rows[name]
            assert row["job_id"] == ids[name]
            assert (row["final_state"], row["exit_code"], row["record_source"]) == (state, CODES[name], "job"), row
            assert row["confirmed_by"] == ("sacct" if dev_cluster.accounting else None), row
            assert row["elapsed_s"] is not None and row["node_list"] in ("nid001", "nid002"), row
        if dev_cluster.accounting:
            assert rows["rec-cancel"]["reason"].startswith("cancelled by "), rows["rec-cancel"]
        # A cancel or time limit ends the job by SIGTERM: its exit code reads so (or says nothing) on every Slurm
        # version, never "exit 15" (sacct before 25.11 printed srun's 143 as 15:0)
        for name in ("rec-cancel", "rec-timeout"):
            print(f"[record] {name}: exit code {rows[name]['exit_code']} from {rows[name]['record_source']}")
            assert exit_code_meaning(rows[name]["exit_code"]) in ("", "SIGTERM"), rows[name]
        assert rows["rec-timeout"]["elapsed_s"] >= 60 - TIME_LIMIT_SLACK_S  # sacct's, or the journal's (above)
        assert "exit code 3" in rows["rec-fail"]["verdict"]
        text = ntui(env, "history")
        assert text.returncode == 0, text.stderr
        for name, state in WANT.items():
            line = next(ln for ln in text.stdout.splitlines() if ln.startswith(ids[name] + " "))
            assert state in line, line
    finally:
        if ids:
            dev_cluster.run("scancel", *ids.values())


def copy_store(state_dir: Path, copy: Path) -> History:
    """The record files copied to ``copy`` (its index is rebuilt there from them)."""
    shutil.copytree(state_dir / "records", copy / "records")
    return History(copy)


def test_resubmit_renders_the_same_script_and_links_the_jobs(dev_cluster: DevCluster, tmp_path: Path) -> None:
    env = _env(dev_cluster, tmp_path / "home")
    script = tmp_path / "exit.py"
    script.write_text(EXIT_PY)
    log_dir = tmp_path / "logs"
    preset = tmp_path / "mine.yaml"
    shutil.copy(REPO / "presets" / "local-srun.yaml", preset)
    text = preset.read_text().replace("script: ../examples/ddp_check.py", f"script: {script}")
    preset.write_text(text)
    ids: list[str] = []
    try:
        res = ntui(env, "submit", str(preset), *_sets(script, log_dir, "rec-again", "1", "0", "00:05:00"))
        assert res.returncode == 0, res.stderr
        old = res.stdout.split()[0]
        ids.append(old)
        res = ntui(env, "resubmit", old, "--test-only")
        assert res.returncode == 0 and "would start" in res.stdout, res.stdout + res.stderr
        assert "changed" not in res.stderr, res.stderr
        res = ntui(env, "resubmit", old)
        assert res.returncode == 0, res.stderr
        new = res.stdout.split()[0]
        ids.append(new)
        assert new.isdigit() and new != old and "changed" not in res.stderr, res.stderr
        old_script = (log_dir / f"rec-again-{old}.sbatch").read_bytes()
        assert (log_dir / f"rec-again-{new}.sbatch").read_bytes() == old_script  # byte-identical
        rows = {e["job_id"]: e for e in json.loads(ntui(env, "history", "--json").stdout)}
        assert rows[new]["resubmit_of"] == old and rows[old]["resubmit_of"] is None
        assert rows[new]["overrides"] == rows[old]["overrides"]
        assert dev_cluster.run("squeue", "-h", "-j", new, "-o", "%j").stdout.strip() in ("rec-again", "")

        # The preset changed since: resubmit says what changed in the script (a unified diff) and submits that.
        preset.write_text(text.replace('OMP_NUM_THREADS: "1"', 'OMP_NUM_THREADS: "2"'))
        res = ntui(env, "resubmit", old, "--set", "sbatch.job-name=rec-again2")
        assert res.returncode == 0, res.stderr
        ids.append(res.stdout.split()[0])
        assert "changed since job" in res.stderr
        assert "-export OMP_NUM_THREADS=1\n+export OMP_NUM_THREADS=2" in res.stderr, res.stderr
        assert "+#SBATCH --job-name=rec-again2" in res.stderr, res.stderr
    finally:
        if ids:
            dev_cluster.run("scancel", *ids)


def test_unknown_account_is_refused_with_slurms_reason(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """F3 of docs/reliability.md: with accounting (AccountingStorageEnforce=associations) Slurm refuses an
    account the user has no association with; without accounting it cannot (the job is accepted)."""
    env = _env(dev_cluster, tmp_path / "home")
    res = ntui(env, "submit", "local-srun", "--hold", "--set", "sbatch.account=nosuchacct",
               "--set", f"logs.dir={tmp_path / 'logs'}", "--set", "sbatch.job-name=rec-acct")
    try:
        if dev_cluster.accounting:
            assert res.returncode == 3, res.stdout + res.stderr
            assert "Invalid account or account/partition combination specified" in res.stderr, res.stderr
            rows = json.loads(ntui(env, "history", "--json").stdout)
            assert [r["status"] for r in rows] == ["failed"]
        else:
            assert res.returncode == 0, res.stderr
    finally:
        ids = dev_cluster.run("squeue", "-h", "-n", "rec-acct", "-o", "%i").stdout.split()
        if ids:
            dev_cluster.run("scancel", *ids)
    assert os.path.isdir(tmp_path / "logs")
