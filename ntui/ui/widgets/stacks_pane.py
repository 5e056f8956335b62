"""The Stacks tab: where every rank of the selected running job is, grouped into classes of identical stacks.

Showing the tab (its key, ``k``, or a click) is the request: for a running job whose stacks were not taken yet, a
thread worker of the tab base (:meth:`~ntui.ui.widgets.job_tab.JobTab.compute`) runs
:func:`~ntui.core.stacks.take.take_stacks` (one ``srun --overlap`` step, py-spy on every rank
twice, a few seconds apart) and posts the grouped answer; ``k`` in the tab takes them again. Moving through the
queue with the tab shown takes nothing (no step per row passed over): it shows the stacks already taken for the
job, or says how to take them. The text: the head line, the classes of ranks (the odd ones first, in bold; each
waiting or moving), the workers' classes, and every problem in words with what to do.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ntui.core.jobs.selected import SelectedJob
from ntui.core.slurm.runner import CommandRunner
from ntui.core.stacks.group import Stacks
from ntui.core.stacks.take import NotRunning, take_stacks
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec, displayed

__all__ = ["StacksPane", "stacks_text"]


def stacks_text(stacks: Stacks, taken_at: str) -> Text:
    """The grouped stacks as the tab shows them (pure)."""
    lines = stacks.lines()
    out = Text(inert(lines[0]) + f" · taken {taken_at}", style="bold")
    out.append("\n")
    for i, c in enumerate(stacks.classes):
        odd = i < len(stacks.classes) - 1  # every class but the largest is the odd one out
        out.append("\n" + inert(c.who) + ": ", style="bold yellow" if odd else "bold")
        out.append(inert(c.where))
        if c.state:
            out.append(f" · {c.state}", style="dim" if c.state == "waiting" else "green")
    if stacks.worker_classes:
        out.append("\n\nWorkers (processes a rank started):", style="bold")
        for c in stacks.worker_classes:
            out.append("\n" + inert(c.who) + ": ", style="bold")
            out.append(inert(c.where))
            if c.state:
                out.append(f" · {c.state}", style="dim" if c.state == "waiting" else "green")
    for problem in stacks.problems:
        out.append("\n\n" + inert(problem), style="red")
    return out


class StacksPane(JobTab, VerticalScroll):
    """The stacks of one running job (see the module docstring)."""

    TAB = TabSpec("Stacks", "tab-stacks", "jobs-stacks", "k", "ntui.jobs.tab_stacks",
                  "Where every rank of the selected running job is: Python stacks (py-spy), grouped",
                  groups=("ntui-stacks",))
    BINDINGS = [Binding("k", "take", "Take stacks again", id="ntui.stacks.take", tooltip="py-spy every rank again")]

    DEFAULT_CSS = """
    StacksPane {
        height: 1fr;
        padding: 0 1;
        & > #stacks-text { width: 1fr; height: auto; }
    }
    """

    def __init__(self, deps: TabDeps, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner: CommandRunner = deps.runner
        self.clock = deps.clock
        self._note = "Select a running job: k takes the stacks of its ranks."

    def compose(self) -> ComposeResult:
        yield Static("", id="stacks-text", markup=False)

    @classmethod
    def build(cls, deps: TabDeps) -> StacksPane:
        return cls(deps, id=cls.TAB.widget_id)

    @property
    def taking(self) -> str | None:
        """The job whose stacks a worker takes now."""
        return self.computing

    def show_failure(self, text: str) -> None:
        self._note = f"No stacks: {text}"
        self._draw()

    def show_selected(self, selected: SelectedJob) -> None:
        job_id = selected.job_id
        if job_id is None:
            self._note = "Select a running job: k takes the stacks of its ranks."
        elif not selected.running and self._stacks(job_id) is None:
            state = selected.job.state if selected.job is not None else "not in the queue"
            self._note = (f"Job {inert(job_id)} is {inert(state)}: stacks are taken from a running job's "
                          "processes (ntui triage reads an ended job's logs).")
        elif self.taking == job_id:
            self._note = self._taking_words(job_id)
        elif self._stacks(job_id) is None:
            self._note = f"k takes the stacks of every rank of job {inert(job_id)} (py-spy, two samples 3 s apart)."
        self._draw()

    def tab_shown(self) -> None:
        super().tab_shown()
        if self.selected.running and self._stacks(self.selected.job_id) is None:
            self.action_take()

    def action_take(self) -> None:
        """Take the selected running job's stacks (again)."""
        job_id = self.selected.job_id
        if job_id is None or not self.selected.running or self.taking == job_id or not displayed(self):
            return
        self.forget(job_id)
        self._note = self._taking_words(job_id)
        runner = self.runner
        self.compute(job_id, lambda: _take(runner, job_id), what="stacks")
        self._draw()

    @staticmethod
    def _taking_words(job_id: str) -> str:
        return (f"Taking the stacks of job {inert(job_id)}'s ranks: one srun step on its nodes, py-spy on every "
                "rank twice, 3 s apart…")

    @property
    def taken(self) -> dict[str, Computed]:
        """The stacks kept, by job (the last :data:`~ntui.ui.widgets.job_tab.JobTab.KEEP` jobs taken)."""
        return {job: got for job in list(self._results or ()) if (got := self._stacks(job)) is not None}

    def _stacks(self, job_id: str | None) -> Computed | None:
        """The stacks last taken of ``job_id`` (a refusal is not kept as stacks)."""
        got = self.result(job_id)
        return got if got is not None and isinstance(got.value, Stacks) else None

    def show_result(self, computed: Computed) -> None:
        if isinstance(computed.value, str):  # not running: said in the tab
            self._note = f"No stacks for job {inert(computed.job_id)}: {inert(computed.value)}"
        self._draw()

    def _taken_at(self, at: float) -> str:
        if self.clock is not None:  # a frozen clock (snapshots): the time the clock says
            return self.clock().strftime("%H:%M:%S")
        return time.strftime("%H:%M:%S", time.localtime(at))

    def _draw(self) -> None:
        text = self.query_one("#stacks-text", Static)
        job_id = self.selected.job_id
        got = self._stacks(job_id) if self.taking != job_id else None
        if got is None:
            text.update(self._note)
            return
        text.update(stacks_text(got.value, self._taken_at(got.at)))


def _take(runner: CommandRunner, job_id: str) -> Stacks | str:
    """*Worker thread*: the job's stacks, or why it has none because it does not run (its words); any other
    failure is raised (the tab's failure path says it)."""
    try:
        return take_stacks(runner, job_id)
    except NotRunning as exc:
        return str(exc)
