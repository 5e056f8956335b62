#!/usr/bin/env python3
"""A small distributed check, run by every rank of ntui's shipped presets.

It initialises torch.distributed from the launcher's environment (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT), all-reduces ``rank + 1`` and prints one ``NTUI_CHECK {json}`` line
with the rank, local rank, world size, node, all-reduce result, argv (exactly as received) and the container
runtime it runs in, if any (from the variable each runtime sets in its containers).

Test controls come from the environment, never from argv (argv is only echoed):
  NTUI_CHECK_FAIL_RANK=N   rank N fails after the all-reduce (the others wait in a barrier)
  NTUI_CHECK_FAIL_HOW=H    how it fails: raise (RuntimeError, the default), abort (os.abort(): SIGABRT, as a
                           C++ terminate or an NCCL abort), segv (a NULL read: SIGSEGV), kill (SIGKILL, as the
                           kernel's OOM killer)
  NTUI_CHECK_SLEEP=S       every rank sleeps S seconds before exiting (cancel tests)
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import sys
import time


def fail(rank: int, how: str) -> None:
    """Fail on purpose, the way ``how`` says (see the module docstring)."""
    if how != "raise":
        print(f"ntui check: rank {rank} kills itself on purpose ({how})", flush=True)
    if how == "abort":
        os.abort()
    if how == "segv":
        import ctypes

        ctypes.string_at(0)
    if how == "kill":
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError(f"ntui check: rank {rank} fails on purpose")


#: The variable each container runtime sets inside its containers, and its name.
RUNTIME_MARKERS = (
    ("SHIFTER_RUNTIME", "shifter"),
    ("APPTAINER_CONTAINER", "apptainer"),
    ("SINGULARITY_CONTAINER", "singularity"),
    ("CH_RUNNING", "charliecloud"),
)


def container_runtime() -> str | None:
    """The runtime this rank runs in: podman and others set ``container``; None on the host."""
    for var, name in RUNTIME_MARKERS:
        if os.environ.get(var):
            return name
    return os.environ.get("container") or None  # noqa: SIM112 - podman's name, lower case


def main() -> int:
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    use_cuda = torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        torch.cuda.set_device(local_rank)
    print(f"rank {rank}/{world} on {node}: init {backend} via {os.environ.get('MASTER_ADDR')}:"
          f"{os.environ.get('MASTER_PORT')}", flush=True)
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=180))
    t = torch.tensor([float(rank + 1)], device="cuda" if use_cuda else "cpu")
    dist.all_reduce(t)
    result = float(t.item())
    expected = world * (world + 1) / 2
    record = {
        "rank": rank,
        "local_rank": local_rank,
        "world_size": world,
        "node": node,
        "allreduce": result,
        "expected": expected,
        "ok": result == expected and dist.get_world_size() == world,
        "argv": sys.argv[1:],
        "job_id": os.environ.get("SLURM_JOB_ID"),
        "container": container_runtime(),
        "master_addr": os.environ.get("MASTER_ADDR"),
        "master_port": os.environ.get("MASTER_PORT"),
    }
    print("NTUI_CHECK " + json.dumps(record), flush=True)
    if os.environ.get("NTUI_CHECK_FAIL_RANK") == str(rank):
        fail(rank, os.environ.get("NTUI_CHECK_FAIL_HOW", "raise"))
    time.sleep(float(os.environ.get("NTUI_CHECK_SLEEP", "0")))
    dist.barrier()
    dist.destroy_process_group()
    return 0 if record["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
