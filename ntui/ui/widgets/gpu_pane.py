"""The GPU pane: per-node, per-GPU usage of one job, from the job's own sample files or one overlapping step.

One responsibility: drawing one job's GPU usage (bars or heatmap) from whichever source feeds it.

**Source.** For ntui's own jobs with GPU monitoring on, the in-job sampler already writes one file per node
(:mod:`ntui.core.compose.sampler`): the pane reads those (:class:`~ntui.core.gpu.samples.SampleBoard`: no step, no Slurm
RPC, history from the job's first sample, each file read at most every sampling interval, only its new bytes)
and says so ("from the job's own samples, every 10 s"); an ended job shows its whole run. The history entry
(log directory and stem) is looked up in the plan worker through the app's history (``open_history``). Jobs
without such files (not from ntui, monitoring off, an array task) get the watch step below ("live from a watch
step"). Every file read runs in a thread worker, never on the event loop.

Small jobs get one bar row per GPU; a job with more than :data:`~ntui.core.gpu.heatmap.HEATMAP_OVER` GPUs gets a
compact heatmap (one cell per GPU, rows of nodes) with the outliers in words (:func:`render_heatmap`).

Life cycle (the Jobs screen calls :meth:`GpuPane.watch_job`):

1. a thread worker runs the one ``scontrol show job -d`` (:func:`~ntui.core.gpu.stream.plan_gpu_watch`);
2. the same worker starts a :class:`~ntui.core.gpu.stream.GpuStream` (``srun --jobid=J --overlap ...
   nvidia-smi -l N``: no fork/exec on the UI thread) and hands it to the pane; its reader thread feeds
   the lines into a :class:`~ntui.core.gpu.smi.GpuBoard` under a lock (no widget is touched from a thread;
   the step's end comes back as a posted message);
3. a ``set_interval`` tick (the sampling interval) redraws from the board: at most one redraw per interval
   however many lines arrive, and no Slurm RPC per tick.

The step exists only while the pane is visible: it is stopped when another job (or ``None``) is watched,
when the pane is hidden (``Hide``: its tab was switched away, it was removed) or its screen leaves the
screen stack (the user switched view), and on unmount; ``Show`` / the screen coming back restarts it for
the same job (with a fresh ``scontrol show job -d``). Stopping runs in a background thread (srun is given
SIGTERM, then the group SIGKILL), so the UI never waits for it.

When the job is not running, the plan fails, srun or nvidia-smi is missing, or the step dies, the pane
says why and shows the allocation (GPU indices per node from ``scontrol show job -d``) instead.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ntui.core.config import GpuSettings
from ntui.core.gpu.heatmap import GLYPHS, LEVELS, heatmap, use_heatmap
from ntui.core.gpu.samples import SampleBoard
from ntui.core.gpu.smi import GpuBoard, GpuIssue, GpuSample, GpuView, no_gpus_allocated, sparkline
from ntui.core.gpu.stream import GpuStream, GpuWatchPlan, NotWatchable, plan_gpu_watch
from ntui.core.hosts import compress_nodelist, format_index_ranges
from ntui.core.jobs.selected import SelectedJob
from ntui.core.logs.tail import FdBudget
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.scontrol import JobDetails
from ntui.ui.errors import describe_error
from ntui.ui.widgets.job_tab import JobTab, TabDeps, TabSpec, displayed

__all__ = ["GpuPane", "GpuStreamLike", "StreamFactory", "render_allocation", "render_board", "render_heatmap"]

PaneState = Literal["idle", "planning", "starting", "streaming", "paused", "failed"]


class HistoryLookup(Protocol):
    """What the pane needs of the history (:class:`ntui.core.records.history.History`, or a fake in tests)."""

    def get(self, job_id: str) -> HistoryEntry | None: ...

    def close(self) -> None: ...


class GpuStreamLike(Protocol):
    """What the pane needs of a stream (:class:`GpuStream`, or a fake in tests)."""

    def start(self) -> None: ...

    def stop(self, timeout: float = ...) -> None: ...


class StreamFactory(Protocol):
    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        on_line: Callable[[str], None],
        on_exit: Callable[[int, str], None],
    ) -> GpuStreamLike: ...


# ---------------------------------------------------------------------------------------------------------
# rendering (pure: board / allocation -> Content)

BAR_WIDTH = 12
_EIGHTHS = " ▏▎▍▌▋▊▉"
_TRACK = "on $panel"
#: columns before the sparkline: "  " idx(3) flag(1) " " bar " " pct(4) "  " bar " " mem(15)
#: "  " temp(5) "  " power(6) "  "
_FIXED = 2 + 3 + 1 + 1 + BAR_WIDTH + 1 + 4 + 2 + BAR_WIDTH + 1 + 15 + 2 + 5 + 2 + 6 + 2


def _bar(fraction: float | None, width: int = BAR_WIDTH, color: str = "$accent") -> Content:
    if fraction is None:
        return Content.styled(" " * width, _TRACK)
    eighths = round(min(max(fraction, 0.0), 1.0) * width * 8)
    full, rem = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[rem] if rem and full < width else "")
    return Content.styled(text.ljust(width), f"{color} {_TRACK}")


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f}%"


def _gib(mib: float | None) -> str:
    return "?" if mib is None else f"{mib / 1024:.1f}"


def _mem_total(used: float | None, total: float) -> str:
    """A job's memory: GiB, or TiB from 10 TiB on (a 256-node job has 40 TiB of GPU memory)."""
    if total >= 10 * 1024 * 1024:
        return f"{(used or 0.0) / 1024 / 1024:.1f}/{total / 1024 / 1024:.1f} TiB"
    return f"{_gib(used)}/{_gib(total)} GiB"


