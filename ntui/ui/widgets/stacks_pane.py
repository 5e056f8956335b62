"""The Stacks tab: where every rank of the selected running job is, grouped into classes of identical stacks.

Showing the tab (its key, ``k``, or a click) is the request: for a running job whose stacks were not taken yet, a
thread worker runs :func:`~ntui.core.stacks.take.take_stacks` (one ``srun --overlap`` step, py-spy on every rank
twice, a few seconds apart) and posts the grouped answer; ``k`` in the tab takes them again. Moving through the
queue with the tab shown takes nothing (no step per row passed over): it shows the stacks already taken for the
job, or says how to take them. The text: the head line, the classes of ranks (the odd ones first, in bold; each
waiting or moving), the workers' classes, and every problem in words with what to do.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ntui.core.errors import describe_error
from ntui.core.jobs.selected import SelectedJob
from ntui.core.slurm.runner import CommandRunner
from ntui.core.stacks.group import Stacks
from ntui.core.stacks.take import NotRunning, take_stacks
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import JobTab, TabDeps, TabSpec, displayed

__all__ = ["StacksPane", "stacks_text"]

#: The jobs whose stacks are kept (a job selected again shows its last ones).
KEPT = 8


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

    class _Taken(Message, bubble=False):
        def __init__(self, job_id: str, stacks: Stacks | None, error: str | None, at: float) -> None:
            super().__init__()
            self.job_id = job_id
            self.stacks = stacks
            self.error = error
            self.at = at

    def __init__(self, deps: TabDeps, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner: CommandRunner = deps.runner
        self.clock = deps.clock
        self.taking: str | None = None  # the job whose stacks a worker takes
        self.taken: OrderedDict[str, tuple[Stacks, float]] = OrderedDict()
        self._note = "Select a running job: k takes the stacks of its ranks."

    def compose(self) -> ComposeResult:
        yield Static("", id="stacks-text", markup=False)

    @classmethod
    def build(cls, deps: TabDeps) -> StacksPane:
        return cls(deps, id=cls.TAB.widget_id)

    def show_failure(self, text: str) -> None:
        self.taking = None
        self._note = f"No stacks: {text}"
        self._draw()

    def show_selected(self, selected: SelectedJob) -> None:
        job_id = selected.job_id
        if job_id is None:
            self._note = "Select a running job: k takes the stacks of its ranks."
        elif not selected.running and job_id not in self.taken:
            state = selected.job.state if selected.job is not None else "not in the queue"
            self._note = (f"Job {inert(job_id)} is {inert(state)}: stacks are taken from a running job's "
                          "processes (ntui triage reads an ended job's logs).")
        elif self.taking == job_id:
            self._note = self._taking_words(job_id)
        elif job_id not in self.taken:
            self._note = f"k takes the stacks of every rank of job {inert(job_id)} (py-spy, two samples 3 s apart)."
        self._draw()

    def tab_shown(self) -> None:
        super().tab_shown()
        if self.selected.running and self.selected.job_id not in self.taken:
            self.action_take()

    def action_take(self) -> None:
        """Take the selected running job's stacks (again)."""
        job_id = self.selected.job_id
        if job_id is None or not self.selected.running or self.taking == job_id or not displayed(self):
            return
        self.taking = job_id
        self._note = self._taking_words(job_id)
        self.taken.pop(job_id, None)
        self._draw()
        self._take(job_id)

    @staticmethod
    def _taking_words(job_id: str) -> str:
        return (f"Taking the stacks of job {inert(job_id)}'s ranks: one srun step on its nodes, py-spy on every "
                "rank twice, 3 s apart…")

    @work(thread=True, exclusive=True, exit_on_error=False, group="ntui-stacks", description="stacks")
    def _take(self, job_id: str) -> None:
        try:
            stacks = take_stacks(self.runner, job_id)
        except NotRunning as exc:
            self.post_message(self._Taken(job_id, None, str(exc), time.time()))
        except Exception as exc:  # noqa: BLE001 - Slurm, the step, the probe: said in the tab
            self.post_message(self._Taken(job_id, None, describe_error(exc), time.time()))
        else:
            self.post_message(self._Taken(job_id, stacks, None, time.time()))

    @on(_Taken)
    def _was_taken(self, msg: StacksPane._Taken) -> None:
        msg.stop()
        if self.taking == msg.job_id:
            self.taking = None
        if msg.stacks is not None:
            self.taken[msg.job_id] = (msg.stacks, msg.at)
            while len(self.taken) > KEPT:
                self.taken.popitem(last=False)
        if not self.latest(msg.job_id):
            return
        if msg.stacks is None:
            self._note = f"No stacks for job {inert(msg.job_id)}: {inert(msg.error or '')}"
        self._draw()

    def _taken_at(self, at: float) -> str:
        if self.clock is not None:  # a frozen clock (snapshots): the time the clock says
            return self.clock().strftime("%H:%M:%S")
        return time.strftime("%H:%M:%S", time.localtime(at))

    def _draw(self) -> None:
        text = self.query_one("#stacks-text", Static)
        job_id = self.selected.job_id
        got = self.taken.get(job_id) if job_id is not None and self.taking != job_id else None
        if got is None:
            text.update(self._note)
            return
        text.update(stacks_text(got[0], self._taken_at(got[1])))
