"""Subcommands that talk to Slurm: submit, jobs, show, logs, cancel, hold, release, requeue, history.

Exit codes: 0 ok; 2 bad preset/arguments, or a job this cluster's partitions would refuse or never run
(:mod:`ntui.core.sitecheck`, checked before sbatch: nothing is submitted); 3 Slurm refused or failed; 4 the
job did not COMPLETE (``submit --wait``); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from typing import Any

from ntui.cli_common import (
    EXIT_JOB_FAILED,
    EXIT_PROBLEMS,
    EXIT_SLURM,
    add_preset_args,
    cli_runner,
    load_spec,
    print_problems,
)
from ntui.core import slurm
from ntui.core.config import TIMEOUT_ENV
from ntui.core.history import History
from ntui.core.jobactions import hold_note
from ntui.core.joblogs import log_problem
from ntui.core.jobmodel import shown_command
from ntui.core.logtail import inert
from ntui.core.outcome import job_outcome
from ntui.core.presets import LoadedPreset
from ntui.core.problems import Problem
from ntui.core.runner import (
    CommandRunner,
    JobNotFound,
    SlurmError,
    SlurmNotInstalled,
    SlurmTimeout,
)
from ntui.core.sitecheck import check_against_cluster, check_test_only, cluster_limits
from ntui.core.slurm import StateCategory, state_category
from ntui.core.spec import JobSpec
from ntui.core.submission import SubmittedJob, paths_for, slurm_env, submit_job


def _runner() -> CommandRunner:
    """This command's Slurm runner: the settings' timeouts (``NTUI_SLURM_TIMEOUT`` overrides them) and bin-dir."""
    return cli_runner()


def add_commands(sub: Any) -> None:
    p = sub.add_parser("submit", help="submit a preset; prints the job id")
    add_preset_args(p)
    p.add_argument("--test-only", action="store_true", help="only ask sbatch --test-only; submit nothing")
    p.add_argument("--wait", action="store_true", help="follow the job; exit 0 only if it COMPLETED")
    p.add_argument("--hold", action="store_true", help="submit held (release with `ntui release`)")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("jobs", help="list your jobs (one squeue call)")
    p.add_argument("--all", action="store_true", help="all users' jobs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("show", help="details of one job (scontrol show job -d)")
    p.add_argument("job_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("cancel", help="cancel a job, or send it a signal")
    p.add_argument("job_id")
    p.add_argument("--signal", help="signal name or number (scancel --signal), e.g. USR2")
    p.set_defaults(func=cmd_cancel)

    for name, fn, text in (("hold", slurm.hold, "hold a pending job as its user (scontrol uhold; "
                                                "a running job is not affected)"),
                           ("release", slurm.release, "release a held job"),
                           ("requeue", slurm.requeue, "requeue a batch job")):
        p = sub.add_parser(name, help=text)
        p.add_argument("job_id")
        p.set_defaults(func=_action(fn, name))

    p = sub.add_parser("logs", help="print a job's batch log, or one rank's log")
    p.add_argument("job_id")
    p.add_argument("--rank", type=int, help="global rank (default: the batch log)")
    p.add_argument("--follow", "-f", action="store_true",
                   help="keep printing appended lines (with --triage: each new verdict) until the job is over "
                        "and its logs are drained, or Ctrl-C")
    p.add_argument("--lines", "-n", type=int, default=100, help="lines of the tail to print first")
    p.add_argument("--triage", action="store_true", help="which rank failed first, where, and why")
    p.set_defaults(func=cmd_logs)


def _fail(exc: SlurmError) -> int:
    if isinstance(exc, SlurmNotInstalled):
        prog = os.path.basename(exc.argv[0]) if exc.argv else "the Slurm client"
        print(f"ntui: Slurm is not installed here: {prog} not found on PATH "
              "(ntui can still render and check presets)", file=sys.stderr)
    elif isinstance(exc, SlurmTimeout):
        print(f"ntui: Slurm timed out: {exc.message} (the command was killed; "
              f"set {TIMEOUT_ENV}=SECONDS or slurm.timeout in the settings to wait longer)", file=sys.stderr)
    else:
        print(f"ntui: {exc}", file=sys.stderr)
    return EXIT_SLURM


def _site_refused(problems: Sequence[Problem], what: str) -> bool:
    """Print the site check's problems; True (and say so) when one is an error."""
    for p in problems:
        print(str(p), file=sys.stderr)
    errors = sum(p.is_error for p in problems)
    if errors:
        print(f"ntui: {what}: {errors} problem(s) with this cluster's partitions (see above)", file=sys.stderr)
    return bool(errors)


