"""``ntui stacks JOBID``: where every rank of a running job is, grouped into classes of identical Python stacks.

One ``srun --overlap`` step, one task per node, claiming none of the job's GPUs, runs py-spy on every rank twice a
few seconds apart (:mod:`ntui.core.stacks.take`); the answer is grouped as STAT groups stacks, the odd class
first, each said waiting or moving (:mod:`ntui.core.stacks.group`). Nothing is left stopped. Exit codes: 0 every
rank's stack; 1 some rank or node could not be sampled (said why, with what to do; the others are shown); 2 the
job is not running (or, over ``--cluster``, no ntui there to run on its nodes); 3 Slurm failed.
"""

from __future__ import annotations

import argparse
import json
import sys

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, cluster_files, remote_cluster
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.slurm.runner import SlurmError
from ntui.core.stacks.take import NoToolsThere, NotRunning, take_cluster_stacks, take_stacks
from ntui.core.textsafe import inert


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id", metavar="JOBID", help="a running job (any of yours, not only ntui's)")
    p.add_argument("--native", action="store_true", help="with native frames (C/C++: NCCL, CUDA, gloo), slower")
    p.add_argument("--json", action="store_true", help="the classes, every member and frame, as JSON")
    p.add_argument("--interval", type=float, default=3.0,
                   help="seconds between the two samples that tell waiting from moving (default 3)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds one process's dump may take before it is given up (default 10)")
    p.set_defaults(func=cmd_stacks)


def cmd_stacks(args: argparse.Namespace) -> int:
    if args.interval < 0 or args.timeout <= 0:
        print("ntui: --interval must be >= 0 and --timeout > 0", file=sys.stderr)
        return EXIT_PROBLEMS
    cluster = remote_cluster()
    try:
        if cluster is not None:  # the cluster's own interpreter and py-spy on the nodes, as its agent says them
            stacks = take_cluster_stacks(cli_runner(), cluster_files(), cluster, args.job_id, native=args.native,
                                         interval_s=args.interval, timeout_s=args.timeout)
        else:
            stacks = take_stacks(cli_runner(), args.job_id, native=args.native, interval_s=args.interval,
                                 timeout_s=args.timeout)
    except (NotRunning, NoToolsThere, ValueError) as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SlurmError as exc:
        return slurm_failed(exc)
    if args.json:
        print(json.dumps(stacks.to_json(), indent=2))
    else:
        for line in stacks.lines():
            print(inert(line))
    return 1 if stacks.problems else EXIT_OK
