"""The details panel: ``scontrol show job -d`` of the selected job, plus what ntui knows from its history.

:func:`details_fields` is pure (what to show, as label/value pairs) so that it is tested without an app;
:class:`JobDetailsPanel` only lays it out: a key/value grid, then the script ntui submitted (highlighted).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.highlight import highlight
from textual.widgets import Static

from ntui.core.hosts import format_index_ranges
from ntui.core.jobfiles.lognames import shown_command
from ntui.core.jobfiles.machinery import fold_machinery
from ntui.core.jobs.details import DetailsView, flight_recorder_words
from ntui.core.jobs.selected import SelectedJob
from ntui.core.records.outcome import UNKNOWN
from ntui.core.slurm.common import StateCategory, exit_signal, state_category
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.scontrol import JobDetails
from ntui.core.slurm.sinfo import NodeState
from ntui.core.textsafe import inert
from ntui.core.waiting.why import Why
from ntui.ui.widgets.job_tab import JobTab, TabDeps, TabSpec, Tick

__all__ = ["JobDetailsPanel", "details_fields", "node_states_text", "state_style", "why_text"]

_STATE_STYLE = {
    StateCategory.PENDING: "yellow",
    StateCategory.RUNNING: "bold green",
    StateCategory.COMPLETING: "cyan",
    StateCategory.DONE: "green",
    StateCategory.FAILED: "bold red",
    StateCategory.OTHER: "magenta",
}


def state_style(state: str) -> str:
    return _STATE_STYLE[state_category(state)]


def inert_lines(text: str) -> str:
    """:func:`~ntui.core.textsafe.inert` for each line of a (multi-line) value."""
    return "\n".join(inert(line) for line in text.split("\n"))


def node_states_text(states: Iterable[NodeState]) -> Text:
    """One line per node: its state as Slurm prints it; trouble (not responding, down, drained) in red."""
    out = Text()
    for i, n in enumerate(states):
        if i:
            out.append("\n")
        words = n.state.upper() + ("  not responding" if not n.responding else "")
        if n.reason and "respond" not in n.reason.lower():
            words += f" · {n.reason}"
        out.append(f"{n.node}  ")
        out.append(words, style="" if n.healthy else "bold red")
    return out




def why_text(why: Why) -> Text:
    """A pending job's why: its headline (red when it will never start as it is), then its lines, dimmed."""
    head = why.headline[:1].upper() + why.headline[1:]
    out = Text(head, style="bold red" if why.never else "bold yellow")
    for line in why.lines:
        out.append("\n")
        out.append(line[:1].upper() + line[1:], style="dim" if not line.startswith("what to do") else "")
    return out


def _nodes(d: JobDetails) -> str:
    if not d.nodelist:
        return "not allocated yet"
    if not d.gres_by_node:
        return d.nodelist
    lines = []
    for node in d.nodes:
        idx = d.gres_by_node.get(node)
        lines.append(f"{node}  GPU {format_index_ranges(idx)}" if idx else node)
    return "\n".join(lines)


def _spelled(seconds: int | None, raw: str) -> str:
    """A duration in squeue's spelling (:func:`~ntui.core.slurm.durations.format_elapsed`), or Slurm's word for none
    (``UNLIMITED``) as it said it."""
    return format_elapsed(seconds) if seconds is not None else raw