def site_check(spec: JobSpec, loaded: LoadedPreset | None = None) -> tuple[bool, int]:
    """``check`` runs what the form and ``submit`` run: the job against the cluster's partitions, whenever
    the cluster answers (no Slurm, no answer: nothing to check against). Returns (refused, warnings)."""
    problems = check_against_cluster(spec, cluster_limits(_runner()), loaded=loaded)
    return _site_refused(problems, "this cluster would not run it"), sum(not p.is_error for p in problems)


def test_only(spec: JobSpec, loaded: LoadedPreset | None = None) -> int:
    runner = _runner()
    parts = cluster_limits(runner)
    before = check_against_cluster(spec, parts, loaded=loaded)
    if _site_refused(before, "not sent to sbatch --test-only"):
        return EXIT_PROBLEMS
    try:
        res, after = check_test_only(spec, runner, parts, loaded=loaded, reported=before)
    except SlurmError as exc:
        return _fail(exc)
    if res.ok:
        if _site_refused(after, f"Slurm would accept it in partition {res.partition}, but it would never start"):
            return EXIT_PROBLEMS
        where = f" on {res.nodes}" if res.nodes else ""
        print(f"ok: would start at {res.start or '?'}{where}" + (f" in {res.partition}" if res.partition else ""))
        return 0
    print(f"sbatch --test-only: {res.reason}", file=sys.stderr)
    return EXIT_SLURM


def cmd_submit(args: argparse.Namespace) -> int:
    loaded, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems)
    if spec is None:
        return EXIT_PROBLEMS
    if args.test_only:
        return test_only(spec, loaded)
    from ntui.core.rules import blocks_submit

    if any(blocks_submit(p) for p in problems):  # e.g. a script that does not exist (F1)
        print("not submitted", file=sys.stderr)
        return EXIT_PROBLEMS
    runner = _runner()
    history = History()
    try:
        job = submit_checked(loaded, spec, runner, history, extra_args=["--hold"] if args.hold else [])
    finally:
        history.close()
    if isinstance(job, int):
        return job
    if not args.wait:
        return 0
    return wait_for(runner, job.job_id)


def submit_checked(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, history: History,
                   **submit_args: Any) -> SubmittedJob | int:
    """The partition check, then sbatch (``submit_job``); prints the warnings and the new job id. Returns the
    job, or the exit code when the cluster's partitions or Slurm refused it."""
    if _site_refused(check_against_cluster(spec, cluster_limits(runner), loaded=loaded), "not submitted"):
        return EXIT_PROBLEMS
    try:
        job = submit_job(loaded, spec, runner, history, **submit_args)
    except SlurmError as exc:
        return _fail(exc)
    for w in job.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(job.job_id, flush=True)
    return job


def wait_for(runner: CommandRunner, job_id: str, *, poll_s: float = 2.0, max_poll_s: float = 10.0) -> int:
    """Follow a job until it ends, printing state changes to stderr. One squeue per poll,
    the interval growing from ``poll_s`` to ``max_poll_s`` while nothing changes."""
    last = ""
    interval = poll_s
    errors = 0
    while True:
        try:
            out = job_outcome(runner, job_id)
            errors = 0
        except SlurmError as exc:
            errors += 1
            print(f"ntui: {exc} (retrying)", file=sys.stderr)
            if errors >= 10:
                return EXIT_SLURM
            time.sleep(min(max_poll_s * 2, poll_s * 2**errors))
            continue
        if out.state != last:
            print(f"{time.strftime('%H:%M:%S')} job {job_id}: {out.state}", file=sys.stderr, flush=True)
            last = out.state
            interval = poll_s
        else:
            interval = min(max_poll_s, interval * 1.5)
        if out.finished:
            code = f" (exit code {out.exit_code})" if out.exit_code else ""
            print(f"job {job_id} ended: {out.state}{code}", file=sys.stderr)
            return 0 if out.state == "COMPLETED" else EXIT_JOB_FAILED
        time.sleep(interval)


