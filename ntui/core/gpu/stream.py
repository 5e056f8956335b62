"""Run the GPU watch step and stream its lines: one process per watched job, no RPC per tick.

The caller (the app's GPU pane, or ``ntui gpus``) builds the argv with
:func:`ntui.core.gpu.smi.build_gpu_step_argv`, starts a :class:`GpuStream`, receives lines on a
reader thread and stops it when the pane hides, another job is selected, or the app quits.
``srun`` cancels the step when it gets SIGTERM; the stream waits, then SIGKILLs its process
group as a last resort, so no step outlives the pane.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ntui.core.gpu.smi import build_gpu_step_argv, task_node_order
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.scontrol import JobDetails, show_job
from ntui.core.slurm.srun import step_env

STDERR_TAIL = 20


class GpuStream:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        on_line: Callable[[str], None],
        on_exit: Callable[[int, str], None],
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self._on_line = on_line
        self._on_exit = on_exit
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        """Start the step. Raises FileNotFoundError when srun is missing."""
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            start_new_session=True,
        )
        for target in (self._read_stdout, self._read_stderr, self._wait):
            t = threading.Thread(target=target, daemon=True, name=f"ntui-gpu-{target.__name__}")
            t.start()
            self._threads.append(t)

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            if self._stopping.is_set():
                break
            self._on_line(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _wait(self) -> None:
        assert self._proc is not None
        rc = self._proc.wait()
        for t in self._threads[:2]:
            t.join(timeout=2)
        if not self._stopping.is_set():
            self._on_exit(rc, "\n".join(self._stderr))

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM srun (it cancels the step), then SIGKILL the group if it lingers."""
        self._stopping.set()
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)


@dataclass(frozen=True)
class GpuWatchPlan:
    """Everything needed to watch a running job's GPUs, from one ``scontrol show job -d``."""

    job_id: str
    nodes: tuple[str, ...]
    task_nodes: tuple[str, ...]
    expected: dict[str, tuple[int, ...]]
    time_left_min: int | None
    argv: tuple[str, ...]
    env: dict[str, str]


class NotWatchable(Exception):
    """The job cannot be watched (not running, no nodes); the message says why. ``details`` is the
    ``scontrol show job -d`` answer already fetched, so callers can show the allocation without a
    second RPC."""

    def __init__(self, message: str, details: JobDetails | None = None) -> None:
        super().__init__(message)
        self.details = details


def plan_gpu_watch(
    runner: CommandRunner,
    job_id: str,
    *,
    interval_s: int = 2,
    nvidia_smi: str = "nvidia-smi",
    environ: Mapping[str, str] | None = None,
) -> GpuWatchPlan:
    details = show_job(runner, job_id)
    if details.category is not StateCategory.RUNNING:
        raise NotWatchable(f"job {job_id} is {details.state}, not running: no GPUs to watch", details)
    nodes = details.nodes
    if not nodes:
        raise NotWatchable(f"job {job_id} has no nodes yet", details)
    limit, used = details.time_limit_s, details.run_time_s
    left = None if limit is None or used is None else max(1, (limit - used) // 60)
    try:
        argv = build_gpu_step_argv(details.job_id, nodes, interval_s, left, nvidia_smi)
    except ValueError as exc:
        raise NotWatchable(str(exc), details) from None
    return GpuWatchPlan(
        job_id=details.job_id,
        nodes=nodes,
        task_nodes=task_node_order(nodes),
        expected=dict(details.gres_by_node),
        time_left_min=left,
        argv=tuple(argv),
        env=step_env(os.environ if environ is None else environ),
    )