def details_fields(view: DetailsView, elapsed: str | None = None) -> list[tuple[str, str | Text]]:
    """Label/value pairs, most useful first (pure). ``elapsed``: a running job's elapsed time now (the queue row's,
    ticking between refreshes), shown instead of the value the details were fetched with."""
    d, q, e, o = view.details, view.queue, view.entry, view.outcome
    rows: list[tuple[str, str | Text]] = []
    name = d.name if d else q.name if q else e.job_name if e else ""
    job = view.job_id
    raw = d.raw_job_id if d else q.raw_job_id if q else ""
    if raw and raw != job:
        job = f"{job}  (job {raw})"
    rows.append(("Job", f"{job}  {name}".rstrip()))
    if view.cluster is not None:
        rows.append(("Cluster", f"{view.cluster} (over ssh)"))
    user = d.user if d else q.user if q else ""
    if user:
        rows.append(("User", user))
    state = d.state if d else q.state if q else ""
    if o is not None and (d is None or not d.category.finished):
        state = o.state
    reason = d.reason if d else q.reason if q else ""
    if state:
        text = Text(state, style=state_style(state) if state != UNKNOWN else "magenta")
        if reason and state_category(state) is not StateCategory.RUNNING:
            text.append(f"  ({reason})", style="dim")
        rows.append(("State", text))
    exit_code = d.exit_code if d else (o.exit_code if o else None)
    if o is not None and o.exit_code:
        exit_code = o.exit_code
    if exit_code and (state_category(state).finished or exit_code not in ("0:0", "")):
        src = f"  (from {o.source})" if o is not None and o.source not in ("squeue", "none") else ""
        meaning = exit_signal(exit_code)
        rows.append(("Exit code", exit_code + (f" ({meaning})" if meaning else "") + src))
    if d is not None:
        rows.append(("Partition", " · ".join(x for x in (d.partition, d.qos and f"QOS {d.qos}",
                                                          d.account and f"account {d.account}") if x)))
        rows.append(("Nodes", _nodes(d)))
        if view.node_states:
            rows.append(("Node state", node_states_text(view.node_states)))
        rows.append(("Time", f"{elapsed or _spelled(d.run_time_s, d.run_time)} of "
                             f"{_spelled(d.time_limit_s, d.time_limit)}"))
        times = [f"submitted {d.submit_time}" if d.submit_time else "",
                 f"started {d.start_time}" if d.start_time and state_category(d.state) is not StateCategory.PENDING
                 else f"expected {d.start_time}" if d.start_time else "",
                 f"ended {d.end_time}" if d.end_time and d.category.finished else ""]
        if any(times):
            rows.append(("When", "\n".join(t for t in times if t)))
        rows.append(("Command", shown_command(d.command, e.script_path if e else None) or "(wrapped script)"))
        rows.append(("Work dir", d.work_dir))
        if d.std_out:
            rows.append(("Stdout", d.std_out))
        if d.std_err and d.std_err != d.std_out:
            rows.append(("Stderr", d.std_err))
        if d.restarts:
            rows.append(("Restarts", str(d.restarts)))
    elif q is not None:
        rows.append(("Partition", " · ".join(x for x in (q.partition, q.qos and f"QOS {q.qos}") if x)))
        rows.append(("Nodes", q.nodelist or "not allocated"))
        rows.append(("Time", f"{elapsed or _spelled(q.elapsed_s, q.elapsed)} of "
                             f"{_spelled(q.time_limit_s, q.time_limit)}"))
        if q.workdir:
            rows.append(("Work dir", q.workdir))
    if e is not None:
        preset = " ".join([e.preset, *(f"--set {o_}" for o_ in e.overrides)])
        rows.append(("ntui preset", preset))
        rows.append(("Launcher", f"{e.launcher} · {e.nodes} node(s) · world size {e.world_size}"))
        if e.script_path and (d is None or shown_command(d.command, e.script_path) != e.script_path):
            rows.append(("Script", e.script_path))
        if e.log_dir:
            rows.append(("Logs", e.log_dir))
        recorder = flight_recorder_words(e, view.job_id)
        if recorder and state_category(state).finished and state != "COMPLETED":
            rows.append(("Flight recorder", recorder))
    if view.slurm:
        rows.append(("Slurm", view.slurm))
    if view.note:
        rows.append(("Note", Text(view.note, style="italic")))
    return rows


