"""A big job the dev cluster cannot run (256 nodes x 4 GPUs, 1,024 ranks by default), for tests and benches.

:func:`make_bigjob` writes, under a directory, what such a job leaves behind the way ntui lays it out:

* the batch log ``<stem>-<job>.out`` and one log per global rank ``<stem>-<job>-rank-N.out``, each starting
  with the ``ntui: rank N on NODE`` header (:func:`ntui.core.jobfiles.lognames.rank_header`), with fixed mtimes;
* one GPU sample file per node ``<stem>-<job>-gpu-<node>.csv`` in the in-job sampler's format (a
  ``# ntui-gpu-samples v1 ...`` header, then ``nvidia-smi --query-gpu=timestamp,index,uuid,utilization.gpu,
  memory.used,memory.total,power.draw,temperature.gpu --format=csv,noheader,nounits`` lines);
* a history entry (:meth:`BigJob.record_history`) so the app finds the paths and the world size.

Injected on purpose: ``fail_rank`` raises at ``fail_at`` (its log ends with a traceback and its mtime is
``fail_at``; with ``srun_line`` the batch log has srun's ``task N: Exited`` line, as Slurm writes it);
``silent_rank`` stopped writing ``silent_for`` seconds before ``now``; GPUs in ``idle_gpus`` read 0 %; node
``lagging_node`` runs at a third of the others' utilisation and power. :meth:`BigJob.watch_lines` gives the
same readings as the GPU watch step's ``srun --label`` lines (what :class:`~ntui.core.gpu.smi.GpuBoard` eats),
:meth:`BigJob.scontrol_show_job` the ``scontrol show job -d`` record of the allocation.

Parametrised by ``nodes`` and ``per_node`` so benches can write 8, 128 and 1,024 ranks.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths, rank_header
from ntui.core.jobfiles.samplefiles import SAMPLE_FIELDS
from ntui.core.records.history import History

JOB_ID = "5012345"
STEM = "llm-pretrain"
T0 = 1_780_000_000.0
"""When the job started (fixed: pictures and tests do not depend on today)."""
TRACEBACK = (
    "Traceback (most recent call last):",
    '  File "/global/homes/a/alice/train/pretrain.py", line 212, in <module>',
    "    main()",
    '  File "/global/homes/a/alice/train/pretrain.py", line 188, in main',
    "    loss.backward()",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
)
SAMPLE_HEADER_TAG = "# ntui-gpu-samples"
SAMPLE_FIELDS_TEXT = ",".join(SAMPLE_FIELDS)


def node_name(i: int) -> str:
    return f"nid{i + 1:06d}"


@dataclass
class BigJob:
    root: Path
    paths: LogPaths
    job_id: str
    nodes: tuple[str, ...]
    per_node: int
    fail_rank: int | None
    fail_at: float
    now: float
    silent_rank: int | None
    idle_gpus: tuple[tuple[int, int], ...]
    lagging_node: int | None
    interval: int
    steps: int
    sample_files: dict[str, Path] = field(default_factory=dict)

    @property
    def ranks(self) -> int:
        return len(self.nodes) * self.per_node

    def node_of(self, rank: int) -> str:
        return self.nodes[rank // self.per_node]

    def rank_path(self, rank: int) -> Path:
        return Path(self.paths.rank(self.job_id, rank))

    @property
    def batch_path(self) -> Path:
        return Path(self.paths.batch(self.job_id))

    # -- GPU readings (one model, two formats) ----------------------------------------------------------

    def reading(self, node_i: int, gpu: int, step: int) -> tuple[float, float, float, float]:
        """(utilisation %, memory used MiB, power W, temperature C) of one GPU at sample ``step``."""
        if (node_i, gpu) in self.idle_gpus:
            return 0.0, 3.0, 55.0, 33.0
        u = 88 + 8 * math.sin(step / 3.0 + 0.37 * node_i + 1.1 * gpu)
        if node_i == self.lagging_node:
            u /= 3
        power = 90 + 3.2 * u
        return round(u), 31_000 + 200 * gpu, round(power, 2), 50 + round(u / 8)

    def watch_lines(self, step: int) -> list[str]:
        """One ``nvidia-smi -l`` round of the GPU watch step (``srun --label``, task = node index)."""
        out = []
        for n in range(len(self.nodes)):
            for g in range(4):
                u, mem, power, temp = self.reading(n, g, step)
                out.append(f"{n}: {g}, GPU-{n:05d}{g:02d}-big, NVIDIA A100-SXM4-40GB, {u:.0f}, {u * 0.6:.0f}, "
                           f"{mem:.0f}, 40960, {temp:.0f}, {power:.2f}")
        return out

    def scontrol_show_job(self) -> str:
        """``scontrol show job -d`` of the allocation (4 GPUs on every node)."""
        last = len(self.nodes)
        nodelist = f"nid[000001-{last:06d}]" if last > 1 else self.nodes[0]
        return (
            f"JobId={self.job_id} JobName={STEM}\n"
            "   UserId=alice(74211) GroupId=alice(74211) MCS_label=N/A\n"
            "   JobState=RUNNING Reason=None Dependency=(null)\n"
            "   RunTime=01:02:03 TimeLimit=06:00:00 TimeMin=N/A\n"
            "   Partition=regular AllocNode:Sid=login22:1841\n"
            f"   NodeList={nodelist}\n"
            f"   BatchHost={self.nodes[0]}\n"
            f"   NumNodes={last} NumCPUs={128 * last} NumTasks={self.ranks} CPUs/Task=32 ReqB:S:C:T=0:0:*:*\n"
            f"   TRES=cpu={128 * last},node={last},billing={128 * last},gres/gpu={4 * last}\n"
            f"   JOB_GRES=gpu:{4 * last}\n"
            f"     Nodes={nodelist} CPU_IDs=0-127 Mem=237568 GRES=gpu:4(IDX:0-3)\n"
            "   TresPerNode=gres:gpu:4\n"
        )

    def record_history(self, history: History, *, launcher: str = "srun") -> None:
        """A history entry as ntui writes one on submission (paths, world size, launcher)."""
        token = f"bigjob-{self.job_id}"
        history.record_intent(
            token=token, preset="llm-pretrain", preset_path=None, overrides=(), job_name=STEM, launcher=launcher,
            nodes=len(self.nodes), world_size=self.ranks, log_dir=self.paths.log_dir, log_stem=self.paths.stem,
            script="#!/bin/bash\n",
        )
        history.record_submitted(token, self.job_id, "perlmutter", self.paths.script(self.job_id))

    # -- live failure (benches: inject it while a watcher runs) ----------------------------------------

    def inject_failure(self, rank: int, *, srun_line: bool, when: float | None = None) -> None:
        """``rank`` raises now: its traceback, and with ``srun_line`` srun's exit line in the batch log."""
        _append(self.rank_path(rank), [f"[rank{rank}]: {x}" for x in TRACEBACK], when)
        if srun_line:
            _append(self.batch_path, [srun_exit_line(self.node_of(rank), rank)], when)


