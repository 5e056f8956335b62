"""The Slurm side of a subcommand: the settings (file + environment) with the runner they describe, and how a
Slurm failure is said. Imported by the subcommands that talk to Slurm only (``ntui render`` never loads it).
"""

from __future__ import annotations

import os
import sys

from ntui.cli.common import EXIT_SLURM, remote_cluster
from ntui.core.config import TIMEOUT_ENV, Settings, cluster_runner, load_settings
from ntui.core.slurm.runner import CommandRunner, SlurmError, SlurmNotInstalled, SlurmTimeout
from ntui.core.slurm.ssh import SshError

__all__ = ["check_cluster", "cli_runner", "cli_settings", "slurm_failed"]


def slurm_failed(exc: SlurmError) -> int:
    """Say why Slurm could not be used or refused, in one line on stderr; returns :data:`EXIT_SLURM`."""
    if isinstance(exc, SshError) or (isinstance(exc, SlurmNotInstalled) and remote_cluster() is not None):
        print(f"ntui: {exc.message}", file=sys.stderr)  # ssh's failure, or no client there, in words
    elif isinstance(exc, SlurmNotInstalled):
        prog = os.path.basename(exc.argv[0]) if exc.argv else "the Slurm client"
        print(f"ntui: Slurm is not installed here: {prog} not found on PATH "
              "(ntui can still render and check presets)", file=sys.stderr)
    elif isinstance(exc, SlurmTimeout):
        print(f"ntui: Slurm timed out: {exc.message} (the command was killed; "
              f"set {TIMEOUT_ENV}=SECONDS or slurm.timeout in the settings to wait longer)", file=sys.stderr)
    else:
        print(f"ntui: {exc}", file=sys.stderr)
    return EXIT_SLURM


def cli_settings() -> Settings:
    """The user's settings (config file + environment overrides, :func:`ntui.core.config.load_settings`, as the
    app reads them); their problems go to stderr and the defaults stand in for what is wrong."""
    settings, problems = load_settings()
    for p in problems:
        print(f"ntui: {p}", file=sys.stderr)
    return settings


def cli_runner(settings: Settings | None = None) -> CommandRunner:
    """The runner for Slurm commands: the settings' timeouts and ``bin-dir`` (loaded when not given); over ssh to
    the cluster ``ntui --cluster NAME`` named (checked before the subcommand ran: see :func:`check_cluster`)."""
    return cluster_runner(settings if settings is not None else cli_settings(), remote_cluster())


def check_cluster(name: str) -> str | None:
    """Why ``--cluster NAME`` cannot be used (no such cluster in the settings, in words), or None."""
    from ntui.core.config import UnknownCluster

    settings, _ = load_settings()  # its problems are said when the subcommand reads the settings
    try:
        cluster_runner(settings, name)
    except UnknownCluster as exc:
        return str(exc)
    return None
