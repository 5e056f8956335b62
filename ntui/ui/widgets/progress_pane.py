"""The Progress tab: how far the selected job's training is, its ETA against the time limit, and its loss as a chart.

A running ntui job's progress comes with the selection (``SelectedJob.progress``: the view's progress worker follows
own running jobs' rank-0 logs every few seconds, the queue row's words come from the same); an ended job's, or a
running one's before its first tick, is read once from its rank-0 log in a thread worker
(:func:`~ntui.core.progress.read.read_progress`, the tail only, as ``ntui progress``). The text is the core's
(:mod:`ntui.core.progress.chart`): the estimate's words (green when the run finishes in time, red when it will be
cut, with the step where), the latest metrics, and the chart: its legend, then the core's figure drawn by
textual-plotext's widget (:class:`LossPlot`) at the pane's width, in the theme's colours (the training metric in the
primary colour, the evaluations in the warning colour, the restarts in the error colour).

A job of a cluster reached over ssh (``SelectedJob.cluster``) is read there, as ``ntui --cluster NAME progress``
does: its history entry asked of that cluster's files (``TabDeps.files``: its agent) when the row has none, then the
tail of its rank-0 log copied through them and read by the same reader
(:func:`~ntui.core.remote.logs.read_remote_progress`), all in the worker; a dropped link takes the tab's failure
path (said in the pane, in words). Its answers are kept by cluster and job (the same id may be on two clusters).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.color import Color
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual_plotext import PlotextPlot

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.progress import time_left_s
from ntui.core.jobs.selected import SelectedJob
from ntui.core.progress.chart import (
    EVAL_MARKER,
    RESTART_MARKER,
    TRAIN_SYMBOL,
    Chart,
    Palette,
    chart_of,
    draw,
    legend_lines,
    summary_lines,
    too_few_words,
)
from ntui.core.progress.lines import Pattern
from ntui.core.progress.preset import pattern_of_script
from ntui.core.progress.quiet import quiet
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Series, estimate
from ntui.core.records.history import HistoryEntry
from ntui.core.remote.logs import read_remote_progress, remote_entry
from ntui.core.textsafe import inert
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec

if TYPE_CHECKING:
    from ntui.core.remote.files import ClusterFiles

__all__ = ["LossPlot", "ProgressPane"]

#: The chart's rows at least (the frame, the ticks and the labels take four of them): a short pane scrolls to it.
CHART_HEIGHT = 14
MIN_WIDTH = 40


class LossPlot(PlotextPlot):
    """The loss over the steps: the core's figure (:func:`ntui.core.progress.chart.draw`) on textual-plotext's
    canvas, drawn again at each size."""

    DEFAULT_CSS = f"""
    LossPlot {{ width: 1fr; height: 1fr; min-height: {CHART_HEIGHT}; }}
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.chart: Chart | None = None

    def show(self, chart: Chart | None) -> None:
        self.chart = chart
        self.display = chart is not None and chart.drawable
        self.refresh()

    def palette(self) -> Palette:
        variables = self.app.theme_variables

        def rgb(name: str, default: str) -> tuple[int, int, int]:
            return Color.parse(variables.get(name, default)).rgb

        return Palette(train=rgb("primary", "#0178D4"), eval=rgb("warning", "#FFA62B"),
                       restart=rgb("error", "#BA3C5B"))

    def render(self) -> RenderResult:
        self.plt.clear_data()
        if self.chart is not None and self.chart.drawable:
            draw(self.plt, self.chart, width=self.size.width, height=self.size.height, palette=self.palette())
        return super().render()