def srun_exit_line(node: str, rank: int) -> str:
    return f"srun: error: {node}: task {rank}: Exited with exit code 1"


def _append(path: Path, lines: Sequence[str], when: float | None) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in lines))
    if when is not None:
        os.utime(path, (when, when))


def _stamp(t: float) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}"


def make_bigjob(
    root: Path,
    *,
    nodes: int = 256,
    per_node: int = 4,
    job_id: str = JOB_ID,
    fail_rank: int | None = 517,
    fail_at: float = T0 + 3_600.0,
    now: float | None = None,
    srun_line: bool = True,
    silent_rank: int | None = 42,
    silent_for: float = 900.0,
    idle_gpus: Sequence[tuple[int, int]] = ((3, 1), (130, 2)),
    lagging_node: int | None = 77,
    steps: int = 12,
    interval: int = 10,
    samples: bool = True,
    vendor: str = "nvidia",
) -> BigJob:
    """Write the job's files under ``root`` (see the module docstring). ``now`` (default ``fail_at + 30``)
    is when the picture is taken: the other ranks' last write is 5 s before it."""
    now = fail_at + 30.0 if now is None else now
    log_dir = root / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    paths = LogPaths(str(log_dir), STEM)
    names = tuple(node_name(i) for i in range(nodes))
    ranks = nodes * per_node
    fail_rank = fail_rank if fail_rank is not None and fail_rank < ranks else None
    silent_rank = silent_rank if silent_rank is not None and silent_rank < ranks and silent_rank != fail_rank else None
    job = BigJob(root, paths, job_id, names, per_node, fail_rank, fail_at, now, silent_rank,
                 tuple(g for g in idle_gpus if g[0] < nodes), lagging_node if (lagging_node or 0) < nodes else None,
                 interval, steps)
    batch = [f"ntui: job {job_id} on {nodes} node(s), {ranks} ranks (srun, {per_node} per node)"]
    if fail_rank is not None and srun_line:
        batch.append(srun_exit_line(job.node_of(fail_rank), fail_rank))
    _write(job.batch_path, batch, fail_at + 1 if fail_rank is not None else now - 5)
    for r in range(ranks):
        node = job.node_of(r)
        lines = [rank_header(r, node), f"rank {r}/{ranks} on {node}: nccl init via {names[0]}:29500"]
        last = steps if r != silent_rank else steps // 2
        lines += [f"step {s * 100:6d} | loss {4.1 / (1 + s / 9) + 0.0001 * r:.4f} | {400 + r % 7} samples/s"
                  for s in range(1, last + 1)]
        mtime = now - 5
        if r == fail_rank:
            lines += [f"[rank{r}]: {x}" for x in TRACEBACK]
            mtime = fail_at
        elif r == silent_rank:
            mtime = now - silent_for
        _write(job.rank_path(r), lines, mtime)
    if samples:
        for n, node in enumerate(names):
            path = log_dir / f"{STEM}-{job_id}-gpu-{node}.csv"
            head = (f"{SAMPLE_HEADER_TAG} v1 job={job_id} node={node} interval={interval} visible=0,1,2,3 "
                    f"status=sampling fields={SAMPLE_FIELDS_TEXT}")
            if vendor == "amd":
                head = head.replace("visible=0,1,2,3 status=sampling", "visible=0,1,2,3 status=sampling tool=rocm-smi")
            body = [head]
            for s in range(steps):
                t = now - (steps - s) * interval
                if vendor == "amd":
                    body += [f"@ rocm-smi {_stamp(t)}", rocm_smi_json(job, n, s), "@."]
                    continue
                for g in range(4):
                    u, mem, power, temp = job.reading(n, g, s)
                    body.append(f"{_stamp(t)}, {g}, GPU-{n:05d}{g:02d}-big, {u:.0f}, {mem:.0f}, 40960, {power:.2f}, "
                                f"{temp:.0f}")
            _write(path, body, now - interval)
            job.sample_files[node] = path
    return job


def rocm_smi_json(job: BigJob, node_i: int, step: int) -> str:
    """One snapshot of a node's four GPUs as ``rocm-smi ... --json`` prints it (the form of
    tests/data/gpus/vendors/rocm-smi-new.json: every value a string, memory in bytes), from the same readings."""
    import json

    cards = {}
    for g in range(4):
        u, mem, power, temp = job.reading(node_i, g, step)
        cards[f"card{g}"] = {"GPU use (%)": f"{u:.0f}", "GPU Memory Allocated (VRAM%)": f"{100 * mem / 65536:.0f}",
                             "Current Socket Graphics Package Power (W)": f"{power:.1f}",
                             "VRAM Total Memory (B)": str(65536 * 1024 * 1024),
                             "VRAM Total Used Memory (B)": str(int(mem * 1024 * 1024)),
                             "Temperature (Sensor edge) (C)": f"{temp:.1f}", "Unique ID": f"0x{node_i:04x}{g:02x}"}
    return json.dumps(cards)


def _write(path: Path, lines: Sequence[str], mtime: float) -> None:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    os.utime(path, (mtime, mtime))
