"""The journals of ntui's own jobs as the jobs view follows them: held descriptors, one ``pread`` per tick.

Each own job in the queue (and each one submitted since the view opened, from this process or another) whose
history entry names its log directory has its journal (:mod:`ntui.core.jobfiles.journal`) followed by a
:class:`~ntui.core.jobfiles.journal.JournalReader`: the file is opened once (a pending job's is tried again each
tick until it appears), then every tick reads only what was appended, with no ``open`` or ``stat``, under the same
descriptor budget as the log watcher (:class:`~ntui.core.logs.tail.FdBudget`). The view learns a job's start and
end from it within a tick, and squeue can go slower while every own active job is followed
(:class:`~ntui.core.jobs.queue.PollPolicy`). Thread-side: :meth:`JournalBoard.poll` runs in the view's journal
worker; ticks never overlap, so the board needs no lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ntui.core.jobfiles.journal import JournalReader, JournalState, journal_path
from ntui.core.logs.tail import FdBudget
from ntui.core.records.history import HistoryEntry

__all__ = ["MAX_FOLLOWED", "JournalBoard", "Followed"]

#: At most this many journals are followed (the newest jobs first); beyond that squeue alone tells.
MAX_FOLLOWED = 64


@dataclass(frozen=True)
class Followed:
    """One followed journal after a tick."""

    job_id: str
    state: JournalState
    exists: bool  # the file was found (False: not there yet, e.g. a pending job, or no journal at all)
    changed: bool  # new events this tick


class JournalBoard:
    def __init__(self, *, budget: FdBudget | None = None, retry_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget or FdBudget()
        self.retry_s = retry_s
        self.clock = clock
        self.readers: dict[str, JournalReader] = {}
        self._held: set[str] = set()

    def poll(self, wanted: Mapping[str, HistoryEntry]) -> dict[str, Followed]:
        """Follow exactly the journals of ``wanted`` (job id -> its entry), read what was appended to each."""
        for job_id in [j for j in self.readers if j not in wanted]:
            self._drop(job_id)
        out: dict[str, Followed] = {}
        for job_id, entry in list(wanted.items())[:MAX_FOLLOWED]:
            reader = self.readers.get(job_id)
            if reader is None:
                if not entry.log_dir or not entry.log_stem:
                    continue
                reader = JournalReader(journal_path(entry.log_dir, entry.log_stem, job_id), job_id,
                                       retry_s=self.retry_s, clock=self.clock)
                self.readers[job_id] = reader
            was_open = reader.open
            changed = reader.poll()
            if reader.open and not was_open:
                if self.budget.acquire():
                    self._held.add(job_id)
                else:  # over the budget: read it once more next tick through a fresh descriptor
                    reader.close()
            elif reader.open and job_id not in self._held:
                reader.close()
            out[job_id] = Followed(job_id, reader.state, reader.open or reader.offset > 0, changed)
        return out

    def _drop(self, job_id: str) -> None:
        reader = self.readers.pop(job_id, None)
        if reader is not None:
            reader.close()
        if job_id in self._held:
            self._held.discard(job_id)
            self.budget.release()

    def close(self) -> None:
        for job_id in list(self.readers):
            self._drop(job_id)
