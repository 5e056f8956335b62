"""One job's GPU watch, Textual-free: its state machine, its two sources and the work done off the UI thread.

The GPU pane (``ntui.ui.widgets.gpu_pane``) owns a :class:`GpuWatch` and draws from it; everything it decides lives
here, so it is tested without an app.

**Sources.** For ntui's own jobs with GPU monitoring on, the in-job sampler writes one file per node: the watch
reads those (:class:`~ntui.core.gpu.samples.SampleBoard`: no step, no Slurm RPC, the history from the job's first
sample, each file read at most every sampling interval, only its new bytes). Jobs without such files get a watch
step: one ``scontrol show job -d`` (:func:`~ntui.core.gpu.stream.plan_gpu_watch`), then
``srun --jobid=J --overlap ... nvidia-smi -l N`` (:class:`~ntui.core.gpu.stream.GpuStream`) whose reader thread feeds
a :class:`~ntui.core.gpu.smi.GpuBoard` under :attr:`GpuWatch.lock`.

**States** (:data:`WatchState`): ``idle`` (no job), ``planning`` (the look-up and the step's start run in a worker),
``starting`` (the step is up, no line yet), ``streaming``, ``paused`` (the pane is hidden: no step, no reads, no
descriptors held) and ``failed`` (:attr:`GpuWatch.reason` says why; the allocation is shown instead).

**Generations.** Every restart, pause and stop moves :attr:`GpuWatch.generation` on; what a worker or the step's
waiter thread brings back carries the generation it was started for, and an answer of an older one is dropped (and a
step it started is stopped). Stopping a step runs in a background thread (srun gets SIGTERM, then its group SIGKILL),
so the UI never waits for it.

**A job of a cluster reached over ssh** (``restart(..., cluster=NAME)``): the plan asks that cluster's runner
(``plan_for``'s ``cluster_runner``), and the watch step runs on its login node, its output streamed here over one
channel of the cluster's ssh master through the relay of :meth:`~ntui.core.slurm.ssh.SshRunner.stream_argv`: stopping
the local ssh process (the pane hidden, another job, the app quit) ends the step there too. An ntui job's own sample
files are read first through the cluster's files (its agent: the history entry there, one listing, then each file
by offset, ``plan_for``'s ``cluster_files``); without them the step says so in one line
(:data:`SAMPLES_NOT_OVER_SSH`). A dropped link (the plan's
``scontrol`` or the stream ending with ssh's own words for it) is said as the reason and retried with back-off
(:meth:`GpuWatch.retry_due`), never in a loop and never on the UI thread.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ntui.core.config import GpuSettings
from ntui.core.errors import describe_error
from ntui.core.gpu.samples import RemoteListing, SampleBoard
from ntui.core.gpu.smi import GpuBoard, GpuView
from ntui.core.gpu.stream import GpuWatchPlan, NotWatchable, plan_gpu_watch
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.scontrol import JobDetails
from ntui.core.slurm.ssh import Backoff

__all__ = [
    "FilesFound",
    "GpuStreamLike",
    "GpuWatch",
    "SampleFilesLookup",
    "PlanFailed",
    "Planned",
    "RemoteFiles",
    "SAMPLES_NOT_OVER_SSH",
    "StreamRelay",
    "StreamFactory",
    "WatchState",
    "describe_step_end",
    "relay_of",
]

WatchState = Literal["idle", "planning", "starting", "streaming", "paused", "failed"]


#: *Worker thread*: where a job's sample files are, ``(log_dir, log_stem)`` (None: not ntui's job, or no history);
#: the pane asks ntui's history
SampleFilesLookup = Callable[[str], "tuple[str, str] | None"]


#: What the pane says of a remote job watched by a step (one line)
SAMPLES_NOT_OVER_SSH = "no GPU sample files of this job read there (not ntui's, monitoring off, or no agent): live " \
    "from a watch step instead"


class RemoteFiles(RemoteListing, Protocol):
    """A cluster's files (:class:`ntui.core.remote.files.ClusterFiles`): its history entries and its files."""

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None: ...