class ProgressPane(JobTab, VerticalScroll):
    """The progress of one job (see the module docstring)."""

    TAB = TabSpec("Progress", "tab-progress", "jobs-progress", "p", "ntui.jobs.tab_progress",
                  "How far the selected job's training is, its ETA and its loss", groups=("ntui-progress-read",))
    OVER_SSH = True  # a remote job's rank-0 log is read through its cluster's files (see the module docstring)

    DEFAULT_CSS = """
    ProgressPane {
        height: 1fr;
        padding: 0 1;
        & > #progress-words { width: 1fr; height: auto; }
        & > #progress-chart { width: 1fr; height: auto; margin-top: 1; }
    }
    """

    def __init__(self, deps: TabDeps, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.clock = deps.clock
        self.quiet_after_s = deps.settings.progress.quiet_after
        self.cluster_files = deps.files
        self.series: Series | None = None  # what is shown
        self._note = "Select a job to see how far its training is."

    def compose(self) -> ComposeResult:
        yield Static("", id="progress-words", markup=False)
        yield Static("", id="progress-chart", markup=False)
        yield LossPlot(id="progress-plot")

    @classmethod
    def build(cls, deps: TabDeps) -> ProgressPane:
        return cls(deps, id=cls.TAB.widget_id)

    @property
    def reading(self) -> str | None:
        """The job whose rank-0 log a worker reads now."""
        return self.computing

    def show_failure(self, text: str) -> None:
        self.series = None
        self._note = f"No progress: {text}"
        self._draw()

    def shown_job(self, selected: SelectedJob) -> str | None:
        """The key of a job's answers: its id, on a cluster reached over ssh that cluster's name and its id."""
        if selected.job_id is None or selected.cluster is None:
            return selected.job_id
        return f"{selected.cluster}/{selected.job_id}"

    def show_selected(self, selected: SelectedJob) -> None:
        job_id, entry = selected.job_id, selected.entry
        key = self.shown_job(selected)
        self.series = None
        if job_id is None or key is None:
            self._note = "Select a job to see how far its training is."
        elif selected.progress is not None and selected.progress.step is not None:
            self.series = selected.progress.series()
        elif not selected.active and (kept := _series_of(self.result(key))) is not None:
            self.series = kept
        elif selected.cluster is not None and (entry is None or entry.log_stem):
            cluster, files = selected.cluster, self.cluster_files
            self._note = f"Reading the progress of job {inert(job_id)} on {inert(cluster)} from its rank 0 log…"
            if files is None:
                self._note = f"No progress for job {inert(job_id)}: the files of {inert(cluster)} are not reachable"
            elif self.computing != key:
                self.compute(key, lambda: _read_remote(files, cluster, job_id, entry), what="progress")
        elif entry is None or not entry.log_stem:
            self._note = (f"No progress for job {inert(job_id)}: ntui did not submit it, so its logs are unknown here "
                          "(ntui progress FILE reads any log).")
        else:
            self._note = f"Reading the progress of job {inert(job_id)} from its rank 0 log…"
            if self.computing != job_id:
                path = Path(LogPaths(entry.log_dir, entry.log_stem).rank(job_id, 0))
                pattern = pattern_of_script(entry.script)
                self.compute(job_id, lambda: _read(path, pattern), what="progress")
        self._draw()

    def show_result(self, computed: Computed) -> None:
        series, error = computed.value if isinstance(computed.value, tuple) else (None, "")
        if series is None:
            self._note = f"No progress for job {inert(self.selected.job_id or computed.job_id)}: {inert(str(error))}"
        self.series = series if isinstance(series, Series) else None
        self._draw()

    def on_resize(self) -> None:
        if self.series is not None:
            self._draw()

    def _now(self) -> float:
        return self.clock().timestamp() if self.clock is not None else time.time()

    def _draw(self) -> None:
        words = self.query_one("#progress-words", Static)
        chart = self.query_one("#progress-chart", Static)
        plot = self.query_one(LossPlot)
        series = self.series
        if series is None or series.step is None:
            words.update(self._note if series is None else
                         f"No progress line in job {inert(self.selected.job_id or '')}'s rank 0 log yet (a tqdm bar, "
                         "a Trainer's dict, Lightning's bar, or the preset's progress: pattern).")
            chart.update("")
            plot.show(None)
            return
        job = self.selected.job
        left = time_left_s(job) if job is not None and self.selected.running else None
        now = self._now()
        guess = estimate(series, now=now, time_left_s=left)
        lines = summary_lines(series, guess, time_left_s=left)
        head = Text(inert(lines[0]), style="bold red" if guess.cut_at is not None else
                    "bold green" if guess.margin_s is not None else "bold")
        progress = self.selected.progress
        silent = quiet(series, progress.last_write if progress is not None else None, now, floor_s=self.quiet_after_s) \
            if self.selected.running else None
        if silent is not None:  # said first: the ETA assumes it moves
            evidence = f"; {progress.evidence}" if progress is not None and progress.evidence else ""
            head = Text(f"{inert(silent.words + evidence)}\n", style="bold yellow") + head
        for line in lines[1:]:
            head.append("\n" + inert(line))
        words.update(head)
        width = max(MIN_WIDTH, self.scrollable_content_region.width)
        drawn = chart_of(series, columns=width - 8)
        plot.show(drawn)
        chart.update(self._legend(drawn, width) if drawn is not None else
                     "No metric printed with the steps (a loss in the Trainer's dicts or on the bar draws a chart).")

    def _legend(self, drawn: Chart, width: int) -> Text:
        """The chart's legend (the core's words), each marker in its line's colour."""
        if not drawn.drawable:
            return Text(inert(too_few_words(drawn)))
        colors = self.query_one(LossPlot).palette()
        styles = {TRAIN_SYMBOL: colors.train, EVAL_MARKER: colors.eval, RESTART_MARKER: colors.restart}
        text = Text(no_wrap=True)
        for i, line in enumerate(legend_lines(drawn, width)):
            text.append(("\n" if i else "") + inert(line))
        for symbol, (r, g, b) in styles.items():
            text.highlight_words([symbol], style=f"bold rgb({r},{g},{b})")
        return text


def _read(path: Path, pattern: Pattern | None) -> tuple[Series | None, str]:
    """*Worker thread*: the series of a rank-0 log, or why it could not be read (a missing log is an answer)."""
    try:
        return read_progress(path, pattern=pattern), ""
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"


def _read_remote(files: Callable[[str], ClusterFiles], cluster: str, job_id: str,
                 entry: HistoryEntry | None) -> tuple[Series | None, str]:
    """*Worker thread*: the series of a remote job's rank-0 log read on its cluster (its entry asked there when the
    row has none), or why not; a dropped link raises (the tab's failure path)."""
    there = files(cluster)
    if entry is None:
        entry = remote_entry(there, job_id)
    if entry is None or not entry.log_stem:
        return None, (f"ntui did not submit it on {cluster}, so its logs are unknown there "
                      f"(ntui --cluster {cluster} progress FILE reads any log)")
    path = LogPaths(entry.log_dir, entry.log_stem).rank(job_id, 0)
    try:
        return read_remote_progress(there, str(path), pattern=pattern_of_script(entry.script)), ""
    except FileNotFoundError:
        return None, f"{cluster}:{path}: its rank 0 log is not there (yet)"


def _series_of(computed: Computed | None) -> Series | None:
    """The series a kept answer holds (None: none kept, or its log could not be read)."""
    value = computed.value if computed is not None else None
    return value[0] if isinstance(value, tuple) and isinstance(value[0], Series) else None