def _watts(w: float) -> str:
    return f"{w / 1000:.1f} kW" if w >= 10_000 else f"{w:.0f} W"


def _mem_text(s: GpuSample) -> str:
    if s.mem_used_mib is None or s.mem_total_mib is None:
        return "n/a"
    if s.mem_total_mib >= 1024:
        return f"{_gib(s.mem_used_mib)}/{_gib(s.mem_total_mib)} GiB"
    return f"{s.mem_used_mib:.0f}/{s.mem_total_mib:.0f} MiB"




def render_allocation(expected: Mapping[str, tuple[int, ...]] | None, requested: str | None = None) -> Content:
    """The allocation block: per node, the physical GPU indices from ``scontrol show job -d``
    (``None``: unknown, scontrol gave no record)."""
    lines = [Content.styled("Allocation (scontrol show job -d)", "bold")]
    if expected is None:
        lines.append(Content.styled("  unknown: no job record", "$text-muted"))
        return Content("\n").join(lines)
    if not any(expected.values()):
        where = f" on {compress_nodelist(list(expected))}" if expected else " on any node"
        lines.append(Content.styled(f"  no GPUs allocated{where}: the job has no GPUs", "$text-muted"))
        if requested:
            lines.append(Content.styled(f"  requested: {requested}", "$text-muted"))
        return Content("\n").join(lines)
    width = max(len(n) for n in expected)
    for node, idx in expected.items():
        lines.append(
            Content.assemble(
                f"  {node.ljust(width)}  ",
                (f"{len(idx)} GPU{'s' if len(idx) != 1 else ''}", "bold"),
                (f"  IDX {format_index_ranges(idx)}" if idx else "", "$text-muted"),
            )
        )
    total = sum(len(i) for i in expected.values())
    lines.append(Content.styled(f"  {total} GPUs on {len(expected)} node(s)", "$text-muted"))
    return Content("\n").join(lines)


def source_text(board: GpuView) -> str:
    """Where the numbers come from, in words (the summary line says it)."""
    if isinstance(board, SampleBoard):
        if board.ended:
            return f"from the job's own samples, every {board.interval_s:g} s: the whole run (sampling ended)"
        return f"from the job's own samples, every {board.interval_s:g} s"
    return f"live from a watch step, every {board.interval_s:g} s"


