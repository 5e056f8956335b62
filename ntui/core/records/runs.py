"""One long run across its allocations (rule T10): what the history, ``ntui history``, ``ntui show`` and the app
say of a job whose preset has a ``run:`` section.

The history keeps the run's first job (the one ntui submitted; its id is the run id): a requeue keeps that id, a
chain's later links are submitted by the job itself and are not in the history. The run file next to the logs
(:mod:`ntui.core.jobfiles.runfile`, ``<log_dir>/<stem>-<run id>.run``) lists every allocation with its job id,
its restart index, the checkpoint signal and what ended it, so everything here is read from it: no Slurm call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ntui.core.jobfiles.runfile import Allocation, RunState, read_run, run_path
from ntui.core.records.history import History, HistoryEntry
from ntui.core.slurm.durations import format_elapsed

__all__ = ["RUN_MARK", "RUN_SCAN", "RunView", "find_run", "find_run_in", "is_run_script", "run_links", "run_of"]

#: A line every script with a ``run:`` section has (and no other).
RUN_MARK = "NTUI_RUN_FILE="
#: How many of the newest history entries the CLI searches for the run of a job that is not in the history.
RUN_SCAN = 500

_STOPS = {
    "done": "done",
    "max-restarts": "stopped: max-restarts reached",
    "ignored": "stopped: the program ignored the checkpoint signal (ended at the time limit)",
    "failed": "stopped: a failure",
    "saved": "stopped: saved (continue: none)",
    "no-scontrol": "stopped: no scontrol in the batch shell",
    "no-sbatch": "stopped: no sbatch in the batch shell",
    "requeue-failed": "stopped: scontrol requeue failed",
    "chain-failed": "stopped: the successor could not be submitted",
}


def is_run_script(script: str | None) -> bool:
    return bool(script) and RUN_MARK in (script or "")


@dataclass(frozen=True)
class RunView:
    """A run as the views say it."""

    entry: HistoryEntry
    state: RunState

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def count(self) -> int:
        return len(self.state.allocations)

    @property
    def most(self) -> int | None:
        """At most this many allocations after time limits (max-restarts + 1); None when unknown."""
        return None if self.state.max_restarts is None else self.state.max_restarts + 1

    @property
    def allocation_text(self) -> str:
        """``allocation 3 of ≤ 6``."""
        most = f" of ≤ {self.most}" if self.most is not None else ""
        return f"allocation {max(1, self.count)}{most}"

    @property
    def status(self) -> str:
        stop = self.state.stopped
        if stop is None:
            return "going on"
        return _STOPS.get(stop, f"stopped: {stop}")

    @property
    def training_s(self) -> int:
        """Seconds the allocations ran (each from its start to its continuation or stop; a running one: none)."""
        return sum(int(round(a.end - a.start)) for a in self.state.allocations if a.end is not None)

    def summary(self) -> str:
        """One line: ``run 832: 3 allocations (jobs 832), done, 4 m 10 s of training``."""
        jobs = ", ".join(self.state.job_ids)
        n = self.count
        what = f"{n} allocation{'s' if n != 1 else ''}" if self.state.stopped else self.allocation_text
        return (f"run {self.run_id}: {what} (job{'s' if len(self.state.job_ids) != 1 else ''} {jobs}), "
                f"{self.status}, {format_elapsed(self.training_s)} of training")

    def allocation_lines(self) -> list[str]:
        """One line per allocation: which job, how long, what ended it."""
        return [_allocation_line(i, a) for i, a in enumerate(self.state.allocations, 1)]

    def allocations_of(self, job_id: str) -> tuple[int, ...]:
        """The allocations (1, 2, ...) that ran as job ``job_id``: one per chain link, every one for a requeue
        (a requeued job keeps its id, and its sample and log files are appended to)."""
        return tuple(i for i, a in enumerate(self.state.allocations, 1) if a.job_id == job_id)

    def report_lines(self, job_id: str) -> list[str]:
        """What ``ntui report`` adds for a run: the run, which allocations this job's report covers, how to get
        the others'."""
        covered = self.allocations_of(job_id)
        which = ", ".join(map(str, covered)) or "none yet"
        lines = [self.summary(), f"this report: job {job_id}, allocation{'s' if len(covered) != 1 else ''} {which}"
                 f" of {self.count}"]
        others = [j for j in self.state.job_ids if j != job_id]
        if others:
            lines.append("the other allocations: " + ", ".join(f"ntui report {j}" for j in others))
        return lines + [f"  {line}" for line in self.allocation_lines()]

    def as_json(self) -> dict[str, object]:
        """The run for ``--json`` outputs."""
        return {
            "run_id": self.run_id, "summary": self.summary(), "status": self.status, "stopped": self.state.stopped,
            "training_s": self.training_s, "jobs": list(self.state.job_ids),
            "allocations": [{"job_id": a.job_id, "restart": a.restart, "start": a.start, "end": a.end,
                             "signal_elapsed_s": a.signal_elapsed, "ended_by": a.ended_by or None}
                            for a in self.state.allocations],
        }


def _allocation_line(i: int, a: Allocation) -> str:
    signal = f", signal after {format_elapsed(a.signal_elapsed)}" if a.signal_elapsed is not None else ""
    if a.end is None:
        return f"{i}. job {a.job_id} (restart {a.restart}): running since {_clock(a.start)}{signal}"
    ran = format_elapsed(int(round(a.end - a.start)))
    return f"{i}. job {a.job_id} (restart {a.restart}): {ran}{signal}; {a.ended_by or 'ended'}"


def _clock(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def run_of(entry: HistoryEntry) -> RunView | None:
    """The run of a history entry whose script has a ``run:`` section (None: not a run, or no run file yet)."""
    if not entry.job_id or not is_run_script(entry.script):
        return None
    state = read_run(run_path(entry.log_dir, entry.log_stem, entry.job_id), entry.job_id)
    if state is None:
        return None
    return RunView(entry, state)


def find_run(entries: Iterable[HistoryEntry], job_id: str) -> RunView | None:
    """The run that ``job_id`` belongs to: its first job, or a later link of a chain (read from each run's file)."""
    for entry in entries:
        if not is_run_script(entry.script):
            continue
        view = run_of(entry)
        if view is not None and (entry.job_id == job_id or job_id in view.state.job_ids):
            return view
    return None


def find_run_in(history: History, job_id: str) -> RunView | None:
    """:func:`find_run` over the history's newest :data:`RUN_SCAN` entries."""
    return find_run(history.entries(limit=RUN_SCAN), job_id)


def run_links(entries: Iterable[HistoryEntry]) -> dict[str, HistoryEntry]:
    """The later links of the runs among ``entries`` that go on: job id -> the run's entry, whose log dir and
    stem name the link's files too (a chain's links are submitted by the job before them, not by ntui)."""
    out: dict[str, HistoryEntry] = {}
    for entry in entries:
        view = run_of(entry)
        if view is None or view.state.stopped is not None:
            continue
        for job_id in view.state.job_ids:
            if job_id != entry.job_id:
                out.setdefault(job_id, entry)
        last = view.state.allocations[-1] if view.state.allocations else None
        if last is not None and last.next_job:
            out.setdefault(last.next_job, entry)
    return out
