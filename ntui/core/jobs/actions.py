"""The jobs view's actions on a job (cancel, signal, hold / release, requeue): which Slurm command each
means for the job's state, and what to tell the user. Pure; the view runs :attr:`JobAction.call` in a worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from ntui.core.slurm.actions import cancel, hold, release, requeue
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.squeue import QueueJob

ActionKind = Literal["cancel", "signal", "hold", "requeue"]


@dataclass(frozen=True)
class JobAction:
    """One Slurm command on a job: ``call`` runs it (in a worker); ``done`` says it went through."""

    description: str
    call: Callable[[], object]
    done: str


def hold_note(state: str) -> str:
    """What ``hold`` does to a job in ``state`` (the CLI and the view say the same)."""
    return f"hold only keeps a pending job from starting; a {state} job is not affected"


def plan_action(kind: ActionKind, runner: CommandRunner, key: str, job: QueueJob, *, timeout: float,
                signal: str | None = None, also: tuple[str, ...] = ()) -> JobAction | str:
    """The command for ``kind`` on ``job`` (row ``key``), or why there is none (a warning for the user). ``also``:
    for a cancel, more jobs to cancel after it (a long run's waiting successor: the chain stops, T10)."""
    if kind == "cancel" and also:
        def cancel_all() -> None:
            for k in (key, *also):
                cancel(runner, k, timeout=timeout)
        return JobAction(f"cancel job {key} and {', '.join(also)}", cancel_all,
                         f"Cancelled job {key} and its run's next job {', '.join(also)}: the run stops.")
    if kind == "cancel":
        return JobAction(f"cancel job {key}", partial(cancel, runner, key, timeout=timeout),
                         f"Cancelled job {key}.")
    if kind == "signal":
        return JobAction(f"signal {signal} to job {key}",
                         partial(cancel, runner, key, signal=signal, timeout=timeout),
                         f"Sent SIG{signal} to job {key}'s steps.")
    if kind == "requeue":
        return JobAction(f"requeue job {key}", partial(requeue, runner, key, timeout=timeout),
                         f"Requeued job {key}.")
    if job.category is StateCategory.PENDING and job.reason.startswith("JobHeld"):
        return JobAction(f"release job {key}", partial(release, runner, key, timeout=timeout),
                         f"Released job {key}.")
    if job.category is StateCategory.PENDING:
        return JobAction(f"hold job {key}", partial(hold, runner, key, timeout=timeout),
                         f"Held job {key} (h again releases it).")
    return f"Job {key} is {job.state}: {hold_note(job.state)}."


def loss_warning(kind: ActionKind, job: QueueJob) -> str | None:
    """What the action costs when it loses work (the view asks first), or None when it loses nothing.

    Requeue kills a started job (cancel has its own dialog; the signal picker is a dialog already)."""
    started = job.category is StateCategory.RUNNING
    if kind == "requeue":
        if started:
            return ("The running job is killed and starts again from the beginning: "
                    "everything since its last checkpoint is lost.")
        return "The job goes back to the queue."
    return None
