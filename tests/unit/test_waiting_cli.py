"""``ntui why`` and ``ntui attach`` with a FakeRunner (their cluster runs are in tests/cluster/test_waiting.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import pytest

import ntui.cli.waiting as waiting_cli
from ntui.cli.common import EXIT_PROBLEMS
from tests.support.fakes import FakeRunner, capture, result

Install = Callable[[FakeRunner], FakeRunner]


@pytest.fixture
def use(monkeypatch: pytest.MonkeyPatch) -> Install:
    """``use(runner)``: the CLI's runner for the test."""

    def install(runner: FakeRunner) -> FakeRunner:
        monkeypatch.setattr(waiting_cli, "cli_runner", lambda settings=None: runner)
        return runner

    return install


def test_why_a_job_behind_others(use: Install, capsys: pytest.CaptureFixture[str]) -> None:
    runner = use(FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_pending_resources"),
                             "sprio": capture("sprio_job_fields")}))
    assert waiting_cli.cmd_why(argparse.Namespace(job_ids=["113"], json=False)) == 0
    out = capsys.readouterr().out
    assert out.startswith("job 113 wait-pending: waiting for resources — 1 node to free up; estimated start ")
    assert "not priority/multifactor" in out
    assert [a[0] for a in runner.argvs()] == ["scontrol", "sprio"]


def test_why_json_and_a_job_that_runs(use: Install, capsys: pytest.CaptureFixture[str]) -> None:
    use(FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_running_2node_gpu")}))
    assert waiting_cli.cmd_why(argparse.Namespace(job_ids=["34"], json=True)) == 0
    assert json.loads(capsys.readouterr().out) == {"job_id": "34", "state": "RUNNING", "waiting": False,
                                                     "quiet": None}


def test_why_of_every_pending_job_is_one_squeue(use: Install, capsys: pytest.CaptureFixture[str]) -> None:
    runner = use(FakeRunner({"squeue": capture("squeue_start_fields")}))
    assert waiting_cli.cmd_why(argparse.Namespace(job_ids=[], json=False)) == 0
    assert capsys.readouterr().out.startswith("job 113: waiting for resources — 1 node to free up")
    assert runner.calls == 1 and "--start" in runner.argvs()[0]


def test_attach_refuses_what_srun_would_fail_on(use: Install, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr("ntui.core.slurm.srun.run_interactive",
                        lambda argv, **kw: ran.append(list(argv)) or 0)
    use(FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_pending_resources")}))
    assert waiting_cli.cmd_attach(argparse.Namespace(job_id="113", node=None)) == EXIT_PROBLEMS
    assert "a shell needs a running job" in capsys.readouterr().err
    use(FakeRunner({("scontrol", "show", "job"): capture("scontrol_show_job_running_2node_gpu")}))
    assert waiting_cli.cmd_attach(argparse.Namespace(job_id="34", node="nid009")) == EXIT_PROBLEMS
    assert "nid009 is not one of job 34's nodes" in capsys.readouterr().err
    assert waiting_cli.cmd_attach(argparse.Namespace(job_id="34", node="nid002")) == 0
    assert ran == [["srun", "--jobid=34", "--overlap", "--pty", "-N", "1", "-n", "1", "-w", "nid002", "bash"]]


def test_attach_bad_id(use: Install, capsys: pytest.CaptureFixture[str]) -> None:
    runner = use(FakeRunner({}, default=result(returncode=1)))
    assert waiting_cli.cmd_attach(argparse.Namespace(job_id="1;id", node=None)) == EXIT_PROBLEMS
    assert runner.calls == 0
