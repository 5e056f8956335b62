"""What every tab of the jobs view is: a widget that shows one :class:`~ntui.core.jobs.selected.SelectedJob`.

A tab (Details, GPUs, Logs, Report, Sweep, ...) mixes :class:`JobTab` into its widget class and says three things:
its :class:`TabSpec` (title, ids, the key that shows it), how it is built from the view's :class:`TabDeps`, and
:meth:`JobTab.show_selected`. The container (:mod:`ntui.ui.widgets.job_tabs`) hands every tab each new selection
through :meth:`JobTab.select_job`; the rest is here, once for all tabs:

* **visibility**: a tab is given the selection while it is displayed; a hidden one keeps it as stale and catches up
  when its tab is shown (:meth:`JobTab.tab_shown`). A tab whose own work goes on at a slower pace while hidden (the
  log pane reads the batch log, the GPU pane pauses its step) says ``FEED_HIDDEN`` and gets every selection at once;
* **failure**: an exception in :meth:`~JobTab.show_selected`, or a failed worker of one of the tab's
  ``TabSpec.groups``, is shown in the tab (:meth:`~JobTab.show_failure`) and noticed once per tab, never taking the
  view down;
* **work for a job**: :meth:`~JobTab.compute` runs a function for a job in a thread worker of the tab's first group;
  its result comes back to :meth:`~JobTab.show_result` on the UI thread while that job is still the selected one and
  no later :meth:`~JobTab.compute` was asked (else it is dropped: a stale result is never shown); an exception takes
  the failure path above (a stale one is only logged); the last :data:`JobTab.KEEP` results are kept by job
  (:meth:`~JobTab.result`), so a job selected again shows its result at once. A tab with a long-lived worker of its
  own (a log watcher, a GPU step) names its group in ``TabSpec.groups`` and handles no worker state itself.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.jobs.selected import NOTHING, SelectedJob
from ntui.core.slurm.runner import CommandRunner
from ntui.core.waiting.why import Why

if TYPE_CHECKING:
    from collections.abc import Callable

    from ntui.core.remote.files import ClusterFiles
    from ntui.core.remote.link import LinkBoard

__all__ = ["Computed", "JobTab", "TabDeps", "TabKey", "TabSpec", "Tick", "displayed", "over_ssh_note"]


@dataclass(frozen=True)
class TabKey:
    """A key of the whole view that shows a tab and runs one of its actions (the log's ``E``: first error)."""

    key: str
    action: str  # the tab's action, without ``action_``
    description: str
    binding_id: str
    tooltip: str


@dataclass(frozen=True)
class TabSpec:
    """A tab's place in the jobs view: its title, the ids of its pane and widget, the key that shows it."""

    title: str
    pane_id: str  # the TabPane's id ("tab-logs")
    widget_id: str  # the tab widget's own id ("jobs-logs")
    key: str  # shows the tab (and moves the focus into it) from anywhere in the view
    binding_id: str  # the key's id in the user's keymap (stable across versions)
    tooltip: str
    groups: tuple[str, ...] = ()  # the tab's worker groups whose failure JobTab reports; compute runs in the first
    keys: tuple[TabKey, ...] = ()  # keys of the whole view that show the tab and run one of its actions

    def binding(self) -> Binding:
        return Binding(self.key, f"show_tab('{self.pane_id}')", self.title, id=self.binding_id, show=False,
                       tooltip=self.tooltip)

    def bindings(self) -> list[Binding]:
        """The tab's key and its view-wide action keys."""
        return [self.binding(), *(Binding(k.key, f"tab_action('{self.pane_id}', '{k.action}')", k.description,
                                          id=k.binding_id, show=False, tooltip=k.tooltip) for k in self.keys)]


@dataclass(frozen=True)
class Tick:
    """What moves each second for the selected job; the view works it out once and hands it to every tab."""

    now: datetime
    job_id: str | None  # the selected job (None: none, or a recent job's record: nothing moves)
    elapsed_s: int | None = None  # a running job's elapsed seconds as of now (the queue row's, ticking)
    why: Why | None = None  # why a pending job waits, as of now


@dataclass(frozen=True)
class TabDeps:
    """What the jobs view gives its tabs to be built with."""

    runner: CommandRunner
    settings: Settings
    clock: Callable[[], datetime] | None = None
    #: the files of a cluster reached over ssh, by its name (its agent over that cluster's master; built on first
    #: use, from a worker thread); None: no cluster reached over ssh is shown
    files: Callable[[str], ClusterFiles] | None = None
    #: each cluster's link state (the app's, fed by its squeue and its files); None: no cluster's link is watched
    links: LinkBoard | None = None


def over_ssh_note(title: str, selected: SelectedJob) -> str:
    """What a tab that cannot show a job of a cluster reached over ssh says instead (one line)."""
    return f"job {selected.job_id} is on {selected.cluster}, reached over ssh: the {title} tab is not available " \
           "over ssh yet"


def displayed(widget: Widget) -> bool:
    """Mounted, displayed (itself and every container above it: a hidden tab's pane has ``display: none``), on a
    screen of the app's current screen stack."""
    if not widget.is_mounted:
        return False
    try:
        screen = widget.screen
    except Exception:  # not on a screen (being removed)
        return False
    if screen not in widget.app.screen_stack:
        return False
    node: DOMNode | None = widget
    while node is not None and node is not screen:
        if not node.display:
            return False
        node = node.parent
    return True


@dataclass(frozen=True)
class Computed:
    """What :meth:`JobTab.compute` gave for a job, and when (``time.time()``)."""

    job_id: str
    value: Any
    at: float


class ComputeDone(Message, bubble=False):
    """A compute's answer, posted from its thread to the tab that asked."""

    def __init__(self, ticket: int, computed: Computed) -> None:
        super().__init__()
        self.ticket = ticket
        self.computed = computed


class JobTab:
    """Mixed into a tab's widget class (``class ReportPane(JobTab, VerticalScroll)``); see the module docstring."""

    TAB: ClassVar[TabSpec]
    FEED_HIDDEN: ClassVar[bool] = False
    FRESH_DETAILS: ClassVar[bool] = False  # shown, it wants the selected job's details fresh (node states)
    KEEP: ClassVar[int] = 8  # the results kept by job (a job selected again shows its last one at once)
    #: The tab shows a job of a cluster reached over ssh (``SelectedJob.cluster``); a tab that cannot says so in one
    #: line through :meth:`show_failure`, without a notice (:meth:`_apply`).
    OVER_SSH: ClassVar[bool] = False

    _selected: SelectedJob = NOTHING
    _stale = False
    _noticed = False
    failure: str | None = None  # what the tab last failed with (None: it works)
    _ticket = 0  # the last compute asked (an answer to an earlier one is stale)
    _computing: str | None = None
    _results: OrderedDict[str, Computed] | None = None

    @classmethod
    def build(cls, deps: TabDeps) -> Widget:
        """The tab's widget, with the id of its :class:`TabSpec`."""
        raise NotImplementedError

    # -- what a tab implements ---------------------------------------------------------------------------

    def show_selected(self, selected: SelectedJob) -> None:
        """Show ``selected`` (``selected.job_id`` None: nothing selected). Called on the UI thread."""
        raise NotImplementedError

    def show_failure(self, text: str) -> None:
        """Say in the tab that it failed (the notice is sent by :meth:`tab_failed`)."""

    def show_result(self, computed: Computed) -> None:
        """A :meth:`compute` answer for the selected job (never a stale one). Called on the UI thread."""

    def tick(self, tick: Tick) -> None:
        """Every second while the view is shown: what moves with the clock (a running job's elapsed time)."""

    # -- the one worker helper -----------------------------------------------------------------------------

    def compute(self, job_id: str, fn: Callable[[], object], *, what: str) -> None:
        """Run ``fn`` in a thread worker for ``job_id`` (``what``: the worker's description); its answer goes to
        :meth:`show_result` if still wanted, its exception to the failure path. Drops any answer still to come."""
        selected = self._selected
        if selected.cluster is not None and not self.OVER_SSH:  # the job is not here: nothing to run for it
            self.drop_computing()
            with contextlib.suppress(NoMatches):
                self.show_failure(over_ssh_note(self.TAB.title, selected))
            return
        self._ticket += 1
        self._computing = job_id
        ticket, widget = self._ticket, self._widget
        group = self.TAB.groups[0] if self.TAB.groups else f"{self.TAB.widget_id}-compute"

        def run() -> None:
            value = fn()
            widget.post_message(ComputeDone(ticket, Computed(job_id, value, time.time())))

        widget.run_worker(run, name=f"{job_id}#{ticket}", group=group, description=what, thread=True,
                          exclusive=True, exit_on_error=False)

    def drop_computing(self) -> None:
        """Whatever a worker computes now is not wanted any more (its answer and its failure are dropped)."""
        self._ticket += 1
        self._computing = None

    @property
    def computing(self) -> str | None:
        """The job a worker computes for now (None: none)."""
        return self._computing

    def result(self, job_id: str | None) -> Computed | None:
        """The last answer kept for ``job_id``."""
        return self._results.get(job_id) if self._results is not None and job_id is not None else None

    def forget(self, job_id: str | None) -> None:
        """Compute ``job_id`` afresh next time (a running job's answer so far is outdated)."""
        if self._results is not None and job_id is not None:
            self._results.pop(job_id, None)

    # -- what the container calls -------------------------------------------------------------------------

    @property
    def selected(self) -> SelectedJob:
        return self._selected

    def select_job(self, selected: SelectedJob) -> None:
        self._selected = selected
        if self._widget.is_mounted and (self.FEED_HIDDEN or displayed(self._widget)):
            self._apply()
        else:  # hidden, or not mounted yet (a tab the container mounts lazily): caught up later
            self._stale = True

    def on_mount(self) -> None:
        """Mounted (lazily, after the view's first frame): catch up with a selection made before."""
        self._widget.call_after_refresh(self._catch_up)

    def _catch_up(self) -> None:
        if self._stale and (self.FEED_HIDDEN or displayed(self._widget)):
            self._apply()

    def tab_shown(self) -> None:
        """Its tab became the shown one: catch up with the selection made while it was hidden."""
        if self._stale:
            self._apply()

    def latest(self, job_id: str | None) -> bool:
        """Whether a result computed for ``job_id`` is still for the selected job (:meth:`shown_job` of it)."""
        return job_id is not None and job_id == self.shown_job(self._selected)

    def shown_job(self, selected: SelectedJob) -> str | None:
        """The job the tab computes for when ``selected`` is selected (the Sweep tab: the array's id)."""
        return selected.job_id

    def tab_failed(self, error: BaseException | str) -> None:
        """Show the failure in the tab; notify it once per tab (a tab that fails on every job says it once)."""
        text = error if isinstance(error, str) else describe_error(error)
        widget = self._widget
        widget.log.error(f"{self.TAB.title} tab failed: {text}")
        self.failure = text
        with contextlib.suppress(NoMatches):  # not composed yet
            self.show_failure(text)
        if not self._noticed:
            self._noticed = True
            widget.notify(f"{self.TAB.title}: {text}", title="A tab failed", severity="error")

    # -- internals ----------------------------------------------------------------------------------------

    @property
    def _widget(self) -> Widget:
        assert isinstance(self, Widget), "JobTab is mixed into a Widget class"
        return self

    def _apply(self) -> None:
        self._stale = False
        self.failure = None
        selected = self._selected
        if selected.cluster is not None and not self.OVER_SSH:
            self.drop_computing()
            with contextlib.suppress(NoMatches):  # not composed yet
                self.show_failure(over_ssh_note(self.TAB.title, selected))
            return
        try:
            self.show_selected(self._selected)
        except Exception as exc:  # a tab's bug must not take the view down
            self.tab_failed(exc)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state is not WorkerState.ERROR or worker.error is None:
            return
        job_id, _, ticket = (worker.name or "").rpartition("#")
        if job_id and ticket.isdigit():  # a compute: its failure is said only while it is the one wanted
            if int(ticket) != self._ticket or not self.latest(job_id):
                self._widget.log.warning(f"{self.TAB.title}: dropped a stale failure: {worker.error!r}")
                return
            self._computing = None
            self.tab_failed(worker.error)
        elif worker.group in self.TAB.groups:
            self.tab_failed(worker.error)

    def on_compute_done(self, message: ComputeDone) -> None:
        message.stop()
        computed = message.computed
        if message.ticket == self._ticket:
            self._computing = None
        if self._results is None:
            self._results = OrderedDict()
        self._results[computed.job_id] = computed
        self._results.move_to_end(computed.job_id)
        while len(self._results) > self.KEEP:
            self._results.popitem(last=False)
        if message.ticket == self._ticket and self.latest(computed.job_id):
            self.show_result(computed)
