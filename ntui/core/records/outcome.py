"""What became of a job: from the queue while it is there, then sacct, then scontrol.

Each source is one RPC; callers ask only for jobs they watch, never per job per tick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.slurm.runner import CommandRunner, JobNotFound
from ntui.core.slurm.sacct import final_state
from ntui.core.slurm.scontrol import show_job
from ntui.core.slurm.squeue import query_queue

UNKNOWN = "ended (state unknown)"


@dataclass(frozen=True)
class Outcome:
    job_id: str
    state: str  # long state name, or UNKNOWN
    exit_code: str | None
    source: str  # squeue | sacct | scontrol | none
    finished: bool
    #: the job's whole run time (sacct ``Elapsed``, scontrol ``RunTime``); None when the source has none
    elapsed_s: int | None = None


def job_outcome(runner: CommandRunner, job_id: str, *, env: Mapping[str, str] | None = None) -> Outcome:
    jobs = query_queue(runner, job_ids=[job_id], env=env)
    for job in jobs:
        if job.job_id == job_id or job.raw_job_id == job_id:
            return Outcome(job_id, job.state, job.exit_code, "squeue", job.category.finished)
    return finished_outcome(runner, job_id, env=env)


def finished_outcome(runner: CommandRunner, job_id: str, *, env: Mapping[str, str] | None = None) -> Outcome:
    """For a job no longer in the queue: sacct when accounting exists, else scontrol while the
    controller still remembers the job (MinJobAge), else UNKNOWN.

    slurmdbd learns of a job's end after the controller does: for a moment after the job leaves squeue,
    sacct may still say RUNNING (more often on a loaded host). Such a record is not a final state; the
    controller is asked instead, and when neither has one yet the outcome says ``finished=False`` so the
    caller asks again later rather than showing an ended job as RUNNING."""
    rec = final_state(runner, job_id, env=env)
    if rec is not None and rec.category.finished:
        return Outcome(job_id, rec.state, rec.exit_code, "sacct", True, rec.elapsed_s)
    try:
        details = show_job(runner, job_id, env=env)
    except JobNotFound:
        if rec is not None:  # accounting lags and the controller has forgotten the job: keep asking
            return Outcome(job_id, rec.state, rec.exit_code, "sacct", False)
        return Outcome(job_id, UNKNOWN, None, "none", True)
    return Outcome(job_id, details.state, details.exit_code, "scontrol", details.category.finished,
                   details.run_time_s if details.category.finished else None)
