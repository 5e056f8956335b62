"""The log pane: every rank's log of one job, live, with failure triage, in bounded memory.

One responsibility: drawing a job's logs and handling the pane's keys. What is read, when, and what it
means is :class:`~ntui.core.logs.watch.JobLogWatcher`'s (driven by one worker thread, see below).

Layout, top to bottom: a one-line triage summary; the rank table (one row per global rank plus the batch
log, diffed in place; for a big job one row per node, Enter expands it, ``f`` cycles the filters failed /
errored / silent / slowest ranks, ``w`` the slowest view (``s`` stays the jobs view's sort):
:mod:`ntui.core.logs.ranktable` decides the lines);
a status line (what is shown, following or paused, search, progress-bar line);
the live view (a Textual ``Log`` bounded by ``max_lines``); a search input that appears on ``/``.

Threads (toolong's shape): the pane only draws. One worker thread per shown job runs the core's follow,
:func:`~ntui.core.logs.follow.follow_job` (its :class:`~ntui.core.logs.watch.JobLogWatcher` tails, reads node
headers, detects, triages; which files are read when is its scheduler's business), or, for a job of a cluster
reached over ssh, polls :class:`~ntui.core.remote.rankfollow.RemoteRanks` (each file by offsets through that
cluster's files); what they return is posted as immutable messages (:class:`LogPane.ViewLoaded`,
:class:`LogPane.Lines`, :class:`LogPane.Rows`), the worker waiting while the pane's queue is long (toolong's
backpressure). The UI thread never touches a file: a view change (Enter, ``m``, ``E``, ``End`` after an excerpt) is
a new immutable :class:`LogView` the worker picks up (an ``Event`` wakes it), so every line reaches the screen
exactly once, tagged with the view generation.

Memory: each file keeps a window of ``LogSettings.window`` lines plus an offset index of the lines read
since it was opened (huge files are opened tail-first); the ``Log`` holds at most ``window`` lines; while
following is paused new lines wait in a deque of the same bound (only a count beyond it).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Input, Log, Static
from textual.worker import get_current_worker

from ntui.core.config import LogSettings
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.model import LogTarget
from ntui.core.jobs.selected import SelectedJob, log_target
from ntui.core.logs.follow import follow_job
from ntui.core.logs.ranktable import FILTERS, Filter, TableLine, table_lines
from ntui.core.logs.rows import (
    BATCH,
    Appended,
    Key,
    Loaded,
    RankRow,
    TriageLine,
    ViewMode,
    human_size,
)
from ntui.core.logs.rows import key_sort as _key_sort
from ntui.core.logs.session import LogView, Reading, Shown, WatchSession
from ntui.core.logs.statusline import status_line
from ntui.core.logs.watch import watch_files
from ntui.core.remote.link import LinkBoard
from ntui.core.remote.rankfollow import RemoteJob, RemoteRanks
from ntui.core.textsafe import ellipsize
from ntui.ui.widgets.job_tab import JobTab, TabDeps, TabKey, TabSpec

if TYPE_CHECKING:
    from ntui.core.remote.files import ClusterFiles

#: The log's least height when the pane is short (the rank table gives up its lines first), and the rank table's
#: bounds (its header and one row, the selected rank's, at least).
LOG_MIN_LINES = 12
RANKS_MIN_LINES = 2
RANKS_MAX_LINES = 12
QUEUE_HIGH = 10  # backpressure: the watcher waits while the pane has more queued messages ...
QUEUE_LOW = 2  # ... until it is down to this many
LAST_LINE_CELLS = 160  # the table clips the last column at the pane's edge
LINK_TICK_S = 1.0  # how often a remote job's rows look at its cluster's link (LogPane._link_tick)

#: (label, key, width) of the rank table's columns
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("", "mark", 1),
    ("rank", "rank", 5),
    ("node", "node", 12),
    ("size", "size", 10),
    ("last write", "write", 10),
    ("status", "status", 15),
    ("last line", "line", LAST_LINE_CELLS),
)


# -------------------------------------------------------------------------------------------------------
# immutable values shared by the watcher and the UI


def _files_of(job_id: str | None, paths: LogPaths | None, world_size: int | None,
              batch_log: str | None) -> tuple[dict[Key, Path], bool, str]:
    """The files to follow for a job, whether more are to be discovered, and why per-rank logs are unknown."""
    if job_id is None:
        return {}, False, ""
    if paths is not None:
        files, discover = watch_files(paths, job_id, world_size)
        return dict(files), discover, ""
    if batch_log:
        return {BATCH: Path(batch_log)}, False, "per-rank logs unknown (not submitted by ntui)"
    return {}, False, "no log paths known for this job (not submitted by ntui)"


@dataclass(frozen=True)
class _Follow:
    """How the shown job's logs are followed, one value replaced for each job (:meth:`LogPane._begin`): the token
    its worker's messages carry (an earlier job's are dropped), and the local follow's session shared with that
    worker, or the job of a cluster reached over ssh followed (None: a local one)."""

    token: int = 0
    session: WatchSession | None = None
    remote: RemoteJob | None = None


def _key_id(key: Key) -> str:
    return str(key)


def _inert(line: str) -> str:
    """One ``Log`` line per log line: ``Log.write_lines`` splits on U+2028/9 and drops empty strings."""
    if "\u2028" in line or "\u2029" in line:
        line = line.replace("\u2028", " ").replace("\u2029", " ")
    return line or " "


def _crop(text: str, cells: int = LAST_LINE_CELLS) -> str:
    return ellipsize(text.strip(), cells)


def _cells(line: TableLine, marked: Collection[Key]) -> tuple[Any, ...]:
    """A line of the rank table as its cells (a node's line: its worst rank; a rank's: its row), in the order of
    :data:`COLUMNS`; ``marked``: the ranks marked for a merged view."""
    if line.kind == "node":
        worst = line.worst()
        errored = line.errored()
        style = "bold red" if errored else ""
        first = line.ranks[0].key if line.ranks else ""
        last = worst.last_line if worst is not None else ""
        newest = line.newest()
        return (
            "▾" if line.expanded else "▸",
            Text(str(first), style=style),
            line.node or "?",
            human_size(line.size()),
            newest.age if newest is not None else "",
            Text((worst.status + (" (first)" if worst.first else "")) if worst else "", style=style),
            Text(_crop(f"ranks {line.ranks_text()}: {line.status_text()} · {last}"),
                 style="red" if errored else "$text-muted"),
        )
    row = line.row
    assert row is not None
    errored = row.status.startswith("errored")
    style = "bold red" if errored else ""
    status = row.status + (" (first)" if row.first else "")
    return (
        "●" if row.key in marked else "",
        Text(("  " if line.indent else "") + str(row.key), style=style),
        row.node or "",
        human_size(row.size) if row.exists else "–",
        row.age,
        Text(status, style=style),
        Text(_crop(row.last_line), style="red" if errored else ""),
    )


# -------------------------------------------------------------------------------------------------------
# the widgets inside


class _RankTable(DataTable[Any]):
    """The rank table; ``End`` belongs to the pane (resume following), not to horizontal scrolling."""

    def action_scroll_end(self) -> None:
        raise SkipAction()


class _TailLog(Log):
    """``Log`` with a marked line (search hit, error) and scroll-up detection."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"tail-log--mark"}
    DEFAULT_CSS = """
    _TailLog > .tail-log--mark { background: $warning 45%; color: $text; text-style: bold; }
    """

    class ScrolledUp(Message):
        """The user scrolled away from the end (pause following)."""

    def __init__(self, *, max_lines: int, id: str | None = None) -> None:  # noqa: A002
        super().__init__(highlight=False, max_lines=max_lines, auto_scroll=False, id=id)
        self.mark: int | None = None
        self.quiet = False

    def action_scroll_end(self) -> None:
        raise SkipAction()  # End is the pane's: resume following (which also scrolls to the end)

    def set_mark(self, y: int | None) -> None:
        if y != self.mark:
            self.mark = y
            self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self.quiet and new_value < old_value and round(new_value) < self.max_scroll_y:
            self.post_message(self.ScrolledUp())

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.mark is not None and self.scroll_offset.y + y == self.mark:
            style = self.get_component_rich_style("tail-log--mark")
            strip = Strip(Segment.apply_style(strip, None, style), strip.cell_length)
        return strip


