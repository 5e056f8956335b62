"""The jobs view's tabs: the registry (:data:`JOB_TABS`) and the container that owns them (:class:`JobTabs`).

A new tab is one widget class (a :class:`~ntui.ui.widgets.job_tab.JobTab`) and one line in :data:`JOB_TABS`: its
pane, its key (:meth:`JobTabs.bindings`, in the view's keymap and help) and its feed come from here. The container
hands each new :class:`~ntui.core.jobs.selected.SelectedJob` to every tab (:meth:`JobTabs.select_job`), tells a tab
when it is shown (a hidden tab catches up then) and moves the focus into a tab its key shows
(:meth:`JobTabs.show_tab`). A tab that cannot even be built shows a note in its place; the rest of the view works.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from ntui.core.errors import describe_error
from ntui.core.jobs.selected import SelectedJob
from ntui.ui.widgets.gpu_pane import GpuPane
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.job_tab import JobTab, TabDeps, Tick
from ntui.ui.widgets.log_pane import LogPane
from ntui.ui.widgets.progress_pane import ProgressPane
from ntui.ui.widgets.report_pane import ReportPane
from ntui.ui.widgets.stacks_pane import StacksPane
from ntui.ui.widgets.sweep_pane import SweepPane

__all__ = ["JOB_TABS", "JobTabs"]

#: Every tab of the jobs view, in the order they are shown.
JOB_TABS: tuple[type[JobTab], ...] = (JobDetailsPanel, GpuPane, LogPane, ProgressPane, StacksPane, ReportPane,
                                      SweepPane)


class JobTabs(TabbedContent):
    """The tabs of the selected job (see the module docstring)."""

    DEFAULT_CSS = """
    JobTabs .pane-missing { padding: 1 2; color: $text-muted; }
    """

    def __init__(self, deps: TabDeps, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, initial=JOB_TABS[0].TAB.pane_id)
        self.tabs: dict[str, JobTab] = {}  # pane id -> its tab (those that could be built)
        for tab in JOB_TABS:
            spec = tab.TAB
            widget: Widget
            try:
                widget = tab.build(deps)
            except Exception as exc:  # a tab that cannot start must not take the queue down
                widget = Static(f"The {spec.title} tab failed to start: {describe_error(exc)}",
                                classes="pane-missing", markup=False)
            else:
                assert isinstance(widget, JobTab)
                self.tabs[spec.pane_id] = widget
            self.compose_add_child(TabPane(spec.title, widget, id=spec.pane_id))

    @staticmethod
    def bindings() -> list[Binding]:
        """The keys that show each tab and run a tab's view-wide actions (the jobs view's BINDINGS include them)."""
        shows = [tab.TAB.binding() for tab in JOB_TABS]
        return shows + [b for tab in JOB_TABS for b in tab.TAB.bindings()[1:]]

    def on_mount(self) -> None:
        # the tab bar is no tab stop: the tabs' keys switch them, and it swallowed Up, Down and Home
        for bar in self.query("ContentTabs"):
            bar.can_focus = False

    def tab(self, kind: type[JobTab]) -> JobTab | None:
        """The tab of that class (None if it could not be built)."""
        return self.tabs.get(kind.TAB.pane_id)

    def select_job(self, selected: SelectedJob) -> None:
        for tab in self.tabs.values():
            tab.select_job(selected)

    def tick(self, tick: Tick) -> None:
        """The second's :class:`~ntui.ui.widgets.job_tab.Tick` to every tab (a failing one says so, the rest go on)."""
        for tab in self.tabs.values():
            try:
                tab.tick(tick)
            except Exception as exc:  # a tab's bug must not take the view down
                tab.tab_failed(exc)

    @property
    def wants_fresh_details(self) -> bool:
        """The shown tab wants the selected job's details fresh (the view looks them up again)."""
        try:
            pane = self.active
        except Exception:  # not composed yet: as for the first tab
            pane = JOB_TABS[0].TAB.pane_id
        tab = self.tabs.get(pane)
        return tab is not None and tab.FRESH_DETAILS

    def run_tab_action(self, pane_id: str, action: str) -> None:
        """Run the tab's action once it is shown (a view-wide key of its :class:`~ntui.ui.widgets.job_tab.TabSpec`)."""
        tab = self.tabs.get(pane_id)
        if isinstance(tab, Widget):
            self.call_after_refresh(tab.run_action, action)

    @on(TabbedContent.TabActivated)
    def _activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content is not self:
            return
        tab = self.tabs.get(event.pane.id or "")
        if tab is not None:
            self.call_after_refresh(tab.tab_shown)  # once the pane is displayed

    def show_tab(self, pane_id: str) -> None:
        """Show the tab and move the focus into it (so ``z`` zooms what the user looks at)."""
        self.active = pane_id
        tab = self.tabs.get(pane_id)
        if isinstance(tab, Widget):
            self.call_after_refresh(_focus_into, tab)


def _focus_into(widget: Widget) -> None:
    """The widget itself if it takes the focus, else its first descendant that does."""
    if widget.focusable:
        widget.focus()
        return
    for child in widget.query("*"):
        if isinstance(child, Widget) and child.focusable:
            child.focus()
            return
