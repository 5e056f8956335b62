"""The selected job as one value: what every tab of the jobs view knows of it, without Textual.

The jobs view selects a job in one of two places: a row of the live queue (a job, an array's row standing for one
of its tasks, an ended job kept under the queue) or a recent job's record. Both become one
:class:`SelectedJob` (:func:`selected_in_queue`, :func:`selected_record`), which the view hands to every tab
(``ntui.ui.widgets.job_tabs``); what a tab needs is derived from it here, never fetched again by the tab:
:func:`log_target` (the log pane's files, world size and launcher) is the one place that says how the logs of a
selected job are read, for a queue row and a record alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.arrays import Folded
from ntui.core.jobs.clusters import ClusterQueue
from ntui.core.jobs.details import DetailsView
from ntui.core.jobs.model import JobModel, LogTarget
from ntui.core.jobs.queue import ACTIVE
from ntui.core.progress.board import ProgressView
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import RecentJob
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.squeue import QueueJob

__all__ = ["NOTHING", "SelectedJob", "log_target", "selected_in_queue", "selected_on_cluster", "selected_record"]

Source = Literal["queue", "record", "none"]


@dataclass(frozen=True)
class SelectedJob:
    """Everything known of the selected job; each part may be missing (not known yet, or not ntui's job)."""

    job_id: str | None  # the job the tabs show (an array's row: one of its tasks); None: nothing selected
    source: Source = "none"  # the live queue's row, a recent job's record, or nothing
    row_key: str | None = None  # the queue's row (an array's row for its task) or the recent list's key
    array_id: str | None = None  # the job array the row stands for or belongs to
    array_live: bool = False  # some task of that array is in the queue
    job: QueueJob | None = None  # the last squeue line seen (or the ended row's)
    entry: HistoryEntry | None = None  # what ntui submitted
    entry_known: bool = False  # the history answered (an entry of None then means: not ntui's job)
    details_known: bool = False  # scontrol answered (its StdOut is ``batch_log``)
    view: DetailsView | None = None  # the details panel's view (None: keep what it shows)
    active: bool = False  # pending or running in the queue
    running: bool = False  # running (its GPUs can be watched)
    batch_log: str | None = None  # scontrol's StdOut: the batch log of a job ntui did not submit
    record: RecentJob | None = None  # the recent job's record
    progress: ProgressView | None = None  # how far a running own job is (the view's progress tick), when known
    cluster: str | None = None  # the cluster reached over ssh the job is on (None: the local one); with job_id its key

    @property
    def launcher(self) -> str | None:
        """srun, torchrun or accelerate (None: not ntui's job): what srun's ``task N`` is in its logs."""
        return self.entry.launcher if self.entry is not None else None

    @property
    def sweep_id(self) -> str | None:
        """The job id a sweep is known by: the array's, else the job's own (without a task suffix)."""
        if self.array_id is not None:
            return self.array_id
        return self.job_id.split("_", 1)[0] if self.job_id else None

    @property
    def sweep_active(self) -> bool:
        return self.array_live if self.array_id is not None else self.active


#: Nothing selected (an empty queue, no recent job).
NOTHING = SelectedJob(None)


def selected_in_queue(model: JobModel, folded: Folded, cursor_key: str | None,
                      view: DetailsView | None = None) -> SelectedJob:
    """The queue's selected row as seen by the model now (``view``: the details step's, when it has one)."""
    if cursor_key is None:
        return NOTHING
    key = folded.representative(cursor_key)
    array = folded.array_of(cursor_key)
    live = model.live.get(key)
    ended = model.ended.get(key)
    cached = model.cache.get(key)
    category = live.category if live is not None else None
    return SelectedJob(
        job_id=key, source="queue", row_key=cursor_key, array_id=array,
        array_live=array is not None and any(t in model.live for t in folded.arrays[array]),
        job=live or (ended.job if ended else None), entry=model.entries.get(key), entry_known=key in model.entries,
        details_known=cached is not None, view=view,
        active=category in ACTIVE,
        running=category in (StateCategory.RUNNING, StateCategory.COMPLETING),
        batch_log=cached.details.std_out if cached is not None and cached.details is not None else None,
        progress=model.progress.views.get(key),
    )


def selected_on_cluster(queue: ClusterQueue, job_id: str, row_key: str,
                        view: DetailsView | None = None) -> SelectedJob:
    """A row of a cluster reached over ssh: the job there (its id on that cluster), its last squeue line and
    details; no history entry (the records of that cluster stay on it). A job that left that cluster's queue is
    its ended row's (its last squeue line)."""
    ended = queue.finished.ended.get(job_id)
    job = queue.live.get(job_id) or (ended.job if ended is not None else None)
    cached = queue.details.cache.get(job_id)
    category = job.category if job is not None and job_id in queue.live else None  # an ended job is not active
    return SelectedJob(
        job_id=job_id, source="queue", row_key=row_key, job=job, entry=None, entry_known=True,
        details_known=cached is not None, view=view, active=category in ACTIVE,
        running=category in (StateCategory.RUNNING, StateCategory.COMPLETING),
        batch_log=cached.details.std_out if cached is not None and cached.details is not None else None,
        cluster=queue.name,
    )


def selected_record(job: RecentJob, view: DetailsView | None = None, key: str | None = None,
                    cluster: str | None = None) -> SelectedJob:
    """A recent job's record: no Slurm call, nothing live; its logs as ntui's history says (``cluster``: a job of
    that cluster reached over ssh, whose logs are read there)."""
    entry = job.entry
    batch = str(LogPaths(entry.log_dir, entry.log_stem).batch(job.job_id)) if entry and entry.log_stem else None
    return SelectedJob(job_id=job.job_id, source="record", row_key=key or job.key, job=None, entry=entry,
                       entry_known=True, details_known=True, view=view, batch_log=batch, record=job,
                       cluster=cluster)


def log_target(selected: SelectedJob) -> LogTarget | None:
    """What the log pane shows, or None while that is not known yet: ntui's own jobs (the history names their log
    files) as soon as the history answered, whatever the controller does; other jobs once the details told their
    batch log (``scontrol``'s StdOut). The launcher comes with it: under torchrun or accelerate srun's ``task N``
    is node N's launcher, not rank N."""
    if selected.job_id is None:
        return LogTarget(None, None, None, False, None)
    if not selected.entry_known:
        return None
    entry = selected.entry
    paths = LogPaths(entry.log_dir, entry.log_stem) if entry is not None and entry.log_stem else None
    if paths is None and not selected.details_known:
        return None
    world = entry.world_size if entry is not None and entry.world_size > 0 else None
    return LogTarget(selected.job_id, paths, world, selected.active, selected.batch_log, selected.launcher)
