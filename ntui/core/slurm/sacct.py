"""``sacct``: job records from slurmdbd (``SacctUnavailable`` / ``None`` without accounting).

One ``sacct`` call answers for many jobs (``-j id1,id2,...``) or for the user's jobs since a time (``-S``); never
one call per job. Without slurmdbd sacct prints "Slurm accounting storage is disabled" (rc 1):
:func:`accounting_disabled` recognises it, and callers fall back to ``scontrol`` and the batch log
(:mod:`ntui.core.records.record`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    StateCategory,
    normalize_state,
    parse_duration,
    parse_exit_code,
    state_category,
    validate_job_id,
)
from ntui.core.slurm.runner import CommandRunner, SlurmError, check
from ntui.core.slurm.version import installed_version, sacct_subtracts_128

#: ``sacct --format`` fields, in this order (``-P``: ``|``-separated, never truncated).
RECORD_FIELDS: tuple[str, ...] = ("JobID", "JobName", "State", "ExitCode", "Reason", "Submit", "Start", "End",
                                  "Elapsed", "NodeList", "Account", "QOS", "Partition", "WorkDir")
_DISABLED = re.compile(
    r"accounting storage is disabled|not running a supported accounting_storage plugin", re.IGNORECASE
)
_NO_TIME = {"", "Unknown", "None", "N/A"}


@dataclass(frozen=True)
class SacctRecord:
    """One allocation line of ``sacct -X``. ``state`` is normalized (``CANCELLED``, not ``CANCELLED by 0``);
    ``raw_state`` keeps who cancelled. Times are ISO text or ``None``. ``exit_code`` reads as sacct 25.11+
    and scontrol print it on every version (:func:`same_on_every_version`)."""

    job_id: str
    name: str
    state: str
    raw_state: str
    exit_code: str
    reason: str
    submit: str | None
    start: str | None
    end: str | None
    elapsed_s: int | None
    node_list: str
    account: str
    qos: str
    partition: str
    work_dir: str

    @property
    def category(self) -> StateCategory:
        return state_category(self.state)

    @property
    def base_id(self) -> str:
        """``123`` for ``123``, ``123_4`` and ``123+0`` (array task, het component)."""
        return re.split(r"[_+.]", self.job_id, maxsplit=1)[0]


class SacctUnavailable(Exception):
    """sacct cannot answer: accounting is disabled (``disabled``) or the command failed."""

    def __init__(self, message: str, *, disabled: bool) -> None:
        super().__init__(message)
        self.disabled = disabled


def accounting_disabled(stderr: str) -> bool:
    return bool(_DISABLED.search(stderr))


def _format() -> str:
    return "--format=" + ",".join(RECORD_FIELDS)


def build_sacct_jobs_argv(job_ids: Iterable[str]) -> list[str]:
    """``sacct -j ID1,ID2,... -X -P -n --format=...``: every job in one call. With ``-j`` sacct's default start
    time is the epoch, so old jobs are found too."""
    ids = sorted({validate_job_id(j) for j in job_ids}, key=lambda s: (len(s), s))
    if not ids:
        raise ValueError("no job ids")
    return ["sacct", "-j", ",".join(ids), "-X", "-P", "-n", _format()]


def build_sacct_since_argv(since: str, user: str | None = None) -> list[str]:
    """The user's jobs (default: the caller) that were eligible, running or ended since ``since``
    (``YYYY-MM-DDTHH:MM:SS``): ``sacct -X -P -n -S SINCE [-u USER] --format=...``."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?)?", since):
        raise ValueError(f"not a sacct time: {since!r}")
    argv = ["sacct", "-X", "-P", "-n", "-S", since]
    if user:
        if not re.fullmatch(r"[A-Za-z0-9._-]+", user):
            raise ValueError(f"not a user name: {user!r}")
        argv += ["-u", user]
    return argv + [_format()]


def _time(text: str) -> str | None:
    return None if text.strip() in _NO_TIME else text.strip()


def parse_sacct_records(stdout: str | bytes) -> tuple[SacctRecord, ...]:
    """Parse :data:`RECORD_FIELDS` lines; a job name containing ``|`` is re-joined, other malformed lines dropped."""
    text = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
    n = len(RECORD_FIELDS)
    out: list[SacctRecord] = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) > n:  # the name may hold "|": it is the only free-text field before the fixed ones
            extra = len(parts) - n
            parts = [parts[0], "|".join(parts[1:2 + extra]), *parts[2 + extra:]]
        if len(parts) != n or not parts[0].strip():
            continue
        (job_id, name, state, exit_code, reason, submit, start, end, elapsed, node_list, account, qos, partition,
         work_dir) = parts
        out.append(SacctRecord(
            job_id=job_id.strip(), name=name, state=normalize_state(state), raw_state=state.strip(),
            exit_code=exit_code.strip(), reason=reason.strip(), submit=_time(submit), start=_time(start),
            end=_time(end), elapsed_s=parse_duration(elapsed), node_list=node_list.strip(),
            account=account.strip(), qos=qos.strip(), partition=partition.strip(), work_dir=work_dir.strip(),
        ))
    return tuple(out)


