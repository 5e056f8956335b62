#!/usr/bin/env python3
"""A toy training run for ntui's sweep presets: what a task of a sweep receives, and a loss to compare.

It prints one ``NTUI_SWEEP {json}`` line with its argv (exactly as received), the array task and the
environment variables whose names start with ``RUN_`` (the preset's env may hold sweep values), then
``step=N/STEPS loss=X`` lines, one per step (the preset's ``sweep.metric`` reads the last ``loss=``, its
``progress:`` pattern the step).
``--lr`` and ``--seed`` set the loss curve when they are numbers; other arguments are only echoed.

Test controls come from the environment, never from argv:
  NTUI_TRAIN_STEP_S=S          seconds per step (default 0.5)
  NTUI_TRAIN_FAIL_TASK=I       array task I exits 3 the first time it runs ...
  NTUI_TRAIN_FAIL_DIR=DIR      ... remembered by a file in DIR, so a resubmission of it succeeds
"""

from __future__ import annotations

import json
import os
import sys
import time


def _number(argv: list[str], option: str, default: float) -> float:
    try:
        return float(argv[argv.index(option) + 1])
    except (ValueError, IndexError):
        return default


def main() -> int:
    argv = sys.argv[1:]
    task = os.environ.get("SLURM_ARRAY_TASK_ID")
    record = {
        "argv": argv,
        "task": task,
        "job_id": os.environ.get("SLURM_JOB_ID"),
        "array_job_id": os.environ.get("SLURM_ARRAY_JOB_ID"),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("RUN_")},
        "start": time.time(),
    }
    print("NTUI_SWEEP " + json.dumps(record), flush=True)
    fail_dir = os.environ.get("NTUI_TRAIN_FAIL_DIR")
    if task is not None and task == os.environ.get("NTUI_TRAIN_FAIL_TASK") and fail_dir:
        marker = os.path.join(fail_dir, f"failed-{task}")
        if not os.path.exists(marker):
            with open(marker, "w") as fh:
                fh.write(str(os.getpid()))
            print(f"RuntimeError: task {task} fails on purpose (once)", file=sys.stderr, flush=True)
            return 3
    lr = _number(argv, "--lr", 1e-3)
    seed = _number(argv, "--seed", 0.0)
    steps = int(_number(argv, "--steps", 5))
    step_s = float(os.environ.get("NTUI_TRAIN_STEP_S", "0.5"))
    loss = 2.0 + 0.01 * seed
    for step in range(1, steps + 1):
        loss *= 1.0 - min(0.5, lr * 1000.0)
        print(f"step={step}/{steps} loss={loss:.4f}", flush=True)  # the preset's progress: pattern reads it
        time.sleep(step_s)
    print("NTUI_SWEEP_END " + json.dumps({"task": task, "end": time.time()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
