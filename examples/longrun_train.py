#!/usr/bin/env python3
"""A small training loop that outlives its allocation: it saves on ntui's checkpoint signal and resumes.

Run by ``presets/local-longrun.yaml`` (a ``run:`` section; README "Long runs"). What it shows:

* **The signal.** ntui's script starts every rank with ``NTUI_CHECKPOINT_SIGNAL`` (e.g. ``USR2``) ignored and
  sends it shortly before the time limit; the program installs its own handler, which only sets a flag (and
  ignores the signal from then on: Python gives a handled signal its default action back while it shuts down, and
  a repeat arriving then would kill a rank that saved). The ranks
  agree at the next step boundary (an all-reduce of the flag: the signal reaches them a few milliseconds apart),
  rank 0 writes the checkpoint (temp file + rename: a half-written one is never read) and every rank exits 0:
  status 0 after the signal is what tells ntui "saved, continue the run".
* **The resume.** ``NTUI_RUN_ID`` is the same in every allocation of the run and ``NTUI_RESTART`` counts them
  (0, 1, ...); the checkpoint lives under ``--ckpt-dir`` named by the run id, and each allocation starts from the
  step after the saved one, so no step is repeated. Each finished step is one ``step N/TOTAL loss X`` line in rank
  0's log (N steps done), which the preset's ``progress:`` pattern reads.
* **Done.** After ``--steps`` steps it ignores the signal (one falling due now finds nothing to save), writes the
  run's done marker (``NTUI_RUN_DONE``) and exits 0: ntui continues nothing (and writes the marker too when the
  program does not).

Arguments: ``--steps N`` (total), ``--step-seconds S`` (how long one step takes), ``--ckpt-dir DIR``
(default: ``$NTUI_CKPT_DIR``, else the current directory), ``--ignore-signal`` (install no handler: the
program then ignores the signal and is stopped at the time limit, as a program that never checkpoints).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import socket
import sys
import time


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--step-seconds", type=float, default=1.0)
    ap.add_argument("--ckpt-dir", default=os.environ.get("NTUI_CKPT_DIR", "."))
    ap.add_argument("--ignore-signal", action="store_true")
    args = ap.parse_args(argv)

    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    run_id = os.environ.get("NTUI_RUN_ID", "local")
    restart = int(os.environ.get("NTUI_RESTART", "0") or 0)
    sig_name = os.environ.get("NTUI_CHECKPOINT_SIGNAL", "USR2")
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()

    got: list[float] = []
    if not args.ignore_signal:
        signum = getattr(signal, f"SIG{sig_name}")

        def on_signal(_s: int, _f: object) -> None:
            got.append(time.time())
            signal.signal(signum, signal.SIG_IGN)  # once is enough; a repeat while shutting down stays harmless

        signal.signal(signum, on_signal)
    if world > 1:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))

    path = os.path.join(args.ckpt_dir, f"longrun-{run_id}.ckpt")
    start = 0
    if os.path.exists(path):
        with open(path) as fh:
            start = int(json.load(fh)["step"]) + 1
        if rank == 0:
            print(f"resumed from step {start - 1} (restart {restart})", flush=True)
    elif rank == 0:
        print(f"fresh start (restart {restart})", flush=True)
    print(f"rank {rank}/{world} on {node}: run {run_id}, allocation {restart + 1}", flush=True)

    weight = torch.zeros(1)
    for step in range(start, args.steps):
        time.sleep(args.step_seconds)  # the work of one step
        grad = torch.ones(1)
        if world > 1:
            dist.all_reduce(grad)
        weight -= 0.01 * grad
        if rank == 0:
            # in its own words: the preset's progress: pattern reads them (ntui progress, the Progress tab)
            print(f"step {step + 1}/{args.steps} loss {1.0 / (1 + step / 20):.4f}", flush=True)  # steps done
        flag = torch.tensor([1.0 if got else 0.0])
        if world > 1:
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() > 0:
            if rank == 0:
                tmp = f"{path}.tmp"
                with open(tmp, "w") as fh:
                    json.dump({"step": step, "weight": float(weight.item())}, fh)
                os.replace(tmp, path)
                late = f" {time.time() - got[0]:.2f} s after the signal" if got else ""
                print(f"checkpoint at step {step}: saved{late}; exiting", flush=True)
            if world > 1:
                dist.barrier()
                dist.destroy_process_group()
            return 0
    # the work is done: a signal that comes now (the warning falling due as the last step ends) finds nothing to
    # save, and must not kill a rank shutting down (Python gives a handled signal its default action back then)
    if not args.ignore_signal:
        signal.signal(signum, signal.SIG_IGN)
    done = os.environ.get("NTUI_RUN_DONE")
    if rank == 0 and done:
        with open(done, "a"):
            pass  # the run's done marker, before the teardown: ntui continues nothing, however this exit ends
    if rank == 0:
        print(f"done: {args.steps} steps", flush=True)
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
