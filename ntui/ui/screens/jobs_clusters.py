"""The jobs view's clusters reached over ssh: the thin owner that starts their workers and hands each answer to the
model (:class:`~ntui.core.jobs.clusters.ClusterBoard` and its :class:`~ntui.core.jobs.clusters.ClusterQueues`, the
recent list's :class:`~ntui.core.jobs.recent.RecentParts`), then tells the view what to draw.

:class:`RemoteClusters` is a collaborator of :class:`~ntui.ui.screens.jobs.JobsScreen` (as
:class:`~ntui.ui.screens.jobs_workers.ModelWorkers` is for the local model): the screen routes the clusters' messages
here (:data:`MESSAGES`), asks here for a cluster's runner and whether the selected row is a cluster's, and keeps no
cluster state of its own. It reads the view through :class:`ClustersView`.

* each cluster's squeue, re-armed after each answer with its own back-off; the final states of its jobs that left
  its queue and the details of its selected job, asked there (:class:`~ntui.ui.screens.jobs_workers.ClusterWorkers`);
  in everyone's view before any own-jobs answer named the login's user, that user asked of the cluster's shell once
  (its own jobs that end there keep their ended rows);
* each cluster's own history for the recent list: at start, when one of its jobs leaves its queue, and on ``r``;
* every :data:`~ntui.ui.screens.jobs_workers.JOURNAL_TICK_S` each cluster's own active jobs' journals, read through
  its agent: while they are all followed its squeue goes at the idle pace, and a start or an end one tells asks its
  squeue at once (:meth:`~ntui.core.jobs.clusters.ClusterQueue.journal_done`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual import on
from textual.message import Message
from textual.worker import Worker

from ntui.core.config import Settings
from ntui.core.jobs.clusters import ClusterBoard, ClusterQueues, split_key
from ntui.core.jobs.finals import FinalStateResolver
from ntui.core.jobs.model import JobModel
from ntui.core.jobs.queue import FinishedJob
from ntui.core.jobs.recent import RecentParts
from ntui.core.jobs.selected import selected_on_cluster
from ntui.core.records.record import RecentJobs
from ntui.core.remote.files import ClusterFiles
from ntui.core.remote.link import LinkBoard
from ntui.core.slurm.runner import CommandRunner
from ntui.ui.messages import ClusterDetailsFetched, ClusterQueueFailed, ClusterQueueFetched
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.jobs_workers import (
    JOURNAL_TICK_S,
    ClusterHistoryLoaded,
    ClusterJournalsRead,
    ClusterOutcomesResolved,
    ClusterUserFound,
    ClusterWorkers,
)

if TYPE_CHECKING:
    from ntui.ui.screens.jobs_waiting import WaitingWatch
    from ntui.ui.widgets.job_tabs import JobTabs
    from ntui.ui.widgets.queue_box import QueueBox
    from ntui.ui.widgets.queue_table import QueueTable

__all__ = ["MESSAGES", "ClustersView", "RemoteClusters", "on_cluster_answers"]

#: The messages of the clusters' workers, each handed to :meth:`RemoteClusters.handle` by the screen.
MESSAGES: tuple[type[Message], ...] = (ClusterQueueFetched, ClusterQueueFailed, ClusterDetailsFetched,
                                       ClusterOutcomesResolved, ClusterHistoryLoaded, ClusterUserFound,
                                       ClusterJournalsRead)

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


def on_cluster_answers(method: _Handler) -> _Handler:
    """The screen's one handler of every message of :data:`MESSAGES` (Textual's ``on`` for each)."""
    for message in MESSAGES:
        method = on(message)(method)
    return method


class ClustersView(Protocol):
    """What the clusters' owner reads of the jobs view, and the three redraws it asks of it."""

    model: JobModel
    full_settings: Settings
    waiting: WaitingWatch

    @property
    def runner(self) -> CommandRunner: ...

    @property
    def queue_box(self) -> QueueBox: ...

    @property
    def table(self) -> QueueTable: ...

    @property
    def tabs(self) -> JobTabs: ...

    def _selection_changed(self) -> None: ...

    def _details_visible(self) -> bool: ...

    def _tick(self) -> None: ...

    def _show_recent(self, jobs: RecentJobs | None = None) -> None: ...


