"""The Stacks tab: where every rank of the selected running job is, grouped into classes of identical stacks.

Showing the tab (its key, ``k``, or a click) is the request: for a running job whose stacks were not taken yet, a
thread worker of the tab base (:meth:`~ntui.ui.widgets.job_tab.JobTab.compute`) runs
:func:`~ntui.core.stacks.take.take_stacks` (one ``srun --overlap`` step, py-spy on every rank
twice, a few seconds apart) and posts the grouped answer; ``k`` in the tab takes them again. Moving through the
queue with the tab shown takes nothing (no step per row passed over): it shows the stacks already taken for the
job, or says how to take them. The text: the head line, the classes of ranks (the odd ones first, in bold; each
waiting or moving), the workers' classes, and every problem in words with what to do.

A job of a cluster reached over ssh (``SelectedJob.cluster``) is sampled as ``ntui --cluster NAME stacks`` does
(:func:`~ntui.core.stacks.take.take_cluster_stacks`): the step through that cluster's runner (the app's
``cluster_runner``), running the cluster's own interpreter and py-spy as its files (``TabDeps.files``: its agent)
say them, all in the worker; no ntui there, or a dropped link, is said in the tab. Its stacks are kept by cluster
and id (the same id may be on two clusters).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ntui.core.jobs.selected import SelectedJob
from ntui.core.slurm.runner import CommandRunner
from ntui.core.stacks.group import Stacks
from ntui.core.stacks.take import NoToolsThere, NotRunning, take_cluster_stacks, take_stacks
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec, displayed

if TYPE_CHECKING:
    from ntui.core.remote.files import ClusterFiles

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
    OVER_SSH = True  # a remote job's step runs through its cluster's runner, the cluster's own tools on its nodes

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
        self.cluster_files = deps.files
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

    def shown_job(self, selected: SelectedJob) -> str | None:
        """The key of a job's stacks: its id, on a cluster reached over ssh that cluster's name and its id."""
        if selected.job_id is None or selected.cluster is None:
            return selected.job_id
        return f"{selected.cluster}/{selected.job_id}"

    def show_selected(self, selected: SelectedJob) -> None:
        job_id, key = selected.job_id, self.shown_job(selected)
        where = f" on {inert(selected.cluster)}" if selected.cluster is not None else ""
        if job_id is None:
            self._note = "Select a running job: k takes the stacks of its ranks."
        elif not selected.running and self._stacks(key) is None:
            state = selected.job.state if selected.job is not None else "not in the queue"
            self._note = (f"Job {inert(job_id)}{where} is {inert(state)}: stacks are taken from a running job's "
                          "processes (ntui triage reads an ended job's logs).")
        elif self.taking == key:
            self._note = self._taking_words(job_id, selected.cluster)
        elif self._stacks(key) is None:
            self._note = (f"k takes the stacks of every rank of job {inert(job_id)}{where} (py-spy, two samples 3 s "
                          "apart).")
        self._draw()

    def tab_shown(self) -> None:
        super().tab_shown()
        if self.selected.running and self._stacks(self.shown_job(self.selected)) is None:
            self.action_take()

    def action_take(self) -> None:
        """Take the selected running job's stacks (again)."""
        selected = self.selected
        job_id, key, cluster = selected.job_id, self.shown_job(selected), selected.cluster
        if job_id is None or key is None or not selected.running or self.taking == key or not displayed(self):
            return
        self.forget(key)
        if cluster is not None:
            files, runners = self.cluster_files, getattr(self.app, "cluster_runner", None)
            if files is None or runners is None:
                self._note = f"No stacks for job {inert(job_id)}: the files of {inert(cluster)} are not reachable"
                self._draw()
                return
            self._note = self._taking_words(job_id, cluster)
            self.compute(key, lambda: _take_there(files, runners, cluster, job_id), what="stacks")
        else:
            self._note = self._taking_words(job_id, None)
            runner = self.runner
            self.compute(key, lambda: _take(runner, job_id), what="stacks")
        self._draw()

    @staticmethod
    def _taking_words(job_id: str, cluster: str | None) -> str:
        where = f" on {inert(cluster)} (over ssh)" if cluster is not None else ""
        return (f"Taking the stacks of job {inert(job_id)}'s ranks{where}: one srun step on its nodes, py-spy on "
                "every rank twice, 3 s apart…")

    @property
    def taken(self) -> dict[str, Computed]:
        """The stacks kept, by job (the last :data:`~ntui.ui.widgets.job_tab.JobTab.KEEP` jobs taken)."""
        return {job: got for job in list(self._results or ()) if (got := self._stacks(job)) is not None}

    def _stacks(self, job_id: str | None) -> Computed | None:
        """The stacks last taken of ``job_id`` (a refusal is not kept as stacks)."""
        got = self.result(job_id)
        return got if got is not None and isinstance(got.value, Stacks) else None

    def show_result(self, computed: Computed) -> None:
        if isinstance(computed.value, str):  # not running, or no ntui on its cluster: said in the tab
            self._note = f"No stacks for job {inert(self.selected.job_id or computed.job_id)}: {inert(computed.value)}"
        self._draw()

    def _taken_at(self, at: float) -> str:
        if self.clock is not None:  # a frozen clock (snapshots): the time the clock says
            return self.clock().strftime("%H:%M:%S")
        return time.strftime("%H:%M:%S", time.localtime(at))

    def _draw(self) -> None:
        text = self.query_one("#stacks-text", Static)
        key = self.shown_job(self.selected)
        got = self._stacks(key) if self.taking != key else None
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


def _take_there(files_of: Callable[[str], ClusterFiles], runner_of: Callable[[str], CommandRunner], cluster: str,
                job_id: str) -> Stacks | str:
    """*Worker thread*: ``ntui --cluster NAME stacks``'s work for the app: the job's stacks taken on its cluster by
    that cluster's own tools, or why not in words (not running, no ntui there); a dropped link is raised (the
    tab's failure path says it)."""
    try:
        return take_cluster_stacks(runner_of(cluster), files_of(cluster), cluster, job_id)
    except (NotRunning, NoToolsThere) as exc:
        return str(exc)
