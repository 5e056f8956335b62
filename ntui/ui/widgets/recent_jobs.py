"""The recent-jobs list under the live queue: draws :mod:`ntui.core.jobs.recent` rows (the core decides the rows).

Hidden while it has nothing to show (no history, no recent job). Highlighting a row posts
:class:`RecentJobsTable.Selected` with the job's record; the jobs view shows its details and logs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from ntui.core.jobs.recent import RECENT_COLUMNS, recent_cells, recent_title, shown_jobs
from ntui.core.records.record import RECENT_ORDERS, RecentJob, RecentJobs, RecentOrder
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_details import state_style

__all__ = ["ORDER_KEY", "RecentJobsTable", "RecentLoaded"]

#: The jobs view's key that cycles the list's order (the box's subtitle names it).
ORDER_KEY = "o"


class RecentJobsTable(DataTable[str | Text]):
    """One row per recent job, in :attr:`order` (newest first until the user picks another; the subtitle says
    which)."""

    DEFAULT_CSS = """
    RecentJobsTable {
        display: none;
        height: auto;
        max-height: 50%;
        min-height: 5;
        overflow-x: hidden;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        &.-shown { display: block; }
        &:focus { border: round $primary; border-title-color: $text; }
        /* while a tab of the selected job has the focus: its header and the selected row, no border */
        &.-compact { border: none; min-height: 0; }
    }
    """

    class Selected(Message):
        """A recent job was highlighted."""

        def __init__(self, job: RecentJob) -> None:
            super().__init__()
            self.job = job

    def __init__(self, *, id: str | None = None, classes: str | None = None,  # noqa: A002
                 local_cluster: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        #: with more than one cluster shown: a Cluster column, the record's cluster (this name where it has none)
        self.local_cluster = local_cluster
        self.jobs: dict[str, RecentJob] = {}
        self.loaded: RecentJobs | None = None
        #: the rows' order (the jobs view's ORDER_KEY cycles it; the loads come newest first)
        self.order: RecentOrder = RECENT_ORDERS[0]

    def on_mount(self) -> None:
        if self.local_cluster is not None:
            self.add_column("Cluster", key="cluster")
        for title in RECENT_COLUMNS:
            self.add_column(title, key=title.lower())

    def show_jobs(self, loaded: RecentJobs, *, live: set[str], now: float, days: float,
                  remote: Container[str] = (), notes: Sequence[str] = ()) -> None:
        """Replace the rows (keeps the cursor on the same job where it is still listed). ``remote``: the clusters
        reached over ssh (their jobs' live keys are ``CLUSTER/JOBID``); ``notes``: a cluster whose history could not
        be read, said in the title."""
        self.loaded = loaded
        jobs = shown_jobs(loaded.jobs, live, order=self.order, remote=remote)
        current = self.cursor_job
        # a row's key is its job id, unless the list has that id twice (two clusters' job 4, ids that restarted)
        ids = Counter(j.job_id for j in jobs)
        keyed = [(j.job_id if ids[j.job_id] == 1 else j.key, j) for j in jobs]
        self.jobs = dict(keyed)
        self.clear()
        for key, job in keyed:
            cells = [inert(c) for c in recent_cells(job, now)]
            if ids[job.job_id] > 1 and job.cluster and self.local_cluster is None:
                cells[0] = f"{cells[0]}@{job.cluster}"
            state = Text(cells[2], style=state_style(job.state) if job.state else "magenta")
            said = Text(cells[-1], style="italic dim" if not job.from_ntui else "")
            where = () if self.local_cluster is None else (inert(job.cluster or self.local_cluster),)
            self.add_row(*where, *cells[:2], state, *cells[3:-1], said, key=key)
        self.border_title = " · ".join((recent_title(days, len(jobs), loaded.accounting), *notes))
        self.border_subtitle = f"{self.order.label} ({ORDER_KEY}: order)"
        self.set_class(bool(jobs), "-shown")
        if current is not None:
            row = next((k for k, j in keyed if j.key == current.key), None)
            if row is not None:
                self.move_cursor(row=self.get_row_index(row))

    @property
    def cursor_job(self) -> RecentJob | None:
        if not self.jobs or self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # no row under the cursor
            return None
        return self.jobs.get(key) if key is not None else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        job = self.jobs.get(event.row_key.value) if event.row_key.value is not None else None
        if job is not None and self.has_focus:
            self.post_message(self.Selected(job))

    def on_focus(self) -> None:
        job = self.cursor_job
        if job is not None:
            self.post_message(self.Selected(job))


class RecentLoaded(Message):
    """A recent-jobs load ended (posted by the jobs view's worker; ``jobs`` None: no history to list)."""

    def __init__(self, jobs: RecentJobs | None) -> None:
        super().__init__()
        self.jobs = jobs
