"""What every ``ntui`` subcommand shares: the exit codes and printing problems. Light: ``ntui --help`` and
``ntui render`` import it (the Slurm runner of the subcommands that talk to Slurm is in :mod:`ntui.cli.slurm`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ntui.core.problems import Problem

__all__ = [
    "EXIT_CODES",
    "EXIT_JOB_FAILED",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_SLURM",
    "exit_codes_help",
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
    (EXIT_JOB_FAILED, "submit --wait, wait: a job did not complete"),
    (130, "interrupted (Ctrl-C)"),
)


def exit_codes_help() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


def print_problems(problems: Sequence[Problem], *, warnings: bool = True) -> None:
    for p in problems:
        if p.is_error or warnings:
            print(str(p), file=sys.stderr)
