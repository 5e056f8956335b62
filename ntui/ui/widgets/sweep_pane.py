"""The Sweep tab: the selected sweep's tasks side by side (the same table as ``ntui sweep``).

One row per task: its values, state, elapsed, mean GPU utilisation and the last value of the sweep's metric
(:func:`ntui.core.jobs.sweep.sweep_table`, computed in a thread worker only while the tab is shown: one sacct for every
task and, while some task has not ended, one squeue; the tail of each rank-0 log; again every :data:`REFRESH_S` while
the sweep runs); the failed tasks grouped by verdict under it. ``s``/``S`` sort by the next column / reverse (numbers as
numbers, rows without a value last); the rows are a :class:`~ntui.ui.widgets.queue_table.VirtualTable`, so a 1,000-task
sweep draws only the lines on screen.

A sweep of a cluster reached over ssh (``SelectedJob.cluster``) is read there, as ``ntui --cluster NAME sweep``
does: its history entry asked of that cluster's files (``TabDeps.files``: its agent) when the row has none, copies
of its files there read by the same table (:func:`~ntui.core.remotesweep.remote_sweep_table`), Slurm asked through
that cluster's runner (the app's ``cluster_runner``), all in the worker, its paths said as the cluster's; a
dropped link takes the tab's failure path. Its tables are kept by cluster and id (the same id may be on two
clusters).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from ntui.core.jobfiles.manifest import format_indices, is_sweep_script
from ntui.core.jobs.selected import SelectedJob
from ntui.core.jobs.sweep import SORT_KEYS, SweepTable, sort_rows, sweep_table, table_cells, table_columns
from ntui.core.records.history import HistoryEntry
from ntui.core.remote.logs import remote_entry
from ntui.core.slurm.runner import CommandRunner
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec, displayed
from ntui.ui.widgets.queue_table import Column, VirtualTable

if TYPE_CHECKING:
    from ntui.core.remote.files import ClusterFiles

__all__ = ["SweepPane", "metric_name"]

#: While a shown sweep runs, its table is computed again this often (seconds).
REFRESH_S = 15.0


_ESCAPE = re.compile(r"\\.")  # a regex escape (\s, \d, \.): no part of a name
_NAME = re.compile(r"[A-Za-z_][\w./-]*")


def metric_name(pattern: str) -> str:
    """The name a person gave the metric in its regex (``loss=([0-9.]+)``: ``loss``): the group named other than
    ``value``, else the last word written before the group that holds the value; the regex itself if it has none."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return pattern
    named = [n for n in compiled.groupindex if n != "value"]
    if named:
        return named[0]
    at = pattern.find("(?P<value>") if "value" in compiled.groupindex else _first_group(pattern)
    words = _NAME.findall(_ESCAPE.sub(" ", pattern[:at] if at >= 0 else pattern))
    return words[-1].rstrip("./-") if words else pattern


