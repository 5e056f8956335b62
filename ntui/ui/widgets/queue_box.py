"""The jobs view's queue box: the live queue (job arrays folded), its filter and sort, and the recent jobs under it.

:class:`QueueBox` owns what the user sees of the queue and how it shares its lines; the screen
(:class:`~ntui.ui.screens.jobs.JobsScreen`) hands it each refresh's rows (:meth:`QueueBox.show_rows`) and each
recent-jobs load (:meth:`QueueBox.show_recent`), and asks it which job the tabs show (:meth:`QueueBox.pane_key`).

* a job array is one row that opens into its tasks (``t`` or enter: :func:`ntui.core.jobs.arrays.fold`);
* the filter (``/``) keeps the rows with its text anywhere; Enter keeps it, Esc clears it; a change is posted as
  :class:`QueueBox.FilterChanged` (the screen's status line counts the rows shown);
* the room rule (:meth:`QueueBox.fit`): the recent list takes what the live queue leaves, the queue keeping at
  least half; while the focus is in the selected job's tabs, the box shrinks to a share of the view
  (:data:`TABS_FOCUSED_BOX_SHARE`), or to :data:`COMPACT_BOX` lines on a short terminal, so the log keeps a dozen
  lines however long the recent list.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from ntui.core.jobs.arrays import Folded, fold
from ntui.core.jobs.clusters import with_cluster
from ntui.core.jobs.queue import ENDED, FinishedJob, Row
from ntui.core.records.record import RecentJobs, next_order
from ntui.core.slurm.squeue import QueueJob
from ntui.ui.widgets.queue_table import QueueTable, TableChange, VirtualTable
from ntui.ui.widgets.recent_jobs import RecentJobsTable

__all__ = ["COMPACT_BOX", "RECENT_BOX_SHARE", "TABS_FOCUSED_BOX_SHARE", "QueueBox", "QueueSource"]

#: The box's share of the view's height when the recent list is under the queue (``-with-recent`` in the screen's
#: CSS), and the list's least height.
RECENT_BOX_SHARE = 70
RECENT_MIN_HEIGHT = 5
#: While the focus is in the selected job's tabs, they get the room: the box keeps this share of the view's height,
#: and no more than the lines its rows need; on a short terminal (fewer than SHORT_VIEW rows) it keeps COMPACT_BOX
#: lines (its border and the queue's selected row), so that the log shows a dozen lines at 80x24.
TABS_FOCUSED_BOX_SHARE = 30
SHORT_VIEW = 30
COMPACT_BOX = 4


class QueueSource(Protocol):
    """What folding the rows reads of the model: the live jobs, the ended ones kept as rows, whose queue it is."""

    @property
    def live(self) -> Mapping[str, QueueJob]: ...

    @property
    def ended(self) -> Mapping[str, FinishedJob]: ...

    @property
    def all_users(self) -> bool: ...


class QueueBox(Vertical):
    """The queue, its filter and the recent jobs (see the module docstring)."""

    DEFAULT_CSS = """
    QueueBox {
        /* the queue takes the rows it has (at least a few, at most ~40 %); the tabs get the rest */
        height: auto;
        min-height: 6;
        max-height: 40%;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        border-subtitle-color: $text-muted;
        &.-with-recent { max-height: 70%; }
        /* the focus is in the tabs: the class is the box's alone (a class on the screen restyles every widget) */
        &.-compact { min-height: 3; }
        &.-compact #jobs-table { scrollbar-size-horizontal: 0; }  /* its line goes to the selected row */
        &.-with-recent #jobs-table { max-height: 50%; }
        &:focus-within { border: round $primary; border-title-color: $text; }
        &.-maximized { height: 1fr; max-height: 100%; width: 1fr; }
        &.-maximized #jobs-table { height: 1fr; }
        #jobs-table { height: auto; max-height: 100%; }
        #jobs-filter { display: none; }
        #jobs-filter.-shown { display: block; }
    }
    /* the wide layout (the view's breakpoint class): the box beside the tabs, the whole height */
    .-wide QueueBox { height: 1fr; max-height: 100%; }
    .-wide QueueBox #jobs-table { height: 1fr; }
    """

    #: The box's keys, in the whole view (the view's BINDINGS include them: ``queue_box('NAME')`` runs
    #: :meth:`run_key`), so ``/`` filters the queue with the focus in a tab (the log pane's ``/`` searches its lines).
    KEYS: ClassVar[list[BindingType]] = [
        Binding("slash", "queue_box('filter')", "Filter jobs", id="ntui.jobs.filter", key_display="/",
                tooltip="Filter the queue's rows (the log pane's / searches its lines)"),
        Binding("s", "queue_box('sort')", "Sort", id="ntui.jobs.sort", tooltip="Sort by the next column"),
        Binding("S", "queue_box('reverse_sort')", "Reverse sort", id="ntui.jobs.reverse_sort", show=False),
        Binding("escape", "queue_box('clear_filter')", "Clear filter", id="ntui.jobs.clear_filter", show=False),
        Binding("t", "queue_box('tasks')", "Tasks", id="ntui.jobs.tasks", show=False,
                tooltip="Open a job array's row into its tasks, or fold them (enter too)"),
    ]

    class FilterChanged(Message):
        """The filter's text changed (the rows shown changed with it)."""

    def __init__(self, source: QueueSource, *, empty_text: str, id: str | None = None,  # noqa: A002
                 cluster_of: Callable[[str], str] | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        # more than one cluster shown: a row's cluster (its first cell, the Cluster column); None: one cluster
        self.cluster_of = cluster_of
        self._remote: dict[str, Row] = {}  # the rows of the clusters reached over ssh (ntui.core.jobs.clusters)
        self._remote_tags: dict[str, str] = {}  # their tags (an ended row's)
        self._empty_text = empty_text
        self._expanded: set[str] = set()
        self.folded = Folded({}, {})  # the rows as last shown: arrays folded into one row each
        self._rows: dict[str, Row] = {}  # the last refresh's rows, before folding
        self._tags: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield QueueTable(all_users=self.source.all_users, clusters=self.cluster_of is not None, id="jobs-table",
                         empty_text=self._empty_text)
        yield Input(placeholder="filter: text anywhere in a row (Enter keeps it, Esc clears)",
                    id="jobs-filter", compact=True)
        yield RecentJobsTable(id="jobs-recent",
                              local_cluster=self.cluster_of("") if self.cluster_of is not None else None)

    @property
    def table(self) -> QueueTable:
        return self.query_one("#jobs-table", QueueTable)

    @property
    def recent(self) -> RecentJobsTable:
        return self.query_one("#jobs-recent", RecentJobsTable)

    @property
    def filter_box(self) -> Input:
        return self.query_one("#jobs-filter", Input)

    def set_title(self, identity: str | None = None) -> None:
        """Whose queue it is (the title) and, once, who and where (the subtitle)."""
        self.border_title = "Queue · all users" if self.source.all_users else "Queue · my jobs"
        if identity is not None:
            self.border_subtitle = identity

    def run_key(self, key: str) -> None:
        """One of :data:`KEYS` (by its name in the binding's action)."""
        actions: dict[str, Callable[[], None]] = {"filter": self.open_filter, "sort": self.sort_next,
                                                  "reverse_sort": self.reverse_sort, "clear_filter": self.clear_filter,
                                                  "tasks": self.toggle_tasks}
        actions[key]()

    # ------------------------------------------------------------ rows and job arrays

    def show_rows(self, rows: dict[str, Row] | None = None, tags: dict[str, str] | None = None) -> TableChange:
        """The queue's rows (None: the last ones again) with each job array folded into one row (open ones with
        their tasks under it)."""
        if rows is not None:
            self._rows = rows
        if tags is not None:
            self._tags = tags
        folded = self.fold()
        self._expanded &= set(folded.arrays)
        if self._remote or self.cluster_of is not None:  # the other clusters' rows after the local ones
            rows_all = {**folded.rows, **self._remote}
            if self.cluster_of is not None:  # each with its cluster
                rows_all = with_cluster(rows_all, self.cluster_of)
            folded = replace(folded, rows=rows_all, tags={**folded.tags, **self._remote_tags})
        self.folded = folded
        table = self.table
        change = table.apply(folded.rows, folded.tags)
        table.set_parents(folded.parents)
        return change

    def show_remote(self, rows: dict[str, Row], tags: dict[str, str] | None = None) -> TableChange:
        """The rows of the clusters reached over ssh (keyed by cluster and job id) and their tags (an ended row's),
        with the local rows as they were."""
        self._remote, self._remote_tags = rows, tags or {}
        return self.show_rows()

    def fold(self) -> Folded:
        """The last rows folded (nothing shown: :meth:`show_rows` shows them)."""
        source = self.source
        return fold(self._rows, self._tags, source.live, source.ended, self._expanded, all_users=source.all_users)

    def set_open(self, array: str, *, is_open: bool) -> None:
        """Open the job array's row into its tasks, or fold them."""
        if is_open:
            self._expanded.add(array)
        else:
            self._expanded.discard(array)
        self.show_rows()

    def update_rows(self, changed: Mapping[str, Row]) -> None:
        """Some rows' cells changed (an ended job's final state): re-folded by diff."""
        rows = dict(self._rows)
        rows.update((k, c) for k, c in changed.items() if k in rows)
        self.show_rows(rows)

    def pane_key(self) -> str | None:
        """The job the tabs show: the cursor's, or for a job array's row one of its tasks (a running one, else one
        that failed, else the first)."""
        key = self.table.cursor_key
        return self.folded.representative(key) if key is not None else None

    def toggle_tasks(self) -> None:
        """``t`` (or enter on an array's row): open the array into its tasks, or fold them back."""
        array = self.folded.array_of(self.table.cursor_key)
        if array is None:
            self.notify("Not a job array: it has no tasks to open.", severity="warning", timeout=3)
            return
        self.set_open(array, is_open=array not in self._expanded)
        self.table.move_cursor(key=array)

    @on(VirtualTable.RowSelected, "#jobs-table")
    def _row_selected(self, event: VirtualTable.RowSelected) -> None:
        event.stop()
        if event.row_key is not None and event.row_key in self.folded.arrays:
            self.toggle_tasks()

    # ------------------------------------------------------------ sort and filter

    @on(VirtualTable.HeaderSelected, "#jobs-table")
    def _header_selected(self, event: VirtualTable.HeaderSelected) -> None:
        event.stop()
        table = self.table
        reverse = not table.sort_reverse if table.sort_column == event.column_key else False
        table.sort(event.column_key, reverse=reverse)

    def sort_next(self) -> None:
        """Sort by the next column (after the last one: squeue's order)."""
        table = self.table
        keys = [c.key for c in table.columns]
        current = table.sort_column
        at = -1 if current is None else keys.index(current)
        nxt = keys[at + 1] if at + 1 < len(keys) else None
        table.sort(nxt, reverse=False)
        self.notify(f"sorted by {nxt}" if nxt else "squeue order", timeout=2)

    def reverse_sort(self) -> None:
        table = self.table
        table.sort(table.sort_column or "id", reverse=not table.sort_reverse)

    def open_filter(self) -> None:
        box = self.filter_box
        box.add_class("-shown")
        box.focus()

    def clear_filter(self) -> None:
        """Esc: the filter emptied and hidden (nothing when there is none)."""
        box, table = self.filter_box, self.table
        if box.has_class("-shown") or table.filter_text:
            box.value = ""
            box.remove_class("-shown")
            table.filter_text = ""
            table.focus()
            self.post_message(self.FilterChanged())

    @on(Input.Changed, "#jobs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.table.filter_text = event.value
        self.post_message(self.FilterChanged())

    @on(Input.Submitted, "#jobs-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.filter_box.remove_class("-shown")
        self.table.focus()

    # ------------------------------------------------------------ recent jobs

    def show_recent(self, jobs: RecentJobs | None, *, now: float, days: float, remote: Container[str] = (),
                    notes: Sequence[str] = ()) -> bool:
        """The recent jobs (``jobs``: a new load, else the last one) without those in the live queue (a cluster's
        of ``remote``, reached over ssh, by its ``CLUSTER/JOBID`` row); False when none was ever loaded. ``notes``:
        clusters whose history could not be read. The box makes room for the list (the screen then calls
        :meth:`fit`)."""
        recent = self.recent
        loaded = jobs if jobs is not None else recent.loaded
        if loaded is None:
            return False
        live = set(self.source.live) | {k for k in self._remote if self._remote_tags.get(k) != ENDED}
        recent.show_jobs(loaded, live=live, now=now, days=days, remote=remote, notes=notes)
        self.set_class(recent.has_class("-shown"), "-with-recent")
        return True

    def next_recent_order(self) -> None:
        """The recent list's next order (:data:`ntui.core.records.record.RECENT_ORDERS`)."""
        self.recent.order = next_order(self.recent.order)

    # ------------------------------------------------------------ the room rule

    def fit(self, *, room: int, view_height: int, full: bool, tabs_focused: bool, in_recent: bool) -> None:
        """Share the box's lines between the live queue and the recent list: the queue gets what it needs up to at
        least half of them (more when the list needs less), the list the rest. (Percentages of an auto-height box,
        in CSS, capped each at half the box and left the rest of it empty.) ``room``: the body's height; ``full``:
        the box has the body's height (wide layout, or zoomed); ``in_recent``: the selection is the recent list's.
        """
        recent, table = self.recent, self.table
        compact = tabs_focused and not full
        self.set_class(compact, "-compact")
        if compact:
            cap = COMPACT_BOX if view_height < SHORT_VIEW else room * TABS_FOCUSED_BOX_SHARE // 100
            self.styles.max_height = cap
        else:
            cap = room if full else room * RECENT_BOX_SHARE // 100
            self.styles.max_height = None  # the stylesheet's
        if not recent.has_class("-shown"):
            table.styles.max_height = None
            recent.styles.max_height = None
            return
        box_filter = self.filter_box
        inner = cap - self.styles.gutter.height - (box_filter.outer_size.height if box_filter.display else 0)
        recent.set_class(compact, "-compact")
        if compact:  # the list that holds the selection keeps the box's lines, its cursor's row in sight
            fits = (0, inner) if in_recent or not table.row_count else (inner, 0)
        else:
            recent_need = recent.row_count + 1 + recent.styles.gutter.height  # rows, header, border
            table_max = max(inner // 2, inner - recent_need)
            table_need = table.virtual_size.height  # rows and header
            fits = (table_max, max(RECENT_MIN_HEIGHT, inner - min(table_need, table_max)))
        for widget, lines in zip((table, recent), fits, strict=True):
            if widget.styles.max_height is None or widget.styles.max_height.value != lines:
                widget.styles.max_height = lines
        if compact and in_recent:
            self.call_after_refresh(self._recent_cursor_in_sight)

    def _recent_cursor_in_sight(self) -> None:
        """The recent list's selected row, in the list made smaller (the queue table does it on its own resize)."""
        recent = self.recent
        recent.move_cursor(row=recent.cursor_row, scroll=True, animate=False)
