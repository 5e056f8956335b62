"""A failure found in a log: :class:`LogFailure`, its kinds and their tiers.

The value every part of failure triage passes on: the detectors (:mod:`ntui.core.logs.rankdetector`) emit it,
:func:`ntui.core.logs.triage.triage` chooses among them, the verdict (:mod:`ntui.core.logs.verdict`) words it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["KINDS", "TIERS", "FindingKind", "LogFailure", "TimeSource", "tier_of"]

FindingKind = Literal[
    "traceback",  # a Python exception (the generic case)
    "not_found",  # the job could not start its command: not on PATH (127), not executable (126), no program file
    "oom",  # CUDA out of memory
    "oom_kill",  # the kernel OOM killer, as reported by slurmstepd / srun
    "nccl",  # NCCL error
    "rank_signal",  # a rank (or a node's launcher) killed by a fault signal: SIGABRT, SIGSEGV, SIGKILL ...
    "nccl_timeout",  # NCCL watchdog timeout
    "dist_timeout",  # torch.distributed store / rendezvous timeout or network error
    "peer_failure",  # an error that only says another rank went away
    "node_failure",  # Slurm: CANCELLED DUE TO NODE FAILURE
    "launch_error",  # srun / sbatch could not start or run the step (srun: fatal: ..., srun: error: Unable to ...)
    "child_failed",  # torchrun's ChildFailedError summary entry (exit code > 0)
    "srun_exit",  # srun: error: <node>: task N: Exited with exit code N
    "time_limit",  # Slurm: CANCELLED DUE TO TIME LIMIT
    "cancelled",  # Slurm: CANCELLED (user, preemption, ...)
    "signal",  # killed / terminated by a signal (mostly a consequence of another failure)
]
TimeSource = Literal["line", "given", "none"]

#: Every kind, in the order of :data:`FindingKind` (one home: a new kind is one line there and its tier below).
KINDS: tuple[str, ...] = get_args(FindingKind)

#: 0 real errors, 1 timeouts / peer failures, 2 launcher and scheduler reports, 3 cancel / signals.
TIERS: dict[str, int] = {
    "traceback": 0,
    "not_found": 0,
    "oom": 0,
    "oom_kill": 0,
    "nccl": 0,
    "rank_signal": 0,
    "node_failure": 1,
    "nccl_timeout": 1,
    "dist_timeout": 1,
    "peer_failure": 1,
    "launch_error": 1,
    "child_failed": 2,
    "srun_exit": 2,
    "time_limit": 2,
    "cancelled": 3,
    "signal": 3,
}
assert set(TIERS) == set(KINDS), "every finding kind has its tier"

def tier_of(kind: str) -> int:
    """0 real errors, 1 timeouts / peer failures, 2 launcher and scheduler reports, 3 cancel / signals."""
    return TIERS.get(kind, 0)


@dataclass(frozen=True)
class LogFailure:
    """One detected failure in one log.

    ``line_no`` is 1-based and points at the most telling line (the ``XError: msg`` line of a traceback);
    ``start_line_no`` is the first line of the block. ``first_line`` is that telling line without prefixes.
    """

    kind: str
    rank: int | None
    node: str | None
    line_no: int
    time: float | None
    first_line: str
    excerpt: tuple[str, ...] = ()
    time_source: TimeSource = "none"
    seq: int = 0
    start_line_no: int = 0
    from_traceback: bool = False
    task: int | None = None
    """srun's task id (``srun: error: nid002: task 1: ...``) when it is not a global rank: with torchrun and
    accelerate srun starts one launcher per node, so task N is node N's launcher."""
    signal: str | None = None
    """The signal the process died of (``SIGABRT``), for ``rank_signal`` and ``signal`` findings that name it."""
    local_rank: int | None = None
    """The rank's local rank on its node, where the log says it (torch elastic's ``rank: 3 (local_rank: 1)``)."""
    alike: tuple[int, ...] = ()
    """The other ranks (or srun tasks) the same line names, failed the same way: srun's ``tasks 2-7: Exited with
    exit code 1`` is rank 2 with 3-7 alike."""
    root_cause: bool = False
    """From torch elastic's "Root Cause" entry: the launcher's word on which rank failed first."""
    generic: bool = False
    """A wrapper or a category, not the cause itself (an abort, NCCL's "invalid usage", a traceback cut before its
    error, mp.spawn's "process N terminated"): a specific finding of the same tier wins over it."""
    one_node_assumed: bool = False
    """The rank is the local rank because nothing in the log says the job had another node (no second host, no
    node rank above 0, no node count above 1): the wording says so."""

    @property
    def tier(self) -> int:
        return tier_of(self.kind)

