"""The lines srun and slurmstepd write into a job's logs: one reading of each form, for triage and the record.

* a task's end, ``srun: error: nid002: task 3: Exited with exit code 1``, or killed by a signal
  (``srun: error: nid002: tasks 2-7,9: Aborted``; srun folds the tasks that ended alike into one list):
  :data:`TASK_END` (``node``, ``tasks``, ``what``), :data:`EXIT_CODE` on its ``what``, :func:`task_ids`;
* a node lost, ``srun: error: Node failure on nid003``: :data:`NODE_FAILURE` (``node``);
* the job or step cancelled, slurmstepd's ``*** JOB|STEP <id> ON <node> CANCELLED AT <time> [DUE TO <reason>] ***``
  (22.05/24.11 behind ``slurmstepd-nid001: error: ``; 26.05 behind ``[T.mmm] error: `` and with ``DUE to SIGNAL
  Terminated``): :data:`CANCELLED` (``scope``, ``id``, ``node``, ``at``, ``reason``), :func:`parse_cancel`;
* the step's tasks killed for memory, slurmstepd's ``Detected 1 oom-kill event(s) in StepId=9.0`` (``oom_kill
  event`` in later releases): :data:`OOM_KILL`;
* srun's (sbatch's, salloc's) own failure to start or run the step, not a task's: its fatal errors, its
  configuration and allocation errors: :data:`LAUNCH_ERROR`.

The patterns carry no ``^``: ``match`` reads a line whose prefixes are taken off (triage), ``search`` finds the
form inside a prefixed line or a log's tail (the record's batch-log inference). Each ends its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CANCELLED",
    "EXIT_CODE",
    "LAUNCH_ERROR",
    "NODE_FAILURE",
    "OOM_KILL",
    "TASK_END",
    "SlurmCancel",
    "parse_cancel",
    "task_ids",
]

#: ``srun: error: <node>: task[s] <list>: <what>``: ``Exited with exit code N`` or the signal's word.
TASK_END = re.compile(r"srun: error: (?P<node>[^\s:]+): tasks? (?P<tasks>[\d,\-]+): (?P<what>[^\n]+?)[ \t\r]*$",
                      re.MULTILINE)
#: a task's ``what`` when it exited on its own: ``Exited with exit code 1``
EXIT_CODE = re.compile(r"Exited with exit code (?P<code>\d+)")
#: ``srun: error: Node failure on <node>``
NODE_FAILURE = re.compile(r"srun: error: Node failure on (?P<node>\S+)")
#: slurmstepd's cancel line; 26.05 spells ``DUE to``, so those two words are read in any case
CANCELLED = re.compile(
    r"\*\*\* (?P<scope>JOB|STEP) (?P<id>\S+) ON (?P<node>\S+) CANCELLED AT (?P<at>\S+)"
    r"(?: (?i:DUE TO) (?P<reason>.+?))?(?: \*\*\*|$)",
    re.MULTILINE,
)
#: slurmstepd's report that the kernel's OOM killer ended some of the step's processes
OOM_KILL = re.compile(r"Detected \d+ oom[-_ ]kill events?", re.IGNORECASE)
#: srun's, sbatch's or salloc's own error (a task's end and a node's failure are the forms above)
LAUNCH_ERROR = re.compile(r"(?:srun|sbatch|salloc): (?:fatal: |error: (?!.*\btasks? [\d,-]+: |Node failure))"
                          r"(?=.*(?:Unable to|unable to|Invalid|invalid|No such file|not found|denied|configuration|"
                          r"fatal|cannot|Cannot|can't))")


def task_ids(text: str) -> tuple[int, ...]:
    """srun's task list: ``3`` -> (3,), ``2-7,9`` -> (2, 3, 4, 5, 6, 7, 9); () when it is not one."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return ()
        out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


@dataclass(frozen=True)
class SlurmCancel:
    """slurmstepd's ``*** JOB|STEP <id> ON <node> CANCELLED AT <time> [DUE TO <reason>] ***``."""

    scope: str  # "JOB" or "STEP"
    id: str
    node: str
    at: str  # as printed: 2026-11-30T09:29:23
    reason: str | None  # "TIME LIMIT", "NODE FAILURE", "PREEMPTION", "SIGNAL Terminated", ...


def parse_cancel(text: str) -> SlurmCancel | None:
    """The first cancel line in ``text``; None when there is none."""
    m = CANCELLED.search(text)
    if m is None:
        return None
    reason = (m["reason"] or "").strip().rstrip("*").strip() or None
    return SlurmCancel(m["scope"], m["id"], m["node"], m["at"], reason)
