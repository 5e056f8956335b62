"""``ntui cancel`` (or send a signal), ``hold``, ``release`` and ``requeue``: one Slurm call each.

Exit codes: 0 done; 2 hold on a job that is not pending (Slurm would accept it and change nothing); 3 Slurm
refused or failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ntui.cli.common import EXIT_PROBLEMS, EXIT_SLURM
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.jobs.actions import hold_note
from ntui.core.slurm.actions import cancel, hold, release, requeue
from ntui.core.slurm.common import StateCategory, state_category
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.scontrol import show_job

__all__ = ["configure"]

_ACTIONS: dict[str, Callable[[CommandRunner, str], object]] = {"hold": hold, "release": release, "requeue": requeue}


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id")
    if name == "cancel":
        p.add_argument("--signal", help="signal name or number (scancel --signal), e.g. USR2")
        p.set_defaults(func=cmd_cancel)
    else:
        p.set_defaults(func=_action(_ACTIONS[name], name))


def cmd_cancel(args: argparse.Namespace) -> int:
    try:
        cancel(cli_runner(), args.job_id, signal=args.signal)
    except SlurmError as exc:
        return slurm_failed(exc)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_SLURM
    what = f"sent {args.signal.upper()} to" if args.signal else "cancelled"
    print(f"{what} job {args.job_id}")
    return 0


def _action(fn: Callable[[CommandRunner, str], object], name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        runner = cli_runner()
        try:
            if name == "hold":  # Slurm accepts a hold on a started job and it changes nothing: say so instead
                state = show_job(runner, args.job_id).state
                if state_category(state) is not StateCategory.PENDING:
                    print(f"ntui: job {args.job_id} is {state}: {hold_note(state)}; nothing held",
                          file=sys.stderr)
                    return EXIT_PROBLEMS
            fn(runner, args.job_id)
        except SlurmError as exc:
            return slurm_failed(exc)
        print(f"{name}: job {args.job_id}")
        return 0

    return run
