"""Slurm's clients are asked for their times in Slurm's standard form, whatever the user's SLURM_TIME_FORMAT:
ntui reads squeue's, sacct's and scontrol's times (a recent job's submit time, a job's start), and a user's
``relative`` or ``%F %T`` format made them unreadable (the recent list put such jobs last in "newest first")."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ntui.core.slurm.runner import SubprocessRunner, with_standard_times
from ntui.core.slurm.ssh import SshRunner, SshTarget


def _client(bin_dir: Path, name: str) -> None:
    path = bin_dir / name
    path.write_text('#!/bin/sh\nprintf "%s" "${SLURM_TIME_FORMAT-unset}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_client_whose_times_ntui_reads_gets_the_standard_format(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("sacct", "squeue", "sbatch", "srun"):
        _client(tmp_path, name)
    monkeypatch.setenv("SLURM_TIME_FORMAT", "relative")
    runner = SubprocessRunner(slurm_bin_dir=str(tmp_path))
    assert runner.run(["sacct"], timeout=10).stdout == "standard"
    assert runner.run(["squeue"], timeout=10, env={"PATH": os.environ["PATH"]}).stdout == "standard"
    # the job's own environment keeps the user's choice: sbatch and srun pass theirs on to the job
    assert runner.run(["sbatch"], timeout=10).stdout == "relative"
    assert runner.run(["srun"], timeout=10).stdout == "relative"
    assert with_standard_times("sbatch", None) is None


def test_over_ssh_the_remote_client_is_given_the_standard_format_too(tmp_path: Path) -> None:
    runner = SshRunner(SshTarget(host="dev", control_dir=tmp_path))
    assert runner.ssh_argv(["sacct", "-X"])[-1] == "env SLURM_TIME_FORMAT=standard sacct -X"
    assert runner.ssh_argv(["sbatch", "--parsable"])[-1] == "sbatch --parsable"
