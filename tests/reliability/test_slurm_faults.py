"""Slurm missing from PATH, and a ``squeue`` that hangs past its timeout.

No cluster needed: the first runs with a PATH holding no Slurm client at all, the second puts a stub
``squeue`` (a Python script that starts a grandchild and sleeps 60 s) first on PATH.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from ntui.cli.slurm import cli_runner
from ntui.core.records.history import History
from ntui.core.slurm.runner import SlurmTimeout, SubprocessRunner
from tests.reliability.conftest import ntui_env, run_ntui
from tests.support.waits import WAIT_BOUND_S


def _no_slurm_env(tmp_path: Path) -> dict[str, str]:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    env = ntui_env(tmp_path / "home", PATH=str(empty))
    env.pop("SLURM_CONF", None)
    return env


def test_without_slurm_ntui_still_composes_and_says_it_cannot_submit(tmp_path: Path) -> None:
    env = _no_slurm_env(tmp_path)
    logs = tmp_path / "logs"
    for args in (("presets",), ("render", "local-srun"), ("check", "local-torchrun"),
                 ("render", "local-accelerate", "-o", str(tmp_path / "job.sbatch"))):
        res = run_ntui(*args, env=env)
        assert res.returncode == 0, (args, res.stderr.decode())
    assert (tmp_path / "job.sbatch").read_text().startswith("#!")
    cases = {
        ("submit", "local-srun", "--set", f"logs.dir={logs}"): "sbatch",
        ("submit", "local-srun", "--test-only", "--set", f"logs.dir={logs}"): "sbatch",
        ("jobs",): "squeue",
        ("cancel", "123"): "scancel",
    }
    for args, prog in cases.items():
        res = run_ntui(*args, env=env)
        err = res.stderr.decode()
        assert res.returncode == 3, (args, err)
        assert "Slurm is not installed" in err and f"{prog} not found" in err, err
        assert "Traceback" not in err
    # the failed submission is recorded as such, and its staging script is gone
    entries = History(tmp_path / "home" / "state" / "ntui" / "history.sqlite3").entries()
    assert [e.status for e in entries] == ["failed"]
    assert not list(logs.glob(".*.sbatch"))


STUB = """#!{python}
import os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open({pids!r}, "a") as fh:  # one line per call: a retry would show
    fh.write(f"{{os.getpid()}} {{grandchild.pid}}\\n")
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    """True unless ``pid`` is gone or a zombie (killed, not yet reaped by init)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def hanging_squeue(tmp_path: Path) -> tuple[Path, Path]:
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir()
    pids = tmp_path / "stub.pids"
    stub = bin_dir / "squeue"
    stub.write_text(STUB.format(python=sys.executable, pids=str(pids)))
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    yield bin_dir, pids
    if pids.exists():  # never leave the stub behind, even when an assertion failed
        for pid in map(int, pids.read_text().split()):
            if _alive(pid):
                os.kill(pid, 9)


def _assert_stub_gone(pids: Path) -> None:
    deadline = time.monotonic() + WAIT_BOUND_S  # a bound on the wait for the kernel to reap them
    for line in pids.read_text().splitlines():
        stub_pid, grandchild = map(int, line.split())
        while _alive(stub_pid) or _alive(grandchild):
            assert time.monotonic() < deadline, f"orphans left: squeue stub {stub_pid}, its child {grandchild}"
            time.sleep(0.05)


def test_hanging_squeue_times_out_and_is_killed(hanging_squeue: tuple[Path, Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, pids = hanging_squeue
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    with pytest.raises(SlurmTimeout) as info:
        SubprocessRunner().run(["squeue", "--me"], timeout=5.0)
    # the mechanism: the runner's own timeout fired (not the stub's 60 s end), and it killed the whole group
    assert info.value.timeout == 5.0 and "did not answer within 5 s" in str(info.value)
    _assert_stub_gone(pids)


def test_ntui_jobs_with_hanging_squeue_exits_3_at_its_timeout(tmp_path: Path,
                                                              hanging_squeue: tuple[Path, Path]) -> None:
    bin_dir, pids = hanging_squeue
    env = ntui_env(tmp_path / "home", PATH=f"{bin_dir}:{os.environ['PATH']}", NTUI_SLURM_TIMEOUT="5")
    res = run_ntui("jobs", env=env, timeout=120)
    err = res.stderr.decode()
    assert res.returncode == 3, err
    # the timeout ntui set (NTUI_SLURM_TIMEOUT) is the one that fired, once: one squeue, not a retry loop
    assert "timed out" in err and "squeue did not answer within 5 s" in err and "NTUI_SLURM_TIMEOUT" in err
    assert "Traceback" not in err
    assert len(pids.read_text().splitlines()) == 1, pids.read_text()
    _assert_stub_gone(pids)


def test_timeout_override(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ntui.core.slurm.runner import TimeoutRunner
    from tests.support.fakes import FakeRunner, result

    monkeypatch.setenv("NTUI_SLURM_TIMEOUT", "soon")
    runner = cli_runner()
    assert isinstance(runner, TimeoutRunner) and isinstance(runner.inner, SubprocessRunner)
    assert "ignoring NTUI_SLURM_TIMEOUT='soon'" in capsys.readouterr().err
    fake = FakeRunner(default=result())
    runner.inner = fake
    runner.run(["squeue"], timeout=99)
    runner.run(["/opt/slurm/bin/sbatch", "--parsable", "x.sh"], timeout=99)
    assert [c.timeout for c in fake.history] == [15.0, 60.0]  # the defaults, not the caller's and not "soon"
    monkeypatch.setenv("NTUI_SLURM_TIMEOUT", "2.5")
    runner = cli_runner()
    assert isinstance(runner, TimeoutRunner)
    fake = FakeRunner(default=result())
    runner.inner = fake
    runner.run(["squeue"], timeout=15)
    runner.run(["sbatch", "--parsable", "x.sh"], timeout=60)
    assert [c.timeout for c in fake.history] == [2.5, 2.5]
