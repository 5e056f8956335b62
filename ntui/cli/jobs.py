"""``ntui jobs`` (one squeue call; the records of ended jobs are resolved first) and ``ntui show``.

Exit codes: 0 ok; 3 Slurm refused or failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from ntui.cli.common import EXIT_SLURM
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.jobfiles.lognames import shown_command
from ntui.core.records.history import History
from ntui.core.records.outcome import job_outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.sbatch import slurm_env
from ntui.core.slurm.scontrol import show_job
from ntui.core.slurm.squeue import query_queue
from ntui.core.textsafe import inert

__all__ = ["configure", "resolve_quietly"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    if name == "jobs":
        p.add_argument("--all", action="store_true", help="all users' jobs")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=cmd_jobs)
    elif name == "show":
        p.add_argument("job_id")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=cmd_show)


def resolve_quietly(history: History, runner: CommandRunner | None = None) -> None:
    """Fill the records of ended jobs; one stderr line for what was recorded, warnings as warnings. Never raises
    for Slurm. The record machinery (logs, triage, GPU usage) is loaded only when a job is unresolved."""
    if not history.unresolved():
        return
    from ntui.core.records.record import resolve_records

    env, _ = slurm_env()
    try:
        report = resolve_records(history, runner or cli_runner(), env=env)
    except SlurmError as exc:
        print(f"ntui: could not resolve ended jobs: {exc}", file=sys.stderr)
        return
    if report.resolved:
        print(f"ntui: recorded the end of {len(report.resolved)} job(s): "
              + ", ".join(f"{j} {r.state}" for j, r in report.resolved[:10])
              + (" ..." if len(report.resolved) > 10 else ""), file=sys.stderr)
    for w in report.warnings:
        print(f"ntui: warning: {w}", file=sys.stderr)


def cmd_jobs(args: argparse.Namespace) -> int:
    runner = cli_runner()
    history = History()
    try:
        resolve_quietly(history, runner)
    finally:
        history.close()
    env, _ = slurm_env()
    try:
        jobs = query_queue(runner, all_users=args.all, env=env)
    except SlurmError as exc:
        return slurm_failed(exc)
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


def cmd_show(args: argparse.Namespace) -> int:
    runner = cli_runner()
    try:
        d = show_job(runner, args.job_id)
    except JobNotFound:
        try:
            out = job_outcome(runner, args.job_id)
        except SlurmError as exc:
            return slurm_failed(exc)
        print(f"JobId={args.job_id} State={out.state} ExitCode={out.exit_code or '?'} (source: {out.source})")
        return 0 if out.source != "none" else EXIT_SLURM
    except SlurmError as exc:
        return slurm_failed(exc)
    if args.json:
        print(json.dumps(asdict(d), indent=1))
        return 0
    rows = [
        ("JobId", d.job_id), ("Name", d.name), ("User", d.user), ("State", d.state), ("Reason", d.reason),
        ("ExitCode", d.exit_code), ("Partition", d.partition), ("QOS", d.qos or ""),
        ("Nodes", f"{d.num_nodes} {d.nodelist}"), ("TimeLimit", d.time_limit), ("RunTime", d.run_time),
        ("Submit", d.submit_time or ""), ("Start", d.start_time or ""), ("End", d.end_time or ""),
    ]
    entry = History().get(d.job_id)
    script = entry.script_path if entry is not None else None
    rows += [("Command", shown_command(d.command, script) or ""), ("WorkDir", d.work_dir),
             ("StdOut", d.std_out or "")]
    # CPU jobs have no GPU indices: no empty "GPUs nid001:" lines
    rows += [(f"GPUs {node}", ",".join(map(str, idx))) for node, idx in d.gres_by_node.items() if idx]
    if entry is not None:
        rows.append(("Preset", f"{entry.preset} {' '.join(entry.overrides)}".strip()))
        if script and shown_command(d.command, script) != script:
            rows.append(("Script", script))
    for key, value in rows:
        print(f"{inert(key):>12}: {inert(str(value))}")
    if d.category is StateCategory.PENDING:  # why it waits (the same words as ntui why and the app)
        from datetime import datetime

        from ntui.cli.waiting import why_lines

        lines, _ = why_lines(runner, d, datetime.now())
        print(f"{'Why':>12}: {lines[0]}")
        for line in lines[1:]:
            print(f"{'':>12}  {line.strip()}")
    return 0
