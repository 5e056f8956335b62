"""``ntui sweep JOBID``: a sweep's tasks side by side: values, state, elapsed, GPU utilisation, metric; the failed
ones grouped by verdict. One Slurm call for every task (none once the sweep's record holds their final states).

Exit codes: 0 ok; 2 not a sweep ntui submitted (or a bad --sort); 3 Slurm failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS
from ntui.cli.slurm import cli_runner
from ntui.core.jobfiles.lognames import split_task_id
from ntui.core.jobs.sweep import SORT_KEYS, sort_rows, sweep_lines, sweep_table
from ntui.core.records.history import History
from ntui.core.slurm.runner import slurm_env

__all__ = ["configure"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.description = ("One line per task of a sweep: its values (as the preset wrote them), state, elapsed, mean GPU "
                     "utilisation (from the task's sample files) and the last value of sweep.metric in its rank-0 "
                     "log (the tail only); the failed tasks grouped by verdict.")
    p.add_argument("job_id", help="the sweep's job id (a task's JOBID_TASK names its sweep)")
    p.add_argument("--json", action="store_true", help="everything, structured")
    p.add_argument("--sort", default="task", metavar="KEY",
                   help=f"{', '.join(SORT_KEYS)} or a parameter's name (default: task); numbers sort as numbers, "
                        "tasks without the value last")
    p.add_argument("--reverse", "-r", action="store_true", help="descending")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    base, _ = split_task_id(args.job_id)
    history = History()
    try:
        entry = history.get(base)
    finally:
        history.close()
    if entry is None:
        print(f"ntui: job {base} is not in ntui's history", file=sys.stderr)
        return EXIT_PROBLEMS
    env, _ = slurm_env()
    table = sweep_table(entry, cli_runner(), env=env)
    if table is None:
        print(f"ntui: job {base} is not a sweep (no sweep: section in its preset)", file=sys.stderr)
        return EXIT_PROBLEMS
    try:
        rows = sort_rows(table.rows, args.sort, descending=args.reverse)
    except ValueError as exc:
        print(f"ntui: --sort: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    for w in table.warnings:
        print(f"ntui: warning: {w}", file=sys.stderr)
    if args.json:
        data = table.as_dict()
        order = [r.index for r in rows]
        tasks = {t["task"]: t for t in data["tasks"]}  # type: ignore[attr-defined]
        data["tasks"] = [tasks[i] for i in order]
        print(json.dumps(data, indent=1))
        return EXIT_OK
    width = shutil.get_terminal_size((120, 24)).columns
    print("\n".join(sweep_lines(table, rows, width=width)))
    return EXIT_OK
