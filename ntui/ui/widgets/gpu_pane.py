"""The GPU pane: per-node, per-GPU usage of one job, from the job's own sample files or one overlapping step.

One responsibility: owning one job's :class:`~ntui.core.gpu.watch.GpuWatch` (its sources, its states, what runs off
the UI thread: all in the core) and drawing it (:mod:`ntui.ui.widgets.gpu_render`: bars, or a heatmap past
:data:`~ntui.core.gpu.heatmap.HEATMAP_OVER` GPUs). The pane says where the numbers come from ("from the job's own
samples, every 10 s", or "live from a watch step"); the history entry that names the sample files is looked up in
the plan worker through the app's history (``open_history``).

Life cycle (the jobs view selects a running job: :meth:`GpuPane.show_selected`, or :meth:`GpuPane.watch_job`):

1. a thread worker runs :meth:`GpuWatch.plan_for <ntui.core.gpu.watch.GpuWatch.plan_for>` (the sample files, else
   ``scontrol show job -d`` and the watch step's ``srun``) and posts its answer;
2. the step's reader thread feeds its board under the watch's lock (no widget is touched from a thread; the step's
   end comes back as a posted message);
3. a ``set_interval`` tick (the sampling interval) redraws from the board, or has a worker read the sample files'
   new bytes: at most one redraw per interval however many lines arrive, and no Slurm RPC per tick.

The step exists only while the pane is visible: the watch pauses when the pane is hidden (its tab switched away, its
screen left the stack) or removed, and resumes on ``Show`` or the screen coming back (a fresh ``scontrol show job
-d`` for a step). When the job is not running, the plan fails, srun or nvidia-smi is missing, or the step dies, the
pane says why and shows the allocation (GPU indices per node from ``scontrol show job -d``) instead.

A job of a cluster reached over ssh (``SelectedJob.cluster``) is watched the same way through that cluster's runner
(the app's ``cluster_runner``) and its files (``TabDeps.files``: its agent): an ntui job's sample files are read there
by offset, else the step runs there and streams here over the cluster's ssh master, ended there when the pane stops
reading (one line says the samples were not read). A dropped link is said in the pane and retried by the tick with
back-off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
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
from ntui.core.gpu.heatmap import use_heatmap
from ntui.core.gpu.samples import SampleBoard
from ntui.core.gpu.smi import GpuBoard, GpuIssue
from ntui.core.gpu.stream import GpuStream, GpuWatchPlan
from ntui.core.gpu.watch import SAMPLES_NOT_OVER_SSH, GpuWatch, PlanOutcome, RemoteFiles, StreamFactory, WatchState
from ntui.core.hosts import compress_nodelist
from ntui.core.jobs.selected import SelectedJob
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.runner import CommandRunner
from ntui.ui.widgets.gpu_render import (
    render_allocation,
    render_board,
    render_heatmap,
    render_issues,
    render_summary,
)
from ntui.ui.widgets.job_tab import JobTab, TabDeps, TabSpec, displayed

__all__ = ["GpuPane"]

class HistoryLookup(Protocol):
    """What the pane needs of the history (:class:`ntui.core.records.history.History`, or a fake in tests)."""

    def get(self, job_id: str) -> HistoryEntry | None: ...

    def close(self) -> None: ...


def _sample_files(factory: Callable[[], HistoryLookup | None], job_id: str) -> tuple[str, str] | None:
    """*Worker thread*: the log directory and stem ntui recorded for ``job_id`` (None: not ntui's, or no history)."""
    history = None
    try:
        history = factory()
        entry = history.get(job_id) if history is not None else None
    except Exception:  # an unreadable history only means: the watch step instead
        return None
    finally:
        if history is not None:
            history.close()
    return (entry.log_dir, entry.log_stem) if entry is not None and entry.log_dir and entry.log_stem else None


class GpuPane(JobTab, Widget):
    """Live GPU usage of one running job. See the module docstring for the life cycle."""

    TAB = TabSpec("GPUs", "tab-gpus", "jobs-gpu", "g", "ntui.jobs.tab_gpus",
                  "Live GPU use of the selected running job, per node and GPU", groups=("gpu-plan", "gpu-files"))
    FEED_HIDDEN = True  # it pauses itself while hidden (no step, no reads) and resumes when shown
    OVER_SSH = True  # a remote job's watch step runs on its cluster, streamed over that cluster's ssh master

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
        outcome: PlanOutcome  # a step already started, the sample files read whole, or why neither

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
        cluster_files: Callable[[str], RemoteFiles] | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.settings = settings
        self.clock = clock
        self.gpu_watch = GpuWatch(runner, settings, clock=clock, stream_factory=stream_factory, nvidia_smi=nvidia_smi,
                              environ=environ, budget=budget)
        #: where the job's history entry comes from (None: the app's ``open_history``, if it has one)
        self.history_factory = history_factory
        #: the files of a cluster reached over ssh, by its name (None: no remote job's samples are read)
        self.cluster_files = cluster_files
        self._ticker: Timer | None = None
        #: the selected job and its cluster (None: here), as last asked for by show_selected
        self._wanted: tuple[str | None, str | None] = (None, None)
        self.redraws = 0

    # -- as a tab of the jobs view ---------------------------------------------------------------------

    @classmethod
    def build(cls, deps: TabDeps) -> GpuPane:
        return cls(deps.runner, deps.settings.gpu, cluster_files=deps.files, id=cls.TAB.widget_id)

    def show_selected(self, selected: SelectedJob) -> None:
        """Watch the selected job while it runs (a pending or ended job has no GPUs to watch)."""
        want = (selected.job_id if selected.running else None, selected.cluster)
        if want != self._wanted:  # the same job again is left as it is (a failed watch retries on a new selection)
            self._wanted = want
            self.watch_job(want[0], cluster=want[1])

    def show_failure(self, text: str) -> None:
        self._wanted = (None, None)
        self.gpu_watch.fail(text)
        self.redraw()

    # -- public API ------------------------------------------------------------------------------------

    @property
    def job_id(self) -> str | None:
        return self.gpu_watch.job_id

    @property
    def state(self) -> WatchState:
        """idle (no job), planning, starting (step up, no data yet), streaming, paused (hidden), failed."""
        return self.gpu_watch.state

    @property
    def reason(self) -> str:
        """Why there is no GPU data (state ``failed``), else ``""``."""
        return self.gpu_watch.reason

    @property
    def board(self) -> GpuBoard | None:
        return self.gpu_watch.board

    @property
    def plan(self) -> GpuWatchPlan | None:
        return self.gpu_watch.plan

    @property
    def sample_board(self) -> SampleBoard | None:
        """The job's own sample files, when the pane shows those (else the watch step's :attr:`board`)."""
        return self.gpu_watch.files

    @property
    def source(self) -> Literal["samples", "step"] | None:
        """What the pane shows: the job's sample files, the watch step, or nothing yet."""
        if self.gpu_watch.files is not None:
            return "samples"
        return "step" if self.gpu_watch.board is not None else None

    @property
    def budget(self) -> FdBudget:
        """The descriptors the sample files may hold between reads."""
        return self.gpu_watch.budget

    @property
    def cluster(self) -> str | None:
        """The cluster reached over ssh the watched job is on (None: Slurm here)."""
        return self.gpu_watch.cluster

    @property
    def streaming(self) -> bool:
        """A watch step is running (or being started) for this pane."""
        return self.gpu_watch.stream is not None

    def watch_job(self, job_id: str | None, *, cluster: str | None = None) -> None:
        """Watch ``job_id`` (a running job; of ``cluster``, reached over ssh, None: here), stopping any previous
        step; ``None`` stops watching.

        Watching the job already watched is a no-op, unless the last attempt failed (then it retries).
        """
        jid = (job_id or "").strip() or None
        watch = self.gpu_watch
        if jid is not None and (jid, cluster) == (watch.job_id, watch.cluster) \
                and watch.state not in ("failed", "idle"):
            return
        self._restart(jid, cluster)

    def redraw(self) -> None:
        """Rebuild the display from the board (the tick calls this; tests call it directly)."""
        if not self.is_mounted:
            return
        self.redraws += 1
        body = self.query_one("#gpu-body", Static)
        issues: list[GpuIssue] = []
        watch = self.gpu_watch
        with watch.lock:
            board = watch.shown
            if watch.streaming_now() and board is not None and watch.job_id is not None:
                now = self.clock()
                head = render_summary(board, watch.job_id, now)
                issues = board.issues(now)
                if isinstance(board, SampleBoard):
                    issues += [GpuIssue("stale", "", m) for m in board.messages()[:3]]
                elif watch.cluster is not None:
                    issues.append(GpuIssue("idle", "", f"{watch.cluster}: {SAMPLES_NOT_OVER_SSH}"))
                width = max(40, body.content_region.width or self.size.width - 2)
                gpus = sum(len(g) for g in board.latest().values())
                main = render_heatmap(board, width) if use_heatmap(gpus) else render_board(board, width, now)
            else:
                head, main = self._status_content()
        with self.app.batch_update():
            self.query_one("#gpu-summary", Static).update(head)
            issues_w = self.query_one("#gpu-issues", Static)
            issues_w.update(render_issues(issues))
            issues_w.set_class(not issues, "-empty")
            body.update(main)

    def wait_stopped(self, timeout: float = 10.0) -> bool:
        """Wait for the steps being stopped in the background; True when all are gone (tests, shutdown)."""
        return self.gpu_watch.wait_stopped(timeout)

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
        self.gpu_watch.stop()
        if self._ticker is not None:
            self._ticker.stop()

    def on_show(self) -> None:
        self._visibility_changed()

    def on_hide(self) -> None:
        self._visibility_changed()

    def on_resize(self) -> None:
        if self.gpu_watch.state == "streaming":
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
        watch = self.gpu_watch
        if not self.visible_now:
            if watch.pause():
                self.redraw()
            return
        resumed = watch.resume()
        if resumed == "poll":
            self.redraw()
            self._poll_files(watch.generation)
        elif resumed == "restart":
            self._restart(watch.job_id, watch.cluster)

    # -- the watch -------------------------------------------------------------------------------------

    def _restart(self, job_id: str | None, cluster: str | None = None) -> None:
        if self.gpu_watch.restart(job_id, visible=self.visible_now, cluster=cluster) and job_id is not None:
            history = self.history_factory or getattr(self.app, "open_history", None)
            runners = getattr(self.app, "cluster_runner", None) if cluster is not None else None
            self._plan_watch(self.gpu_watch.generation, job_id, history, runners,
                             self.cluster_files if cluster is not None else None)
        self.redraw()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu-plan", description="GPU watch")
    def _plan_watch(self, generation: int, job_id: str,
                    history: Callable[[], HistoryLookup | None] | None = None,
                    runners: Callable[[str], CommandRunner] | None = None,
                    files: Callable[[str], RemoteFiles] | None = None) -> None:
        def ended(gen: int, returncode: int, stderr: str) -> None:  # the step's waiter thread
            self.post_message(self._StepEnded(gen, returncode, stderr))

        where = partial(_sample_files, history) if history is not None else None
        outcome = self.gpu_watch.plan_for(generation, job_id, where, ended, cluster_runner=runners,
                                          cluster_files=files)
        if outcome is not None:
            self.post_message(self._Planned(outcome))

    @on(_Planned)
    def _planned(self, message: _Planned) -> None:
        if self.gpu_watch.take(message.outcome):
            self.redraw()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu-files", description="GPU sample files")
    def _poll_files(self, generation: int) -> None:
        """*Worker thread*: the due files' new bytes (each file at most every sampling interval)."""
        changed = self.gpu_watch.poll_files(generation)
        if changed is not None:
            self.post_message(self._FilesPolled(generation, changed))

    @on(_FilesPolled)
    def _files_polled(self, message: _FilesPolled) -> None:
        if message.generation == self.gpu_watch.generation and message.changed and self.gpu_watch.state == "streaming":
            self.redraw()

    @on(_StepEnded)
    def _step_ended(self, message: _StepEnded) -> None:
        if self.gpu_watch.step_ended(message.generation, message.returncode, message.stderr):
            self.redraw()

    def _tick(self) -> None:
        self._visibility_changed()
        watch = self.gpu_watch
        if watch.retry_due() and self.visible_now:  # a dropped link's back-off wait is over
            self._restart(watch.job_id, watch.cluster)
            return
        if watch.files is not None:
            if watch.polls_files():
                self._poll_files(watch.generation)  # redraws when something arrived
        elif watch.state in ("starting", "streaming"):
            self.redraw()

    # -- status views ----------------------------------------------------------------------------------

    def _status_content(self) -> tuple[Content, Content]:
        watch = self.gpu_watch
        jid, plan, state = watch.job_id, watch.plan, watch.state
        if state == "idle" or jid is None:
            return Content.styled("GPU usage", "bold"), Content.styled(
                "Select a running job to watch its GPUs.", "$text-muted"
            )
        head = Content.assemble((f"job {jid}", "bold"), "  GPU usage")
        if watch.cluster is not None:
            head = Content.assemble((f"job {jid}", "bold"), f" on {watch.cluster}  GPU usage")
        if state == "planning" and watch.cluster is not None:
            return head, Content.styled(
                f"Reading the job's GPU sample files on {watch.cluster}, or else its allocation (scontrol show job "
                "-d over ssh)…", "$text-muted")
        if state == "planning":
            return head, Content.styled(
                "Reading the job's GPU sample files, or else the allocation (scontrol show job -d)…", "$text-muted")
        if state == "paused":
            return head, Content.styled("Paused while the pane is hidden (no watch step running).", "$text-muted")
        alloc = render_allocation(watch.expected, watch.requested)
        if state == "starting" and plan is not None:
            text = Content.styled(
                f"Starting the GPU watch step on {compress_nodelist(plan.nodes)} (srun --overlap"
                f"{f' on {watch.cluster}, streamed over ssh' if watch.cluster else ''}, nvidia-smi every "
                f"{watch.interval} s)…",
                "$text-muted",
            )
            return head, Content("\n").join([text, Content(""), alloc])
        lines = [Content.assemble(("No GPU usage: ", "bold $text-error"), (watch.reason, "$text-error"))]
        lines += [Content.styled(f"  {d}", "$text-muted") for d in watch.detail]
        lines += [Content(""), alloc]
        return head, Content("\n").join(lines)
