"""Unreadable or vanished log directory: ``ntui logs`` says so, exits non-zero, no traceback.

Tests run as root, for whom ``chmod 000`` changes nothing; the unreadable cases therefore run
``ntui logs`` as ``nobody`` (``setpriv``), and the root-only cases use a vanished directory and a
path whose parent is a regular file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui.core.records.history import History
from tests.reliability.conftest import REPO, ntui_env, run_ntui

JOB = "4343"


def _history(home: Path, log_dir: Path) -> None:
    h = History(home / "state" / "ntui" / "history.sqlite3")
    h.record_intent(token="t-logdir", preset="local-srun", preset_path=None, overrides=(), job_name="run",
                    launcher="srun", nodes=1, world_size=2, log_dir=str(log_dir), log_stem="run", script="")
    h.record_submitted("t-logdir", JOB, None, None)
    h.close()


def _check(res: subprocess.CompletedProcess[bytes], phrase: str) -> None:
    err = res.stderr.decode()
    assert res.returncode != 0, err
    assert phrase in err, err
    assert "Traceback" not in err and "no such file (yet)" not in err


def test_vanished_log_directory(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    (log_dir / f"run-{JOB}.out").write_text("hello\n")
    _history(tmp_path / "home", log_dir)
    env = ntui_env(tmp_path / "home")
    assert run_ntui("logs", JOB, env=env).stdout == b"hello\n"
    shutil.rmtree(log_dir)
    for args in (("logs", JOB), ("logs", JOB, "--rank", "1"), ("logs", JOB, "--follow"), ("logs", JOB, "--triage")):
        _check(run_ntui(*args, env=env), f"log directory {log_dir} does not exist")


def test_log_directory_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a directory\n")
    log_dir = tmp_path / "afile" / "logs"
    _history(tmp_path / "home", log_dir)
    _check(run_ntui("logs", JOB, env=ntui_env(tmp_path / "home")), "a component of the path is a file")


def test_log_directory_is_a_file(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.write_text("oops\n")
    _history(tmp_path / "home", log_dir)
    _check(run_ntui("logs", JOB, env=ntui_env(tmp_path / "home")), "is not a directory")


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory ``nobody`` can traverse (pytest's tmp dirs are private to root)."""
    d = Path(tempfile.mkdtemp(prefix="ntui-rel-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
@pytest.mark.parametrize("what", ["directory", "file"])
def test_unreadable_log_as_another_user(world_dir: Path, what: str) -> None:
    home = world_dir / "home"
    log_dir = world_dir / "logs"
    log_dir.mkdir()
    log = log_dir / f"run-{JOB}.out"
    log.write_text("secret\n")
    _history(home, log_dir)
    subprocess.run(["chown", "-R", "65534:65534", str(home)], check=True)
    (log if what == "file" else log_dir).chmod(0o000)
    env = ntui_env(home, HOME=str(home))
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                          "ntui", "logs", JOB], env=env, capture_output=True, timeout=60, cwd=REPO)
    _check(res, f"log {what} {log if what == 'file' else log_dir} is not readable (permission denied)")
    assert b"secret" not in res.stdout
