"""Every CLI view fed duplicate, missing and contradictory records (tests/support/broken_records.py has the
table): each answers with its output or a message that names what is wrong, never a traceback; a record that
cannot be one is kept on disk and listed only once it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui import cli
from ntui.cli import history as cli_history
from ntui.cli import jobs as cli_jobs
from ntui.cli import logs as cli_logs
from ntui.cli import report as cli_report
from ntui.cli import show as cli_show
from ntui.cli import sweep as cli_sweep
from ntui.core.records.history import History
from ntui.core.records.recordfiles import RECORDS_DIR
from ntui.core.records.sweeps import sweep_of
from tests.support.broken_records import JOB_IDS, broken_state
from tests.support.fakes import FakeRunner, capture, result


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The broken state, this shell on cluster alpha, and a Slurm (without accounting) that forgot every job."""
    state = broken_state(tmp_path)
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=alpha\n")
    monkeypatch.setenv("NTUI_STATE_DIR", str(state))
    monkeypatch.setenv("SLURM_CONF", str(conf))
    runner = FakeRunner({"scontrol show job": capture("scontrol_show_job_unknown"),
                         "sacct": capture("sacct_no_accounting"), "squeue": result(stdout="")},
                        default=capture("scontrol_show_job_unknown"))
    for module in (cli_history, cli_jobs, cli_logs, cli_report, cli_show, cli_sweep):
        if hasattr(module, "cli_runner"):
            monkeypatch.setattr(module, "cli_runner", lambda: runner)
    return state


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.run(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, argv
    return rc, out, err


def test_history_lists_each_submission_once_and_no_fact_without_one(broken: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (("history", "--no-resolve"), ("history",)):
        rc, out, _ = _run(capsys, *argv)
        assert rc == 0
        ids = [line.split()[0] for line in out.splitlines()[1:]]
        # 16's second `submitted` fact (job 17) does not make a second row; 99's lone GPU fact makes none
        assert sorted(ids) == sorted(["4@alpha", "4@beta", *JOB_IDS[1:]]), ids
    assert list((broken / RECORDS_DIR).glob("t99.gpu.*.json"))  # kept: its submission's facts may sync later


def test_every_view_of_every_broken_record_answers_without_a_traceback(broken: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for job_id in (*JOB_IDS, "17", "99"):
        for argv in (("show", job_id), ("logs", job_id, "-n", "5"), ("logs", job_id, "--triage"),
                     ("report", job_id), ("sweep", job_id)):
            rc, out, err = _run(capsys, *argv)
            assert out.strip() or err.strip(), argv  # an answer or a message, never silence
            if rc not in (0, 1):
                assert err.startswith("ntui:"), (argv, err)  # a failure is said in ntui's words


def test_each_broken_record_is_named_for_what_is_wrong(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(capsys, "logs", "11")
    assert rc == 2 and "log directory" in err and "does not exist" in err
    rc, out, err = _run(capsys, "logs", "4")
    assert rc == 0 and "the batch log of a4" in out and "job 4 of beta" in err
    rc, out, _ = _run(capsys, "logs", "4", "--cluster", "beta")
    assert rc == 0 and "the batch log of b4" in out
    # the sweep whose job file is garbage and whose manifest is gone: both said, its tasks still listed
    rc, out, _ = _run(capsys, "sweep", "15")
    assert rc == 0 and "unreadable sweep job file" in out and "train-sweep.manifest" in out
    assert [line.split()[0] for line in out.splitlines()[2:6]] == ["0", "1", "2", "3"]
    rc, _, err = _run(capsys, "logs", "15")
    assert rc == 2 and "sweep of 4 task(s)" in err
    # the contradictory journal of 12 (another job's events, garbage, an end before its alloc) is read as
    # far as it holds; the record of 13 (COMPLETED) is not overruled by its journal
    rc, out, _ = _run(capsys, "show", "13")
    assert rc == 0 and "COMPLETED" in out
    # the entry whose intent (with its log dir) is lost: said so, then Slurm asked (which forgot it too)
    for argv in (("logs", "18"), ("logs", "18", "--triage")):
        rc, _, err = _run(capsys, *argv)
        assert rc in (2, 3) and "lacks the record of its submission" in err, argv


def test_a_sweep_with_a_damaged_job_file_says_so_and_falls_back_to_its_script(broken: Path) -> None:
    with History(broken, cluster="alpha") as h:
        entry = h.get("15")
    ref = sweep_of(entry)
    assert ref is not None and ref.job.indices == (0, 1, 2, 3)
    assert "unreadable sweep job file" in ref.problem and "No such file" in ref.problem
