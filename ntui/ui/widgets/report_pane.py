"""The Report tab: how the selected ntui job used its GPUs, from its in-job sampler files.

The report is the core's (:func:`ntui.core.jobs.report.job_usage`, the same as ``ntui report``), computed by the
tab base's worker (:meth:`~ntui.ui.widgets.job_tab.JobTab.compute`) only while the tab is visible (for an ended job
once; a running job again when it is selected again, over the samples so far), and laid out by
:func:`~ntui.core.jobs.report.usage_lines` to the pane's width: per node and GPU the statistics and a utilisation
sparkline, then the findings in words. ``f`` posts :class:`~ntui.ui.messages.ResubmitWith` with the first finding's
suggested ``--set`` override (the jobs view opens the compose view with the job's preset, its overrides and the
fix).

A job of a cluster reached over ssh (``SelectedJob.cluster``) is reported as ``ntui --cluster NAME report`` does: its
history entry asked of that cluster's files (``TabDeps.files``) when the row has none, its GPU sample files copied
through them (:func:`~ntui.core.remote.logs.copy_log_dir`), Slurm asked through that cluster's runner (the app's
``cluster_runner``), all in the worker, the paths said as the cluster's; a dropped link takes the failure path. Its
reports are kept by cluster and id; ``f`` is refused for it (compose submits here).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ntui.core.jobs.report import JobUsage, job_usage, usage_lines
from ntui.core.jobs.selected import SelectedJob
from ntui.core.records.history import HistoryEntry
from ntui.core.remote.logs import copy_log_dir, remote_entry
from ntui.core.slurm.runner import CommandRunner
from ntui.core.textsafe import inert
from ntui.ui.messages import ResubmitWith
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec

if TYPE_CHECKING:
    from ntui.core.remote.files import ClusterFiles


@dataclass(frozen=True)
class RemoteUsage:
    """*Worker thread's answer* for a job of a cluster reached over ssh: its report (None: not ntui's job there),
    the entry asked there, and the local directory its copies were read in (said as the cluster's in the text)."""

    usage: JobUsage | None
    entry: HistoryEntry | None
    copied: str


def _remote_usage(files_of: Callable[[str], ClusterFiles], runner_of: Callable[[str], CommandRunner], cluster: str,
                  job_id: str, entry: HistoryEntry | None) -> RemoteUsage:
    """*Worker thread*: ``ntui --cluster NAME report``'s work for the app: the job's entry asked of its cluster when
    the row has none, its GPU sample files copied through the cluster's files, Slurm asked through its runner."""
    files = files_of(cluster)
    if entry is None:
        entry = remote_entry(files, job_id)
    if entry is None or not entry.log_stem:
        return RemoteUsage(None, entry, "")
    prefix = f"{entry.log_stem}-{job_id}-gpu-"
    with tempfile.TemporaryDirectory(prefix="ntui-remote-") as directory:
        local = copy_log_dir(files, entry, lambda name: name.startswith(prefix), Path(directory))
        usage = job_usage(runner_of(cluster), job_id, local)
    return RemoteUsage(usage, entry, directory)

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

    OVER_SSH = True  # a remote job's samples are copied through its cluster's files, Slurm asked through its runner

    def __init__(self, runner: CommandRunner, *, files: Callable[[str], ClusterFiles] | None = None,
                 id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runner = runner
        self.cluster_files = files
        self.cluster: str | None = None
        self.copied = ""  # a remote job's copies' directory, said as its log directory
        self.job_id: str | None = None
        self.entry: HistoryEntry | None = None
        self.active = False
        self.usage: JobUsage | None = None  # the shown job's report

    def compose(self) -> ComposeResult:
        yield Static("", id="report-findings", markup=False)  # wraps: sentences
        yield Static("Select a job to see its GPU usage report.", id="report-text", markup=False)  # a table

    @classmethod
    def build(cls, deps: TabDeps) -> ReportPane:
        return cls(deps.runner, files=deps.files, id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """The job to report on (its history entry; none: not ntui's job), computed while the tab is shown (a
        hidden tab catches up when shown); an ended job's report once, a running job's again when selected again."""
        job_id, entry = selected.job_id, selected.entry
        key = self.shown_job(selected)
        if (job_id != self.job_id or selected.cluster != self.cluster) and key is not None and selected.active:
            self.forget(key)  # a running job: its samples so far, again
        self.job_id, self.entry, self.active, self.cluster, self.copied = job_id, entry, selected.active, \
            selected.cluster, ""
        kept = self.result(key)
        self._take(kept.value if kept is not None else None)
        if selected.cluster is not None and job_id is not None and key is not None:
            cluster, files, runners = selected.cluster, self.cluster_files, getattr(self.app, "cluster_runner", None)
            if files is None or runners is None:
                self.query_one("#report-findings", Static).update("")
                self.query_one("#report-text", Static).update(
                    f"No report for job {inert(job_id)}: the files of {inert(cluster)} are not reachable")
                return
            if kept is None and self.computing != key and (entry is None or entry.log_stem):
                self.compute(key, lambda: _remote_usage(files, runners, cluster, job_id, entry),
                             what="usage report")
        elif job_id is not None and entry is not None and entry.log_stem and kept is None and self.computing != job_id:
            runner = self.runner
            self.compute(job_id, lambda: job_usage(runner, job_id, entry), what="usage report")
        self._draw()

    def shown_job(self, selected: SelectedJob) -> str | None:
        """The key of a job's reports: its id, on a cluster reached over ssh that cluster's name and its id."""
        if selected.job_id is None or selected.cluster is None:
            return selected.job_id
        return f"{selected.cluster}/{selected.job_id}"

    def _take(self, value: object) -> None:
        if isinstance(value, RemoteUsage):
            self.usage, self.entry, self.copied = value.usage, value.entry, value.copied
        else:
            self.usage = value if isinstance(value, JobUsage) else None

    def show_result(self, computed: Computed) -> None:
        self._take(computed.value)
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
        elif self.cluster is not None and usage is None and self.computing is not None:
            text.update(f"Reading the GPU samples of job {inert(job)} on {inert(self.cluster)}…")
        elif entry is None or not entry.log_stem:
            text.update(f"No report for job {inert(job)}: ntui did not submit it, so its GPU sample files are "
                        "unknown (ntui report needs the job's history entry).")
        elif usage is None:
            text.update(f"Reading the GPU samples of job {inert(job)}…")
        else:
            lines = usage_lines(usage, entry, max(MIN_WIDTH, self.size.width - 2))
            if self.copied:  # a remote job's: its cluster's paths, not the copies'
                lines = [line.replace(self.copied, entry.log_dir.rstrip("/")) for line in lines]
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
        if self.cluster is not None:
            self.notify(f"Job {self.job_id} is on {self.cluster}: apply the fix there (compose submits here).",
                        severity="warning")
            return
        if self.job_id is None or not fixes:
            self.notify("No finding with a suggested change.", severity="warning")
            return
        self.post_message(ResubmitWith(self.job_id, (fixes[0],)))
