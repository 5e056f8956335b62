"""``ntui sweep JOBID``: a sweep's tasks side by side: values, state, elapsed, GPU utilisation, metric; the failed
ones grouped by verdict. One Slurm call for every task (none once the sweep's record holds their final states).

Exit codes: 0 ok; 2 not a sweep ntui submitted (or a bad --sort); 3 Slurm failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, cluster_files, remote_cluster, remote_history_entry
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.jobfiles.lognames import split_task_id
from ntui.core.jobs.sweep import SORT_KEYS, SweepTable, sort_rows, sweep_lines, sweep_table
from ntui.core.records.history import History
from ntui.core.slurm.runner import SlurmError, slurm_env

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
    if remote_cluster() is not None:  # the sweep's record and files are the cluster's, read by its agent there
        try:
            entry = remote_history_entry(args, base)
        except SlurmError as exc:
            return slurm_failed(exc)
    else:
        history = History()
        try:
            entry = history.get(base)
        finally:
            history.close()
    if entry is None:
        where = "the history on the cluster" if remote_cluster() is not None else "ntui's history"
        print(f"ntui: job {base} is not in {where}", file=sys.stderr)
        return EXIT_PROBLEMS
    env, _ = slurm_env()
    try:
        if remote_cluster() is not None:  # copies of its files there, its paths said as the cluster's
            from ntui.core.remotesweep import remote_sweep_table

            table = remote_sweep_table(cluster_files(), cli_runner(), entry, env=env)
        else:
            table = sweep_table(entry, cli_runner(), env=env)
    except SlurmError as exc:
        return slurm_failed(exc)
    return _print_sweep(args, base, table)


def _print_sweep(args: argparse.Namespace, base: str, table: SweepTable | None) -> int:
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
