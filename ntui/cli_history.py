"""``ntui history`` (with each job's record) and ``ntui resubmit``; ``ntui jobs`` resolves records first.

Exit codes as in :mod:`ntui.cli_slurm`: 0 ok; 2 bad arguments, unknown job, preset gone or site check refused;
3 Slurm refused or failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ntui.cli_common import EXIT_PROBLEMS, cli_runner, load_spec, print_problems
from ntui.cli_slurm import _fail, submit_checked, test_only
from ntui.core.history import History, HistoryEntry
from ntui.core.logtail import inert
from ntui.core.recentview import gpu_text
from ntui.core.record import RECENT_ORDERS, ResolveReport, recent_order, record_job, resolve_records, sort_recent
from ntui.core.resubmit import preset_ref, script_diff
from ntui.core.runner import CommandRunner, SlurmError
from ntui.core.timefmt import format_elapsed


def add_commands(sub: Any) -> None:
    """Register ``history`` (replacing a plainer one registered earlier) and ``resubmit``; make ``jobs``
    resolve the records of ended jobs before listing the queue."""
    p = sub.choices.get("history") or sub.add_parser("history", help="jobs submitted by ntui (local history)")
    p.description = ("Jobs submitted by ntui, newest first (--sort: another order), with what became of them: "
                     "final state, elapsed, mean GPU utilisation (from the in-job samples; - without them), "
                     "triage verdict (resolved from sacct, scontrol or the batch log). --json has the whole GPU "
                     "summary under \"gpu\".")
    known = {a.dest for a in p._actions}
    if "n" not in known:
        p.add_argument("-n", type=int, default=20, help="how many (default 20)")
    if "json" not in known:
        p.add_argument("--json", action="store_true")
    if "reconcile" not in known:
        p.add_argument("--reconcile", action="store_true",
                       help="first record own jobs in the queue that the history lacks (one squeue call)")
    p.add_argument("--no-resolve", action="store_true",
                   help="print the history as stored; do not ask Slurm what became of ended jobs")
    if "sort" not in known:  # the orders of the app's recent-jobs list (one list: ntui.core.record)
        p.add_argument("--sort", choices=[o.name for o in RECENT_ORDERS], default=RECENT_ORDERS[0].name,
                       help="; ".join(f"{o.name}: {o.label}" for o in RECENT_ORDERS)
                       + " (the -n shown are the first n in this order; default: %(default)s)")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("resubmit", help="submit a job again: its preset with its recorded overrides (+ --set)")
    p.add_argument("job_id")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra override on top of the recorded ones (repeatable)")
    p.add_argument("--test-only", action="store_true", help="only ask sbatch --test-only; submit nothing")
    p.set_defaults(func=cmd_resubmit)

    jobs = sub.choices.get("jobs")
    if jobs is not None:
        inner = jobs.get_default("func")
        if callable(inner):
            jobs.set_defaults(func=_resolving(inner))


def _runner() -> CommandRunner:
    return cli_runner()


def resolve_quietly(history: History, runner: CommandRunner | None = None) -> ResolveReport | None:
    """Resolve ended jobs; one stderr line for what was recorded, warnings as warnings. Never raises for Slurm."""
    from ntui.core.submission import slurm_env

    env, _ = slurm_env()
    try:
        report = resolve_records(history, runner or _runner(), env=env)
    except SlurmError as exc:
        print(f"ntui: could not resolve ended jobs: {exc}", file=sys.stderr)
        return None
    if report.resolved:
        print(f"ntui: recorded the end of {len(report.resolved)} job(s): "
              + ", ".join(f"{j} {r.state}" for j, r in report.resolved[:10])
              + (" ..." if len(report.resolved) > 10 else ""), file=sys.stderr)
    for w in report.warnings:
        print(f"ntui: warning: {w}", file=sys.stderr)
    return report


def _resolving(inner: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        history = History()
        try:
            resolve_quietly(history)
        finally:
            history.close()
        return inner(args)

    return run


def state_text(e: HistoryEntry) -> str:
    """The final state (``TIMEOUT``, ``FAILED 3:0``; ``~`` marks an inferred one), else the submission status."""
    if e.final_state is None:
        return e.status
    code = f" {e.exit_code}" if e.exit_code and e.exit_code != "0:0" else ""
    return ("~" if e.record_source == "inferred" else "") + e.final_state + code


def cmd_history(args: argparse.Namespace) -> int:
    history = History()
    rc = 0
    try:
        runner = None
        if args.reconcile:
            from ntui.core.reconcile import reconcile
            from ntui.core.submission import slurm_env

            env, _ = slurm_env()
            runner = _runner()
            try:
                for line in reconcile(history, runner, env=env).lines():
                    print(f"reconcile: {line}", file=sys.stderr)
            except SlurmError as exc:
                rc = _fail(exc)
        if not args.no_resolve:
            resolve_quietly(history, runner)
        order = recent_order(getattr(args, "sort", RECENT_ORDERS[0].name))
        if order is RECENT_ORDERS[0]:  # newest first is the stored order: only the newest n are read
            entries = history.entries(limit=args.n)
        else:  # the first n of the whole history in this order (e.g. the n jobs that used their GPUs least)
            entries = [j.entry for j in sort_recent(map(record_job, history.entries()), order) if j.entry][:args.n]
    finally:
        history.close()
    if args.json:
        print(json.dumps([asdict(e) | {"script": None} for e in entries], indent=1))
        return rc
    print(f"{'JOBID':<10} {'SUBMITTED':<16}  {'STATE':<16} {'ELAPSED':>9} {'GPU':>4}  {'PRESET':<22} VERDICT")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.submitted_at or e.created_at))
        tail = e.verdict or ""
        link = f" (resubmit of {e.resubmit_of})" if e.resubmit_of else ""
        print(f"{e.job_id or '-':<10} {when:<16}  {inert(state_text(e)):<16} {format_elapsed(e.elapsed_s):>9} "
              f"{gpu_text(e.gpu.util_mean if e.gpu else None):>4}  {inert(e.preset):<22} {inert(tail)}{link}")
    return rc


def cmd_resubmit(args: argparse.Namespace) -> int:
    from ntui.core.render import render

    history = History()
    try:
        entry = history.get(args.job_id)
        if entry is None:
            print(f"ntui: job {args.job_id} is not in ntui's history", file=sys.stderr)
            return EXIT_PROBLEMS
        if entry.preset == "?" or not entry.script:
            print(f"ntui: job {args.job_id} was recovered without its preset; resubmit its script "
                  f"({entry.script_path or 'unknown'}) with sbatch", file=sys.stderr)
            return EXIT_PROBLEMS
        ref = preset_ref(entry)
        loaded, spec, problems = load_spec(ref, entry.overrides)
        print_problems(problems, warnings=False)
        if spec is None:
            print(f"ntui: the preset of job {args.job_id} ({ref}) no longer renders with its overrides",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        same = render(spec)
        if same != entry.script:
            print(f"ntui: preset {ref} changed since job {entry.job_id} was submitted; the script differs:",
                  file=sys.stderr)
            sys.stderr.write(script_diff(entry.script, same, f"job {entry.job_id}", "now"))
        if args.overrides:
            loaded, spec, problems = load_spec(ref, [*entry.overrides, *args.overrides])
            print_problems(problems)
            if spec is None:
                return EXIT_PROBLEMS
            sys.stderr.write(script_diff(same, render(spec), "recorded overrides", "with --set"))
        if args.test_only:
            return test_only(spec, loaded)
        runner = _runner()
        job = submit_checked(loaded, spec, runner, history, resubmit_of=entry.job_id)
    finally:
        history.close()
    if isinstance(job, int):
        return job
    print(f"resubmitted job {entry.job_id} as {job.job_id}", file=sys.stderr)
    return 0

