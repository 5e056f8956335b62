"""A state dir whose records break every assumption a view makes: duplicate, missing and contradictory records and
job files, for the tests that feed each view (the CLI's history, show, logs, report, sweep; the jobs view).

Every job is of cluster ``alpha`` unless its id says otherwise; the log dirs are under the same tmp dir.

=====  ==============================================================================================
job    what is wrong
=====  ==============================================================================================
4      two records with job id 4: one of ``alpha``, one of ``beta`` (duplicate)
11     its log dir was deleted (missing): no batch log, no journal
12     its journal holds garbage, another job's events and an ``end`` before its ``alloc`` (contradictory)
13     its record says COMPLETED, its journal says the batch shell ended with status 1 (contradictory)
14     a long run (its script has a ``run:`` section) whose run file is missing (missing)
15     a sweep whose manifest is missing and whose job file is garbage (missing, damaged)
16     one submission, two ``submitted`` facts: job 16 and job 17 (contradictory)
18     a ``submitted`` fact whose ``intent`` was lost (missing)
19     a recovered job (found in the queue, never submitted here) with no log dir, and a GPU fact of a
       submission the history never saw (missing)
=====  ==============================================================================================
"""

from __future__ import annotations

import json
from pathlib import Path

from ntui.core.jobfiles.journal import journal_path
from ntui.core.jobfiles.manifest import SHELL_PATH_VAR, job_file_path
from ntui.core.jobfiles.runfile import run_path
from ntui.core.records.history import FinalRecord, History
from ntui.core.records.recordfiles import RECORDS_DIR
from ntui.core.records.runs import RUN_MARK

#: The job ids :func:`broken_state` writes (job 17 only as the second ``submitted`` fact of job 16's submission).
JOB_IDS = ("4", "11", "12", "13", "14", "15", "16", "18", "19")


def _event(ev: str, job: str, t: float, **fields: object) -> str:
    return json.dumps({"v": 1, "ev": ev, "t": t, "job": job, **fields}) + "\n"


def _job(h: History, token: str, job_id: str, cluster: str | None, tmp: Path, *, when: float,
         script: str = "#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n") -> Path:
    log_dir = tmp / f"logs-{token}"
    log_dir.mkdir(parents=True, exist_ok=True)
    h.record_intent(token=token, preset="p", preset_path=None, overrides=[], job_name=f"train-{token}",
                    launcher="srun", nodes=1, world_size=1, log_dir=str(log_dir), log_stem="train",
                    script=script, created_at=when)
    h.record_submitted(token, job_id, cluster, None, when=when)
    (log_dir / f"train-{job_id}.out").write_text(f"the batch log of {token}\n")
    return log_dir


def broken_state(tmp: Path, start: float = 1000.0) -> Path:
    """Writes the records of the table above under ``tmp/state``, submitted from ``start`` (epoch seconds) on;
    returns the state dir."""
    state = tmp / "state"
    h = History(state, cluster="alpha", warn=lambda w: None)
    try:
        _job(h, "a4", "4", "alpha", tmp, when=start + 0)
        _job(h, "b4", "4", "beta", tmp, when=start + 100)

        gone = _job(h, "t11", "11", "alpha", tmp, when=start + 200)
        for f in gone.iterdir():
            f.unlink()
        gone.rmdir()

        d12 = _job(h, "t12", "12", "alpha", tmp, when=start + 300)
        Path(journal_path(str(d12), "train", "12")).write_text(
            "not json at all\n" + _event("end", "12", start + 310, rc=0, sig=None, phase="after")
            + _event("alloc", "99", start + 305, restart=0, nnodes=1, nodes="nid001", host="nid001", pid=1)
            + _event("alloc", "12", start + 301, restart=0, nnodes=1, nodes="nid001", host="nid001", pid=1)
            + '{"v":1,"ev":"launch","t":"soon","job":"12"}\n' + '{"v": 1, "ev": "end", "t": 13')

        d13 = _job(h, "t13", "13", "alpha", tmp, when=start + 400)
        Path(journal_path(str(d13), "train", "13")).write_text(
            _event("alloc", "13", start + 401, restart=0, nnodes=1, nodes="nid001", host="nid001", pid=1)
            + _event("end", "13", start + 460, rc=1, sig=None, phase="launch"))
        h.record_final("13", FinalRecord("COMPLETED", "0:0", None, None, None, 60, "nid001", "", "sacct"))

        run_script = f"#!/bin/bash\n#SBATCH --nodes=1\n{RUN_MARK}/nowhere/train-14.run\nsrun python train.py\n"
        d14 = _job(h, "t14", "14", "alpha", tmp, when=start + 500, script=run_script)
        assert not Path(run_path(str(d14), "train", "14")).exists()

        sweep_script = (f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --array=0-3\n"
                        f"{SHELL_PATH_VAR}={tmp}/gone/train-sweep.manifest\nsrun python train.py\n")
        d15 = _job(h, "t15", "15", "alpha", tmp, when=start + 600, script=sweep_script)
        Path(job_file_path(str(d15), "train", "15")).write_bytes(b"\x00\xffnot a job file")

        _job(h, "t16", "16", "alpha", tmp, when=start + 700)
        h.record_submitted("t16", "17", "alpha", None, when=start + 701)

        _job(h, "t18", "18", "alpha", tmp, when=start + 800)
        h.record_recovered("19", "found-in-queue", "", when=start + 900)
    finally:
        h.close()
    records = state / RECORDS_DIR
    for f in records.glob("t18.intent.*.json"):
        f.unlink()
    # A GPU summary of a submission nobody recorded (its other facts are on a host whose files never synced).
    stray = next(records.glob("t16.submitted.*.json"))
    doc = json.loads(stray.read_text())
    doc.update(token="t99", kind="gpu", summary=None, job_id="99", at=start + 999)
    doc.pop("cluster", None)
    (records / stray.name.replace("t16.submitted", "t99.gpu")).write_text(json.dumps(doc))
    return state
