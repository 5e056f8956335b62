"""What every Slurm client shares: timeouts, Slurm's timestamps, job states, exit codes, job IDs.

Durations are :mod:`ntui.core.slurm.durations`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import Enum

from ntui.core.slurm.durations import NO_DURATION

#: Timeout for queries and actions (seconds).
DEFAULT_TIMEOUT = 15.0
#: sbatch retries by itself when slurmctld is busy ("Slurm temporarily unable to accept job, sleeping and
#: retrying"), so submission gets longer.
SUBMIT_TIMEOUT = 60.0


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


# ---------------------------------------------------------------- time helpers

_NULL_WORDS = NO_DURATION


def parse_timestamp(text: str | None) -> datetime | None:
    """``2026-11-30T04:26:43`` -> naive local datetime; ``N/A`` / ``Unknown`` / ``None`` / garbage -> None."""
    if not text:
        return None
    s = text.strip()
    if s.upper() in _NULL_WORDS:
        return None
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return None


def _null(text: str) -> str | None:
    """``None`` for Slurm's spellings of nothing, else the text."""
    return None if text.strip().upper() in _NULL_WORDS else text


def _int_or_none(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- job states


class StateCategory(str, Enum):
    """Coarse job state for colours, filters and "is it over?"."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETING = "completing"
    DONE = "done"  # finished successfully
    FAILED = "failed"  # finished unsuccessfully (includes cancelled, timeout, OOM, node failure, preempted)
    OTHER = "other"  # suspended, federation states, anything unknown

    @property
    def finished(self) -> bool:
        return self in (StateCategory.DONE, StateCategory.FAILED)


#: squeue.1 "JOB STATE CODES": compact -> long form.
STATE_CODES: dict[str, str] = {
    "BF": "BOOT_FAIL",
    "CA": "CANCELLED",
    "CD": "COMPLETED",
    "CF": "CONFIGURING",
    "CG": "COMPLETING",
    "DL": "DEADLINE",
    "F": "FAILED",
    "NF": "NODE_FAIL",
    "OOM": "OUT_OF_MEMORY",
    "PD": "PENDING",
    "PR": "PREEMPTED",
    "R": "RUNNING",
    "RD": "RESV_DEL_HOLD",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "RQ": "REQUEUED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "SE": "SPECIAL_EXIT",
    "SI": "SIGNALING",
    "SO": "STAGE_OUT",
    "S": "SUSPENDED",
    "ST": "STOPPED",
    "TO": "TIMEOUT",
}

_C = StateCategory
_CATEGORY: dict[str, StateCategory] = {
    "PENDING": _C.PENDING,
    "CONFIGURING": _C.PENDING,  # allocated, nodes booting: no output yet
    "REQUEUED": _C.PENDING,
    "EXPEDITING": _C.PENDING,  # 25.11+: failed, requeued at once with top priority (--requeue=expedite)
    "REQUEUE_HOLD": _C.PENDING,
    "REQUEUE_FED": _C.PENDING,
    "RESV_DEL_HOLD": _C.PENDING,
    "SPECIAL_EXIT": _C.PENDING,  # requeued and held in a special state
    "RUNNING": _C.RUNNING,
    "RESIZING": _C.RUNNING,
    "SIGNALING": _C.RUNNING,
    "STOPPED": _C.RUNNING,  # SIGSTOPped, keeps its CPUs
    "COMPLETING": _C.COMPLETING,
    "STAGE_OUT": _C.COMPLETING,
    "COMPLETED": _C.DONE,
    "FAILED": _C.FAILED,
    "CANCELLED": _C.FAILED,
    "TIMEOUT": _C.FAILED,
    "OUT_OF_MEMORY": _C.FAILED,
    "NODE_FAIL": _C.FAILED,
    "BOOT_FAIL": _C.FAILED,
    "DEADLINE": _C.FAILED,
    "PREEMPTED": _C.FAILED,
    "SUSPENDED": _C.OTHER,
    "REVOKED": _C.OTHER,
}


def normalize_state(text: str) -> str:
    """Long upper-case state name: ``"CD"`` -> ``COMPLETED``, ``"CANCELLED by 0"`` / ``"CANCELLED+"`` ->
    ``CANCELLED``. Unknown words come back upper-cased (never an error); empty stays empty."""
    word = text.strip().split(" ", 1)[0].rstrip("+").upper()
    return STATE_CODES.get(word, word)


def state_category(state: str) -> StateCategory:
    """Category of a compact or long state; unknown -> ``OTHER``."""
    return _CATEGORY.get(normalize_state(state), StateCategory.OTHER)


# ---------------------------------------------------------------- exit codes

_EXIT_RE = re.compile(r"^\s*(\d+)(?::(\d+))?\s*$")
#: Signal names for the numbers jobs end by (Linux numbering), for people.
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
            9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM",
            15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ"}


def parse_exit_code(text: str | None) -> tuple[int, int] | None:
    """Slurm's ``status:signal`` (``143:0``, ``0:15``; a bare ``2`` is ``2:0``) -> ``(143, 0)``; else None."""
    m = _EXIT_RE.match(text or "")
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def exit_signal(text: str | None) -> str:
    """The signal an exit code says the job ended by, the same words on every Slurm version: ``0:15`` (killed
    by it, as 22.05 records a time-limited batch shell) and ``143:0`` (the shell's 128 + signal, as 26.05
    records it) both read "SIGTERM"; "" when the code names no signal (``3:0``, ``0:0``, no exit code)."""
    code = parse_exit_code(text)
    if code is None:
        return ""
    status, sig = code
    if sig:
        return _SIGNALS.get(sig, f"signal {sig}")
    if 128 < status <= 128 + 64:
        return _SIGNALS.get(status - 128, f"signal {status - 128}")
    return ""


def exit_code_meaning(text: str | None) -> str:
    """What an exit code says: its signal (:func:`exit_signal`), else ``exit N``; "" for ``0:0`` and text
    that is no exit code."""
    code = parse_exit_code(text)
    if code is None or code == (0, 0):
        return ""
    return exit_signal(text) or f"exit {code[0]}"


# ---------------------------------------------------------------- argument validation

_JOB_ID_RE = re.compile(r"^\d+(?:_(?:\d+|\[[\d,\-%]+\]))?(?:\+\d+)?(?:\.(?:\d+|batch|extern))?$")


def validate_job_id(job_id: str) -> str:
    """``job_id`` unchanged if it is a Slurm job ID (``123``, ``123_4``, ``123_[1-3]``, ``123+1``,
    ``123.batch``); ``ValueError`` otherwise (so nothing a user typed can become an option)."""
    s = str(job_id).strip()
    if not _JOB_ID_RE.match(s):
        raise ValueError(f"not a Slurm job ID: {job_id!r}")
    return s


def _ids(job_ids: str | Sequence[str]) -> list[str]:
    ids = [job_ids] if isinstance(job_ids, str) else list(job_ids)
    if not ids:
        raise ValueError("no job IDs given")
    return [validate_job_id(i) for i in ids]


def _safe_token(value: str, what: str) -> str:
    if not value or value.startswith("-") or any(c.isspace() or c == "," for c in value):
        raise ValueError(f"invalid {what}: {value!r}")
    return value


def _array_display_id(array_job: str, task: str) -> str:
    if task.isdigit():
        return f"{array_job}_{task}"
    return f"{array_job}_[{task}]"
