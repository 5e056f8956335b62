"""The jobs view's actions on a job (cancel, signal, hold / release, requeue): which Slurm command each
means for the job's state, and what to tell the user. Pure; the view runs :attr:`JobAction.call` in a worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from ntui.core import slurm
from ntui.core.runner import CommandRunner
from ntui.core.slurm import QueueJob, StateCategory

ActionKind = Literal["cancel", "signal", "hold", "requeue"]


@dataclass(frozen=True)
class JobAction:
    """One Slurm command on a job: ``call`` runs it (in a worker); ``done`` says it went through."""

    description: str
    call: Callable[[], object]
    done: str


def plan_action(kind: ActionKind, runner: CommandRunner, key: str, job: QueueJob, *, timeout: float,
                signal: str | None = None) -> JobAction | str:
    """The command for ``kind`` on ``job`` (row ``key``), or why there is none (a warning for the user)."""
    if kind == "cancel":
        return JobAction(f"cancel job {key}", partial(slurm.cancel, runner, key, timeout=timeout),
                         f"Cancelled job {key}.")
    if kind == "signal":
        return JobAction(f"signal {signal} to job {key}",
                         partial(slurm.cancel, runner, key, signal=signal, timeout=timeout),
                         f"Sent SIG{signal} to job {key}'s steps.")
    if kind == "requeue":
        return JobAction(f"requeue job {key}", partial(slurm.requeue, runner, key, timeout=timeout),
                         f"Requeued job {key}.")
    if job.category is StateCategory.PENDING and job.reason.startswith("JobHeld"):
        return JobAction(f"release job {key}", partial(slurm.release, runner, key, timeout=timeout),
                         f"Released job {key}.")
    if job.category is StateCategory.PENDING:
        return JobAction(f"hold job {key}", partial(slurm.hold, runner, key, timeout=timeout),
                         f"Held job {key} (h again releases it).")
    return f"Job {key} is {job.state}: Slurm holds only pending jobs."
