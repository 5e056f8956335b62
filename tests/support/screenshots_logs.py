"""``screenshots/log-pane.svg`` and ``screenshots/log-merged.svg``: the log pane alone, deterministically.

    python -m tests.support.screenshots_logs [OUT_DIR]   (from the repository root)

:func:`write_demo_logs` writes a failed 2-node x 2-GPU job the way ntui lays it out
(``<stem>-<job>.out`` + ``<stem>-<job>-rank-N.out``, each rank file starting with ``ntui: rank N on NODE``):
rank 2 dies of a CUDA out-of-memory error, the other ranks then fail in NCCL; fixed mtimes (``os.utime``)
and a frozen clock make every run draw the same picture. :func:`log_pane_scene` is the part a combined
screenshot script (and the snapshot tests) reuse: open the job, wait for the watcher, then ``E`` (jump to
the first error) or ``m`` (merged view). :func:`big_log_scene` opens the big-job fixture
(:mod:`tests.support.bigjob`, 256 nodes x 4 ranks) the same way: the grouped rank table after ``E``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

from textual.app import App, ComposeResult

from ntui.core.config import LogSettings
from ntui.core.jobfiles.lognames import LogPaths
from ntui.ui.widgets.log_pane import LogPane
from tests.support.bigjob import BigJob
from tests.support.waits import WAIT_BOUND_S

JOB_ID = "48213777"
STEM = "alice-ddp"
NODES = ("nid001140", "nid001140", "nid001141", "nid001141")  # rank -> node (2 per node)
FAILING_RANK = 2
SIZE = (130, 36)
MTIME = 1_780_000_000.0  # when rank 2 wrote its last line
NOW = MTIME + 95.0  # the frozen clock: 95 s later
Scene = Literal["error", "merged", "rank"]


def _steps(rank: int, upto: int) -> list[str]:
    out = []
    for step in range(100, upto + 1, 100):
        loss = 4.2 / (1 + step / 900) + 0.011 * rank
        out.append(f"step {step:5d} | loss {loss:.4f} | lr 3.00e-04 | {402 + 3 * rank} samples/s | mem 37.1 GiB")
    return out


def _rank_lines(rank: int) -> list[str]:
    node = NODES[rank]
    lines = [
        f"ntui: rank {rank} on {node}",
        f"rank {rank}/4 on {node}: init nccl via {NODES[0]}:29500",
        f"[rank{rank}]: loaded 1281167 samples from /pscratch/sd/a/alice/imagenet (shard {rank}/4)",
        *_steps(rank, 1200),
    ]
    if rank == FAILING_RANK:
        return [
            *lines,
            "[rank2]: Traceback (most recent call last):",
            '[rank2]:   File "/global/homes/a/alice/train/ddp_check.py", line 141, in <module>',
            "[rank2]:     main()",
            '[rank2]:   File "/global/homes/a/alice/train/ddp_check.py", line 118, in main',
            "[rank2]:     loss = model(batch).loss",
            "[rank2]:            ^^^^^^^^^^^^",
            '[rank2]:   File "/global/homes/a/alice/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", '
            "line 1751, in _wrapped_call_impl",
            "[rank2]:     return self._call_impl(*args, **kwargs)",
            "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 39.39 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has "
            "38.26 GiB memory in use.",
        ]
    return [
        *lines,
        f"[rank{rank}]: Traceback (most recent call last):",
        f'[rank{rank}]:   File "/global/homes/a/alice/train/ddp_check.py", line 121, in main',
        f"[rank{rank}]:     loss.backward()",
        f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, "
        "NCCL version 2.21.5",
    ]


BATCH_LINES = [
    f"ntui: job {JOB_ID} on nid[001140-001141], 2 nodes x 2 tasks",
    "W0601 torchrun: OMP_NUM_THREADS set to 1 for each process",
    "launching 4 ranks: torchrun --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d",
]


def write_demo_logs(log_dir: Path, *, mtime: float = MTIME) -> LogPaths:
    """The demo job's files in ``log_dir`` (rank 2's mtime is the earliest); returns its paths."""
    log_dir.mkdir(parents=True, exist_ok=True)
    paths = LogPaths(str(log_dir), STEM)
    files = {Path(paths.batch(JOB_ID)): (BATCH_LINES, mtime + 4)}
    for rank in range(len(NODES)):
        files[Path(paths.rank(JOB_ID, rank))] = (_rank_lines(rank), mtime if rank == FAILING_RANK else mtime + 2)
    for path, (lines, when) in files.items():
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.utime(path, (when, when))
    return paths


class LogPaneHost(App[None]):
    """The pane alone on a screen, with a frozen clock."""

    TITLE = "ntui · logs"

    def __init__(self, now: float = NOW, settings: LogSettings | None = None) -> None:
        super().__init__()
        self.pane = LogPane(settings or LogSettings(poll_interval=0.05), clock=lambda: now, id="log-pane")

    def compose(self) -> ComposeResult:
        yield self.pane


async def wait_for(pilot: Any, condition: Any, timeout: float = WAIT_BOUND_S) -> None:
    """Pause until ``condition()`` holds (the watcher is a thread: wait on state, not on sleeps)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError("the log pane did not reach the expected state")
        await pilot.pause(0.02)


