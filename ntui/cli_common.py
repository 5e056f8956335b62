"""What every ``ntui`` subcommand shares: exit codes, the preset arguments, loading a preset, printing problems,
and the settings (file + environment) with the Slurm runner they describe.

``cli.py`` and the ``cli_*.py`` subcommand modules import this module; it imports none of them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ntui.core.config import Settings, load_settings, slurm_runner
from ntui.core.presets import LoadedPreset, load_preset
from ntui.core.problems import PresetError, Problem
from ntui.core.runner import CommandRunner
from ntui.core.spec import JobSpec, validate

__all__ = [
    "EXIT_CODES",
    "EXIT_JOB_FAILED",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_SLURM",
    "add_preset_args",
    "exit_codes_help",
    "cli_runner",
    "cli_settings",
    "load_spec",
    "print_problems",
]

EXIT_OK = 0
EXIT_PROBLEMS = 2
EXIT_SLURM = 3
EXIT_JOB_FAILED = 4

#: Every exit code ``ntui`` uses (``--help`` and the README list them from here).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "ok"),
    (1, "logs --triage: a rank (or the job) failed"),
    (EXIT_PROBLEMS, "problems before Slurm was asked: the preset, this cluster's partitions, a rank out of "
                    "range, a log not there yet, hold on a job that is not pending"),
    (EXIT_SLURM, "Slurm refused or failed, or cannot be used (no client, no configuration, no answer); "
                 "its own reason is printed"),
    (EXIT_JOB_FAILED, "submit --wait: the job did not complete"),
    (130, "interrupted (Ctrl-C)"),
)


def exit_codes_help() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


def add_preset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("preset", help="preset name (user dir first, then shipped) or path to a YAML file")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a dotted key with a YAML value, e.g. --set sbatch.nodes=4 (repeatable)",
    )


def load_spec(
    preset: str, overrides: Sequence[str], *, quiet_warnings: bool = False
) -> tuple[LoadedPreset, JobSpec | None, list[Problem]]:
    """Load + validate; print problems to stderr. Returns spec None on errors."""
    try:
        loaded = load_preset(preset, overrides)
    except PresetError as exc:
        return LoadedPreset(preset, None, {}), None, exc.problems
    spec, problems = validate(loaded)
    return loaded, spec, problems


def print_problems(problems: Sequence[Problem], *, warnings: bool = True) -> None:
    for p in problems:
        if p.is_error or warnings:
            print(str(p), file=sys.stderr)


def cli_settings() -> Settings:
    """The user's settings (config file + environment overrides, :func:`ntui.core.config.load_settings`, as the
    app reads them); their problems go to stderr and the defaults stand in for what is wrong."""
    settings, problems = load_settings()
    for p in problems:
        print(f"ntui: {p}", file=sys.stderr)
    return settings


def cli_runner(settings: Settings | None = None) -> CommandRunner:
    """The runner for Slurm commands: the settings' timeouts and ``bin-dir`` (loaded when not given)."""
    return slurm_runner((settings if settings is not None else cli_settings()).slurm)
