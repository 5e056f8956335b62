"""A long run's file: what each allocation's batch shell wrote about the run (rules T10, J2).

**File.** ``<log_dir>/<stem>-<run id>.run`` (:func:`run_path`; the run id is the first job's id), JSON lines appended
by the batch shell of every allocation of the run (a requeue keeps the job id, a chain's links have their own; all
of them append here). Each line is one ``printf`` far below ``PIPE_BUF``: whole lines or a cut last line.
The done marker ``<log_dir>/<stem>-<run id>.done`` exists once the run's work is done (a chain's successor that
starts later ends at once).

**Events** (``{"v":1,"ev":KIND,"t":EPOCH,"job":"ID","run":"RUN",...}``):

* ``alloc`` ``restart`` (the allocation's index in the run: 0, 1, ...), ``requeues`` (``SLURM_RESTART_COUNT``),
  ``how`` (requeue | chain | none), ``max`` (max-restarts);
* ``signal`` ``sig``, ``elapsed`` (seconds since the batch shell started), ``cause`` (``timelimit``, or
  ``preempt`` when it came long before the limit's warning);
* ``continue`` ``how``, ``cause``, ``count`` (the time-limit continuations so far, this one included, for a
  time limit), ``next`` (a chain's successor job id);
* ``stop`` ``why``: ``done`` (the step ended 0 without the signal, or the marker exists), ``max-restarts``,
  ``ignored`` (the step still ran when the grace was over), ``failed`` (``rc``), ``saved`` (continue: none),
  ``no-scontrol`` / ``no-sbatch`` / ``requeue-failed`` / ``chain-failed``.

The same events reach the job's own journal (kinds ``run-alloc``, ``run-signal``, ``run-continue``, ``run-stop``)
where the script has one. :func:`read_run` folds the file into a :class:`RunState`: its allocations in order, each
with its job id, restart index, when it started, whether the signal came and what ended it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

__all__ = [
    "DONE_EXT",
    "RUN_EXT",
    "VERSION",
    "Allocation",
    "RunState",
    "done_path",
    "fold_run",
    "parse_run_lines",
    "read_run",
    "run_path",
]

RUN_EXT = ".run"
DONE_EXT = ".done"
VERSION = 1
KINDS = frozenset({"alloc", "signal", "continue", "stop"})
MAX_BYTES = 1 << 20


def run_path(log_dir: str, stem: str, run_id: str) -> str:
    return f"{log_dir}/{stem}-{run_id}{RUN_EXT}"


def done_path(log_dir: str, stem: str, run_id: str) -> str:
    return f"{log_dir}/{stem}-{run_id}{DONE_EXT}"


@dataclass(frozen=True)
class Allocation:
    """One allocation of a run."""

    job_id: str
    restart: int
    start: float
    signal_at: float | None = None  # when the checkpoint signal came
    signal_elapsed: int | None = None
    cause: str | None = None  # timelimit | preempt
    continued: str | None = None  # requeue | chain (this allocation started the next one)
    next_job: str | None = None
    stop: str | None = None  # done | max-restarts | ignored | failed | saved | ...
    rc: int | None = None
    end: float | None = None  # the time of its continue/stop event

    @property
    def ended_by(self) -> str:
        """What ended it, in words (``""`` while nothing is known)."""
        if self.stop == "done":
            return "done"
        if self.stop == "max-restarts":
            return "time limit, max-restarts reached"
        if self.stop == "ignored":
            return "time limit (the program ignored the signal)"
        if self.stop == "failed":
            return f"failure (status {self.rc})" if self.rc is not None else "failure"
        if self.continued:
            what = "preemption" if self.cause == "preempt" else "time limit"
            return f"{what}, checkpointed, {'requeued' if self.continued == 'requeue' else 'chained'}"
        if self.stop:
            return self.stop
        return ""


@dataclass(frozen=True)
class RunState:
    run_id: str
    allocations: tuple[Allocation, ...] = ()
    how: str = ""
    max_restarts: int | None = None
    bad_lines: int = 0

    @property
    def done(self) -> bool:
        return any(a.stop == "done" for a in self.allocations)

    @property
    def stopped(self) -> str | None:
        """Why the run stopped (the last allocation's stop), None while it goes on."""
        last = self.allocations[-1] if self.allocations else None
        return last.stop if last is not None else None

    @property
    def job_ids(self) -> tuple[str, ...]:
        seen: list[str] = []
        for a in self.allocations:
            if a.job_id not in seen:
                seen.append(a.job_id)
        return tuple(seen)


def parse_run_lines(data: bytes) -> tuple[list[dict[str, object]], int]:
    """The events of the complete lines of ``data`` (the bytes after the last newline are left) and the count of
    lines that are not events."""
    import json  # loaded on first use: rendering a script does not need it (CLI start, issue 19)
    cut = data.rfind(b"\n")
    events: list[dict[str, object]] = []
    bad = 0
    for raw in data[: cut + 1].split(b"\n") if cut >= 0 else []:
        if not raw.strip():
            continue
        try:
            ev = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            bad += 1
            continue
        if (not isinstance(ev, dict) or ev.get("v") != VERSION or ev.get("ev") not in KINDS
                or not isinstance(ev.get("t"), (int, float)) or not isinstance(ev.get("job"), str)):
            bad += 1
            continue
        events.append(ev)
    return events, bad


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def fold_run(run_id: str, events: list[dict[str, object]], bad: int = 0) -> RunState:
    allocs: list[Allocation] = []
    how = ""
    max_restarts: int | None = None
    for ev in events:
        kind, t, job = ev["ev"], float(ev["t"]), str(ev["job"])  # type: ignore[arg-type]
        if kind == "alloc":
            allocs.append(Allocation(job, _int(ev.get("restart")) or 0, t))
            how = _str(ev.get("how")) or how
            max_restarts = _int(ev.get("max")) if _int(ev.get("max")) is not None else max_restarts
            continue
        if not allocs:
            continue
        cur = allocs[-1]
        if kind == "signal" and cur.signal_at is None:
            allocs[-1] = replace(cur, signal_at=t, signal_elapsed=_int(ev.get("elapsed")), cause=_str(ev.get("cause")))
        elif kind == "continue":
            allocs[-1] = replace(cur, continued=_str(ev.get("how")), next_job=_str(ev.get("next")), end=t,
                                 cause=_str(ev.get("cause")) or cur.cause)
        elif kind == "stop" and cur.stop in (None, "ignored"):
            why = _str(ev.get("why"))
            if cur.stop == "ignored" and why == "failed":
                continue  # the step then met the time limit: still "ignored"
            allocs[-1] = replace(cur, stop=why, rc=_int(ev.get("rc")), end=t)
    return RunState(run_id, tuple(allocs), how, max_restarts, bad)


def read_run(path: str | os.PathLike[str], run_id: str) -> RunState | None:
    """The run file's state (None when there is none)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - MAX_BYTES))
            data = fh.read()
    except OSError:
        return None
    if size > MAX_BYTES:
        data = data[data.find(b"\n") + 1 :]
    events, bad = parse_run_lines(data)
    return fold_run(run_id, events, bad)