class JobDetailsPanel(JobTab, VerticalScroll):
    """Shows a :class:`DetailsView` (or a hint when no job is selected)."""

    TAB = TabSpec("Details", "tab-details", "jobs-details", "d", "ntui.jobs.tab_details",
                  "The selected job's details: scontrol show job -d, what ntui submitted, why it waits")
    FEED_HIDDEN = True  # text only: shown at once when its tab is
    FRESH_DETAILS = True  # shown, a running job's node states are looked at again
    OVER_SSH = True  # scontrol show job is asked of the job's own cluster

    DEFAULT_CSS = """
    JobDetailsPanel {
        height: 1fr;
        padding: 0 1;
        & > #details-why { height: auto; display: none; margin-bottom: 1; }
        & > #details-why.-shown { display: block; }
        & > #details-fields { height: auto; }
        & > #details-script-title { height: auto; margin-top: 1; color: $text-muted; text-style: bold; }
        & > #details-script { height: auto; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.view: DetailsView | None = None
        self.elapsed: str | None = None
        self.why: Why | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="details-why")
        yield Static("Select a job to see its details.", id="details-fields")
        yield Static("", id="details-script-title")
        yield Static("", id="details-script")

    @classmethod
    def build(cls, deps: TabDeps) -> JobDetailsPanel:
        return cls(id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """The selection's view (None: the view shown stays, e.g. while its details are looked up)."""
        if selected.job_id is None:
            self.show(None)
            self._show_why(None)
        elif selected.source == "record":  # nothing moves in a record: no why, no ticking time
            self._show_why(None)
            if selected.view is not None:
                self.show(selected.view)
        elif selected.view is not None:
            self.show(selected.view)

    def show_failure(self, text: str) -> None:
        self.query_one("#details-fields", Static).update(Text(f"The details cannot be shown: {text}", style="red"))

    def tick(self, tick: Tick) -> None:
        """The second's why (a pending job: above its details) and elapsed time (a running job: the Time row follows
        the queue row's, in squeue's spelling, ``0:12``, ``1-02:03:04``, like the limit beside it)."""
        self._show_why(tick.why)
        if tick.job_id is None:
            return
        elapsed = format_elapsed(tick.elapsed_s) if tick.elapsed_s is not None else None
        if elapsed == self.elapsed:
            return
        self.elapsed = elapsed
        if self.view is not None:
            self._fields(self.view)

    def _show_why(self, why: Why | None) -> None:
        """A pending job's why above its details (None: hidden); redrawn only when its words change."""
        if why == self.why:
            return
        self.why = why
        box = self.query_one("#details-why", Static)
        box.update(why_text(inert_why(why)) if why is not None else "")
        box.set_class(why is not None, "-shown")

    def show(self, view: DetailsView | None) -> None:
        if view == self.view and view is not None:
            return
        scrolled_job = self.view.job_id if self.view else None
        if view is None or scrolled_job != view.job_id:
            self.elapsed = None
        self.view = view
        fields = self.query_one("#details-fields", Static)
        title = self.query_one("#details-script-title", Static)
        script = self.query_one("#details-script", Static)
        if view is None:
            fields.update("Select a job to see its details.")
            title.update("")
            script.update("")
            return
        self._fields(view)
        if view.entry is not None and view.entry.script:
            folded = fold_machinery(view.entry.script)
            title.update("Script ntui submitted" + (f" (ntui's own {folded.machinery_lines} lines folded; the "
                                                      "script file holds them all)" if folded.folds else ""))
            script.update(highlight(folded.text.rstrip("\n"), language="bash"))
        else:
            title.update("")
            script.update("")
        if scrolled_job != view.job_id:
            self.scroll_home(animate=False)

    def _fields(self, view: DetailsView) -> None:
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(style="bold", no_wrap=True, justify="right")
        grid.add_column(overflow="fold", ratio=1)
        for label, value in details_fields(view, self.elapsed):
            # names, reasons and paths come from Slurm and other users: shown inert (no escape sequences)
            grid.add_row(label, inert_lines(value) if isinstance(value, str) else value)
        self.query_one("#details-fields", Static).update(grid)


def inert_why(why: Why) -> Why:
    """The why with Slurm's and other users' words made inert (reasons, job names, node lists)."""
    from dataclasses import replace

    return replace(why, headline=inert(why.headline), lines=tuple(inert(line) for line in why.lines))