# -------------------------------------------------------------------------------------------------------
# the pane


class LogPane(JobTab, Widget):
    """Every rank's log of one job: rank table, triage line, live / merged view. See the module docstring.

    As a tab of the jobs view it gets the selected job (:meth:`show_selected`: its
    :func:`~ntui.core.jobs.selected.log_target`); :meth:`show_job` shows any job's logs.
    """

    TAB = TabSpec("Logs", "tab-logs", "jobs-logs", "l", "ntui.jobs.tab_logs",
                  "Every rank's log of the selected job, with the triage line", groups=("log-pane",),
                  keys=(TabKey("E", "first_error", "First error", "ntui.jobs.first_error",
                               "Open the logs at the error of the rank that failed first"),))
    FEED_HIDDEN = True  # hidden, it reads the batch log alone now and then (a failure still shows at once)
    OVER_SSH = True  # a remote job's batch and rank logs, through its cluster's files (show_remote)

    DEFAULT_CSS = """
    LogPane { layout: vertical; height: 1fr; }
    LogPane > #lp-triage {
        height: 1; padding: 0 1; background: $boost; text-wrap: nowrap; text-overflow: ellipsis;
    }
    LogPane > #lp-triage.-failed { background: $error 30%; color: $text; text-style: bold; }
    LogPane > #lp-triage.-ok { color: $text-success; }
    LogPane > #lp-ranks { height: auto; max-height: 12; overflow-x: hidden; }  /* then: _share_height */
    LogPane > #lp-status {
        height: 1; padding: 0 1; background: $panel; color: $text-muted; text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    LogPane > #lp-status.-paused { background: $warning 35%; color: $text; }
    LogPane > #lp-log { height: 1fr; min-height: 4; }
    LogPane > #lp-search { display: none; height: 3; }
    LogPane.-searching > #lp-search { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "merge", "Merge ranks", id="ntui.logs.merge", tooltip="Merged view of the marked (or all) ranks"),
        Binding("E", "first_error", "First error", id="ntui.logs.error", tooltip="Jump to the first error"),
        Binding("slash", "search", "Search log", id="ntui.logs.search", key_display="/"),
        Binding("n", "search_next", "Next", id="ntui.logs.next", show=False),
        Binding("N", "search_prev", "Prev", id="ntui.logs.prev", show=False),
        Binding("end", "follow", "Follow", id="ntui.logs.follow", tooltip="Resume following the end"),
        Binding("space", "toggle_mark", "Mark", id="ntui.logs.mark", show=False),
        Binding("f", "cycle_filter", "Filter", id="ntui.logs.filter",
                tooltip="Rank table: all / failed / errored / silent / slowest ranks"),
        Binding("w", "slowest", "Slowest", id="ntui.logs.slowest", show=False,
                tooltip="Rank table: the ranks by their last write, oldest first"),
    ]

    # -- messages (watcher -> pane; immutable payloads, not bubbling) --------------------------------

    @dataclass
    class Rows(Message, bubble=False):
        """The rank table and the triage line. Status-like: a newer one replaces a queued one."""

        token: int
        rows: tuple[RankRow, ...]
        triage: TriageLine

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogPane.Rows) and message.token == self.token

    @dataclass
    class ViewLoaded(Message, bubble=False):
        """The whole content of a view (after a view change, a reset, or a jump outside the window)."""

        token: int
        gen: int
        content: Loaded

    @dataclass
    class Lines(Message, bubble=False):
        """New lines for the shown view."""

        token: int
        gen: int
        lines: tuple[str, ...]
        partial: str = ""

    # -- construction --------------------------------------------------------------------------------

    def __init__(
        self,
        settings: LogSettings,
        *,
        clock: Callable[[], float] = time.time,
        files: Callable[[str], ClusterFiles] | None = None,
        links: LinkBoard | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.settings = settings
        self.clock = clock
        self.links = links  # each cluster's link state (the app's); None: the rows say nothing of a link
        self.target: LogTarget | None = None  # the selected job's logs, as last shown
        self._follow = _Follow()  # how the shown job is followed: a new value for each job
        self._shown = Shown()  # the job shown and the pane's state for it: a new value for each job
        self._reading = Reading.fresh(settings.window)  # where the live view is: a new value for each view
        self._triage = TriageLine("no job selected", False)
        self.polls = 0
        """Rows messages applied (tests wait on it)."""
        self.files = files  # a cluster's files by its name (jobs of clusters reached over ssh)
        self._ready = False
        self._deferred: tuple[str | None, dict[str, Any]] | None = None
        self._before_link: dict[Key, RankRow] | None = None  # the rows as the follow said them, while the link's show

    def compose(self) -> ComposeResult:
        yield Static("no job selected", id="lp-triage", markup=False)
        table = _RankTable(id="lp-ranks", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="lp-status", markup=False)
        yield _TailLog(max_lines=max(1, self.settings.window), id="lp-log")
        yield Input(placeholder="search the shown lines (Enter; Esc to close; n / N: next / previous)", id="lp-search")

    def on_mount(self) -> None:
        table = self.query_one("#lp-ranks", DataTable)
        # Fixed widths: a column DataTable re-measures on idle keeps rows it already rendered with the old
        # widths in its render cache (Textual 8.2.8), so widths never change here; long cells are cut.
        for label, key, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        self._ready = True
        self.call_after_refresh(self._share_height)
        self.set_interval(LINK_TICK_S, self._link_tick, name="link state")
        if self._deferred is not None:
            job_id, kwargs = self._deferred
            self._deferred = None
            self.show_job(job_id, **kwargs)

    def on_show(self) -> None:
        self._set_hidden(False)

    def on_hide(self) -> None:
        self._set_hidden(True)

    def _set_hidden(self, hidden: bool) -> None:
        """Off screen the watcher reads only the batch log often (failures still show in the triage line)."""
        session = self._follow.session
        if session is not None and session.hidden != hidden:
            session.hidden = hidden
            session.wake.set()

    def on_unmount(self) -> None:
        if self._follow.session is not None:
            self._follow.session.stop()
            self._follow = replace(self._follow, session=None)

    # -- public API ----------------------------------------------------------------------------------

    @property
    def job_id(self) -> str | None:
        return self._shown.job_id

    @property
    def rows(self) -> Mapping[Key, RankRow]:
        """The rows as last shown (by key)."""
        return dict(self._shown.rows)

    @property
    def triage_line(self) -> TriageLine:
        return self._triage

    @property
    def following(self) -> bool:
        return self._reading.following

    @property
    def pending_count(self) -> int:
        return self._reading.pending_count

    @property
    def view_mode(self) -> ViewMode:
        return self._shown.view.mode

    @property
    def view_keys(self) -> tuple[Key, ...]:
        return self._shown.view.keys

    @property
    def log_lines(self) -> Sequence[str]:
        """The lines in the live view (a bounded window)."""
        return self._log.lines

    @property
    def marked_line(self) -> str | None:
        """The highlighted line (search hit or error), if any."""
        log = self._log
        return log.lines[log.mark] if log.mark is not None and 0 <= log.mark < len(log.lines) else None

    @property
    def visible_lines(self) -> list[str]:
        """The live-view lines on screen now."""
        log = self._log
        top = int(log.scroll_offset.y)
        return list(log.lines[top : top + log.scrollable_content_region.height])

    def show_job(
        self,
        job_id: str | None,
        *,
        paths: LogPaths | None,
        world_size: int | None,
        job_active: bool,
        batch_log: str | None = None,
        launcher: str | None = None,
    ) -> None:
        """Show (and follow) a job's logs; None clears the pane.

        ``paths`` come from the history (None for a job ntui did not submit: then only ``batch_log``,
        the ``StdOut`` path from ``scontrol``, is shown, and per-rank logs are unknown); ``launcher`` (the
        history's) says what srun's ``task N`` is. Calling it again for the same job only updates ``job_active``
        (running -> finished), keeping the view.
        """
        if not self._ready:  # before mount: apply it once the children exist
            kwargs = {"paths": paths, "world_size": world_size, "job_active": job_active, "batch_log": batch_log,
                      "launcher": launcher}
            self._deferred = (job_id, kwargs)
            return
        session = self._follow.session
        if session is not None and session.same_files(job_id, paths, launcher, batch_log):
            if session.job_active != job_active:  # the same job again: only whether it still runs
                session.job_active = self._shown.job_active = job_active
                session.wake.set()
            return
        files, discover, note = _files_of(job_id, paths, world_size, batch_log)
        first: Key = 0 if 0 in files else BATCH
        self._begin(Shown(job_id, job_active, note, LogView(0, "rank", (first,) if files else ()), last_rank=first))
        if job_id is None:
            self._set_triage(TriageLine("no job selected", False))
            self._update_status()
            return
        self._apply_rows(tuple(RankRow(k, None, False, 0, "", "", "pending" if job_active else "missing")
                               for k in sorted(files, key=_key_sort)))
        self._set_triage(TriageLine("reading the logs…" if files else note, False))
        self._update_status()
        if files or discover:
            session = WatchSession(self._follow.token, job_id, files, self._shown.view, job_active=job_active,
                                   paths=paths, discover=discover, launcher=launcher)
            self._follow = replace(self._follow, session=session)
            self.run_worker(functools.partial(self._watch, session), name="log-watcher", group="log-pane",
                            description=f"following the logs of job {job_id}", thread=True, exclusive=True,
                            exit_on_error=False)

    @classmethod
    def build(cls, deps: TabDeps) -> LogPane:
        clock = deps.clock
        return cls(deps.settings.logs, clock=(lambda: clock().timestamp()) if clock is not None else time.time,
                   files=deps.files, links=deps.links, id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """The selected job's logs, once it is known where they are (:func:`log_target`); a job of a cluster
        reached over ssh: its batch log there (:meth:`show_remote`)."""
        if selected.cluster is not None:
            self.show_remote(selected)
            return
        self._follow = replace(self._follow, remote=None)
        target = log_target(selected)
        if target is None or target == self.target:
            return
        self.target = target
        self.show_job(target.job_id, paths=target.paths, world_size=target.world_size, job_active=target.job_active,
                      batch_log=target.batch_log, launcher=target.launcher)

    def show_remote(self, selected: SelectedJob) -> None:
        """A job of a cluster reached over ssh: its batch log (``scontrol``'s StdOut there) read through that
        cluster's files (the agent over its master), its tail then its new lines by offset, as ``ntui --cluster NAME
        logs -f`` does, and the ranks' own logs found by the job's history entry there (:meth:`_follow_remote`)."""
        cluster, job_id, path = selected.cluster, selected.job_id, selected.batch_log
        assert cluster is not None
        shown = RemoteJob(cluster, job_id, path)
        remote = self._follow.remote
        if remote is not None and remote.same(shown):
            if remote.active != selected.active:  # the same job: only whether it still runs
                remote.active = selected.active
            return
        if not self._ready:
            return  # mounted later: the container hands the selection again (JobTab.on_mount)
        self.target = None  # a local job selected next is shown afresh
        shown.active = selected.active
        note = "over ssh: the batch log, and each rank's log when ntui submitted the job there"
        keys: tuple[Key, ...] = (BATCH,) if path else ()
        self._begin(Shown(job_id, selected.active, note, LogView(0, "rank", keys), last_rank=BATCH), shown)
        if job_id is None:
            return
        if not path:
            self._set_triage(TriageLine(f"looking up where job {job_id} writes on {cluster} (scontrol there)…",
                                        False))
            self._update_status()
            return
        self._apply_rows((RankRow(BATCH, None, False, 0, "", "", "reading…"),))
        self._set_triage(TriageLine(f"the batch log on {cluster}: {path}", False))
        self._update_status()
        if self.files is None:
            self._set_triage(TriageLine(f"the files of {cluster} cannot be read from this view", True))
            return
        follow = RemoteRanks(shown, self.files, window=self.settings.window, interval=self.settings.poll_interval)
        self.run_worker(functools.partial(self._follow_remote, self._follow.token, follow), name="log-remote",
                        group="log-pane", description=f"following the log of job {job_id} on {cluster}",
                        thread=True, exclusive=True, exit_on_error=False)

    def _follow_remote(self, token: int, follow: RemoteRanks) -> None:
        """*Worker thread*: the remote job's logs, polled by the core's follow
        (:class:`~ntui.core.remote.rankfollow.RemoteRanks`: each file by its offsets, a dropped link said on the rows
        and retried with back-off), what each poll found posted, until the job ended or another one is shown."""
        worker = get_current_worker()

        def running() -> bool:
            return not worker.is_cancelled and token == self._follow.token

        def view_key() -> tuple[int, Key]:
            view = self._shown.view
            return view.gen, (view.keys[0] if view.keys else BATCH)

        while running():
            gen, key = view_key()
            got = follow.poll(gen, key)
            if got.shown is not None:
                self.post_message(self._view_message(token, gen, got.shown))
            self.post_message(LogPane.Rows(token, got.rows, got.triage))
            if got.done:
                return
            deadline = time.monotonic() + got.wait_s
            while running() and time.monotonic() < deadline and view_key()[0] == gen:
                time.sleep(0.05)

    @staticmethod
    def _view_message(token: int, gen: int, content: Loaded | Appended) -> Message:
        if isinstance(content, Loaded):
            return LogPane.ViewLoaded(token, gen, content)
        return LogPane.Lines(token, gen, content.lines, content.partial)

    def show_failure(self, text: str) -> None:
        self.target = None  # the next selection tries again
        self._set_triage(TriageLine(f"the logs cannot be shown: {text}", False))

    def on_resize(self) -> None:
        self._share_height()

    def _share_height(self) -> None:
        """The rank table takes what is left once the log has :data:`LOG_MIN_LINES` (at least its header and two
        rows, at most 12 lines): on a short pane the log keeps a dozen lines and the table scrolls."""
        if not self._ready:
            return
        fixed = sum(w.outer_size.height for w in (self.query_one("#lp-triage"), self.query_one("#lp-status"))
                    if w.display)
        spare = self.size.height - fixed - LOG_MIN_LINES
        lines = max(RANKS_MIN_LINES, min(RANKS_MAX_LINES, spare))
        ranks = self.query_one("#lp-ranks", DataTable)
        if ranks.styles.max_height is None or ranks.styles.max_height.value != lines:
            ranks.styles.max_height = lines
            # the selected rank's row stays in sight in the smaller table
            self.call_after_refresh(lambda: ranks.move_cursor(row=ranks.cursor_row, scroll=True, animate=False))

    def open_rank(self, key: Key) -> None:
        """Follow one file (a rank, or ``"batch"``)."""
        if key not in self._shown.rows:
            return
        self._shown.last_rank = key
        self._set_view("rank", (key,))

    def open_merged(self, keys: Iterable[Key] | None = None) -> None:
        """Merged view (``[rN]`` prefixes) of ``keys``; default: the marked rows, else every rank."""
        if keys is None:
            keys = sorted(self._shown.marked, key=_key_sort) or [k for k in self._shown.order if not isinstance(k, str)]
        chosen = tuple(k for k in keys if k in self._shown.rows) or tuple(self._shown.order)
        self._set_view("merged", chosen)

    # -- internals: widgets --------------------------------------------------------------------------

    @property
    def _log(self) -> _TailLog:
        return self.query_one("#lp-log", _TailLog)

    @property
    def _ranks(self) -> DataTable[Any]:
        return self.query_one("#lp-ranks", DataTable)

    def _begin(self, shown: Shown, remote: RemoteJob | None = None) -> None:
        """Another job shown: the last one's follow stopped and its messages dropped (a new token), the pane
        emptied; ``shown``: the new job and the pane's state for it, one value."""
        if self._follow.session is not None:
            self._follow.session.stop()
        self.workers.cancel_group(self, "log-pane")
        self._follow = _Follow(self._follow.token + 1, remote=remote)
        self._shown = shown
        self._before_link = None
        self._reset_view_state()
        self._ranks.clear()
        self._log.clear()

    def _reset_view_state(self) -> None:
        self._reading = Reading.fresh(self.settings.window)
        self._log.set_mark(None)

    def _set_view(self, mode: ViewMode, keys: tuple[Key, ...], focus: tuple[int, int] | None = None) -> None:
        self._shown.view = LogView(self._shown.view.gen + 1, mode, keys, focus)
        self._reset_view_state()
        self._update_status()
        if self._follow.session is not None:
            self._follow.session.view = self._shown.view
            self._follow.session.wake.set()

    def _set_triage(self, line: TriageLine) -> None:
        self._triage = line
        widget = self.query_one("#lp-triage", Static)
        text = line.text
        if line.failed:
            text = f"✗ {text} · E: jump to it"
        elif line.problem:
            text = f"✗ {text}"
        widget.update(text)
        widget.set_class(line.failed or line.problem, "-failed")
        widget.set_class(not line.failed and text.startswith("no failure"), "-ok")

    def _update_status(self) -> None:
        view, files = self._shown.view, self._follow.session.files if self._follow.session is not None else {}
        path = files.get(view.keys[0]) if view.keys and view.mode == "rank" else None
        text, paused = status_line(self._shown, self._reading, path.name if path is not None else None)
        widget = self.query_one("#lp-status", Static)
        widget.update(text)
        widget.set_class(paused, "-paused")

    # -- rows ----------------------------------------------------------------------------------------

    @property
    def rank_filter(self) -> Filter:
        """The rank table's filter (``all``, ``failed``, ``errored``, ``silent``, ``slowest``)."""
        return self._shown.filter

    @property
    def table_keys(self) -> list[str]:
        """The rank table's lines as drawn: ``str(rank)``, ``"batch"`` or ``node:<name>``."""
        return list(self._shown.line_order)

    def set_filter(self, flt: Filter) -> None:
        self._shown.filter = flt
        self._redraw_table()
        self._update_status()

    def toggle_node(self, node: str | None) -> None:
        """Expand a node's line to its ranks, or fold it."""
        self._shown.expanded.symmetric_difference_update({node})
        self._redraw_table()

    _COLUMNS: ClassVar[tuple[str, ...]] = tuple(key for _, key, _ in COLUMNS)

    def _apply_rows(self, rows: Sequence[RankRow]) -> None:
        self._shown.rows = {r.key: r for r in rows}
        self._shown.order = sorted(self._shown.rows, key=_key_sort)
        self._redraw_table()

    def _redraw_table(self) -> None:
        """Diff the table against the lines :func:`~ntui.core.logs.ranktable.table_lines` gives: update changed
        cells, add new lines; rebuild (keeping the cursor's line) only when the order changed."""
        table = self._ranks
        lines = table_lines(list(self._shown.rows.values()), flt=self._shown.filter, expanded=self._shown.expanded,
                            now=self.clock(), job_active=self._shown.job_active)
        order = [x.key for x in lines]
        cursor: str | None = None
        if order[: len(self._shown.line_order)] != self._shown.line_order:
            if self._shown.line_order and 0 <= table.cursor_row < len(self._shown.line_order):
                cursor = self._shown.line_order[table.cursor_row]
            table.clear()
            self._shown.cells.clear()
            self._shown.line_order = []
        with self.app.batch_update():
            for line in lines:
                cells = _cells(line, self._shown.marked)
                old = self._shown.cells.get(line.key)
                if old is None:
                    table.add_row(*cells, key=line.key)
                    self._shown.line_order.append(line.key)
                elif old != cells:
                    for col, before, after in zip(self._COLUMNS, old, cells, strict=True):
                        if before != after:
                            table.update_cell(line.key, col, after)
                self._shown.cells[line.key] = cells
            if cursor is not None and cursor in self._shown.line_order:
                table.move_cursor(row=self._shown.line_order.index(cursor), animate=False)
        self._shown.lines = {x.key: x for x in lines}

    def _refresh_mark_cell(self, key: Key) -> None:
        line = self._shown.lines.get(_key_id(key))
        if line is None:
            return
        cells = _cells(line, self._shown.marked)
        self._shown.cells[line.key] = cells
        self._ranks.update_cell(line.key, "mark", cells[0])

    # -- message handlers ----------------------------------------------------------------------------

    def _link_tick(self) -> None:
        """A job of a cluster reached over ssh: while that cluster's link is down (or slow) every row says so (the
        follow's poll waits inside its files' own reconnects meanwhile, so it says nothing itself); once the link
        is back, the rows the follow said last come back, until its next poll replaces them."""
        remote = self._follow.remote
        if remote is None or not self._shown.rows or self.links is None:
            return
        said = self.links.of(remote.cluster).row_status()
        rows = self._shown.rows
        if said is None:
            if self._before_link is not None:
                before, self._before_link = self._before_link, None
                self._apply_rows(list(before.values()))
            return
        if all(r.status == said or r.status.startswith("link down") for r in rows.values()):
            return
        if self._before_link is None:
            self._before_link = dict(rows)
        self._apply_rows([replace(r, status=said) for r in rows.values()])

    def on_log_pane_rows(self, message: LogPane.Rows) -> None:
        if message.token != self._follow.token:
            return
        self._before_link = None  # the follow's own word again
        self._apply_rows(message.rows)
        self._set_triage(message.triage)
        self.polls += 1
        if self._shown.view.mode == "rank":
            self._update_status()

    def on_log_pane_view_loaded(self, message: LogPane.ViewLoaded) -> None:
        if message.token != self._follow.token or message.gen != self._shown.view.gen:
            return
        log = self._log
        log.quiet = True
        try:
            log.clear()
            log.set_mark(None)
            body = [_inert(x) for x in (*message.content.header, *message.content.lines)]
            log.write_lines(body, scroll_end=False)
        finally:
            log.quiet = False
        self._reading.loaded_gen = message.gen
        self._reading.header_count = len(message.content.header)
        self._reading.first_index = message.content.first_index
        self._reading.written = len(body)
        self._reading.partial = message.content.partial
        self._reading.excerpt = message.content.excerpt
        self._reading.pending.clear()
        self._reading.pending_count = 0
        if message.content.focus is not None:
            self._reading.following = False
            self.call_after_refresh(self._show_focus, message.content.focus)
        else:
            self._reading.following = True
            self.call_after_refresh(self._scroll_to_end)
        self._update_status()

    def on_log_pane_lines(self, message: LogPane.Lines) -> None:
        gen = message.gen
        if message.token != self._follow.token or gen != self._reading.loaded_gen or gen != self._shown.view.gen:
            return
        self._reading.partial = message.partial
        if message.lines:
            if self._reading.following and not self._reading.excerpt:
                self._write(message.lines)
            else:
                self._reading.pending.extend(message.lines)
                self._reading.pending_count += len(message.lines)
        self._update_status()

    @on(_TailLog.ScrolledUp)
    def _scrolled_up(self, event: _TailLog.ScrolledUp) -> None:
        event.stop()
        if self._reading.following and self._reading.loaded_gen == self._shown.view.gen:
            self._reading.following = False
            self._update_status()

    @on(DataTable.RowHighlighted, "#lp-ranks")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The user moved to a row: read that file now rather than at its backed-off time."""
        event.stop()
        line = self._shown.lines.get(event.row_key.value or "")
        keys = [r.key for r in line.ranks] if line is not None and line.kind == "node" else []
        key = self._key_of(event.row_key.value)
        if key is not None:
            keys.append(key)
        if keys and self._follow.session is not None:
            for k in keys:
                self._follow.session.wanted.add(k)
            self._follow.session.wake.set()

    @on(DataTable.RowSelected, "#lp-ranks")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        line = self._shown.lines.get(event.row_key.value or "")
        if line is not None and line.kind == "node":
            self.toggle_node(line.node)
            return
        key = self._key_of(event.row_key.value)
        if key is not None:
            self.open_rank(key)

    @on(Input.Submitted, "#lp-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._shown.search = event.value.strip() or None
        self.remove_class("-searching")
        self._log.focus()
        if self._shown.search:
            self._find(forward=True, from_start=True)
        else:
            self._shown.search_note = ""
            self._update_status()

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and self.has_class("-searching"):
            event.stop()
            self.remove_class("-searching")
            self._log.focus()

    def _key_of(self, row_key: str | None) -> Key | None:
        line = self._shown.lines.get(row_key or "")
        return line.rank_key if line is not None else None

    # -- the Log -------------------------------------------------------------------------------------

    def _write(self, lines: Sequence[str]) -> None:
        log = self._log
        log.quiet = True
        try:
            log.write_lines([_inert(x) for x in lines], scroll_end=False)
            log.scroll_end(animate=False, immediate=True, x_axis=False)
        finally:
            log.quiet = False
        self._reading.written += len(lines)

    def _scroll_to_end(self) -> None:
        log = self._log
        log.quiet = True
        try:
            log.scroll_end(animate=False, immediate=True, x_axis=False)
        finally:
            log.quiet = False
        if self._follow.session is not None:
            self._follow.session.shown.set()

    def _pruned(self) -> int:
        return self._reading.written - len(self._log.lines)

    def _y_of_index(self, index: int) -> int | None:
        """Where the line with this index number is in the ``Log`` (rank views), or None."""
        if self._reading.first_index is None:
            return None
        y = index - self._reading.first_index + self._reading.header_count - self._pruned()
        return y if self._reading.header_count <= y + self._pruned() and 0 <= y < len(self._log.lines) else None

    def _show_y(self, y: int, top: int | None = None) -> None:
        log = self._log
        height = max(1, log.scrollable_content_region.height)
        if top is None:
            top = y - height // 2
        if y - top >= height:
            top = y - height + 1
        log.set_mark(y)
        log.scroll_to(y=max(0, top), animate=False, immediate=True)

    def _show_focus(self, focus: tuple[int, int]) -> None:
        if self._follow.session is not None:
            self._follow.session.shown.set()
        start, line = focus
        y = self._y_of_index(line)
        if y is None:
            self._update_status()
            return
        ys = self._y_of_index(start)
        top = (ys if ys is not None else y) - 2
        self._reading.following = False
        self._show_y(y, top)
        self._update_status()

    # -- actions -------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("search_next", "search_prev") and not self._shown.search:
            return False
        return not (action == "first_error" and not self._triage.failed)

    def action_merge(self) -> None:
        if self._shown.view.mode == "merged":
            shown = self._shown
            self.open_rank(shown.last_rank if shown.last_rank in shown.rows else (shown.order or [BATCH])[0])
        else:
            self.open_merged()

    def action_toggle_mark(self) -> None:
        table = self._ranks
        if not self._shown.order or table.cursor_row < 0:
            return
        try:
            row_key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:
            return
        line = self._shown.lines.get(row_key.value or "")
        if line is not None and line.kind == "node":  # a node's line marks (or unmarks) all its ranks
            keys = {r.key for r in line.ranks}
            self._shown.marked = self._shown.marked - keys if keys <= self._shown.marked else self._shown.marked | keys
            for k in keys:
                self._refresh_mark_cell(k)
            return
        key = self._key_of(row_key.value)
        if key is None:
            return
        self._shown.marked.symmetric_difference_update({key})
        self._refresh_mark_cell(key)

    def action_cycle_filter(self) -> None:
        self.set_filter(FILTERS[(FILTERS.index(self._shown.filter) + 1) % len(FILTERS)])

    def action_slowest(self) -> None:
        self.set_filter("all" if self._shown.filter == "slowest" else "slowest")

    def action_follow(self) -> None:
        reading = self._reading
        if self._shown.view.mode == "rank" and (reading.excerpt or reading.pending_count > len(reading.pending)):
            self._set_view("rank", self._shown.view.keys)
            return
        if self._shown.view.mode == "merged" and self._reading.pending_count > len(self._reading.pending):
            self._set_view("merged", self._shown.view.keys)
            return
        self._log.set_mark(None)
        self._reading.following = True
        pending = list(self._reading.pending)
        self._reading.pending.clear()
        self._reading.pending_count = 0
        if pending:
            self._write(pending)
        else:
            self._scroll_to_end()
        self._update_status()

    def action_first_error(self) -> None:
        """Jump to the first error: the telling line of the rank that failed first (triage), in its log."""
        tri = self._triage
        row = self._shown.rows.get(tri.key) if tri.key is not None else None
        line, start = tri.error_line, tri.error_start
        if row is not None and line is None:
            line, start = row.error_line, row.error_start
        if tri.key is None or row is None or line is None:
            self.notify("no error found in these logs", timeout=4)
            return
        focus = (start if start is not None else line, line)
        shown = self._shown.view.mode == "rank" and self._shown.view.keys == (tri.key,) and not self._reading.excerpt
        if shown and self._y_of_index(line) is not None:
            self._show_focus(focus)
            self._log.focus()
            return
        self._shown.last_rank = tri.key
        self._set_view("rank", (tri.key,), focus)
        row_node = row.node
        if _key_id(tri.key) not in self._shown.lines and self._shown.filter == "all":  # grouped: open its node
            self._shown.expanded.add(row_node)
            self._redraw_table()
        if _key_id(tri.key) in self._shown.line_order:  # the table's cursor follows
            self._ranks.move_cursor(row=self._shown.line_order.index(_key_id(tri.key)), animate=False)
        self._log.focus()

    def action_search(self) -> None:
        self.add_class("-searching")
        box = self.query_one("#lp-search", Input)
        box.value = self._shown.search or ""
        box.focus()

    def action_search_next(self) -> None:
        self._find(forward=True)

    def action_search_prev(self) -> None:
        self._find(forward=False)

    def _find(self, *, forward: bool, from_start: bool = False) -> None:
        term = (self._shown.search or "").lower()
        if not term:
            return
        log = self._log
        lines = log.lines
        n = len(lines)
        if n == 0:
            self._shown.search_note = f"“{self._shown.search}”: no lines"
            self._update_status()
            return
        if from_start:  # a new search: from the top of the window while following, else from the screen
            here = 0 if self._reading.following else (log.mark if log.mark is not None else int(log.scroll_offset.y))
            origin = here - 1
        else:
            origin = log.mark if log.mark is not None else int(log.scroll_offset.y)
        step = 1 if forward else -1
        for i in range(1, n + 1):
            y = (origin + step * i) % n
            if term in lines[y].lower():
                self._reading.following = False
                self._show_y(y)
                wrapped = (y <= origin) if forward else (y >= origin)
                self._shown.search_note = (f"“{self._shown.search}”: line {y + 1} of {n} shown"
                                           + (" (wrapped)" if wrapped else ""))
                self._update_status()
                return
        self._shown.search_note = f"“{self._shown.search}”: not in the {n} lines shown"
        self._update_status()

    # -- the worker (a thread; touches no widget) ----------------------------------------------------

    def _watch(self, session: WatchSession) -> None:
        """*Worker thread*: the core's follow of the shown job (:func:`~ntui.core.logs.follow.follow_job`), its views
        and rows posted to the pane, waiting while the pane's queue is long (toolong's backpressure)."""
        worker = get_current_worker()

        def post(message: Message) -> None:
            self.post_message(message)
            if self.message_queue_size > QUEUE_HIGH:
                while not (session.stopped or worker.is_cancelled) and self.message_queue_size > QUEUE_LOW:
                    time.sleep(0.02)

        follow_job(session, window=self.settings.window, interval=self.settings.poll_interval, clock=self.clock,
                   show_view=lambda gen, content: post(self._view_message(session.token, gen, content)),
                   show_rows=lambda rows, triage: post(LogPane.Rows(session.token, rows, triage)),
                   running=lambda: not worker.is_cancelled)
