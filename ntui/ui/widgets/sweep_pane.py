"""The Sweep tab: the selected sweep's tasks side by side (the same table as ``ntui sweep``).

One row per task: its values, state, elapsed, mean GPU utilisation and the last value of the sweep's metric
(:func:`ntui.core.jobs.sweep.sweep_table`, computed in a thread worker only while the tab is shown: one Slurm call
for every task, the tail of each rank-0 log, again every :data:`REFRESH_S` while the sweep runs); the failed tasks
grouped by verdict under it. ``s``/``S`` sort by the next column / reverse (numbers as numbers, rows without a
value last); the rows are a :class:`~ntui.ui.widgets.queue_table.VirtualTable`, so a 1,000-task sweep draws only
the lines on screen.
"""

from __future__ import annotations

import re
import time
from typing import ClassVar

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
from ntui.core.slurm.runner import CommandRunner
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec, displayed
from ntui.ui.widgets.queue_table import Column, VirtualTable

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

    _failed_at = 0.0  # time.monotonic() of the last failure (computed again REFRESH_S later)

    def __init__(self, runner: CommandRunner, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner = runner
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
        return cls(deps.runner, id=cls.TAB.widget_id)

    def shown_job(self, selected: SelectedJob) -> str | None:
        return selected.sweep_id

    def show_selected(self, selected: SelectedJob) -> None:
        """The sweep of the selection's entry (its array id); computed while the tab is shown, else when shown."""
        job_id, entry = selected.sweep_id, selected.entry
        self.job_id, self.entry, self.active = job_id, entry, selected.sweep_active
        kept = self.result(job_id)
        self.table, self.error = (kept.value if kept is not None else None), ""
        self._draw()
        if job_id is not None and self.is_sweep and kept is None and self.computing != job_id:
            self._start(job_id)

    def show_result(self, computed: Computed) -> None:
        self.table, self.error = computed.value, ""
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
        job_id = self.job_id
        if not (self.active and job_id is not None and self.is_sweep and self.computing is None and displayed(self)):
            return
        kept = self.result(job_id)
        age = time.time() - kept.at if kept is not None else time.monotonic() - self._failed_at
        if age >= REFRESH_S:
            self._start(job_id)

    def _start(self, job_id: str) -> None:
        entry, runner = self.entry, self.runner
        assert entry is not None
        self.compute(job_id, lambda: sweep_table(entry, runner), what="sweep table")

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
        if self.job_id is None:
            head.update("Select a sweep (a job array ntui submitted) to compare its tasks.")
        elif not self.is_sweep:
            head.update(f"Job {inert(self.job_id)} is not a sweep: the Sweep tab compares the tasks of a job array "
                        "ntui submitted from a preset with a sweep: section.")
        elif table is None:
            head.update(f"Sweep {inert(self.job_id)}: " + (f"cannot be read: {inert(self.error)}" if self.error
                                                          else "reading its tasks…"))
        if table is None:
            grid.set_columns([])
            return
        arrow = "▼" if self.descending else "▲"
        line = Text()
        line.append(f"sweep {table.job_id}", style="bold")
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