class StreamRelay(Protocol):
    """What a cluster reached over ssh gives a watch step (:class:`~ntui.core.slurm.ssh.SshRunner`): the argv that
    runs a long-lived command there with its output read here, and what a finished ssh call's status stands for."""

    def stream_argv(self, argv: Sequence[str]) -> list[str]: ...

    def classify(self, returncode: int, stderr: str, argv: Sequence[str] = ...) -> SlurmError | None: ...


def relay_of(runner: CommandRunner) -> StreamRelay | None:
    """The relay under ``runner`` (a wrapping runner holds the one it wraps as ``inner``), or None: Slurm is here."""
    current: object = runner
    for _ in range(8):
        if callable(getattr(current, "stream_argv", None)) and callable(getattr(current, "classify", None)):
            return current  # type: ignore[return-value]
        current = getattr(current, "inner", None)
        if current is None:
            return None
    return None


def _link_words(error: BaseException | None) -> str | None:
    """The words of a dropped link (an ``SshError`` whose ``link_down`` holds), else None."""
    if error is not None and getattr(error, "link_down", False):
        return str(getattr(error, "words", "") or error)
    return None


class GpuStreamLike(Protocol):
    """What the watch needs of a stream (:class:`~ntui.core.gpu.stream.GpuStream`, or a fake in tests)."""

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


@dataclass(frozen=True)
class Planned:
    """The watch step is started; its reader thread feeds ``board`` already."""

    generation: int
    plan: GpuWatchPlan
    board: GpuBoard
    relay: StreamRelay | None = None  # the step runs on a cluster reached over ssh, streamed through this


@dataclass(frozen=True)
class PlanFailed:
    generation: int
    reason: str
    expected: dict[str, tuple[int, ...]] | None  # the allocation, when scontrol told it
    requested: str | None
    link_down: bool = False  # the cluster's link dropped: retried with back-off


@dataclass(frozen=True)
class FilesFound:
    """The job's own sample files, read whole already (the history from the job's first sample)."""

    generation: int
    board: SampleBoard


PlanOutcome = Planned | PlanFailed | FilesFound


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


def _allocation_of(details: JobDetails | None) -> tuple[dict[str, tuple[int, ...]] | None, str | None]:
    """The allocation from the ``scontrol show job -d`` the plan already did (no second RPC)."""
    if details is None:
        return None, None
    return dict(details.gres_by_node), details.tres_per_node or details.tres_per_job or None


