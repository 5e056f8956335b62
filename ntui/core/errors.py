"""The wording of errors for people: one line, with Slurm's own reason where there is one.

Used by the CLI-free parts of the core (the job model's banner and notes) and, through
``ntui.ui.errors.describe_error``, by every view and pane. The Slurm layer is imported on first use (the
app imports this module before its first frame).
"""

from __future__ import annotations

NO_SLURM = "Slurm client not found: ntui can compose, render and save presets here, but cannot check or submit."


def describe_error(error: BaseException | None) -> str:
    """One line for a failed call, with Slurm's own reason where there is one."""
    from ntui.core.slurm.runner import ControllerUnreachable, SlurmError, SlurmNotInstalled, SlurmRejected, SlurmTimeout

    if isinstance(error, SlurmRejected):
        return f"Slurm rejected it: {error.reason}"
    if isinstance(error, SlurmNotInstalled):
        return NO_SLURM
    if isinstance(error, (ControllerUnreachable, SlurmTimeout, SlurmError)):
        return str(error)
    if isinstance(error, OSError):
        return f"{error.strerror or error}: {error.filename}" if error.filename else str(error)
    if error is None:
        return "failed"
    return f"{type(error).__name__}: {error}"
