"""Slurm ``--time`` values: :mod:`ntui.core.slurm.durations`'s, named here only for the importers that have not
moved to it yet (the compose form's model in the UI, ``ntui progress``); nothing new imports this module."""

from __future__ import annotations

from ntui.core.slurm.durations import format_elapsed as format_elapsed
from ntui.core.slurm.durations import format_time_limit as format_time_limit
from ntui.core.slurm.durations import parse_time_limit as parse_time_limit
from ntui.core.slurm.durations import time_limit_from_script as time_limit_from_script