def render_summary(board: GpuView, job_id: str, now: float | None = None) -> Content:
    """The top line: job averages over the fresh allocated GPUs, the source, and the SIMULATED label."""
    s = board.summary(now)
    parts: list[Content | tuple[str, str] | str] = [(f"job {job_id}", "bold")]
    if no_gpus_allocated(board.expected):
        visible = sum(len(g) for g in board.latest().values())
        parts.append(("  the job has no GPUs", "bold"))
        if visible:
            parts.append(f"  (nvidia-smi on its nodes shows {visible} GPU{'s' if visible != 1 else ''}, not the job's)")
        parts.append((f"  {source_text(board)}", "$text-muted"))
        return Content.assemble(*parts)
    parts.append(f"  {s.gpus} GPU{'s' if s.gpus != 1 else ''} on {s.nodes} node{'s' if s.nodes != 1 else ''}")
    parts += ["  util ", (_pct(s.util_gpu_mean), "bold")]
    if s.mem_total_mib:
        pct = 100.0 * (s.mem_used_mib or 0.0) / s.mem_total_mib
        parts += ["  memory ", (_mem_total(s.mem_used_mib, s.mem_total_mib), "bold"), f" ({pct:.0f}%)"]
    if s.power_w is not None:
        parts += ["  power ", (_watts(s.power_w), "bold")]
    parts.append((f"  {source_text(board)}", "$text-muted"))
    if s.simulated:
        parts += ["  ", (" SIMULATED nvidia-smi ", "bold $text-warning on $warning-muted")]
    return Content.assemble(*parts)


def render_issues(issues: Sequence[GpuIssue]) -> Content:
    lines = []
    for issue in issues:
        style = "$text-error" if issue.kind in ("stale", "never_reported", "no_nvidia_smi") else "$text-warning"
        lines.append(Content.assemble(("⚠ ", style), (issue.message, style)))
    return Content("\n").join(lines)


def render_board(board: GpuView, width: int, now: float | None = None) -> Content:
    """Per node a header, then per GPU: util bar, memory bar, temperature, power, utilisation sparkline."""
    issues = board.issues(now)
    idle = {(i.node, i.index) for i in issues if i.kind == "idle" and i.index is not None}
    by_node: dict[str, list[GpuIssue]] = {}
    for issue in issues:
        by_node.setdefault(issue.node, []).append(issue)
    spark_w = max(8, min(board.history, width - _FIXED))
    latest = board.latest()
    lines: list[Content] = []
    head = Content.styled(
        "  GPU  "
        + "util".ljust(BAR_WIDTH + 5)
        + "  "
        + "memory".ljust(BAR_WIDTH + 16)
        + "  "
        + " temp"
        + "  "
        + " power"
        + "  "
        + "util history",
        "$text-muted",
    )
    for node in board.nodes:
        if lines:
            lines.append(Content(""))
        gpus = latest.get(node, {})
        want = board.expected.get(node)
        title: list[Content | tuple[str, str] | str] = [(node, "bold $text-primary")]
        if want != ():  # no GPUs allocated: the issue below says so, and what nvidia-smi shows
            title.append(f"  {len(gpus)} GPU{'s' if len(gpus) != 1 else ''}")
        if want:
            title.append((f"  allocated {len(want)}: IDX {format_index_ranges(want)}", "$text-muted"))
        if (tool := board.tool(node)) != "nvidia-smi":  # another vendor's GPUs: said, the rest reads the same
            title.append((f"  {tool}", "$text-muted"))
        for issue in by_node.get(node, []):
            if issue.kind in ("stale", "never_reported", "fewer_gpus", "more_gpus", "unexpected_node",
                              "no_nvidia_smi", "ended"):
                msg = issue.message.removeprefix(f"{node}: ")
                style = ("$text-error" if issue.kind in ("stale", "never_reported", "no_nvidia_smi")
                         else "$text-muted" if issue.kind == "ended" else "$text-warning")
                title += ["  ", (msg, style)]
        lines.append(Content.assemble(*title))
        if not gpus:
            continue
        lines.append(head)
        for idx, s in gpus.items():
            flagged = (node, idx) in idle
            util_style = "bold $text-warning" if flagged else ""
            mem_frac = s.mem_fraction
            hist = board.util_series(node, idx, spark_w)
            lines.append(
                Content.assemble(
                    f"  {idx:>3}",
                    ("!" if flagged else " ", "bold $text-warning"),
                    " ",
                    _bar(None if s.util_gpu is None else s.util_gpu / 100.0, color="$success"),
                    (f" {_pct(s.util_gpu):>4}", util_style),
                    "  ",
                    _bar(mem_frac, color="$primary"),
                    f" {_mem_text(s):>15}",
                    f"  {'n/a' if s.temp_c is None else f'{s.temp_c:.0f}°C':>5}",
                    f"  {'n/a' if s.power_w is None else f'{s.power_w:.0f} W':>6}",
                    "  ",
                    (sparkline(hist), "$text-success"),
                )
            )
    return Content("\n").join(lines)