class RemoteClusters:
    """The clusters reached over ssh of the jobs view (see the module docstring)."""

    def __init__(self, screen: NtuiScreen, view: ClustersView, *, resolver: FinalStateResolver | None = None) -> None:
        self.screen = screen
        self.view = view
        app = screen.ntui_app
        model = view.model
        self.links: LinkBoard = app.links  # the app's link states, fed by the clusters' files too
        self.queues = ClusterQueues(app.shown_clusters(), view.full_settings, clock=model.clock,
                                    monotonic=model.monotonic, resolver=resolver, links=self.links.of)
        local = app.local_slurm
        self.board = ClusterBoard(self.queues, local=local,
                                  local_name=app.local_cluster_name() if self.queues and local else "")
        self.workers = ClusterWorkers(screen, self.queues, app.cluster_runner, lambda: model.all_users,
                                      files_of=app.cluster_files)
        self.recent = RecentParts()  # the recent list: this machine's load and each cluster's own history

    @property
    def files(self) -> Callable[[str], ClusterFiles] | None:
        """A cluster's files (its agent), for the tabs; None without clusters reached over ssh."""
        return self.screen.ntui_app.cluster_files if self.queues else None

    def runner_for(self, cluster: str | None) -> CommandRunner:
        """The runner of a job's cluster: the local one (None), or that cluster's over ssh."""
        return self.view.runner if cluster is None else self.screen.ntui_app.cluster_runner(cluster)

    def start(self) -> None:
        """The view is mounted: each cluster's own history, and again whenever one of its jobs leaves its queue."""
        for queue in self.queues:
            queue.finished.on_departure(partial(self._departed, queue.name))
            self.load_history(queue.name)
        if self.queues:
            self.screen.set_interval(JOURNAL_TICK_S, self.workers.journal_tick, name="cluster journals")

    def _departed(self, cluster: str, gone: tuple[FinishedJob, ...]) -> None:
        self.load_history(cluster)

    def refresh(self) -> None:
        """Every cluster's squeue now (one running goes on, another follows it)."""
        self.workers.start_all()

    def reload_histories(self) -> None:
        """``r``: every cluster's own history read again (a record written there since: a job submitted on it from
        another machine, one resolved there), as at start."""
        for name in self.queues.names():
            self.load_history(name)

    def toggle_all_users(self) -> None:
        """Own jobs <-> everyone's: nothing of the clusters' old answers is shown."""
        self.queues.toggle_all_users()
        self.view.queue_box.show_remote({})

    def submitted(self, job_id: str, via: str | None) -> bool:
        """A job just submitted: True when it went to a cluster reached over ssh (its row selected, that cluster's
        queue asked at once); False for one of this machine's, the model's to expect."""
        if via is None:
            return False
        if via in self.queues.names():
            self.view.table.move_cursor(key=self.board.submission_key(job_id, via))
            self.workers.start_poll(via)
        return True

    # ------------------------------------------------------------ the selected row

    def selected(self, key: str | None) -> bool:
        """Row ``key`` is a job of a cluster reached over ssh (or one that ended there): its details asked there,
        the job to the tabs; False for any other row."""
        remote = self.queues.shown(key)
        if remote is None:
            return False
        view = self.view
        queue = self.queues[remote.cluster]
        details, request = queue.details_step(remote.job_id, visible=view._details_visible())
        if request is not None:
            self.workers.details(remote.cluster, request)
        view.tabs.select_job(selected_on_cluster(queue, remote.job_id, key or "", details))
        view.waiting.selected(None)
        return True

    # ------------------------------------------------------------ the workers' answers

    def handle(self, msg: Message) -> None:
        """One of :data:`MESSAGES`, to the cluster it is for."""
        if isinstance(msg, ClusterQueueFetched):
            self._fetched(msg)
        elif isinstance(msg, ClusterQueueFailed):
            self._poll_failed(msg.cluster, msg.error)
        elif isinstance(msg, ClusterOutcomesResolved):
            self._outcomes(msg)
        elif isinstance(msg, ClusterDetailsFetched):
            self._details_fetched(msg)
        elif isinstance(msg, ClusterHistoryLoaded):
            self._history_loaded(msg)
        elif isinstance(msg, ClusterUserFound):
            self.queues[msg.cluster].user_answered(msg.user)
        elif isinstance(msg, ClusterJournalsRead):
            self._journals_read(msg)

    def _journals_read(self, msg: ClusterJournalsRead) -> None:
        queue = self.queues[msg.cluster]
        if msg.result is None:  # the link or the agent failed, or no journal is followed there: today's pace
            queue.journal_failed(unsupported=msg.unsupported)
        elif queue.journal_done(msg.result):  # a start or an end squeue has not listed yet: ask it now
            self.workers.start_poll(msg.cluster)

    def _rows_changed(self) -> None:
        self.view.queue_box.show_remote(self.queues.rows(), self.queues.tags())
        self.view._selection_changed()

    def _fetched(self, msg: ClusterQueueFetched) -> None:
        queue = self.queues[msg.cluster]
        changed, delay = queue.succeeded(msg.request, msg.got, background=not self.screen.is_current)
        if changed:
            self._rows_changed()
        if queue.user_request(msg.request.all_users):  # which of everyone's jobs are the login's, before it ends one
            self.workers.ask_user(msg.cluster)
        self.workers.arm(msg.cluster, delay)
        self.workers.start_lookups(msg.cluster)  # the final states of its jobs that left its queue
        self.view._tick()

    def _outcomes(self, msg: ClusterOutcomesResolved) -> None:
        if self.queues[msg.cluster].resolved(msg.outcomes):
            self._rows_changed()
        self.workers.start_lookups(msg.cluster)

    def _poll_failed(self, cluster: str, error: BaseException) -> None:
        delay = self.queues[cluster].failed(error, background=not self.screen.is_current)
        self.workers.arm(cluster, delay)
        self.view._tick()

    def _details_fetched(self, msg: ClusterDetailsFetched) -> None:
        queue = self.queues[msg.cluster]
        key = self.view.queue_box.pane_key()
        if queue.details.fetched(msg.result) and key is not None and split_key(key) == (msg.cluster, msg.result.key):
            self.view._selection_changed()

    def failed(self, worker: Worker[Any], message: str) -> bool:
        """A worker raised something unexpected (the notification is out): True when it was a cluster's squeue
        (backed off as a failed answer). A cluster's look-up forgets the call and answers False, as any other."""
        cluster = self.workers.failed(worker.group)
        if cluster is None:
            return False
        self._poll_failed(cluster, worker.error or RuntimeError(message))
        return True

    # ------------------------------------------------------------ recent jobs (each cluster's own history)

    def load_history(self, cluster: str) -> None:
        """Cluster ``cluster``'s recent jobs again, from its own history (a worker; the list shows them when read)."""
        model = self.view.model
        self.workers.load_history(cluster, days=self.view.full_settings.queue.recent_days,
                                  now=lambda: model.clock().timestamp())

    def _history_loaded(self, msg: ClusterHistoryLoaded) -> None:
        if msg.jobs is None:  # the link, or no agent there: said in the list's title; what it said before stays
            self.screen.log.warning(f"recent jobs: {msg.note}")
        self.view._show_recent(self.recent.cluster_loaded(msg.cluster, msg.jobs, msg.note))
        model = self.view.model
        self.workers.history_done(msg.cluster, days=self.view.full_settings.queue.recent_days,
                                  now=lambda: model.clock().timestamp())