class GpuWatch:
    """One job's GPU watch (see the module docstring). The UI thread calls the methods not marked *worker thread*."""

    def __init__(
        self,
        runner: CommandRunner,
        settings: GpuSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        stream_factory: StreamFactory,
        nvidia_smi: str = "nvidia-smi",
        environ: Mapping[str, str] | None = None,
        budget: FdBudget | None = None,
    ) -> None:
        self.runner = runner
        self.settings = settings
        self.clock = clock
        self.stream_factory = stream_factory
        self.nvidia_smi = nvidia_smi
        self.environ = environ
        #: descriptors the sample files may hold between reads (a held file costs one ``stat`` per read instead of
        #: ``open`` + ``fstat``)
        self.budget = budget if budget is not None else FdBudget()
        self.lock = threading.Lock()  # the boards: fed by reader threads, drawn by the UI
        self._file_io = threading.Lock()  # one reader of the files at a time (a slow poll is not doubled)
        self.generation = 0
        self.job_id: str | None = None
        self.state: WatchState = "idle"
        self.plan: GpuWatchPlan | None = None
        self.board: GpuBoard | None = None
        self.files: SampleBoard | None = None
        self.stream: GpuStreamLike | None = None
        self.reason = ""
        self.detail: list[str] = []
        self.expected: dict[str, tuple[int, ...]] | None = None
        self.requested: str | None = None
        #: the cluster reached over ssh the job is on (None: Slurm here), and its relay once the step is planned
        self.cluster: str | None = None
        self.relay: StreamRelay | None = None
        #: waits between attempts after a dropped link; when the next attempt is due (None: none is)
        self.backoff = Backoff(first=2.0, cap=60.0)
        self.retry_at: float | None = None
        self._stoppers: list[threading.Thread] = []
        self._unclaimed: dict[int, GpuStreamLike] = {}
        #: the relay of the step started for a generation (its end may come back before the plan's answer)
        self._relays: dict[int, StreamRelay] = {}  # started by the plan worker, not yet taken over

    @property
    def interval(self) -> int:
        return max(1, int(self.settings.interval))

    @property
    def shown(self) -> GpuView | None:
        """The board drawn: the sample files, else the watch step's (read under :attr:`lock`)."""
        return self.files or self.board

    # -- the UI thread -------------------------------------------------------------------------------------

    def restart(self, job_id: str | None, *, visible: bool, cluster: str | None = None) -> bool:
        """Watch ``job_id`` (of ``cluster``, reached over ssh; None: here) from scratch (None: nothing); True when a
        plan is to run now (:meth:`plan_for`). The back-off goes on only when the same job is watched again."""
        if (job_id, cluster) != (self.job_id, self.cluster):
            self.backoff.reset()
        self.cluster, self.relay, self.retry_at = cluster, None, None
        self.generation += 1
        self.stop_stream()
        with self.lock:
            self.board, self.plan = None, None
            files, self.files = self.files, None
        if files is not None:
            self.close_files(files)
        self.job_id = job_id
        self.reason, self.detail = "", []
        self.expected, self.requested = None, None
        self.state = "idle" if job_id is None else "planning" if visible else "paused"
        return self.state == "planning"

    def pause(self) -> bool:
        """The pane was hidden: no step, no reads, no descriptors held (reopened when shown). True if it paused."""
        if self.state not in ("planning", "starting", "streaming"):
            return False
        self.generation += 1
        self.stop_stream()
        if self.files is not None:
            self.close_files(self.files)
        self.state = "paused"
        return True

    def resume(self) -> Literal["poll", "restart"] | None:
        """The pane is shown again: read the files on (what was read stays), or restart the step."""
        if self.state != "paused":
            return None
        if self.files is not None:
            self.generation += 1
            self.state = "streaming"
            return "poll"
        return "restart"

    def take(self, outcome: PlanOutcome) -> bool:
        """A plan worker's answer; False when it is stale (another job, hidden, stopped since)."""
        if isinstance(outcome, PlanFailed):
            if outcome.generation != self.generation:
                return False
            self.expected, self.requested = outcome.expected, outcome.requested
            if outcome.link_down:
                self.link_lost(outcome.reason)
            else:
                self.fail(outcome.reason)
            return True
        if isinstance(outcome, FilesFound):
            if outcome.generation != self.generation or self.state != "planning":
                self.close_files(outcome.board)
                return False
            with self.lock:
                self.files = outcome.board
            self.state = "streaming"
            return True
        with self.lock:
            stream = self._unclaimed.pop(outcome.generation, None)
        if outcome.generation != self.generation or self.state != "planning" or stream is None:
            if stream is not None:
                self._stop_in_background(stream)
            return False
        with self.lock:
            self.plan, self.board = outcome.plan, outcome.board
        self.expected = dict(outcome.plan.expected)
        self.relay = outcome.relay
        self.stream = stream
        self.state = "starting"
        return True

    def step_ended(self, generation: int, returncode: int, stderr: str) -> bool:
        """The watch step's srun ended (its waiter thread said so); False when it was an older step."""
        if generation != self.generation:
            return False
        self.stream = None
        with self.lock:
            relay = self._relays.get(generation, self.relay)
        words = _link_words(relay.classify(returncode, stderr)) if relay is not None else None
        if words is not None:
            self.link_lost(words)
        else:
            self.fail(*describe_step_end(returncode, stderr))
        return True

    def link_lost(self, words: str) -> None:
        """The cluster's link dropped (the plan or the stream): said, and the watch tried again after the next
        back-off wait (:meth:`retry_due`)."""
        delay = self.backoff.delay()
        self.fail(f"{self.cluster or 'the cluster'}: link down ({words}); retrying in {delay:.0f} s")
        self.retry_at = self.clock() + delay

    def retry_due(self) -> bool:
        """A dropped link's wait is over: the tick restarts the watch (:meth:`restart` of the same job)."""
        return self.state == "failed" and self.retry_at is not None and self.clock() >= self.retry_at

    def fail(self, reason: str, detail: Sequence[str] = ()) -> None:
        self.stop_stream()
        self.state = "failed"
        self.reason = reason
        self.detail = list(detail)

    def streaming_now(self) -> bool:
        """Lines arrived: ``starting`` becomes ``streaming``; whether there is data to draw (under :attr:`lock`)."""
        board = self.shown
        if board is not None and self.state in ("starting", "streaming") and board.latest():
            if self.state == "starting":
                self.backoff.reset()  # lines again: the link holds
            self.state = "streaming"
        return self.state == "streaming" and board is not None and self.job_id is not None

    def polls_files(self) -> bool:
        """The tick should read the files' new bytes (:meth:`poll_files`)."""
        return self.files is not None and self.state == "streaming" and not self.files.done

    def stop(self) -> None:
        """The pane goes: every step stopped, the files closed."""
        self.generation += 1
        self.stop_stream()
        if self.files is not None:
            self.close_files(self.files)

    def stop_stream(self) -> None:
        """Stop the step in a background thread (SIGTERM to srun, then SIGKILL); never blocks the UI."""
        stream, self.stream = self.stream, None
        with self.lock:
            unclaimed, self._unclaimed = list(self._unclaimed.values()), {}
        for orphan in unclaimed:
            self._stop_in_background(orphan)
        if stream is not None:
            self._stop_in_background(stream)

    def close_files(self, files: SampleBoard) -> None:
        """Release the files' held descriptors off the UI thread, after any poll in flight."""
        io = self._file_io

        def close() -> None:
            with io:
                files.close()

        threading.Thread(target=close, name="ntui-gpu-files-close", daemon=True).start()

    def wait_stopped(self, timeout: float = 10.0) -> bool:
        """Wait for the steps being stopped in the background; True when all are gone (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        for t in list(self._stoppers):
            t.join(max(0.0, deadline - time.monotonic()))
        self._stoppers = [t for t in self._stoppers if t.is_alive()]
        return not self._stoppers

    def _stop_in_background(self, stream: GpuStreamLike) -> None:
        t = threading.Thread(target=stream.stop, name="ntui-gpu-stop", daemon=False)
        t.start()
        self._stoppers = [s for s in self._stoppers if s.is_alive()] + [t]

    # -- worker threads ------------------------------------------------------------------------------------

    def plan_for(self, generation: int, job_id: str, where: SampleFilesLookup | None,
                 on_exit: Callable[[int, int, str], None], *,
                 cluster_runner: Callable[[str], CommandRunner] | None = None,
                 cluster_files: Callable[[str], RemoteFiles] | None = None) -> PlanOutcome | None:
        """*Worker thread*: the job's own sample files when it has them (no RPC at all); else the one
        ``scontrol show job -d`` of this watch, then the watch step's start (``srun``: a fork and exec, kept off the
        UI thread too). ``on_exit(generation, returncode, stderr)``: the step ended (its waiter thread). None: the
        watch moved on meanwhile (what was opened or started is closed or stopped). A job of :attr:`cluster`:
        its sample files through ``cluster_files(cluster)``, else ``cluster_runner(cluster)`` asks it and the step is
        streamed over ssh."""
        runner, relay, cluster = self.runner, None, self.cluster
        if cluster is not None:
            if cluster_runner is None:
                return PlanFailed(generation, f"cluster {cluster} is not reachable from here", None, None)
            try:
                runner = cluster_runner(cluster)
            except (SlurmError, ValueError) as exc:
                return PlanFailed(generation, describe_error(exc), None, None)
            relay = relay_of(runner)
            if relay is None:
                return PlanFailed(generation, f"cluster {cluster}'s runner cannot stream a watch step here", None,
                                  None)
            where = None  # the history here knows nothing of that cluster's jobs
            remote = self._open_remote_samples(job_id, cluster, cluster_files)
            if remote is not None:
                if generation != self.generation:
                    remote.close()
                    return None
                return FilesFound(generation, remote)
        files = self._open_sample_files(job_id, where)
        if files is not None:
            if generation != self.generation:
                files.close()
                return None
            return FilesFound(generation, files)
        try:
            plan = plan_gpu_watch(runner, job_id, interval_s=self.interval, nvidia_smi=self.nvidia_smi,
                                  environ=self.environ)
            if relay is not None:  # run there, read here: the relay ends the step when the channel closes
                from dataclasses import replace

                plan = replace(plan, argv=tuple(relay.stream_argv(plan.argv)),
                               env=dict(os.environ if self.environ is None else self.environ))
        except NotWatchable as exc:
            return PlanFailed(generation, str(exc), *_allocation_of(exc.details))
        except (SlurmError, ValueError) as exc:  # scontrol itself failed: no allocation known
            words = _link_words(exc)
            if words is not None:
                return PlanFailed(generation, words, None, None, link_down=True)
            return PlanFailed(generation, describe_error(exc), None, None)
        board = GpuBoard(plan.task_nodes, expected=plan.expected, interval_s=self.interval,
                         idle_after_s=self.settings.idle_after, clock=self.clock)
        lock = self.lock

        def on_line(line: str) -> None:  # reader thread: the board only, under the lock
            with lock:
                board.feed(line)

        try:
            stream = self.stream_factory(plan.argv, env=plan.env, on_line=on_line,
                                         on_exit=lambda rc, err: on_exit(generation, rc, err))
            with lock:  # stopped by stop_stream if the watch moves on before the answer is taken
                self._unclaimed[generation] = stream
                if relay is not None:
                    self._relays = {generation: relay}
            stream.start()
        except OSError as exc:
            with lock:
                self._unclaimed.pop(generation, None)
            return PlanFailed(generation, f"could not start the GPU watch step: {plan.argv[0]} not found "
                              f"({exc.strerror or exc})", dict(plan.expected), None)
        if generation != self.generation:  # moved on (another job, hidden, stopped) while srun started
            with lock:
                stale = self._unclaimed.pop(generation, None)
            if stale is not None:
                stale.stop()
            return None
        return Planned(generation, plan, board, relay)

    def _open_sample_files(self, job_id: str, where: SampleFilesLookup | None) -> SampleBoard | None:
        """*Worker thread*: the job's sample files read whole; None when it has none."""
        place = where(job_id) if where is not None else None
        if place is None or not all(place):
            return None
        board = SampleBoard(job_id, *place, tick_s=self.interval, budget=self.budget, monotonic=self.clock)
        if not board.nodes:
            return None
        board.load()  # not shared yet: no lock while the whole files are parsed
        board.lock = self.lock  # from now on the UI draws from it: new lines go in under the lock
        return board

    def _open_remote_samples(self, job_id: str, cluster: str,
                             cluster_files: Callable[[str], RemoteFiles] | None) -> SampleBoard | None:
        """*Worker thread*: the job's sample files on ``cluster``, read whole through its files (its agent); None
        when it has none there, or they cannot be asked now (the step instead)."""
        if cluster_files is None:
            return None
        try:
            files = cluster_files(cluster)
            found = files.job(job_id)
        except Exception:  # no agent there, or the link is down: the step says the rest
            return None
        entry = found.get("entry") if isinstance(found, dict) else None
        if not isinstance(entry, dict):
            return None
        log_dir, stem = entry.get("log_dir"), entry.get("log_stem")
        if not isinstance(log_dir, str) or not isinstance(stem, str) or not log_dir or not stem:
            return None
        board = SampleBoard(job_id, log_dir, stem, tick_s=self.interval, monotonic=self.clock, remote=files)
        if not board.nodes:
            return None
        board.load()
        board.lock = self.lock
        return board

    def poll_files(self, generation: int) -> bool | None:
        """*Worker thread*: the due files' new bytes (each file at most every sampling interval); whether any
        changed (None: nothing read, the watch moved on or a poll is in flight)."""
        files = self.files
        if files is None or generation != self.generation or not self._file_io.acquire(blocking=False):
            return None
        try:
            return files.poll()  # reads outside the lock; feeds the readers under it
        finally:
            self._file_io.release()
