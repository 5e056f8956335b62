"""What became of a job that left the queue: sacct, then scontrol, and accounting that lags the controller."""

from __future__ import annotations

from ntui.core.records.outcome import UNKNOWN, finished_outcome
from ntui.core.slurm.sacct import RECORD_FIELDS
from tests.support.fakes import FakeRunner, capture, result


def sacct_line(job_id: str, state: str, exit_code: str = "0:0", elapsed: str = "00:00:05") -> str:
    """One ``sacct -X -P`` line in ntui's field order (the other fields empty)."""
    cells = dict.fromkeys(RECORD_FIELDS, "")
    cells.update(JobID=job_id, JobName="ntui-ok", State=state, ExitCode=exit_code, Elapsed=elapsed)
    return "|".join(cells[f] for f in RECORD_FIELDS) + "\n"


def test_a_final_sacct_record_is_the_answer_and_scontrol_is_not_asked() -> None:
    runner = FakeRunner({"sacct": result(stdout=sacct_line("26", "COMPLETED"))})
    out = finished_outcome(runner, "26")
    assert (out.state, out.source, out.finished, out.elapsed_s) == ("COMPLETED", "sacct", True, 5)
    assert [c.argv[0] for c in runner.history] == ["sacct"]


def test_accounting_that_still_says_running_defers_to_the_controller() -> None:
    """slurmdbd learns of the end after the controller: sacct's RUNNING is not a final state."""
    runner = FakeRunner({"sacct": result(stdout=sacct_line("26", "RUNNING", elapsed="00:00:03")),
                         ("scontrol", "show", "job"): capture("scontrol_show_job_completed")})
    out = finished_outcome(runner, "26")
    assert (out.state, out.exit_code, out.source, out.finished) == ("COMPLETED", "0:0", "scontrol", True)


def test_neither_source_final_yet_says_not_finished_so_the_caller_asks_again() -> None:
    runner = FakeRunner({"sacct": result(stdout=sacct_line("26", "RUNNING")),
                         ("scontrol", "show", "job"): capture("scontrol_show_job_unknown")})
    out = finished_outcome(runner, "26")
    assert (out.state, out.finished) == ("RUNNING", False)


def test_no_record_anywhere_is_unknown_and_final() -> None:
    runner = FakeRunner({"sacct": result(stdout=""),
                         ("scontrol", "show", "job"): capture("scontrol_show_job_unknown")})
    out = finished_outcome(runner, "26")
    assert (out.state, out.finished, out.source) == (UNKNOWN, True, "none")
