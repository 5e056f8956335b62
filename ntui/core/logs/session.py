"""One shown job's logs, as values: what the log pane shows of a job and what its watcher thread reads for it.

The pane (``ntui.ui.widgets.log_pane``) draws; what it knows of the job it shows lives here, Textual-free, so that
showing another job is one new value (:class:`Shown`) and a view change one new :class:`Reading`, never a list of
field resets that a new field can be missing from:

* :class:`LogView`: which files the live view follows (one rank, or a merged view of several), with a generation the
  watcher tags its lines with; immutable, replaced by the UI thread and picked up by the watcher;
* :class:`WatchSession`: what the UI thread and the watcher thread share for one job (the files, the view, whether
  the job still runs, whether the pane is on screen, the wake-up event);
* :class:`Reading`: where the live view is (the lines written, those held while following is paused, an excerpt
  around an error); new for each view;
* :class:`Shown`: the job shown and the pane's state for it (rows of the rank table, marks, filter, search); new for
  each job.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.logs.ranktable import Filter, TableLine
from ntui.core.logs.rows import BATCH, Key, RankRow, ViewMode

__all__ = ["LogView", "Reading", "Shown", "WatchSession"]


@dataclass(frozen=True)
class LogView:
    """The files the live view follows; ``gen`` grows with each change (the watcher's lines carry it)."""

    gen: int
    mode: ViewMode
    keys: tuple[Key, ...]
    focus: tuple[int, int] | None = None
    """``E``: (start, telling line) index numbers to show in the rank view, read around if not in the window."""


class WatchSession:
    """One shown job. The UI thread replaces ``view`` / ``job_active`` and sets ``wake``; the watcher reads."""

    def __init__(
        self,
        token: int,
        job_id: str,
        files: Mapping[Key, Path],
        view: LogView,
        *,
        job_active: bool,
        paths: LogPaths | None,
        discover: bool,
        launcher: str | None = None,
    ) -> None:
        self.token = token
        self.launcher = launcher
        self.job_id = job_id
        self.files = dict(files)
        self.view = view
        self.job_active = job_active
        self.paths = paths
        self.discover = discover
        self.wake = threading.Event()
        self.hidden = False  # the pane is not on screen
        self.wanted: set[Key] = set()  # files to read at once (the user looks at their row)
        self.shown = threading.Event()  # the UI drew the first view
        self.stopped = False

    def same_files(self, job_id: str | None, paths: LogPaths | None, launcher: str | None,
                   batch_log: str | None) -> bool:
        """Whether showing ``job_id`` with these files is showing this session's job again."""
        return (job_id is not None and self.job_id == job_id and self.paths == paths and self.launcher == launcher
                and (paths is not None or self.files.get(BATCH) == (Path(batch_log) if batch_log else None)))

    def stop(self) -> None:
        self.stopped = True
        self.wake.set()


@dataclass
class Reading:
    """Where the live view is; a new one for each view (:meth:`fresh`)."""

    pending: deque[str]  # lines that came while following was paused (bounded by the window)
    loaded_gen: int = -1  # the view generation whose whole content was last loaded
    following: bool = True
    pending_count: int = 0  # lines that came while paused, those beyond the deque's bound counted only
    first_index: int | None = None  # the index number of the first line in the view
    header_count: int = 0
    written: int = 0
    partial: str = ""  # the end of a line not finished yet
    excerpt: bool = False  # the view shows lines around an error, not the end

    @classmethod
    def fresh(cls, window: int) -> Reading:
        return cls(deque(maxlen=max(1, window)))


@dataclass
class Shown:
    """The job the pane shows and the pane's state for it; a new one for each job."""

    job_id: str | None = None
    job_active: bool = True
    note: str = ""  # why the per-rank logs are unknown (not ntui's job)
    view: LogView = field(default_factory=lambda: LogView(0, "rank", ()))
    rows: dict[Key, RankRow] = field(default_factory=dict)
    order: list[Key] = field(default_factory=list)
    """Every file's key (rank order; the table may show fewer: grouped, filtered)."""
    cells: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # the rank table's rows as drawn (a diff cache)
    lines: dict[str, TableLine] = field(default_factory=dict)
    line_order: list[str] = field(default_factory=list)
    filter: Filter = "all"
    expanded: set[str | None] = field(default_factory=set)
    marked: set[Key] = field(default_factory=set)
    last_rank: Key = 0
    search: str | None = None
    search_note: str = ""