async def log_pane_scene(pilot: Any, pane: LogPane, paths: LogPaths, scene: Scene = "error") -> None:
    """Open the demo job; then ``E`` (scene "error"), ``m`` (scene "merged") or nothing (scene "rank")."""
    await pilot.pause()
    pane.show_job(JOB_ID, paths=paths, world_size=len(NODES), job_active=False)
    await wait_for(pilot, lambda: pane.triage_line.failed and all(r.exists for r in pane.rows.values()))
    await wait_for(pilot, lambda: len(pane.log_lines) > 0)
    if scene == "error":
        await pilot.press("E")
        await wait_for(pilot, lambda: pane.view_keys == (FAILING_RANK,) and pane.marked_line is not None)
    elif scene == "merged":
        await pilot.press("m")
        await wait_for(pilot, lambda: pane.view_mode == "merged" and len(pane.log_lines) > 20)
    await settle(pilot)


async def big_log_scene(pilot: Any, pane: LogPane, job: BigJob) -> None:
    """Open the big-job fixture's logs (running), wait for every rank, then ``E``: the failing rank's node
    expands in the grouped table and its traceback shows."""
    await pilot.pause()
    pane.show_job(job.job_id, paths=job.paths, world_size=job.ranks, job_active=True)
    await wait_for(pilot, lambda: pane.triage_line.failed and len(pane.rows) == job.ranks + 1
                   and all(r.exists for r in pane.rows.values()))
    await pilot.press("E")
    await wait_for(pilot, lambda: pane.view_keys == (job.fail_rank,) and pane.marked_line is not None)
    await settle(pilot)


async def settle(pilot: Any, *, stable: int = 3, gap: float = 0.1, timeout: float = WAIT_BOUND_S) -> None:
    """Pause until the screen stops changing (DataTable column widths and the Log's width are computed
    lazily, the latter in a worker thread): ``stable`` identical renders ``gap`` seconds apart. A screen still
    changing at ``timeout`` fails here (it went on to a picture of whatever the screen was then)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last, same = None, 0
    while same < stable:
        if loop.time() > deadline:
            raise TimeoutError("the log pane's screen did not stop changing")
        await pilot.pause(gap)
        shot = pilot.app.export_screenshot()
        same = same + 1 if shot == last else 0
        last = shot


async def _take(out_dir: Path) -> list[Path]:
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="ntui-logs-") as tmp:
        paths = write_demo_logs(Path(tmp) / "logs")
        for scene, name in (("error", "log-pane.svg"), ("merged", "log-merged.svg")):
            app = LogPaneHost()
            async with app.run_test(size=SIZE) as pilot:
                await log_pane_scene(pilot, app.pane, paths, scene)  # type: ignore[arg-type]
                svg = app.export_screenshot(title="ntui · logs")
            out_dir.mkdir(parents=True, exist_ok=True)
            target = out_dir / name
            target.write_text(svg, encoding="utf-8")
            written.append(target)
    return written


def log_pane_screenshots(out_dir: str | Path = Path("screenshots")) -> list[Path]:
    """Write ``log-pane.svg`` (E on the failed job) and ``log-merged.svg`` (``m``) into ``out_dir``."""
    return asyncio.run(_take(Path(out_dir)))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for path in log_pane_screenshots(*args[:1]):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
