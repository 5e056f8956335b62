"""The wording of errors for people: one line, with Slurm's own reason where there is one.

Used by the core (the job model's banner and notes), the CLI and every view and pane of the UI: the one wording.
The Slurm layer is imported on first use (the app imports this module before its first frame).
"""

from __future__ import annotations

import sys

NO_SLURM = "Slurm client not found: ntui can compose, render and save presets here, but cannot check or submit."


def describe_error(error: BaseException | None) -> str:
    """One line for a failed call, with Slurm's own reason where there is one."""
    # PresetSaveRefused is looked up, not imported: presetfiles loads YAML and the preset machinery, which the
    # app's first frame does not need (tests/ui/test_startup.py), and compose is above this module's layer; an
    # error of it means it was imported already. Its message is whole as it is.
    presetfiles = sys.modules.get("ntui.core.compose.presetfiles")
    if presetfiles is not None and isinstance(error, presetfiles.PresetSaveRefused):
        return str(error)
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
