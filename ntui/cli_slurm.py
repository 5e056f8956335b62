"""Subcommands that talk to Slurm (submit, jobs, show, logs, cancel, history)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ntui.core.spec import JobSpec


def add_commands(sub: Any, add_preset_args: Callable[[argparse.ArgumentParser], None]) -> None:
    return None


def test_only(spec: JobSpec) -> int:
    raise NotImplementedError