#: the heatmap's colour per utilisation level (idle .. 85 %+), then "no reading"
HEAT_STYLES = ("bold #e0503c", "#e8912d", "#d7c53c", "#6cb85a", "bold #3fd46b", "$text-muted")


def render_heatmap(board: GpuView, width: int) -> Content:
    """Many GPUs: one cell per GPU (glyph and colour: utilisation), node blocks packed per line, a legend,
    and the outliers in words (layout and outliers: :mod:`ntui.core.gpu.heatmap`)."""
    heat = heatmap(board.latest(), width)
    # the outliers first: on a small terminal the map itself scrolls
    if heat.outliers:
        lines = [Content.assemble(("⚠ ", "$text-warning"), (o, "$text-warning")) for o in heat.outliers]
    else:
        lines = [Content.styled("no outliers: every GPU busy, no node lagging", "$text-success")]
    legend: list[Content | tuple[str, str] | str] = [("utilisation ", "$text-muted")]
    for level, (_, words) in enumerate(LEVELS):
        legend += [(GLYPHS[level], HEAT_STYLES[level]), (f" {words}  ", "$text-muted")]
    legend += [(GLYPHS[-1], HEAT_STYLES[-1]), (" no reading", "$text-muted")]
    lines.append(Content.assemble(*legend))
    lines.append(Content.styled(f"{heat.nodes_per_line} nodes per line, {heat.gpus_per_node} cells (GPUs) per node",
                                "$text-muted"))
    for line in heat.lines:
        parts: list[Content | tuple[str, str] | str] = [(line.label.ljust(heat.label_width), "$text-primary")]
        for block in line.blocks:
            parts.append(" ")
            parts += [(c.glyph, HEAT_STYLES[c.level]) for c in block]
            parts.append(" " * (heat.gpus_per_node - len(block)))
        lines.append(Content.assemble(*parts))
    return Content("\n").join(lines)


def _allocation_of(
    details: JobDetails | None,
) -> tuple[dict[str, tuple[int, ...]] | None, str | None]:
    """The allocation from the ``scontrol show job -d`` the plan already did (no second RPC)."""
    if details is None:
        return None, None
    return dict(details.gres_by_node), details.tres_per_node or details.tres_per_job or None


def describe_step_end(rc: int, stderr: str) -> tuple[str, list[str]]:
    """Why the watch step ended, and the stderr lines worth showing."""
    tail = [line for line in stderr.splitlines() if line.strip()][-4:]
    low = stderr.lower()
    if "nvidia-smi" in low and ("no such file" in low or "not found" in low or "execve" in low):
        return "nvidia-smi was not found on the job's nodes: no GPU usage to show", tail
    if "no devices were found" in low:
        return "nvidia-smi found no GPUs on the job's nodes", tail
    if rc == 0 and not tail:
        return "the GPU watch step ended (the job has probably finished)", tail
    if rc < 0:  # srun itself was killed (Popen's returncode is -SIGNAL)
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"the GPU watch step's srun was killed by {name}; showing the allocation instead", tail
    return f"the GPU watch step ended (exit {rc})", tail


def _history_entry(factory: Callable[[], HistoryLookup | None], job_id: str) -> HistoryEntry | None:
    """*Worker thread*: what ntui recorded when it submitted ``job_id`` (None: not ntui's, or no history)."""
    history = None
    try:
        history = factory()
        return history.get(job_id) if history is not None else None
    except Exception:  # an unreadable history only means: the watch step instead
        return None
    finally:
        if history is not None:
            history.close()


# ---------------------------------------------------------------------------------------------------------
# the pane


