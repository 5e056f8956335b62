"""One rank's log at a glance: :func:`rank_status` of a followed :class:`~ntui.core.logs.tail.FileTail` and the
findings in it (no IO: the tail's last poll)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ntui.core.logs.finding import LogFailure
from ntui.core.logs.tail import FileTail

__all__ = ["RankState", "RankStatus", "rank_status"]

RankState = Literal["pending", "missing", "never started", "running", "finished", "failed", "killed", "errored"]


@dataclass(frozen=True)
class RankStatus:
    """One rank's log at a glance. ``status``: errored (a finding in its own log), running / finished (by the
    job's state), pending (no file yet, job still active), missing (no file, job over, other logs exist),
    never started (the job ended and wrote no log at all: cancelled or failed while pending). Once the job is
    over and it failed: failed (this rank is the one that failed, or the batch log names it, with no error in
    its own log) or killed (a rank without an error of its own, stopped by the launcher or Slurm after another
    rank failed or the job was cancelled)."""

    rank: int
    path: Path
    node: str | None
    exists: bool
    size: int
    mtime: float | None
    last_line: str
    status: RankState
    finding: LogFailure | None = None


def rank_status(
    rank: int,
    tail: FileTail,
    *,
    job_active: bool,
    node: str | None = None,
    findings: Sequence[LogFailure] = (),
    ended_as: Literal["finished", "failed", "killed"] = "finished",
    any_log: bool = True,
) -> RankStatus:
    """Summarise a followed rank log (uses the tail's last poll; no IO). For an ended job, ``ended_as`` is what
    the job's verdict makes of this rank when its own log shows no error (:meth:`ntui.core.logs.watch.LogWatcher.rows`
    decides), and ``any_log`` whether any log of the job exists (none: the job never started)."""
    first = min(findings, key=lambda f: (f.tier, f.time if f.time is not None else float("inf"), f.seq), default=None)
    status: RankState
    if first is not None:
        status = "errored"
    elif not tail.exists:
        status = "pending" if job_active else "missing" if any_log else "never started"
    else:
        status = "running" if job_active else ended_as
    return RankStatus(
        rank=rank,
        path=tail.path,
        node=node if node is not None else (first.node if first is not None else None),
        exists=tail.exists,
        size=tail.size,
        mtime=tail.mtime,
        last_line=tail.last_line,
        status=status,
        finding=first,
    )
