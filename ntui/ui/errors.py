"""Error wording for the UI (views, panes, the app's worker-error handler): the core's, plus the UI's own
error types. A module of its own so that widgets and screens both import it without importing each other."""

from __future__ import annotations

import sys

from ntui.core.errors import describe_error as describe_core_error

__all__ = ["describe_error"]


def describe_error(error: BaseException | None) -> str:
    """One line for a failed worker, with Slurm's own reason where there is one."""
    # PresetSaveRefused is looked up, not imported: presetfiles loads YAML and the preset machinery, which the
    # app's first frame does not need (tests/ui/test_startup.py); an error of it means it was imported already.
    presetfiles = sys.modules.get("ntui.core.compose.presetfiles")
    if presetfiles is not None and isinstance(error, presetfiles.PresetSaveRefused):
        return str(error)
    return describe_core_error(error)
