"""The jobs view's book of its own running jobs' progress (:mod:`ntui.core.progress`): which logs to follow, what
they said, and the few words each queue row shows.

Every :data:`PROGRESS_TICK_S` the view's progress worker asks :meth:`ProgressBook.request` for the rank-0 logs of the
user's running jobs whose history entry is known (ntui's own jobs: their log names are ntui's), reads them through a
:class:`~ntui.core.progress.board.ProgressBoard` (thread-side, files only, no Slurm call) and hands the views back to
:meth:`ProgressBook.done`. The row's words (:meth:`ProgressBook.row_texts`) hold the ETA against the time the queue
says is left: ``42% · ends in 1 h 10 min``, or ``42% · cut at ~92%``; a job that will be cut is said once more, as a
notice (:meth:`ProgressBook.newly_cut`); a job gone quiet (:mod:`ntui.core.progress.quiet`) says so instead of an
ETA (``42% · quiet 12 min``), and once as a notice (:meth:`ProgressBook.newly_quiet`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ntui.core.gpu.quiet import read_evidence
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobfiles.samplefiles import find_sample_files
from ntui.core.jobs.inflight import InFlight
from ntui.core.progress.board import ProgressBoard, ProgressView
from ntui.core.progress.lines import Pattern
from ntui.core.progress.preset import pattern_of_script
from ntui.core.progress.quiet import QUIET_FLOOR_S, Quiet, quiet
from ntui.core.progress.series import Estimate, estimate
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.durations import format_span
from ntui.core.slurm.squeue import QueueJob

__all__ = ["CUT_AFTER_POINTS", "PROGRESS_TICK_S", "ProgressBook", "ProgressRequest", "time_left_s"]

#: How often own running jobs' logs are read for their progress (seconds).
PROGRESS_TICK_S = 5.0
#: The points a series has before a job is said to be cut (the first steps are slow: compiling, warming up).
CUT_AFTER_POINTS = 10


@dataclass(frozen=True)
class ProgressRequest:
    """One progress tick: job id -> its rank-0 log."""

    wanted: dict[str, str]
    patterns: dict[str, Pattern] = field(default_factory=dict)  # a job's preset's progress: pattern
    logs: dict[str, tuple[str, str]] = field(default_factory=dict)  # job -> (log dir, stem): its GPU sample files
    quiet_after_s: float = QUIET_FLOOR_S


def time_left_s(job: QueueJob) -> float | None:
    """The seconds left in a running job's allocation by the queue's line (None: no limit, or unknown)."""
    limit, used = job.time_limit_s, job.elapsed_s
    if not limit or used is None:
        return None
    return float(max(0, limit - used))


class ProgressBook:
    """The progress of own running jobs (see the module docstring)."""

    def __init__(self, *, quiet_after_s: float = QUIET_FLOOR_S) -> None:
        self.quiet_after_s = quiet_after_s  # the settings' progress.quiet-after: never quiet sooner
        self.inflight: InFlight[str] = InFlight(exclusive=True)  # the one tick
        self.views: dict[str, ProgressView] = {}
        self._warned: set[str] = set()  # the jobs already said to be cut
        self._quiet_said: set[str] = set()  # the jobs already said to be quiet

    def request(self, running: Mapping[str, QueueJob], entries: Mapping[str, HistoryEntry | None]
                ) -> ProgressRequest | None:
        """A tick to start now (the running jobs with an entry that names their logs), or None: one runs, or no job
        to follow."""
        known = {job_id: entry for job_id in running if (entry := entries.get(job_id)) is not None
                 and entry.log_dir and entry.log_stem}
        wanted = {job_id: LogPaths(entry.log_dir, entry.log_stem).rank(job_id, 0) for job_id, entry in known.items()}
        patterns = {job_id: pattern for job_id, entry in known.items()
                    if (pattern := pattern_of_script(entry.script)) is not None}
        for gone in [j for j in self.views if j not in running]:
            del self.views[gone]
        if not wanted or not self.inflight.start("tick"):
            return None
        logs = {job_id: (entry.log_dir, entry.log_stem) for job_id, entry in known.items()}
        return ProgressRequest(wanted, patterns, logs, self.quiet_after_s)

    @staticmethod
    def fetch(board: ProgressBoard, request: ProgressRequest) -> dict[str, ProgressView]:
        """*Thread-side*: what each followed log appended; a job gone quiet with the word of its GPUs, where the
        in-job sampler wrote samples (:mod:`ntui.core.gpu.quiet`)."""
        views = board.poll(request.wanted, request.patterns)
        now = time.time()
        for job_id, view in list(views.items()):
            silent = quiet(view.series(), view.last_write, now, floor_s=request.quiet_after_s)
            if silent is None or job_id not in request.logs:
                continue
            files = find_sample_files(*request.logs[job_id], job_id)
            if files:
                views[job_id] = replace(view, evidence=read_evidence(files, silent.last))
        return views

    def failed(self) -> None:
        self.inflight.clear()

    def done(self, views: Mapping[str, ProgressView]) -> bool:
        """A tick's views; True when a job's progress changed."""
        self.inflight.clear()
        changed = False
        for job_id, view in views.items():
            old = self.views.get(job_id)
            if old is None or (old.step, old.total) != (view.step, view.total):
                changed = True
            self.views[job_id] = view
        return changed

    def estimate(self, job_id: str, job: QueueJob | None, now: float) -> Estimate | None:
        view = self.views.get(job_id)
        if view is None:
            return None
        return estimate(view.series(), now=now, time_left_s=time_left_s(job) if job is not None else None)

    def newly_cut(self, live: Mapping[str, QueueJob], now: float) -> list[tuple[str, str]]:
        """The followed jobs whose rate cannot meet their time limit, each said once (job id, the estimate's words);
        only once the series has :data:`CUT_AFTER_POINTS` points, so that the slow first steps raise no alarm."""
        out: list[tuple[str, str]] = []
        for job_id, view in self.views.items():
            if job_id in self._warned or len(view.samples) < CUT_AFTER_POINTS:
                continue
            guess = self.estimate(job_id, live.get(job_id), now)
            if guess is not None and guess.cut_at is not None:
                self._warned.add(job_id)
                out.append((job_id, guess.words))
        return out

    def quiet(self, job_id: str, now: float) -> Quiet | None:
        """Whether a followed job has gone quiet (:mod:`ntui.core.progress.quiet`)."""
        view = self.views.get(job_id)
        return quiet(view.series(), view.last_write, now, floor_s=self.quiet_after_s) if view is not None else None

    def newly_quiet(self, now: float) -> list[tuple[str, str]]:
        """The followed jobs gone quiet, each said once (job id, the words)."""
        out: list[tuple[str, str]] = []
        for job_id in self.views:
            if job_id not in self._quiet_said and (q := self.quiet(job_id, now)) is not None:
                self._quiet_said.add(job_id)
                evidence = self.views[job_id].evidence
                out.append((job_id, q.words + (f"; {evidence}" if evidence else "")))
        return out

    def row_texts(self, live: Mapping[str, QueueJob], now: float) -> dict[str, str]:
        """The few words of each followed job's row."""
        out: dict[str, str] = {}
        for job_id, view in self.views.items():
            if view.step is None:
                continue
            guess = self.estimate(job_id, live.get(job_id), now)
            silent = self.quiet(job_id, now)
            if silent is not None:  # no ETA for a job that does not move
                where = f"{_percent(view)}%" if view.total else f"step {view.step:,}"
                out[job_id] = f"{where} · quiet {format_span(silent.for_s)}"
            elif view.total:
                done = f"{_percent(view)}%"
                if guess is not None and guess.cut_at is not None:
                    out[job_id] = f"{done} · cut at ~{100 * guess.cut_at // view.total}%"
                elif guess is not None and guess.eta_s is not None:
                    out[job_id] = f"{done} · ends in {format_span(guess.eta_s)}"
                else:
                    out[job_id] = done
            else:
                out[job_id] = f"step {view.step:,}"
        return out


def _percent(view: ProgressView) -> int:
    """How much of its total a run with one (``view.total``) has done, in whole percent: 100 only once the run has
    reached its end in its own unit (an epoch-counted run is at epoch 20 of 20 all through its last epoch: 99 %
    until that epoch's last batch or the program's word that it is over)."""
    if view.step is None or not view.total:
        return 0
    done = 100 * min(view.step, view.total) // view.total
    state = view.state
    if done == 100 and state is not None and not state.ended and not state.reached(view.step, view.total):
        return 99
    return done
