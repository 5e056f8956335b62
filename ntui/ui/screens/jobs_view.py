"""What the jobs view's collaborators read of it: :class:`JobsViewCore`, extended by each collaborator's own
``Protocol`` (:class:`~ntui.ui.screens.job_operations.JobsView`, :class:`~ntui.ui.screens.jobs_waiting.WaitingView`)
with what it alone needs (the workers read less: :class:`~ntui.ui.screens.jobs_workers.WorkersView`).
:class:`~ntui.ui.screens.jobs.JobsScreen` satisfies them all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ntui.core.config import Settings
    from ntui.core.jobs.clusters import ClusterQueues
    from ntui.core.jobs.model import JobModel
    from ntui.core.slurm.runner import CommandRunner
    from ntui.ui.widgets.queue_table import QueueTable

__all__ = ["JobsViewCore"]


class JobsViewCore(Protocol):
    """The model, the clusters reached over ssh, the settings, the runner and the queue table."""

    model: JobModel
    full_settings: Settings
    clusters: ClusterQueues  # the clusters reached over ssh (their rows are keyed CLUSTER/JOBID)

    @property
    def runner(self) -> CommandRunner: ...

    @property
    def table(self) -> QueueTable: ...