def _first_group(pattern: str) -> int:
    """Where the first capturing group opens (-1: none)."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "(" and not pattern.startswith("(?", i):
            return i
        i += 1
    return -1


@dataclass(frozen=True)
class RemoteSweep:
    """*Worker thread's answer* for a sweep of a cluster reached over ssh: its table (None: not a sweep ntui
    submitted there) and its history entry there (None: not ntui's job there)."""

    table: SweepTable | None
    entry: HistoryEntry | None


def _remote_sweep(files_of: Callable[[str], ClusterFiles], runner_of: Callable[[str], CommandRunner], cluster: str,
                  sweep_id: str, entry: HistoryEntry | None) -> RemoteSweep:
    """*Worker thread*: ``ntui --cluster NAME sweep``'s work for the app: the sweep's entry asked of its cluster when
    the row has none, then its table read from copies of its files there, Slurm asked through its runner."""
    files = files_of(cluster)
    if entry is None:
        entry = remote_entry(files, sweep_id)
    if entry is None or not is_sweep_script(entry.script):
        return RemoteSweep(None, entry)
    from ntui.core.remotesweep import remote_sweep_table

    return RemoteSweep(remote_sweep_table(files, runner_of(cluster), entry), entry)


class SweepPane(JobTab, Vertical):
    """The tasks of one sweep (see the module docstring)."""

    TAB = TabSpec("Sweep", "tab-sweep", "jobs-sweep", "v", "ntui.jobs.tab_sweep",
                  "The Sweep tab: the selected sweep's tasks side by side (values, state, GPU, metric)",
                  groups=("ntui-sweep",))

    DEFAULT_CSS = """
    SweepPane {
        height: 1fr;
        & > #sweep-head { height: auto; padding: 0 1; }
        & > #sweep-table { height: 1fr; }
        & > #sweep-failed { height: auto; max-height: 40%; padding: 0 1; color: $text-error; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort tasks", id="ntui.sweep.sort", tooltip="Sort the tasks by the next column"),
        Binding("S", "reverse", "Reverse", id="ntui.sweep.reverse", show=False),
    ]

    OVER_SSH = True  # a remote sweep's files are copied through its cluster's files, Slurm asked through its runner

    _failed_at = 0.0  # time.monotonic() of the last failure (computed again REFRESH_S later)

    def __init__(self, runner: CommandRunner, *, files: Callable[[str], ClusterFiles] | None = None,
                 id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner = runner
        self.cluster_files = files
        self.cluster: str | None = None  # the cluster reached over ssh the shown sweep is on (None: here)
        self.job_id: str | None = None
        self.entry: HistoryEntry | None = None
        self.active = False
        self.table: SweepTable | None = None
        self.error = ""
        self.sort_key = "task"
        self.descending = False

    def compose(self) -> ComposeResult:
        yield Static("Select a sweep (a job array ntui submitted) to compare its tasks.", id="sweep-head",
                     markup=False)
        yield VirtualTable(id="sweep-table", empty_text="")
        yield Static("", id="sweep-failed", markup=False)

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S / 3, self._maybe_refresh)

    @classmethod
    def build(cls, deps: TabDeps) -> SweepPane:
        return cls(deps.runner, files=deps.files, id=cls.TAB.widget_id)

    def shown_job(self, selected: SelectedJob) -> str | None:
        """The key of a sweep's tables: its array id, on a cluster reached over ssh that cluster's name and it."""
        sweep_id = selected.sweep_id
        if sweep_id is None or selected.cluster is None:
            return sweep_id
        return f"{selected.cluster}/{sweep_id}"

    def show_selected(self, selected: SelectedJob) -> None:
        """The sweep of the selection's entry (its array id); computed while the tab is shown, else when shown. A
        remote sweep's entry, when the row has none, is asked there by the worker."""
        job_id, entry = selected.sweep_id, selected.entry
        self.job_id, self.entry, self.active, self.cluster = job_id, entry, selected.sweep_active, selected.cluster
        key = self.shown_job(selected)
        kept = self.result(key)
        self.table, self.error = None, ""
        if kept is not None:
            self._take(kept.value)
        self._draw()
        if key is not None and kept is None and self.computing != key and (self.is_sweep or self._unknown):
            self._start(key)

    @property
    def _unknown(self) -> bool:
        """A remote sweep whose history entry is still to be asked of its cluster (no answer kept yet)."""
        return self.cluster is not None and self.entry is None and self.result(self.shown_job(self.selected)) is None

    def _take(self, value: object) -> None:
        if isinstance(value, RemoteSweep):
            self.table, self.entry = value.table, value.entry
        else:
            self.table = value if isinstance(value, SweepTable) else None

    def show_result(self, computed: Computed) -> None:
        self.error = ""
        self._take(computed.value)
        self._draw()

    def show_failure(self, text: str) -> None:
        """A bad file must not take the view down: the pane says why (and the table is computed again later)."""
        self.table, self.error = None, text
        self._failed_at = time.monotonic()
        self._draw()

    @property
    def is_sweep(self) -> bool:
        return self.entry is not None and is_sweep_script(self.entry.script)

    def _maybe_refresh(self) -> None:
        key = self.shown_job(self.selected)
        if not (self.active and key is not None and self.is_sweep and self.computing is None and displayed(self)):
            return
        kept = self.result(key)
        age = time.time() - kept.at if kept is not None else time.monotonic() - self._failed_at
        if age >= REFRESH_S:
            self._start(key)

    def _start(self, key: str) -> None:
        entry, cluster, sweep_id = self.entry, self.cluster, self.job_id
        if cluster is not None and sweep_id is not None:
            files, runners = self.cluster_files, getattr(self.app, "cluster_runner", None)
            if files is None or runners is None:
                self.show_failure(f"the files of {cluster} are not reachable")
                return
            self.compute(key, lambda: _remote_sweep(files, runners, cluster, sweep_id, entry), what="sweep table")
            return
        runner = self.runner
        assert entry is not None
        self.compute(key, lambda: sweep_table(entry, runner), what="sweep table")

    # ------------------------------------------------------------ drawing

    def _keys(self) -> list[str]:
        return list(table_columns(self.table)) if self.table is not None else list(SORT_KEYS)

    def action_sort(self) -> None:
        keys = self._keys()
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)] if self.sort_key in keys else "task"
        self.descending = False
        self._draw()

    def action_reverse(self) -> None:
        self.descending = not self.descending
        self._draw()

    @on(VirtualTable.HeaderSelected, "#sweep-table")
    def _header(self, event: VirtualTable.HeaderSelected) -> None:
        event.stop()
        if event.column_key == self.sort_key:
            self.descending = not self.descending
        else:
            self.sort_key, self.descending = event.column_key, False
        self._draw()

    def _draw(self) -> None:
        head = self.query_one("#sweep-head", Static)
        grid = self.query_one("#sweep-table", VirtualTable)
        failed = self.query_one("#sweep-failed", Static)
        table = self.table
        failed.update("")
        where = f" on {inert(self.cluster)}" if self.cluster is not None else ""
        if self.job_id is None:
            head.update("Select a sweep (a job array ntui submitted) to compare its tasks.")
        elif self._unknown and table is None:
            head.update(f"Sweep {inert(self.job_id)}{where}: " + (f"cannot be read: {inert(self.error)}"
                                                                  if self.error else "asking its record there…"))
        elif not self.is_sweep:
            head.update(f"Job {inert(self.job_id)}{where} is not a sweep: the Sweep tab compares the tasks of a job "
                        f"array ntui submitted{where} from a preset with a sweep: section.")
        elif table is None:
            head.update(f"Sweep {inert(self.job_id)}{where}: " + (f"cannot be read: {inert(self.error)}"
                                                                  if self.error else "reading its tasks…"))
        if table is None:
            grid.set_columns([])
            return
        arrow = "▼" if self.descending else "▲"
        line = Text()
        line.append(f"sweep {table.job_id}{where}", style="bold")
        line.append(f" · {table.counts}")
        if table.metric:
            line.append(f" · metric {inert(metric_name(table.metric))}")
        if table.resubmit_of:
            line.append(f" · resubmit of {table.resubmit_of}")
        line.append(f" · sorted by {self.sort_key} {arrow} (s, S)", style="dim")
        head.update(line)
        columns = table_columns(table)
        numeric = {"task", "elapsed", "gpu", "metric"}
        grid.set_columns([Column(c, c if c != self.sort_key else f"{c} {arrow}", max_width=24,
                                 justify="right" if c in numeric else "left") for c in columns])
        rows = sort_rows(table.rows, self.sort_key, descending=self.descending)
        grid.add_rows((tuple(inert(c) for c in table_cells(table, r)) for r in rows), keys=[r.job_id for r in rows])
        if table.groups:
            text = Text("failed, by verdict:\n", style="bold")
            for verdict, tasks in table.groups:
                text.append(f"  tasks {format_indices(tasks)}: {inert(verdict)}\n")
            failed.update(text)
        elif table.problem:
            failed.update(f"note: {inert(table.problem)}")
