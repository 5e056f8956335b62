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
* **stale results**: a worker's result is for the job it was started for; :meth:`~JobTab.latest` says whether that is
  still the selected one (else the result is dropped).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from ntui.core.config import Settings
from ntui.core.errors import describe_error
from ntui.core.jobs.selected import NOTHING, SelectedJob
from ntui.core.slurm.runner import CommandRunner

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["JobTab", "TabDeps", "TabSpec", "displayed"]


@dataclass(frozen=True)
class TabSpec:
    """A tab's place in the jobs view: its title, the ids of its pane and widget, the key that shows it."""

    title: str
    pane_id: str  # the TabPane's id ("tab-logs")
    widget_id: str  # the tab widget's own id ("jobs-logs")
    key: str  # shows the tab (and moves the focus into it) from anywhere in the view
    binding_id: str  # the key's id in the user's keymap (stable across versions)
    tooltip: str
    groups: tuple[str, ...] = ()  # the tab's worker groups whose failure JobTab reports

    def binding(self) -> Binding:
        return Binding(self.key, f"show_tab('{self.pane_id}')", self.title, id=self.binding_id, show=False,
                       tooltip=self.tooltip)


@dataclass(frozen=True)
class TabDeps:
    """What the jobs view gives its tabs to be built with."""

    runner: CommandRunner
    settings: Settings
    clock: Callable[[], datetime] | None = None


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


class JobTab:
    """Mixed into a tab's widget class (``class ReportPane(JobTab, VerticalScroll)``); see the module docstring."""

    TAB: ClassVar[TabSpec]
    FEED_HIDDEN: ClassVar[bool] = False

    _selected: SelectedJob = NOTHING
    _stale = False
    _noticed = False
    failure: str | None = None  # what the tab last failed with (None: it works)

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

    # -- what the container calls -------------------------------------------------------------------------

    @property
    def selected(self) -> SelectedJob:
        return self._selected

    def select_job(self, selected: SelectedJob) -> None:
        self._selected = selected
        if self.FEED_HIDDEN or displayed(self._widget):
            self._apply()
        else:
            self._stale = True

    def tab_shown(self) -> None:
        """Its tab became the shown one: catch up with the selection made while it was hidden."""
        if self._stale:
            self._apply()

    def latest(self, job_id: str | None) -> bool:
        """Whether a result computed for ``job_id`` is still for the selected job."""
        return job_id is not None and job_id == self._selected.job_id

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
        try:
            self.show_selected(self._selected)
        except Exception as exc:  # a tab's bug must not take the view down
            self.tab_failed(exc)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state is WorkerState.ERROR and worker.group in self.TAB.groups and worker.error is not None:
            self.tab_failed(worker.error)
