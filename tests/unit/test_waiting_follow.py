"""``ntui wait`` and ``submit --wait`` (ntui/core/waiting/follow.py): one squeue per poll for every job followed,
the final state of each job that left the queue, back-off, and the exit codes."""

from __future__ import annotations

import argparse

import pytest

import ntui.cli.waiting as waiting_cli
from ntui.cli.common import EXIT_JOB_FAILED, EXIT_SLURM
from ntui.core.slurm.runner import ControllerUnreachable
from ntui.core.waiting.follow import MAX_ERRORS, Change, all_completed, follow
from tests.support.fakes import FakeRunner, result

S = "\x1f"


def line(job_id: str, state: str) -> str:
    cells = [job_id, "", "", "train", state[:2], state, "None", "0:10", "10:00", "N/A", "1", "nid001", "",
             "debug", "normal", "/tmp", "root", ""]
    return S.join(cells) + S + "\n"


def sacct(job_id: str, state: str, code: str) -> str:
    return (f"{job_id}|train|{state}|{code}|None|2026-12-01T10:00:00|2026-12-01T10:00:01|2026-12-01T10:01:00|"
            "00:00:59|nid001|ntuidev|normal|debug|/tmp\n")


def runner_for(queue: list[str], final: dict[str, tuple[str, str]]) -> FakeRunner:
    def answer_sacct(argv: tuple[str, ...]) -> object:
        job = argv[argv.index("-j") + 1]
        state, code = final[job]
        return result(stdout=sacct(job, state, code))

    return FakeRunner({"squeue": [result(stdout=q) for q in queue], "sacct": answer_sacct})


def test_one_squeue_per_poll_for_all_jobs_and_the_back_off() -> None:
    queue = [line("11", "RUNNING") + line("12", "PENDING")] * 3 + [line("12", "RUNNING"), ""]
    runner = runner_for(queue, {"11": ("COMPLETED", "0:0"), "12": ("FAILED", "3:0")})
    sleeps: list[float] = []
    changes: list[Change] = []
    got = follow(runner, ["11", "12"], on_change=changes.append, sleep=sleeps.append, poll_s=2, max_poll_s=5)
    squeues = [a for a in runner.argvs() if a[0] == "squeue"]
    assert len(squeues) == 5 and squeues[0][4] == "--jobs=11,12" and squeues[4][4] == "--jobs=12"
    assert [(c.job_id, c.state) for c in changes] == [("11", "RUNNING"), ("12", "PENDING"), ("11", "COMPLETED"),
                                                       ("12", "RUNNING"), ("12", "FAILED")]
    assert sleeps == [2, 3.0, 4.5, 2]  # grows by half while nothing changes, back to 2 s after a change
    assert {j: o.state for j, o in got.items()} == {"11": "COMPLETED", "12": "FAILED"}
    assert not all_completed(got)


def test_accounting_that_lags_is_asked_again() -> None:
    runner = FakeRunner({"squeue": result(stdout=""),
                         "sacct": [result(stdout=sacct("11", "RUNNING", "0:0")), result(stdout=sacct("11", "COMPLETED",
                                                                                                      "0:0"))],
                         "scontrol": result(returncode=1, stderr="slurm_load_jobs error: Invalid job id specified")})
    got = follow(runner, ["11"], sleep=lambda s: None)
    assert got["11"].state == "COMPLETED" and [a[0] for a in runner.argvs()].count("squeue") == 2


def test_errors_back_off_then_give_up() -> None:
    runner = FakeRunner({"squeue": result(returncode=1, stderr="squeue: error: Unable to contact slurm controller")})
    sleeps: list[float] = []
    with pytest.raises(ControllerUnreachable):
        follow(runner, ["11"], sleep=sleeps.append)
    assert runner.calls == MAX_ERRORS and len(sleeps) == MAX_ERRORS - 1


def test_bad_ids_are_refused_before_slurm() -> None:
    runner = FakeRunner({})
    with pytest.raises(ValueError):
        follow(runner, ["11", "--all"])
    assert runner.calls == 0


@pytest.mark.parametrize(("final", "code"), [
    ({"11": ("COMPLETED", "0:0"), "12": ("COMPLETED", "0:0")}, 0),
    ({"11": ("COMPLETED", "0:0"), "12": ("FAILED", "3:0")}, EXIT_JOB_FAILED),
    ({"11": ("TIMEOUT", "0:15"), "12": ("COMPLETED", "0:0")}, EXIT_JOB_FAILED),
])
def test_ntui_wait_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                              final: dict[str, tuple[str, str]], code: int) -> None:
    runner = runner_for([line("11", "RUNNING") + line("12", "RUNNING"), ""], final)
    monkeypatch.setattr(waiting_cli, "cli_runner", lambda settings=None: runner)
    monkeypatch.setattr("time.sleep", lambda s: None)
    args = argparse.Namespace(job_ids=["11", "12"], notify=False, interval=2.0)
    assert waiting_cli.cmd_wait(args) == code
    err = capsys.readouterr().err
    for job, (state, _) in final.items():
        assert f"job {job} ended: {state}" in err


def test_ntui_wait_when_slurm_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = FakeRunner({"squeue": result(returncode=1, stderr="squeue: error: Unable to contact slurm controller")})
    monkeypatch.setattr(waiting_cli, "cli_runner", lambda settings=None: runner)
    monkeypatch.setattr("time.sleep", lambda s: None)
    assert waiting_cli.cmd_wait(argparse.Namespace(job_ids=["11"], notify=False, interval=2.0)) == EXIT_SLURM
