"""The Report tab: how the selected ntui job used its GPUs, from its in-job sampler files.

The report is the core's (:func:`ntui.core.jobs.report.job_usage`, the same as ``ntui report``), computed by the
tab base's worker (:meth:`~ntui.ui.widgets.job_tab.JobTab.compute`) only while the tab is visible (for an ended job
once; a running job again when it is selected again, over the samples so far), and laid out by
:func:`~ntui.core.jobs.report.usage_lines` to the pane's width: per node and GPU the statistics and a utilisation
sparkline, then the findings in words. ``f`` posts :class:`~ntui.ui.messages.ResubmitWith` with the first finding's
suggested ``--set`` override (the jobs view opens the compose view with the job's preset, its overrides and the
fix).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ntui.core.jobs.report import JobUsage, job_usage, usage_lines
from ntui.core.jobs.selected import SelectedJob
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.runner import CommandRunner
from ntui.core.textsafe import inert
from ntui.ui.messages import ResubmitWith
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec

__all__ = ["ReportPane"]

MIN_WIDTH = 60


class ReportPane(JobTab, VerticalScroll):
    """The usage report of one job (see the module docstring)."""

    TAB = TabSpec("Report", "tab-report", "jobs-report", "u", "ntui.jobs.tab_report",
                  "The GPU usage report of the selected ntui job", groups=("ntui-report",))

    DEFAULT_CSS = """
    ReportPane {
        height: 1fr;
        padding: 0 1;
        & > #report-findings { width: 1fr; height: auto; }
        & > #report-text { width: auto; height: auto; }
    }
    """

    BINDINGS = [
        Binding("f", "apply_fix", "Apply fix", id="ntui.report.fix",
                tooltip="Open the job's preset in compose with the first finding's suggested change"),
    ]

    def __init__(self, runner: CommandRunner, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner = runner
        self.job_id: str | None = None
        self.entry: HistoryEntry | None = None
        self.active = False
        self.usage: JobUsage | None = None  # the shown job's report

    def compose(self) -> ComposeResult:
        yield Static("", id="report-findings", markup=False)  # wraps: sentences
        yield Static("Select a job to see its GPU usage report.", id="report-text", markup=False)  # a table

    @classmethod
    def build(cls, deps: TabDeps) -> ReportPane:
        return cls(deps.runner, id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """The job to report on (its history entry; none: not ntui's job), computed while the tab is shown (a
        hidden tab catches up when shown); an ended job's report once, a running job's again when selected again."""
        job_id, entry = selected.job_id, selected.entry
        if job_id != self.job_id and job_id is not None and selected.active:
            self.forget(job_id)  # a running job: its samples so far, again
        self.job_id, self.entry, self.active = job_id, entry, selected.active
        kept = self.result(job_id)
        self.usage = kept.value if kept is not None else None
        if job_id is not None and entry is not None and entry.log_stem and kept is None and self.computing != job_id:
            runner = self.runner
            self.compute(job_id, lambda: job_usage(runner, job_id, entry), what="usage report")
        self._draw()

    def show_result(self, computed: Computed) -> None:
        self.usage = computed.value
        self._draw()

    def show_failure(self, text: str) -> None:
        self.query_one("#report-findings", Static).update("")
        self.query_one("#report-text", Static).update(Text(f"No report: {text}", style="red"))

    def on_resize(self) -> None:
        if self.usage is not None:
            self._draw()

    @property
    def fixes(self) -> list[str]:
        """The suggested ``--set`` overrides of the shown report's findings, in order."""
        return [f.fix for f in self.usage.report.findings if f.fix] if self.usage is not None else []

    def _draw(self) -> None:
        text = self.query_one("#report-text", Static)
        said = self.query_one("#report-findings", Static)
        said.update("")
        job, entry, usage = self.job_id, self.entry, self.usage
        if job is None:
            text.update("Select a job to see its GPU usage report.")
        elif entry is None or not entry.log_stem:
            text.update(f"No report for job {inert(job)}: ntui did not submit it, so its GPU sample files are "
                        "unknown (ntui report needs the job's history entry).")
        elif usage is None:
            text.update(f"Reading the GPU samples of job {inert(job)}…")
        else:
            lines = usage_lines(usage, entry, max(MIN_WIDTH, self.size.width - 2))
            cut = next((i for i, line in enumerate(lines) if line.startswith("Findings")), len(lines))
            head = Text()  # the title and the findings first, wrapped to the pane
            if usage.slurm_error:
                head.append(f"Slurm: {inert(usage.slurm_error)} (report from the samples alone)\n", style="yellow")
            for line in [*lines[:1], *lines[cut:]]:
                style = ("bold" if line.startswith(("job ", "Findings")) else "yellow" if line.startswith("  - ")
                         else "green" if line.startswith("    fix:") else "")
                head.append(line + "\n", style=style)
            if self.fixes:
                head.append(f"f: open the preset in compose with {self.fixes[0]}\n", style="bold")
            said.update(head)
            text.update(Text("\n".join(lines[1:cut]), no_wrap=True))  # the table: scrolls, never wraps

    def action_apply_fix(self) -> None:
        fixes = self.fixes
        if self.job_id is None or not fixes:
            self.notify("No finding with a suggested change.", severity="warning")
            return
        self.post_message(ResubmitWith(self.job_id, (fixes[0],)))
