"""``ntui.core.records.reconcile`` against canned ``squeue`` output (the real-cluster run is test_submit_kill.py)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from ntui.core.jobs.submission import paths_for
from ntui.core.records.history import History
from ntui.core.records.reconcile import (
    RECONCILE_FIELDS,
    build_reconcile_argv,
    parse_own_jobs,
    reconcile,
    staging_name,
)
from ntui.core.slurm.runner import ControllerUnreachable
from tests.support.fakes import FakeRunner, result

SEP = "\x1f"


def _line(job_id: str, command: str, *, name: str = "local-srun", state: str = "PENDING",
          array_job: str | None = None, task: str = "N/A") -> str:
    fields = (job_id, array_job or job_id, task, name, state, command)
    return SEP.join(fields) + SEP


def _runner(*lines: str) -> FakeRunner:
    return FakeRunner({"squeue": result(stdout="\n".join(lines) + "\n")})


def _intent(history: History, log_dir: Path, *, stem: str = "local-srun", age: float = 3600.0,
            staged: bool = True) -> str:
    token = uuid.uuid4().hex
    history.record_intent(token=token, preset="local-srun", preset_path=None, overrides=(), job_name=stem,
                          launcher="srun", nodes=2, world_size=4, log_dir=str(log_dir), log_stem=stem,
                          script="#!/bin/bash\necho hi\n", created_at=time.time() - age)
    if staged:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f".{stem}-{token}.sbatch").write_text("#!/bin/bash\necho hi\n")
    return token


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "state" / "history.sqlite3")


def test_argv_is_one_squeue_of_own_jobs_with_command() -> None:
    argv = build_reconcile_argv()
    assert argv[0] == "squeue" and "--me" in argv and "--states=ALL" in argv and "--array" not in argv
    assert argv[-1].split(",")[-1].startswith("Command:")
    assert len(argv[-1].split(",")) == len(RECONCILE_FIELDS)


def test_staging_name() -> None:
    token = uuid.uuid4().hex
    assert staging_name(f"/x/y/.my.run-1-{token}.sbatch") == ("my.run-1", token)
    assert staging_name(f"/x/y/my.run-{token}.sbatch") is None
    assert staging_name("/x/y/.local-srun-1234.sbatch") is None
    assert staging_name("(null)") is None


def test_parse_folds_array_tasks_and_drops_junk() -> None:
    out = "\n".join([
        _line("10", "/a/job.sh"),
        _line("12", "/a/arr.sh", array_job="11", task="0"),
        _line("13", "/a/arr.sh", array_job="11", task="1"),
        "garbage without separators",
        SEP.join(["14", "14", "N/A"]) + SEP,
    ])
    jobs = parse_own_jobs(out)
    assert [j.job_id for j in jobs] == ["10", "11"]


def test_intent_completed_and_script_renamed(history: History, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    token = _intent(history, logs)
    rep = reconcile(history, _runner(_line("501", f"{logs}/.local-srun-{token}.sbatch")))
    assert [(r.job_id, r.token, r.origin) for r in rep.recovered] == [("501", token, "intent")]
    entry = history.get("501")
    assert entry is not None and entry.status == "recovered" and entry.token == token
    assert entry.script_path == str(logs / "local-srun-501.sbatch")
    assert (logs / "local-srun-501.sbatch").read_text().startswith("#!/bin/bash")
    assert not (logs / f".local-srun-{token}.sbatch").exists()
    again = reconcile(history, _runner(_line("501", f"{logs}/.local-srun-{token}.sbatch")))
    assert again.recovered == () and again.known == ("501",)


def test_script_rewritten_from_history_when_staging_is_gone(history: History, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    token = _intent(history, logs, staged=False)
    rep = reconcile(history, _runner(_line("502", f"{logs}/.local-srun-{token}.sbatch")))
    assert rep.recovered[0].script_path == str(logs / "local-srun-502.sbatch")
    final = logs / "local-srun-502.sbatch"
    assert final.read_text() == "#!/bin/bash\necho hi\n" and final.stat().st_mode & 0o777 == 0o600


def test_failed_row_whose_job_was_accepted(history: History, tmp_path: Path) -> None:
    """sbatch timed out (ntui recorded a failure) but the controller had accepted the job."""
    logs = tmp_path / "logs"
    token = _intent(history, logs)
    history.record_failed(token)
    rep = reconcile(history, _runner(_line("503", f"{logs}/.local-srun-{token}.sbatch")))
    assert [(r.job_id, r.origin) for r in rep.recovered] == [("503", "failed")]
    assert history.get("503") is not None


def test_recent_intent_is_left_to_the_ntui_still_submitting(history: History, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    token = _intent(history, logs, age=1.0)
    rep = reconcile(history, _runner(_line("504", f"{logs}/.local-srun-{token}.sbatch")))
    assert rep.recovered == () and rep.in_progress == (token,)
    assert history.get("504") is None and (logs / f".local-srun-{token}.sbatch").exists()
    rep = reconcile(history, _runner(_line("504", f"{logs}/.local-srun-{token}.sbatch")), grace_s=0)
    assert [r.job_id for r in rep.recovered] == ["504"]


def test_ntui_job_missing_from_history_gets_a_row_with_its_logs(history: History, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    token = uuid.uuid4().hex
    (logs / f".my_run-{token}.sbatch").write_text("#!/bin/bash\n")
    rep = reconcile(history, _runner(_line("505", f"{logs}/.my_run-{token}.sbatch", name="my run")))
    assert [(r.job_id, r.origin) for r in rep.recovered] == [("505", "no-row")]
    entry = history.get("505")
    assert entry is not None and entry.status == "recovered" and entry.job_name == "my run"
    paths = paths_for("505", history)
    assert paths is not None and paths.batch("505") == f"{logs}/my_run-505.out"
    # another ntui may still be finishing that submission: its files are pointed at, not moved
    assert entry.script_path == str(logs / f".my_run-{token}.sbatch") and not (logs / "my_run-505.sbatch").exists()
    assert reconcile(history, _runner(_line("505", f"{logs}/.my_run-{token}.sbatch"))).recovered == ()


def test_foreign_and_known_jobs_are_left_alone(history: History, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    token = _intent(history, logs)
    history.record_submitted(token, "506", None, str(logs / "local-srun-506.sbatch"))
    rep = reconcile(history, _runner(_line("506", f"{logs}/.local-srun-{token}.sbatch"),
                                     _line("507", "/home/u/train.sh", name="mine"),
                                     _line("508", "(null)", name="w\x1b]0;pwned\x07rap")))
    assert rep.recovered == () and rep.known == ("506",)
    assert [j.job_id for j in rep.foreign] == ["507", "508"]
    assert history.get("507") is None
    assert any("507 (mine) not submitted by ntui" in line for line in rep.lines())
    assert any("508 (wrap) not submitted by ntui" in line for line in rep.lines())  # the name made inert


def test_old_intent_without_job_is_reported_not_invented(history: History, tmp_path: Path) -> None:
    token = _intent(history, tmp_path / "logs")
    rep = reconcile(history, _runner())
    assert rep.unmatched == (token,) and rep.recovered == ()
    assert history.intents()[0].token == token


def test_squeue_failure_raises_typed_error(history: History) -> None:
    runner = FakeRunner({"squeue": result(stderr="squeue: error: Unable to contact slurm controller", returncode=1)})
    with pytest.raises(ControllerUnreachable):
        reconcile(history, runner)