class GpuPane(JobTab, Widget):
    """Live GPU usage of one running job. See the module docstring for the life cycle."""

    TAB = TabSpec("GPUs", "tab-gpus", "jobs-gpu", "g", "ntui.jobs.tab_gpus",
                  "Live GPU use of the selected running job, per node and GPU", groups=("gpu-plan", "gpu-files"))
    FEED_HIDDEN = True  # it pauses itself while hidden (no step, no reads) and resumes when shown

    DEFAULT_CSS = """
    GpuPane { height: 1fr; width: 1fr; layout: vertical; }
    GpuPane > #gpu-summary { height: auto; padding: 0 1; background: $boost; }
    GpuPane > #gpu-issues { height: auto; max-height: 6; padding: 0 1; }
    GpuPane > #gpu-issues.-empty { display: none; }
    GpuPane > #gpu-scroll { height: 1fr; }
    GpuPane #gpu-body { height: auto; padding: 0 1; }
    """

    @dataclass
    class _Planned(Message, bubble=False):
        generation: int
        plan: GpuWatchPlan
        board: GpuBoard  # fed by the step's reader thread, which is running already

    @dataclass
    class _PlanFailed(Message, bubble=False):
        generation: int
        reason: str
        expected: dict[str, tuple[int, ...]] | None
        requested: str | None

    @dataclass
    class _FilesFound(Message, bubble=False):
        generation: int
        board: SampleBoard  # read whole already (the history from the job's first sample)

    @dataclass
    class _FilesPolled(Message, bubble=False):
        generation: int
        changed: bool

    @dataclass
    class _StepEnded(Message, bubble=False):
        generation: int
        returncode: int
        stderr: str

    def __init__(
        self,
        runner: CommandRunner,
        settings: GpuSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        stream_factory: StreamFactory = GpuStream,
        nvidia_smi: str = "nvidia-smi",
        environ: Mapping[str, str] | None = None,
        history_factory: Callable[[], HistoryLookup | None] | None = None,
        budget: FdBudget | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.runner = runner
        self.settings = settings
        self.clock = clock
        self.stream_factory = stream_factory
        self.nvidia_smi = nvidia_smi
        self.environ = environ
        #: where the job's history entry comes from (None: the app's ``open_history``, if it has one)
        self.history_factory = history_factory
        #: descriptors the sample files may hold between reads (a held file costs one ``stat`` per read instead
        #: of ``open`` + ``fstat``); the app may pass the log watcher's, else the pane has its own
        self.budget = budget if budget is not None else FdBudget()
        self._files: SampleBoard | None = None
        self._file_io = threading.Lock()  # one reader of the files at a time (a slow poll is not doubled)
        self._lock = threading.Lock()
        self._generation = 0
        self._job_id: str | None = None
        self._state: PaneState = "idle"
        self._plan: GpuWatchPlan | None = None
        self._board: GpuBoard | None = None
        self._stream: GpuStreamLike | None = None
        self._reason = ""
        self._detail: list[str] = []
        self._expected: dict[str, tuple[int, ...]] | None = None
        self._requested: str | None = None
        self._stoppers: list[threading.Thread] = []
        self._unclaimed: dict[int, GpuStreamLike] = {}  # started by the plan worker, not yet taken over
        self._ticker: Timer | None = None
        self._wanted: str | None = None  # the selected job, as last asked for by show_selected
        self.redraws = 0

    # -- as a tab of the jobs view ---------------------------------------------------------------------

    @classmethod
    def build(cls, deps: TabDeps) -> GpuPane:
        return cls(deps.runner, deps.settings.gpu, id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """Watch the selected job while it runs (a pending or ended job has no GPUs to watch)."""
        want = selected.job_id if selected.running else None
        if want != self._wanted:  # the same job again is left as it is (a failed watch retries on a new selection)
            self._wanted = want
            self.watch_job(want)

    def show_failure(self, text: str) -> None:
        self._wanted = None
        self._fail(text)

    # -- public API ------------------------------------------------------------------------------------

    @property
    def job_id(self) -> str | None:
        return self._job_id

    @property
    def state(self) -> PaneState:
        """idle (no job), planning, starting (step up, no data yet), streaming, paused (hidden), failed."""
        return self._state

    @property
    def reason(self) -> str:
        """Why there is no GPU data (state ``failed``), else ``""``."""
        return self._reason

    @property
    def board(self) -> GpuBoard | None:
        return self._board

    @property
    def plan(self) -> GpuWatchPlan | None:
        return self._plan

    @property
    def sample_board(self) -> SampleBoard | None:
        """The job's own sample files, when the pane shows those (else the watch step's :attr:`board`)."""
        return self._files

    @property
    def source(self) -> Literal["samples", "step"] | None:
        """What the pane shows: the job's sample files, the watch step, or nothing yet."""
        if self._files is not None:
            return "samples"
        return "step" if self._board is not None else None

    @property
    def streaming(self) -> bool:
        """A watch step is running (or being started) for this pane."""
        return self._stream is not None

    def watch_job(self, job_id: str | None) -> None:
        """Watch ``job_id`` (a running job), stopping any previous step; ``None`` stops watching.

        Watching the job already watched is a no-op, unless the last attempt failed (then it retries).
        """
        jid = (job_id or "").strip() or None
        if jid is not None and jid == self._job_id and self._state not in ("failed", "idle"):
            return
        self._job_id = jid
        self._restart()

    def redraw(self) -> None:
        """Rebuild the display from the board (the tick calls this; tests call it directly)."""
        if not self.is_mounted:
            return
        self.redraws += 1
        summary = self.query_one("#gpu-summary", Static)
        issues_w = self.query_one("#gpu-issues", Static)
        body = self.query_one("#gpu-body", Static)
        issues: list[GpuIssue] = []
        with self._lock:
            board: GpuView | None = self._files or self._board
            if board is not None and self._state in ("starting", "streaming") and board.latest():
                self._state = "streaming"
            if self._state == "streaming" and board is not None and self._job_id is not None:
                now = self.clock()
                head = render_summary(board, self._job_id, now)
                issues = board.issues(now)
                if isinstance(board, SampleBoard):
                    issues += [GpuIssue("stale", "", m) for m in board.messages()[:3]]
                width = max(40, body.content_region.width or self.size.width - 2)
                gpus = sum(len(g) for g in board.latest().values())
                main = render_heatmap(board, width) if use_heatmap(gpus) else render_board(board, width, now)
            else:
                head, main = self._status_content()
        with self.app.batch_update():
            summary.update(head)
            issues_w.update(render_issues(issues))
            issues_w.set_class(not issues, "-empty")
            body.update(main)

    def wait_stopped(self, timeout: float = 10.0) -> bool:
        """Wait for the steps being stopped in the background; True when all are gone (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        for t in list(self._stoppers):
            t.join(max(0.0, deadline - time.monotonic()))
        self._stoppers = [t for t in self._stoppers if t.is_alive()]
        return not self._stoppers

    # -- composition and visibility --------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="gpu-summary")
        yield Static(classes="-empty", id="gpu-issues")
        with VerticalScroll(id="gpu-scroll"):
            yield Static(id="gpu-body")

    def on_mount(self) -> None:
        self._ticker = self.set_interval(max(1, self.settings.interval), self._tick)
        self.app.screen_change_signal.subscribe(self, self._screen_changed)
        self.redraw()

    def on_unmount(self) -> None:
        self._generation += 1
        self._stop_stream()
        if self._files is not None:
            self._close_in_background(self._files)
        if self._ticker is not None:
            self._ticker.stop()

    def on_show(self) -> None:
        self._visibility_changed()

    def on_hide(self) -> None:
        self._visibility_changed()

    def on_resize(self) -> None:
        if self._state == "streaming":
            self.redraw()

    def _screen_changed(self, screen: Screen[Any]) -> None:
        if self.is_mounted:
            self._visibility_changed()

    @property
    def visible_now(self) -> bool:
        """Mounted, displayed (itself and every ancestor: a TabbedContent hides inactive panes with
        ``display: none``), on a screen of the current view's screen stack.

        Checked on ``Show`` / ``Hide``, on screen changes and on every tick: Textual 8.2.8 can miss a
        ``Show`` (the compositor map rebuilt lazily in between), so the events alone are not enough.
        """
        return not (self._closing or self._closed) and displayed(self)

    def _visibility_changed(self) -> None:
        if self.visible_now:
            if self._state == "paused" and self._files is not None:
                self._generation += 1  # the files are read on: what was read stays
                self._state = "streaming"
                self.redraw()
                self._poll_files(self._generation)
            elif self._state == "paused":
                self._restart()
        elif self._state in ("planning", "starting", "streaming"):
            self._generation += 1
            self._stop_stream()
            if self._files is not None:  # no reads while hidden, and no descriptors held (reopened on show)
                self._close_in_background(self._files)
            self._state = "paused"
            self.redraw()

    # -- the watch -------------------------------------------------------------------------------------

    def _restart(self) -> None:
        self._generation += 1
        self._stop_stream()
        with self._lock:
            self._board = None
            self._plan = None
            files, self._files = self._files, None
        if files is not None:
            self._close_in_background(files)
        self._reason, self._detail = "", []
        self._expected, self._requested = None, None
        if self._job_id is None:
            self._state = "idle"
        elif not self.visible_now:
            self._state = "paused"
        else:
            self._state = "planning"
            history = self.history_factory or getattr(self.app, "open_history", None)
            self._plan_watch(self._generation, self._job_id, history)
        self.redraw()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu-plan", description="GPU watch")
    def _plan_watch(self, generation: int, job_id: str,
                    history: Callable[[], HistoryLookup | None] | None = None) -> None:
        """The job's own sample files when it has them (no RPC at all); else the one ``scontrol show job -d``
        of this watch, then the watch step's start (``srun``: a fork and exec, kept off the UI thread too)."""
        files = self._open_sample_files(job_id, history)
        if files is not None:
            if generation != self._generation:
                files.close()
                return
            self.post_message(self._FilesFound(generation, files))
            return
        try:
            plan = plan_gpu_watch(
                self.runner,
                job_id,
                interval_s=max(1, int(self.settings.interval)),
                nvidia_smi=self.nvidia_smi,
                environ=self.environ,
            )
        except NotWatchable as exc:
            expected, requested = _allocation_of(exc.details)
            self.post_message(self._PlanFailed(generation, str(exc), expected, requested))
            return
        except (SlurmError, ValueError) as exc:  # scontrol itself failed: no allocation known
            self.post_message(self._PlanFailed(generation, describe_error(exc), None, None))
            return
        board = GpuBoard(
            plan.task_nodes,
            expected=plan.expected,
            interval_s=max(1, int(self.settings.interval)),
            idle_after_s=self.settings.idle_after,
            clock=self.clock,
        )
        lock = self._lock

        def on_line(line: str) -> None:  # reader thread: the board only, under the lock
            with lock:
                board.feed(line)

        def on_exit(returncode: int, stderr: str) -> None:  # waiter thread
            self.post_message(self._StepEnded(generation, returncode, stderr))

        try:
            stream = self.stream_factory(plan.argv, env=plan.env, on_line=on_line, on_exit=on_exit)
            with lock:  # stopped by _stop_stream if the pane moves on before _Planned is handled
                self._unclaimed[generation] = stream
            stream.start()
        except OSError as exc:
            with lock:
                self._unclaimed.pop(generation, None)
            self.post_message(self._PlanFailed(
                generation, f"could not start the GPU watch step: {plan.argv[0]} not found ({exc.strerror or exc})",
                dict(plan.expected), None))
            return
        if generation != self._generation:  # moved on (another job, hidden, unmounted) while srun started
            with lock:
                stale = self._unclaimed.pop(generation, None)
            if stale is not None:
                stale.stop()
            return
        self.post_message(self._Planned(generation, plan, board))

    @on(_Planned)
    def _planned(self, message: _Planned) -> None:
        with self._lock:
            stream = self._unclaimed.pop(message.generation, None)
        if message.generation != self._generation or self._state != "planning" or stream is None:
            if stream is not None:
                self._stop_in_background(stream)
            return
        with self._lock:
            self._plan = message.plan
            self._board = message.board
        self._expected = dict(message.plan.expected)
        self._stream = stream
        self._state = "starting"
        self.redraw()

    def _open_sample_files(self, job_id: str,
                           history: Callable[[], HistoryLookup | None] | None) -> SampleBoard | None:
        """*Worker thread*: the job's history entry, its sample files read whole; None when it has none."""
        entry = _history_entry(history, job_id) if history is not None else None
        if entry is None or not entry.log_dir or not entry.log_stem:
            return None
        board = SampleBoard(job_id, entry.log_dir, entry.log_stem,
                            tick_s=max(1, int(self.settings.interval)), budget=self.budget, monotonic=self.clock)
        if not board.nodes:
            return None
        board.load()  # not shared yet: no lock while the whole files are parsed
        board.lock = self._lock  # from now on the UI draws from it: new lines go in under the lock
        return board

    @on(_FilesFound)
    def _files_found(self, message: _FilesFound) -> None:
        if message.generation != self._generation or self._state != "planning":
            self._close_in_background(message.board)
            return
        with self._lock:
            self._files = message.board
        self._state = "streaming"
        self.redraw()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu-files", description="GPU sample files")
    def _poll_files(self, generation: int) -> None:
        """*Worker thread*: the due files' new bytes (each file at most every sampling interval)."""
        files = self._files
        if files is None or generation != self._generation or not self._file_io.acquire(blocking=False):
            return
        try:
            changed = files.poll()  # reads outside the lock; feeds the readers under it
        finally:
            self._file_io.release()
        self.post_message(self._FilesPolled(generation, changed))

    @on(_FilesPolled)
    def _files_polled(self, message: _FilesPolled) -> None:
        if message.generation == self._generation and message.changed and self._state == "streaming":
            self.redraw()

    def _close_in_background(self, files: SampleBoard) -> None:
        """Release the files' held descriptors off the UI thread, after any poll in flight."""
        io = self._file_io

        def close() -> None:
            with io:
                files.close()

        threading.Thread(target=close, name="ntui-gpu-files-close", daemon=True).start()

    @on(_PlanFailed)
    def _plan_failed(self, message: _PlanFailed) -> None:
        if message.generation != self._generation:
            return
        self._expected, self._requested = message.expected, message.requested
        self._fail(message.reason)

    @on(_StepEnded)
    def _step_ended(self, message: _StepEnded) -> None:
        if message.generation != self._generation:
            return
        self._stream = None
        reason, detail = describe_step_end(message.returncode, message.stderr)
        self._fail(reason, detail)

    def _fail(self, reason: str, detail: Sequence[str] = ()) -> None:
        self._stop_stream()
        self._state = "failed"
        self._reason = reason
        self._detail = list(detail)
        self.redraw()

    def _stop_stream(self) -> None:
        """Stop the step in a background thread (SIGTERM to srun, then SIGKILL); never blocks the UI."""
        stream, self._stream = self._stream, None
        with self._lock:
            unclaimed, self._unclaimed = list(self._unclaimed.values()), {}
        for orphan in unclaimed:
            self._stop_in_background(orphan)
        if stream is not None:
            self._stop_in_background(stream)

    def _stop_in_background(self, stream: GpuStreamLike) -> None:
        t = threading.Thread(target=stream.stop, name="ntui-gpu-stop", daemon=False)
        t.start()
        self._stoppers = [s for s in self._stoppers if s.is_alive()] + [t]

    def _tick(self) -> None:
        self._visibility_changed()
        if self._files is not None:
            if self._state == "streaming" and not self._files.done:
                self._poll_files(self._generation)  # redraws when something arrived
        elif self._state in ("starting", "streaming"):
            self.redraw()

    # -- status views ----------------------------------------------------------------------------------

    def _status_content(self) -> tuple[Content, Content]:
        jid = self._job_id
        plan = self._plan
        if self._state == "idle" or jid is None:
            return Content.styled("GPU usage", "bold"), Content.styled(
                "Select a running job to watch its GPUs.", "$text-muted"
            )
        head = Content.assemble((f"job {jid}", "bold"), "  GPU usage")
        if self._state == "planning":
            return head, Content.styled(
                "Reading the job's GPU sample files, or else the allocation (scontrol show job -d)…", "$text-muted")
        if self._state == "paused":
            return head, Content.styled("Paused while the pane is hidden (no watch step running).", "$text-muted")
        alloc = render_allocation(self._expected, self._requested)
        if self._state == "starting" and plan is not None:
            where = compress_nodelist(plan.nodes)
            text = Content.styled(
                f"Starting the GPU watch step on {where} (srun --overlap, nvidia-smi every "
                f"{max(1, int(self.settings.interval))} s)…",
                "$text-muted",
            )
            return head, Content("\n").join([text, Content(""), alloc])
        lines = [Content.assemble(("No GPU usage: ", "bold $text-error"), (self._reason, "$text-error"))]
        lines += [Content.styled(f"  {d}", "$text-muted") for d in self._detail]
        lines += [Content(""), alloc]
        return head, Content("\n").join(lines)
