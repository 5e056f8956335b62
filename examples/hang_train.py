#!/usr/bin/env python3
"""A training loop that hangs on purpose, for ``ntui stacks`` and the quiet-job check on the dev cluster.

Every rank runs ``--steps`` steps of ``--step-seconds``, each ending in an ``all_reduce`` (gloo, a 10-minute
timeout: the hang outlasts any test), and prints ``step N/TOTAL loss X``. At step ``--hang-at``:

* ``--mode stuck``: rank ``--hang-rank`` calls a function of its own that waits for the file ``--release``
  before it enters the ``all_reduce``; the other ranks wait in the ``all_reduce``;
* ``--mode dataloader``: the batch of that step comes from a DataLoader whose worker (a process of its own)
  waits for the file ``--release`` in the dataset's ``__getitem__``; the rank waits for its worker, the others
  in the ``all_reduce``;
* ``--mode steady``: no hang, the pace stays the same (a slow job that still moves).

Once the file exists the run goes on to its end and exits 0. The rank and world come from the launcher's
environment (``RANK``/``WORLD_SIZE``, as ntui's scripts set them under every launcher).
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path


def wait_for_release(path: Path) -> None:
    """The stuck rank's own work: it never returns until ``path`` exists."""
    while not path.exists():
        time.sleep(0.2)


class Slow:
    """A dataset whose item ``hang`` waits for the release file (in the DataLoader's worker process)."""

    def __init__(self, hang: bool, release: Path) -> None:
        self.hang = hang
        self.release = release

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> float:
        if self.hang:
            wait_for_release(self.release)
        return float(index)


def load_batch(hang: bool, release: Path) -> float:
    from torch.utils.data import DataLoader

    loader: DataLoader[float] = DataLoader(Slow(hang, release), batch_size=1, num_workers=1)  # type: ignore[arg-type]
    return float(next(iter(loader))[0])


def train_step(step: int, args: argparse.Namespace, rank: int) -> float:
    import torch
    import torch.distributed as dist

    release = Path(args.release)
    hang_here = step == args.hang_at and rank == args.hang_rank
    if args.mode == "stuck" and hang_here:
        wait_for_release(release)
    extra = load_batch(hang_here, release) if args.mode == "dataloader" and step == args.hang_at else 0.0
    time.sleep(args.step_seconds)
    t = torch.tensor([float(rank + step) + extra])
    dist.all_reduce(t)
    return float(t.item())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("stuck", "dataloader", "steady"), default="stuck")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--step-seconds", type=float, default=0.5)
    parser.add_argument("--hang-at", type=int, default=4)
    parser.add_argument("--hang-rank", type=int, default=-1, help="default: the last rank")
    parser.add_argument("--release", default="release")
    args = parser.parse_args()

    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    if args.hang_rank < 0:
        args.hang_rank = world - 1
    dist.init_process_group(backend="gloo", timeout=datetime.timedelta(minutes=10))
    for step in range(1, args.steps + 1):
        loss = train_step(step, args, rank)
        if rank == 0:
            print(f"step {step}/{args.steps} loss {1.0 / (1.0 + loss):.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
