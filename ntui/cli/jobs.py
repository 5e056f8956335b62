"""``ntui jobs``: your jobs from one squeue call; the records of ended jobs are resolved first.

Exit codes: 0 ok; 3 Slurm refused or failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import asdict

from ntui.cli.common import remote_cluster
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.records.history import History
from ntui.core.slurm.runner import CommandRunner, SlurmError, slurm_env
from ntui.core.slurm.squeue import query_queue
from ntui.core.textsafe import inert

__all__ = ["configure", "resolve_quietly"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_ids", nargs="*", metavar="JOBID",
                   help="only these jobs (a sweep's JOBID lists its tasks, JOBID_TASK one of them), as squeue --jobs")
    p.add_argument("--all", action="store_true", help="all users' jobs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_jobs)


def resolve_quietly(history: History, runner: CommandRunner | None = None) -> Mapping[str, str]:
    """Fill the records of ended jobs; one stderr line for what was recorded, warnings as warnings. Never raises
    for Slurm. The record machinery (logs, triage, GPU usage) is loaded only when a job is unresolved. Returns the
    task counts of the sweeps still running (``6 tasks: 2 running, ...``), by job id."""
    if not history.unresolved():
        return {}
    from ntui.core.records.record import resolve_records

    env, _ = slurm_env()
    try:
        report = resolve_records(history, runner or cli_runner(), env=env)
    except SlurmError as exc:
        print(f"ntui: could not resolve ended jobs: {exc}", file=sys.stderr)
        return {}
    if report.resolved:
        print(f"ntui: recorded the end of {len(report.resolved)} job(s): "
              + ", ".join(f"{j} {r.state}" for j, r in report.resolved[:10])
              + (" ..." if len(report.resolved) > 10 else ""), file=sys.stderr)
    for w in report.warnings:
        print(f"ntui: warning: {w}", file=sys.stderr)
    return report.sweeps


def cmd_jobs(args: argparse.Namespace) -> int:
    runner = cli_runner()
    if remote_cluster() is None:  # a cluster over ssh keeps its records there: none are resolved from here
        history = History()
        try:
            resolve_quietly(history, runner)
        finally:
            history.close()
    env, _ = slurm_env()
    try:
        jobs = query_queue(runner, all_users=args.all or bool(args.job_ids), job_ids=args.job_ids or None, env=env)
    except SlurmError as exc:
        return slurm_failed(exc)
    except ValueError as exc:  # not a job id
        print(f"ntui: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(j) for j in jobs], indent=1))
        return 0
    print(f"{'JOBID':<14} {'NAME':<22} {'STATE':<11} {'ELAPSED':>10} {'LIMIT':>10} {'NODES':>5}  NODELIST(REASON)")
    for j in jobs:
        # Names and reasons come from other users: print them inert (no escape sequences).
        where = inert(j.nodelist) if j.nodelist else f"({inert(j.reason)})" if j.reason else ""
        print(f"{inert(j.job_id):<14} {inert(j.name)[:22]:<22} {inert(j.state):<11} {inert(j.elapsed):>10} "
              f"{inert(j.time_limit):>10} {j.num_nodes or '':>5}  {where}")
    return 0
