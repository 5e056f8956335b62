"""``ntui why`` (why a pending job waits), ``ntui wait`` (follow jobs to their end) and ``ntui attach`` (a shell
inside a running job).

Exit codes: ``why`` 0 (also for a job that is not pending: it says so), 3 Slurm failed; ``wait`` 0 when every job
COMPLETED, 4 when one did not, 3 Slurm failed; ``attach`` srun's own exit status (the shell's), 2 a job that is
not running or a node not in it, 3 Slurm failed (over ``--cluster``: 255, ssh's own failure, said by ssh).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime
from typing import TextIO

from ntui.cli.common import EXIT_JOB_FAILED, EXIT_PROBLEMS
from ntui.cli.slurm import cli_runner, cli_settings, slurm_failed
from ntui.core.records.outcome import job_outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.scontrol import JobDetails, show_job
from ntui.core.textsafe import inert

__all__ = ["configure", "why_lines"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    if name == "why":
        p.add_argument("job_ids", nargs="*", metavar="JOBID",
                       help="the job(s) to explain (none: every pending job of yours, from one squeue --start)")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=cmd_why)
    elif name == "wait":
        p.add_argument("job_ids", nargs="+", metavar="JOBID")
        p.add_argument("--notify", action="store_true",
                       help="ring the terminal's bell and send a desktop notification (OSC 9/777) as each job ends")
        p.add_argument("--interval", type=float, default=2.0, metavar="S",
                       help="first poll interval in seconds (it grows to 30 s while nothing changes)")
        p.set_defaults(func=cmd_wait)
    elif name == "attach":
        p.add_argument("job_id", metavar="JOBID")
        p.add_argument("--node", "-w", metavar="NODE", help="the node to open the shell on (default: the first)")
        p.set_defaults(func=cmd_attach)


# ---------------------------------------------------------------- why


def why_lines(runner: CommandRunner, details: JobDetails, now: datetime) -> tuple[list[str], dict[str, object]]:
    """The why of a pending job as text lines and as JSON (``ntui why``, ``ntui show``): its extras fetched once."""
    from ntui.core.waiting.why import explain, facts_of, fetch_extras, why_text

    facts = facts_of(details.job_id, details, None)
    assert facts is not None
    extras = fetch_extras(runner, details.job_id, facts)
    why = explain(facts, extras, now)
    return [inert(line) for line in why_text(why)], why.as_dict()


def cmd_why(args: argparse.Namespace) -> int:
    runner = cli_runner()
    if not args.job_ids:
        return _why_all(runner, args.json)
    status = 0
    out: list[dict[str, object]] = []
    for job_id in args.job_ids:
        try:
            details = show_job(runner, job_id)
        except JobNotFound:
            status = max(status, _gone(runner, job_id, args.json, out))
            continue
        except (SlurmError, ValueError) as exc:
            if isinstance(exc, ValueError):
                print(f"ntui: {exc}", file=sys.stderr)
                return EXIT_PROBLEMS
            return slurm_failed(exc)
        if details.category is not StateCategory.PENDING:
            line = f"job {details.job_id} is {details.state}, not waiting" + (
                f" (on {details.nodelist})" if details.nodelist else "")
            silent = None
            if details.category is StateCategory.RUNNING:  # running, but does it move?
                from ntui.cli.progress import quiet_words

                silent = quiet_words(args, details.job_id)
            out.append({"job_id": details.job_id, "state": details.state, "waiting": False, "quiet": silent})
            if not args.json:
                print(inert(line) + (f"; {inert(silent)}" if silent else ""))
            continue
        lines, data = why_lines(runner, details, datetime.now())
        out.append({**data, "state": details.state, "waiting": True})
        if not args.json:
            print(f"job {inert(details.job_id)} {inert(details.name)}: " + lines[0])
            for line in lines[1:]:
                print(line)
    if args.json:
        print(json.dumps(out if len(out) != 1 else out[0], indent=1))
    return status


def _gone(runner: CommandRunner, job_id: str, as_json: bool, out: list[dict[str, object]]) -> int:
    try:
        outcome = job_outcome(runner, job_id)
    except SlurmError as exc:
        return slurm_failed(exc)
    out.append({"job_id": job_id, "state": outcome.state, "waiting": False})
    if not as_json:
        print(f"job {inert(job_id)} is no longer in the queue: {inert(outcome.state)}")
    return 0


def _why_all(runner: CommandRunner, as_json: bool) -> int:
    """Every pending job of the user, from one ``squeue --start --me``: each reason in words, each estimate."""
    from ntui.core.slurm.squeue import start_estimates
    from ntui.core.waiting.why import WaitFacts, explain

    try:
        pending = start_estimates(runner)
    except SlurmError as exc:
        return slurm_failed(exc)
    now = datetime.now()
    whys = [explain(WaitFacts(e.job_id, e.state, e.reason, e.start, e.sched_nodes, e.num_nodes,
                              partition=e.partition), None, now) for e in pending]
    if as_json:
        print(json.dumps([w.as_dict() for w in whys], indent=1))
    elif not whys:
        print("no pending jobs")
    for why in whys if not as_json else ():
        print(f"job {inert(why.job_id)}: {inert(why.headline)}")
    return 0


# ---------------------------------------------------------------- wait


def _tty_writer() -> TextIO | None:
    """The terminal to write notifications to: /dev/tty, else stderr when it is one, else none."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed by cmd_wait
    except OSError:
        return sys.stderr if sys.stderr.isatty() else None


