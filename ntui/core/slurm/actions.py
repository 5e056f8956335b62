"""Job actions: ``scancel`` (cancel, signal) and ``scontrol hold|release|requeue``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    _ids,
)
from ntui.core.slurm.runner import (
    CommandResult,
    CommandRunner,
    check,
)

# ---------------------------------------------------------------- actions

_SIGNAL_RE = re.compile(r"^(?:SIG)?[A-Z][A-Z0-9]*$|^\d{1,2}$")


def build_scancel_argv(
    job_ids: str | Sequence[str],
    *,
    signal: str | int | None = None,
    full: bool = False,
    batch: bool = False,
) -> list[str]:
    """``scancel [--signal=SIG] [--full|--batch] ID...``. ``--signal`` alone reaches every step but not the
    batch shell; ``--batch`` only the batch shell; ``--full`` the batch shell and its children too."""
    if full and batch:
        raise ValueError("--full and --batch are alternatives")
    argv = ["scancel"]
    if signal is not None:
        sig = str(signal).strip().upper()
        if not _SIGNAL_RE.match(sig):
            raise ValueError(f"not a signal name or number: {signal!r}")
        argv.append(f"--signal={sig}")
    if full:
        argv.append("--full")
    if batch:
        argv.append("--batch")
    return argv + _ids(job_ids)


def build_hold_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol uhold ID ID...``: held as the user (``JobHeldUser``, as ``sbatch --hold`` does) even when
    run by root or an operator, whose plain ``hold`` would be an admin hold (``JobHeldAdmin``) that the owner
    cannot release. Separate arguments; verified on 22.05.8."""
    return ["scontrol", "uhold", *_ids(job_ids)]


def build_release_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol release ID ID...``."""
    return ["scontrol", "release", *_ids(job_ids)]


def build_requeue_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol requeue ID,ID,...`` (comma separated, scontrol.1)."""
    return ["scontrol", "requeue", ",".join(_ids(job_ids))]


def _act(runner: CommandRunner, argv: list[str], env: Mapping[str, str] | None, timeout: float) -> CommandResult:
    return check(runner.run(argv, timeout=timeout, env=env))


def cancel(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    signal: str | int | None = None,
    full: bool = False,
    batch: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Cancel or signal jobs. Note: 22.05.8 ``scancel`` of an unknown ID exits 0 silently."""
    return _act(runner, build_scancel_argv(job_ids, signal=signal, full=full, batch=batch), env, timeout)


def hold(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Hold pending jobs (a running job keeps running). Unknown ID -> ``JobNotFound``."""
    return _act(runner, build_hold_argv(job_ids), env, timeout)


def release(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    return _act(runner, build_release_argv(job_ids), env, timeout)


def requeue(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Requeue batch jobs. A pending job gives ``SlurmRejected`` ("Job is pending execution")."""
    return _act(runner, build_requeue_argv(job_ids), env, timeout)
