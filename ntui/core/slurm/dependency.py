"""A pending job's ``Dependency=`` as ``scontrol show job`` prints it (no RPC of its own: it comes with the job's
details).

Slurm lists only the dependencies not yet fulfilled, each ``TYPE:JOBID[_TASK|_*][+MINUTES](STATE)`` or
``singleton(STATE)``, joined by ``,`` (all of them) or ``?`` (any one of them); STATE is ``unfulfilled`` or
``failed`` (SchedMD/slurm ``src/slurmctld/job_scheduler.c``, ``_depend_list2str``; the same in 22.05 to 26.05).
Captured: ``afterok:107(failed)`` (``tests/data/slurm/scontrol_show_job_dependency_never``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Dependency", "DependencyList", "parse_dependency"]

#: What each type waits for, completing "it waits for job N to ...".
CONDITIONS = {
    "after": "start (or be cancelled)",
    "afterany": "end, however it ends",
    "afterok": "end OK (COMPLETED, exit code 0)",
    "afternotok": "fail (end in any state but COMPLETED)",
    "aftercorr": "end OK, task for task",
    "afterburstbuffer": "end and its burst buffer stage-out to finish",
    "expand": "be expanded",
    "singleton": "end: another job of yours with the same name runs",
}


@dataclass(frozen=True)
class Dependency:
    """One dependency. ``job_id`` is what ``squeue -j`` takes (``123``, ``123_4``); ``array`` is True for
    ``123_*`` (every task of array 123)."""

    kind: str
    job_id: str = ""
    array: bool = False
    delay_min: int = 0
    state: str = "unfulfilled"

    @property
    def failed(self) -> bool:
        """Slurm knows it can never be fulfilled."""
        return self.state == "failed"

    @property
    def condition(self) -> str:
        return CONDITIONS.get(self.kind, f"satisfy {self.kind}")


@dataclass(frozen=True)
class DependencyList:
    items: tuple[Dependency, ...] = ()
    any_of: bool = False  # '?': one fulfilled is enough

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d.job_id for d in self.items if d.job_id))


_ITEM = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<job>\d+)(?P<task>_\d+|_\*)?(?:\+(?P<delay>\d+))?)?"
                   r"(?:\((?P<state>[a-z]+)\))?$")


def parse_dependency(text: str | None) -> DependencyList:
    """``afterok:12(failed),afterany:13_*(unfulfilled)`` -> two items; ``(null)`` / empty -> none. Items that do
    not parse are dropped (a newer Slurm's syntax: the raw text stays in the job's details)."""
    value = (text or "").strip()
    if not value or value in ("(null)", "None"):
        return DependencyList()
    any_of = "?" in value
    items = []
    for part in re.split(r"[,?]", value):
        m = _ITEM.match(part.strip())
        if m is None:
            continue
        task = m.group("task") or ""
        job = m.group("job") or ""
        items.append(Dependency(
            kind=m.group("kind"),
            job_id=job + (task if task and task != "_*" else ""),
            array=task == "_*",
            delay_min=int(m.group("delay") or 0),
            state=m.group("state") or "unfulfilled",
        ))
    return DependencyList(tuple(items), any_of)
