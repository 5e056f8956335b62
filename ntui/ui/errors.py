"""Error wording for the UI (views, panes, the app's worker-error handler): the core's, plus the UI's own
error types. A module of its own so that widgets and screens both import it without importing each other."""

from __future__ import annotations

from ntui.core.errors import NO_SLURM
from ntui.core.errors import describe_error as describe_core_error

__all__ = ["NO_SLURM", "describe_error"]


def describe_error(error: BaseException | None) -> str:
    """One line for a failed worker, with Slurm's own reason where there is one."""
    # Imported here: the preset code loads yaml, which the app's first frame must not wait for
    # (tests/ui/test_startup.py).
    from ntui.core.compose.presetfiles import PresetSaveRefused

    if isinstance(error, PresetSaveRefused):
        return str(error)
    return describe_core_error(error)
