"""Following jobs to their end without the app (``ntui wait``, ``ntui submit --wait``).

:func:`follow` asks one ``squeue --jobs=A,B,...`` per poll for every job still being followed, and the final state
of each job that left the queue once (``sacct``, else ``scontrol``: :func:`~ntui.core.records.outcome.finished_outcome`;
a record accounting has not finished yet is asked again at the next poll). The interval grows from ``poll_s`` by
half each poll while nothing changes, up to ``max_poll_s``, and starts again at ``poll_s`` after a change;
controller errors back off the same way, and :data:`MAX_ERRORS` in a row give up (the last error is raised).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ntui.core.records.outcome import UNKNOWN, Outcome, finished_outcome
from ntui.core.slurm.common import validate_job_id
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.squeue import query_queue

__all__ = ["MAX_ERRORS", "Change", "all_completed", "follow"]

MAX_ERRORS = 10


@dataclass(frozen=True)
class Change:
    """A followed job's new state (``error``: a poll failed, Slurm's words; the job's state is unchanged)."""

    job_id: str
    state: str
    outcome: Outcome | None = None
    error: str = ""


def all_completed(outcomes: Mapping[str, Outcome]) -> bool:
    """Every job COMPLETED (the exit status of ``ntui wait``)."""
    return bool(outcomes) and all(o.state == "COMPLETED" for o in outcomes.values())


def follow(
    runner: CommandRunner,
    job_ids: Sequence[str],
    *,
    on_change: Callable[[Change], None] | None = None,
    poll_s: float = 2.0,
    max_poll_s: float = 30.0,
    sleep: Callable[[float], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Outcome]:
    """Follow ``job_ids`` until each has ended; returns their final outcomes (by job id, in the given order).
    Raises ``ValueError`` for a malformed id (before any Slurm call) and the last :class:`SlurmError` after
    :data:`MAX_ERRORS` failed polls in a row."""
    pause = sleep or time.sleep
    ids = list(dict.fromkeys(validate_job_id(j) for j in job_ids))
    if not ids:
        raise ValueError("no job IDs given")
    done: dict[str, Outcome] = {}
    last: dict[str, str] = {}
    interval = poll_s
    errors = 0

    def tell(change: Change) -> None:
        if on_change is not None:
            on_change(change)

    while True:
        waiting = [j for j in ids if j not in done]
        changed = False
        try:
            seen: dict[str, Outcome] = {}
            for job in query_queue(runner, all_users=True, job_ids=waiting, env=env):
                for name in (job.job_id, job.raw_job_id):
                    if name in waiting:
                        seen[name] = Outcome(name, job.state, job.exit_code, "squeue", job.category.finished)
            for job_id in waiting:
                out = seen.get(job_id)
                if out is None:  # left the queue: its final state, once it is final
                    out = finished_outcome(runner, job_id, env=env)
                    if not out.finished:
                        continue
                if out.finished:
                    done[job_id] = out
                if last.get(job_id) != out.state:
                    last[job_id] = out.state
                    changed = True
                    tell(Change(job_id, out.state, out))
            errors = 0
        except SlurmError as exc:
            errors += 1
            tell(Change(",".join(waiting), last.get(waiting[0], "?"), None, str(exc)))
            if errors >= MAX_ERRORS:
                raise
            changed = False
        if len(done) == len(ids):
            return {j: done[j] for j in ids}
        interval = poll_s if changed else min(max_poll_s, interval * 1.5)
        pause(interval)


def outcome_words(out: Outcome) -> str:
    """``COMPLETED``, ``FAILED (exit code 3:0)``, or the unknown state's words."""
    if out.state == UNKNOWN:
        return UNKNOWN
    return out.state + (f" (exit code {out.exit_code})" if out.exit_code and out.exit_code != "0:0" else "")