def cmd_jobs(args: argparse.Namespace) -> int:
    env, _ = slurm_env()
    try:
        jobs = slurm.query_queue(_runner(), all_users=args.all, env=env)
    except SlurmError as exc:
        return _fail(exc)
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
    runner = _runner()
    try:
        d = slurm.show_job(runner, args.job_id)
    except JobNotFound:
        try:
            out = job_outcome(runner, args.job_id)
        except SlurmError as exc:
            return _fail(exc)
        print(f"JobId={args.job_id} State={out.state} ExitCode={out.exit_code or '?'} (source: {out.source})")
        return 0 if out.source != "none" else EXIT_SLURM
    except SlurmError as exc:
        return _fail(exc)
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
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    try:
        slurm.cancel(_runner(), args.job_id, signal=args.signal)
    except SlurmError as exc:
        return _fail(exc)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_SLURM
    what = f"sent {args.signal.upper()} to" if args.signal else "cancelled"
    print(f"{what} job {args.job_id}")
    return 0


def _action(fn: Callable[..., object], name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        runner = _runner()
        try:
            if name == "hold":  # Slurm accepts a hold on a started job and it changes nothing: say so instead
                state = slurm.show_job(runner, args.job_id).state
                if state_category(state) is not StateCategory.PENDING:
                    print(f"ntui: job {args.job_id} is {state}: {hold_note(state)}; nothing held",
                          file=sys.stderr)
                    return EXIT_PROBLEMS
            fn(runner, args.job_id)
        except SlurmError as exc:
            return _fail(exc)
        print(f"{name}: job {args.job_id}")
        return 0

    return run


def cmd_logs(args: argparse.Namespace) -> int:
    from ntui import cli_logs

    history = History()
    entry = history.get(args.job_id)
    paths = paths_for(args.job_id, history)
    job_over = partial(_ended_state, _runner(), args.job_id) if args.follow else None
    if args.triage:
        if paths is None:
            print(f"ntui: job {args.job_id} was not submitted by ntui; no per-rank logs known", file=sys.stderr)
            return EXIT_PROBLEMS
        problem = log_problem(paths.batch(args.job_id))
        if problem:
            print(f"ntui: job {args.job_id}: {problem}", file=sys.stderr)
            return EXIT_PROBLEMS
        return cli_logs.print_triage(paths, args.job_id, entry.world_size if entry else None,
                                     launcher=entry.launcher if entry else None, follow=args.follow,
                                     job_over=job_over)
    if paths is None:
        try:
            d = slurm.show_job(_runner(), args.job_id)
        except SlurmError as exc:
            return _fail(exc)
        if args.rank is not None or not d.std_out:
            print(f"ntui: job {args.job_id} was not submitted by ntui; only its batch log is known",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        path = d.std_out
    else:
        world = entry.world_size if entry is not None and entry.world_size > 0 else None
        if args.rank is not None and (args.rank < 0 or (world is not None and args.rank >= world)):
            known = f"world size {world}: ranks 0-{world - 1}" if world is not None else "ranks start at 0"
            print(f"ntui: job {args.job_id}: rank {args.rank} is out of range ({known})", file=sys.stderr)
            return EXIT_PROBLEMS
        path = paths.batch(args.job_id) if args.rank is None else paths.rank(args.job_id, args.rank)
    problem = log_problem(path)
    if problem:
        print(f"ntui: job {args.job_id}: {problem}", file=sys.stderr)
        return EXIT_PROBLEMS
    return cli_logs.print_log(path, lines=args.lines, follow=args.follow, job_over=job_over)


def _ended_state(runner: CommandRunner, job_id: str) -> str | None:
    """The job's final state once it is over (``logs --follow``, with or without ``--triage``, stops then),
    else None (also when Slurm does not answer: following goes on)."""
    try:
        out = job_outcome(runner, job_id)
    except SlurmError:
        return None
    return out.state if out.finished else None