def cmd_wait(args: argparse.Namespace) -> int:
    from ntui.core.waiting.follow import Change, all_completed, follow, outcome_words
    from ntui.core.waiting.notify import Notice, terminal_bytes, wanted

    settings = cli_settings()
    runner = cli_runner(settings)
    tty = _tty_writer() if args.notify else None
    notify = settings.notify

    def changed(change: Change) -> None:
        stamp = time.strftime("%H:%M:%S")
        if change.error:
            print(f"{stamp} ntui: {change.error} (retrying)", file=sys.stderr, flush=True)
            return
        print(f"{stamp} job {change.job_id}: {change.state}", file=sys.stderr, flush=True)
        out = change.outcome
        if tty is None or out is None:
            return
        if out.finished:
            notice = Notice(change.job_id, "ended", out.state, f"ntui: job {change.job_id} {outcome_words(out)}", "")
        elif change.state == "RUNNING":
            notice = Notice(change.job_id, "started", "RUNNING", f"ntui: job {change.job_id} started", "")
        else:
            return
        if wanted(notice, notify.states):
            tty.write(terminal_bytes(notice, bell_on=notify.bell, desktop=notify.desktop, environ=os.environ))
            tty.flush()

    try:
        outcomes = follow(runner, args.job_ids, on_change=changed, poll_s=max(0.5, args.interval))
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SlurmError as exc:
        return slurm_failed(exc)
    finally:
        if tty is not None and tty is not sys.stderr:
            tty.close()
    for job_id, out in outcomes.items():
        print(f"job {job_id} ended: {outcome_words(out)}", file=sys.stderr)
    return 0 if all_completed(outcomes) else EXIT_JOB_FAILED


# ---------------------------------------------------------------- attach


def cmd_attach(args: argparse.Namespace) -> int:
    from ntui.core.remote.shell import job_shell

    settings = cli_settings()
    runner = cli_runner(settings)
    try:
        details = show_job(runner, args.job_id)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SlurmError as exc:
        return slurm_failed(exc)
    if details.category is not StateCategory.RUNNING:
        print(f"ntui: job {details.job_id} is {details.state}: a shell needs a running job", file=sys.stderr)
        return EXIT_PROBLEMS
    if args.node and args.node not in details.nodes:
        print(f"ntui: {args.node} is not one of job {details.job_id}'s nodes ({details.nodelist})", file=sys.stderr)
        return EXIT_PROBLEMS
    try:  # over --cluster: srun on the cluster's login node, on this terminal (ssh -t over the shared master)
        shell = job_shell(runner, details.job_id, node=args.node, bin_dir=settings.slurm.bin_dir)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"ntui: {shell.words}  (exit the shell to come back)", file=sys.stderr, flush=True)
    try:
        return shell.run()
    except SlurmError as exc:
        return slurm_failed(exc)
