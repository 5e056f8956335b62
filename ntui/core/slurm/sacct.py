"""``sacct``: the final state of a job that left the queue (slurmdbd; ``None`` without accounting)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.runner import (
    CommandRunner,
    check,
)
from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    StateCategory,
    _text,
    normalize_state,
    parse_duration,
    state_category,
    validate_job_id,
)

# ---------------------------------------------------------------- final state (sacct)


@dataclass(frozen=True)
class AccountingRecord:
    job_id: str
    state: str  # normalized: CANCELLED, not "CANCELLED by 0"
    raw_state: str
    exit_code: str
    elapsed: str

    @property
    def category(self) -> StateCategory:
        return state_category(self.state)

    @property
    def elapsed_s(self) -> int | None:
        return parse_duration(self.elapsed)


SACCT_FIELDS = ("JobID", "State", "ExitCode", "Elapsed")
_NO_ACCOUNTING = re.compile(
    r"accounting storage is disabled|not running a supported accounting_storage plugin", re.IGNORECASE
)


def build_sacct_argv(job_id: str) -> list[str]:
    return ["sacct", "-j", validate_job_id(job_id), "-X", "-P", "-n", "-o", ",".join(SACCT_FIELDS)]


def parse_sacct(stdout: str | bytes) -> tuple[AccountingRecord, ...]:
    out: list[AccountingRecord] = []
    for line in _text(stdout).splitlines():
        parts = line.split("|")
        if len(parts) < len(SACCT_FIELDS) or not parts[0].strip():
            continue
        job_id, state, exit_code, elapsed = (p.strip() for p in parts[:4])
        out.append(AccountingRecord(job_id, normalize_state(state), state, exit_code, elapsed))
    return tuple(out)


def final_state(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> AccountingRecord | None:
    """The accounting record of a job that left the queue; ``None`` when accounting is disabled ("Slurm
    accounting storage is disabled": show "finished (state unknown)") or sacct has no record."""
    res = runner.run(build_sacct_argv(job_id), timeout=timeout, env=env)
    if _NO_ACCOUNTING.search(res.stderr):
        return None
    check(res)
    records = parse_sacct(res.stdout)
    for rec in records:
        if rec.job_id == job_id:
            return rec
    return records[0] if records else None