#: Exit statuses that sacct before 25.11 printed with 128 taken off, and that ntui gives back the 128: the
#: signals training jobs end by (a task's SIGABRT, the OOM killer's SIGKILL, SIGSEGV, Slurm's SIGTERM at a
#: cancel or time limit), whose 128 + N is what srun and the batch shell return. A program exiting 6, 9, 11
#: or 15 by itself is rare; one exiting 1, 2 or 3 is not, so those stay as printed (they may have been 129,
#: 130, 131: sacct before 25.11 cannot tell).
_RESTORED_SIGNALS = frozenset({6, 9, 11, 15})


def restore_exit_code(exit_code: str) -> str:
    """An exit code of sacct before 25.11 in the spelling of 25.11+ (and of scontrol on every version):
    ``15:0`` (a cancelled ``srun`` job's 143) -> ``143:0``, ``9:0`` -> ``137:0``; every other code unchanged
    (see :data:`_RESTORED_SIGNALS`)."""
    code = parse_exit_code(exit_code)
    if code is None or code[1] != 0 or code[0] not in _RESTORED_SIGNALS:
        return exit_code
    return f"{code[0] + 128}:0"


def same_on_every_version(records: tuple[SacctRecord, ...], runner: CommandRunner,
                          env: Mapping[str, str] | None, timeout: float) -> tuple[SacctRecord, ...]:
    """``records`` with exit codes that mean the same on every Slurm version: when one could have lost its
    128 (:func:`restore_exit_code` would change it), the installed version is asked (once per process) and,
    before 25.11, the 128 is given back."""
    if not any(restore_exit_code(r.exit_code) != r.exit_code for r in records):
        return records
    if not sacct_subtracts_128(installed_version(runner, env=env, timeout=timeout)):
        return records
    return tuple(replace(r, exit_code=restore_exit_code(r.exit_code)) for r in records)


def _run(runner: CommandRunner, argv: Sequence[str], env: Mapping[str, str] | None,
         timeout: float) -> tuple[SacctRecord, ...]:
    try:
        res = runner.run(argv, timeout=timeout, env=env)
    except SlurmError as exc:  # not installed, timed out
        raise SacctUnavailable(str(exc), disabled=False) from exc
    if accounting_disabled(res.stderr):
        raise SacctUnavailable(res.stderr.strip() or "accounting storage is disabled", disabled=True)
    try:
        check(res)
    except SlurmError as exc:
        raise SacctUnavailable(str(exc), disabled=False) from exc
    return same_on_every_version(parse_sacct_records(res.stdout), runner, env, timeout)


def sacct_jobs(runner: CommandRunner, job_ids: Iterable[str], *, env: Mapping[str, str] | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> dict[str, SacctRecord]:
    """One ``sacct`` call for all ``job_ids``: ``{job id: record}``. An array job's id maps to its first task's
    record when sacct lists only tasks. Raises :class:`SacctUnavailable`."""
    wanted = list(dict.fromkeys(job_ids))
    if not wanted:
        return {}
    records = _run(runner, build_sacct_jobs_argv(wanted), env, timeout)
    by_id: dict[str, SacctRecord] = {}
    for rec in records:
        if rec.job_id in wanted:
            by_id[rec.job_id] = rec
    for rec in records:
        if rec.base_id in wanted and rec.base_id not in by_id:
            by_id[rec.base_id] = rec
    return by_id


def sacct_records(runner: CommandRunner, job_ids: Iterable[str], *, env: Mapping[str, str] | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> tuple[SacctRecord, ...]:
    """One ``sacct`` call for all ``job_ids``: every allocation line it prints (an array's id gives each of its
    tasks, pending ones folded as ``123_[2-5%2]``). Raises :class:`SacctUnavailable`."""
    wanted = list(dict.fromkeys(job_ids))
    if not wanted:
        return ()
    return _run(runner, build_sacct_jobs_argv(wanted), env, timeout)


def sacct_since(runner: CommandRunner, since: str, *, user: str | None = None,
                env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> tuple[SacctRecord, ...]:
    """One ``sacct`` call: the user's jobs since ``since``. Raises :class:`SacctUnavailable`."""
    return _run(runner, build_sacct_since_argv(since, user), env, timeout)


#: The record of one job, as :func:`final_state` returns it (the same model as the batched calls').
AccountingRecord = SacctRecord


def final_state(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> SacctRecord | None:
    """The accounting record of a job that left the queue; ``None`` when accounting is disabled ("Slurm
    accounting storage is disabled": show "finished (state unknown)") or sacct has no record. Slurm's own
    errors (controller unreachable, not installed, timeout) are raised as they are."""
    try:
        return sacct_jobs(runner, [job_id], env=env, timeout=timeout).get(job_id)
    except SacctUnavailable as exc:
        if exc.disabled:
            return None
        if isinstance(exc.__cause__, SlurmError):
            raise exc.__cause__ from None
        raise
