"""What every ``ntui`` subcommand shares: the exit codes and printing problems. Light: ``ntui --help`` and
``ntui render`` import it (the Slurm runner of the subcommands that talk to Slurm is in :mod:`ntui.cli.slurm`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ntui.core.problems import Problem

if TYPE_CHECKING:
    from ntui.core.records.history import History, HistoryEntry

__all__ = [
    "EXIT_CODES",
    "EXIT_JOB_FAILED",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_SLURM",
    "add_cluster_option",
    "exit_codes_help",
    "history_entry",
    "open_history",
    "print_problems",
    "remote_cluster",
    "select_cluster",
]

EXIT_OK = 0
EXIT_PROBLEMS = 2
EXIT_SLURM = 3
EXIT_JOB_FAILED = 4

#: Every exit code ``ntui`` uses (``--help`` and the README list them from here).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "ok"),
    (1, "logs --triage: a rank (or the job) failed; stacks: some rank or node could not be sampled"),
    (EXIT_PROBLEMS, "problems before Slurm was asked: the preset, this cluster's partitions, a rank out of "
                    "range, a log not there yet, hold on a job that is not pending, stacks of a job that is not "
                    "running"),
    (EXIT_SLURM, "Slurm refused or failed, or cannot be used (no client, no configuration, no answer); "
                 "its own reason is printed"),
    (EXIT_JOB_FAILED, "submit --wait, wait: a job did not complete"),
    (130, "interrupted (Ctrl-C)"),
)


class _Target:
    """The cluster this run of ``ntui`` talks to: ``ntui --cluster NAME`` (a cluster of the settings, reached
    over ssh), else None (Slurm here). Set once per run, before the subcommand."""

    cluster: str | None = None


_TARGET = _Target()


def select_cluster(name: str | None) -> None:
    _TARGET.cluster = name


def remote_cluster() -> str | None:
    """The cluster ``--cluster`` named for this run (its Slurm is on another machine), or None."""
    return _TARGET.cluster


def exit_codes_help() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


def print_problems(problems: Sequence[Problem], *, warnings: bool = True) -> None:
    for p in problems:
        if p.is_error or warnings:
            print(str(p), file=sys.stderr)


# ---------------------------------------------------------------- one job of the history, on the right cluster


def add_cluster_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", metavar="NAME",
                   help="the cluster whose job this is, where the history holds jobs of several clusters with "
                        "this id (default: the cluster Slurm's configuration here names)")


def open_history(args: argparse.Namespace | None = None) -> History:
    """The history, knowing which cluster this command talks to: ``--cluster``, else the ClusterName of the
    slurm.conf the clients read (read only when a job id is recorded on several clusters)."""
    from ntui.core.records.history import History
    from ntui.core.slurm.scontrol import cluster_name

    explicit = getattr(args, "cluster", None) if args is not None else None
    return History(cluster=explicit or (lambda: cluster_name()))


def history_entry(history: History, args: argparse.Namespace, job_id: str | None = None) -> HistoryEntry | None:
    """The history's entry for the command's job (``job_id``, default ``args.job_id``): the given ``--cluster``'s
    only, else this cluster's first. Says on stderr when another cluster has a job with the same id."""
    job = job_id or args.job_id
    explicit = getattr(args, "cluster", None)
    entry = history.get(job, explicit)
    if entry is None:
        if explicit and history.matches(job):
            print(f"ntui: no job {job} of cluster {explicit} in the history (clusters with one: "
                  f"{', '.join(sorted({e.cluster or '?' for e in history.matches(job)}))})", file=sys.stderr)
        return None
    others = history.others(entry)
    if others:
        print(f"ntui: job {job} of cluster {entry.cluster or '(unknown)'}; the history also has a job {job} of "
              f"{', '.join(others)} (--cluster NAME picks)", file=sys.stderr)
    return entry
