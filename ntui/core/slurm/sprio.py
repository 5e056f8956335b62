"""``sprio -j ID``: why a pending job is where it is in the queue, factor by factor (one RPC).

Only ``PriorityType=priority/multifactor`` computes factors; with ``priority/basic`` (Slurm's default, jobs start
in submission order) sprio exits 1 with "You are not running a supported priority plugin" — an answer, not an
error: :class:`Priority` then says ``available=False`` with Slurm's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.slurm.common import DEFAULT_TIMEOUT, _text, validate_job_id
from ntui.core.slurm.runner import CommandRunner, check

__all__ = ["FACTORS", "Priority", "build_sprio_argv", "job_priority", "parse_sprio"]

SPRIO_SEPARATOR = "\x1f"
#: ``-o`` fields: job id, partition, then the weighted priority and its factors (sprio.1: %Y %A %B %F %J %P %Q %S
#: %N %T); width-less, so nothing is cut.
_FORMAT = ("%i", "%r", "%Y", "%A", "%B", "%F", "%J", "%P", "%Q", "%S", "%N", "%T")
#: The factors, in :data:`_FORMAT` order after the total, as a person names them.
FACTORS = ("age", "association", "fair-share", "job size", "partition", "QOS", "site", "nice", "TRES")
_UNSUPPORTED = "not running a supported priority plugin"


@dataclass(frozen=True)
class Priority:
    """One pending job's priority (weighted, as the scheduler compares them) and what it is made of (factors
    that are 0 left out). ``available=False``: the site does not compute factors (``note`` says why)."""

    available: bool
    job_id: str = ""
    partition: str = ""
    priority: int | None = None
    factors: tuple[tuple[str, float], ...] = ()
    note: str = ""


def build_sprio_argv(job_id: str, *, separator: str = SPRIO_SEPARATOR) -> list[str]:
    """``sprio --noheader -j ID -o FORMAT``."""
    return ["sprio", "--noheader", "-j", validate_job_id(job_id), "-o", separator.join(_FORMAT)]


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def parse_sprio(stdout: str | bytes, job_id: str = "", *, separator: str = SPRIO_SEPARATOR) -> Priority:
    """The first line (the job's first partition; sprio prints one line per partition it may run in). No line:
    ``available=False`` ("Unable to find jobs matching ..." on stdout, exit 0: the job is not pending)."""
    text = _text(stdout)
    for line in text.splitlines():
        parts = line.split(separator)
        if len(parts) < len(_FORMAT) or not parts[0].strip():
            continue
        total = _number(parts[2])
        factors = tuple((name, value) for name, raw in zip(FACTORS, parts[3:3 + len(FACTORS)], strict=False)
                        if (value := _number(raw)) and name != "TRES")
        return Priority(True, parts[0].strip(), parts[1].strip(), int(total) if total is not None else None,
                        factors)
    words = " ".join(text.split()) or "sprio printed nothing"
    return Priority(False, job_id, note=words)


def job_priority(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Priority:
    """One RPC. A site without ``priority/multifactor`` gives ``available=False`` (Slurm's words in ``note``); other
    failures raise the runner's typed errors."""
    res = runner.run(build_sprio_argv(job_id), timeout=timeout, env=env)
    words = " ".join((res.stderr + " " + res.stdout).split())
    if _UNSUPPORTED in words:
        return Priority(False, job_id, note=words)
    check(res)
    return parse_sprio(res.stdout, job_id)
