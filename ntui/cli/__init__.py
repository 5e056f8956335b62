"""``ntui`` subcommands. Plain argparse, no Textual: scripts can rely on them.

The parser is built from :data:`COMMANDS`, one row per subcommand: its name, its one-line help and the module
that implements it (``configure(name, parser)`` adds its arguments and sets ``func``). Only the module of the
subcommand being run is imported, so ``ntui render`` loads the preset and renderer code and none of the history,
log or GPU code; ``ntui --help`` imports none of them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ntui import __version__
from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, exit_codes_help, select_cluster

__all__ = ["COMMANDS", "NOT_REMOTE", "REMOTE_COMMANDS", "Command", "build_parser", "run"]


class CommandModule(Protocol):
    def configure(self, name: str, parser: argparse.ArgumentParser) -> None: ...


def _compose() -> CommandModule:
    from ntui.cli import compose

    return compose


def _check() -> CommandModule:
    from ntui.cli import check

    return check


def _importscript() -> CommandModule:
    from ntui.cli import importscript

    return importscript


def _submit() -> CommandModule:
    from ntui.cli import submit

    return submit


def _jobs() -> CommandModule:
    from ntui.cli import jobs

    return jobs


def _show() -> CommandModule:
    from ntui.cli import show

    return show


def _actions() -> CommandModule:
    from ntui.cli import actions

    return actions


def _logs() -> CommandModule:
    from ntui.cli import logs

    return logs


def _progress() -> CommandModule:
    from ntui.cli import progress

    return progress


def _stacks() -> CommandModule:
    from ntui.cli import stacks

    return stacks


def _triage() -> CommandModule:
    from ntui.cli import triage

    return triage


def _history() -> CommandModule:
    from ntui.cli import history

    return history


def _gpus() -> CommandModule:
    from ntui.cli import gpus

    return gpus


def _report() -> CommandModule:
    from ntui.cli import report

    return report


def _sweep() -> CommandModule:
    from ntui.cli import sweep

    return sweep


def _waiting() -> CommandModule:
    from ntui.cli import waiting

    return waiting


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    load: Callable[[], CommandModule]


#: Every subcommand, in the order ``ntui --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("presets", "list presets: name, launcher, origin, description (--paths: and the file)", _compose),
    Command("render", "print (or write) the sbatch script of a preset", _compose),
    Command("check", "check a preset statically, or any sbatch script; exits non-zero listing every problem",
            _check),
    Command("import", "make a preset of an sbatch script: the same job, the rules' fixes applied and listed",
            _importscript),
    Command("submit", "submit a preset; prints the job id", _submit),
    Command("jobs", "list your jobs (one squeue call)", _jobs),
    Command("show", "details of one job (scontrol show job -d); a pending one's why", _show),
    Command("why", "why a pending job waits and when it will start, in words", _waiting),
    Command("wait", "follow jobs to their end; exit 0 only if every one COMPLETED", _waiting),
    Command("attach", "a shell inside a running job, on one of its nodes (srun --overlap --pty)", _waiting),
    Command("cancel", "cancel a job, or send it a signal", _actions),
    Command("hold", "hold a pending job as its user (scontrol uhold; a running job is not affected)", _actions),
    Command("release", "release a held job", _actions),
    Command("requeue", "requeue a batch job", _actions),
    Command("logs", "print a job's batch log, or one rank's log", _logs),
    Command("progress", "how far a run is, its rate and ETA, and whether it finishes before its time limit",
            _progress),
    Command("stacks", "where every rank of a running job is: Python stacks (py-spy), grouped, waiting or moving",
            _stacks),
    Command("triage", "which rank failed first, where and why, in any log files (not only ntui's jobs)", _triage),
    Command("history", "jobs submitted by ntui (local history)", _history),
    Command("resubmit", "submit a job again: its preset with its recorded overrides (+ --set); a sweep's failed "
            "tasks alone (--failed)", _history),
    Command("sweep", "a sweep's tasks side by side: values, state, elapsed, GPU use, metric; failures by verdict",
            _sweep),
    Command("gpus", "per-node GPU usage of a running job (one long-lived srun step)", _gpus),
    Command("report", "GPU (and CPU) usage report of a job submitted by ntui, with findings", _report),
)


#: The subcommands that work on a cluster reached over ssh (``ntui --cluster NAME``): Slurm asked over the shared
#: connection, the cluster's files and records read there by its agent (logs, GPU samples, the history), attach's
#: terminal handed to ``ssh -t``, the GPU watch step's output streamed over a channel; ``import`` reads a script of
#: this machine and asks the cluster's partitions. The others say why not in :data:`NOT_REMOTE`.
REMOTE_COMMANDS = frozenset({"jobs", "show", "why", "wait", "cancel", "hold", "release", "requeue", "check",
                             "submit", "presets", "render", "logs", "progress", "triage", "history", "report",
                             "sweep", "attach", "stacks", "gpus", "import", "resubmit"})


#: Why each other subcommand does not run over ``--cluster`` yet, in words.
NOT_REMOTE: dict[str, str] = {}


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option nor the value of ``--cluster``), if
    it is one of ours."""
    names = {c.name for c in COMMANDS}
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--cluster":
            skip = True
            continue
        if not word.startswith("-"):
            return word if word in names else None
    return None


def build_parser(command: str | None = None, *, every: bool = True) -> argparse.ArgumentParser:
    """The ``ntui`` parser. Every subcommand is listed; the arguments are added for ``command`` only (for all of
    them when ``command`` is None and ``every``), importing only the modules that implement them."""
    parser = argparse.ArgumentParser(
        prog="ntui",
        description="Compose, check, submit and watch distributed training jobs on Slurm. "
        "Without a subcommand, opens the terminal app.",
        epilog=exit_codes_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ntui {__version__}")
    parser.add_argument("--cluster", dest="remote_cluster", metavar="NAME",
                        help="run on cluster NAME of the settings' clusters: (Slurm on its login node, over one "
                             "shared ssh connection); for " + ", ".join(sorted(REMOTE_COMMANDS - {"presets",
                                                                                                "render"})))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help)
        if c.name == command or (command is None and every):
            c.load().configure(c.name, p)
    return parser


def _remote_refusal(command: str | None, cluster: str) -> str | None:
    """Why ``ntui --cluster CLUSTER COMMAND`` cannot run, in words, or None."""
    if command is not None and command not in REMOTE_COMMANDS:
        what = NOT_REMOTE.get(command, "works on this machine only")
        return (f"ntui {command} {what}: not over --cluster yet; run it on the cluster's login node "
                f"(ssh HOST, then ntui {command} ...)")
    from ntui.cli.slurm import check_cluster

    return check_cluster(cluster)


def run(argv: Sequence[str]) -> int:
    words = list(argv)
    command = command_of(words)
    parser = build_parser(command, every=False)
    args = parser.parse_args(words)
    cluster = args.remote_cluster
    select_cluster(None)
    if cluster is not None:
        refused = _remote_refusal(args.command, cluster)
        if refused:
            print(f"ntui: {refused}", file=sys.stderr)
            return EXIT_PROBLEMS
        select_cluster(cluster)
    try:
        return _run_selected(args, cluster)
    finally:
        # The target is this run's: a later run in the same process (an embedding, the tests) starts from none,
        # and the agent's channel opened for it is closed.
        select_cluster(None)


def _run_selected(args: argparse.Namespace, cluster: str | None) -> int:
    """The app or the subcommand, once the run's target is selected."""
    if args.command is None:
        from ntui.ui.app import run_app

        return int(run_app(clusters=(cluster,) if cluster is not None else None))
    try:
        return int(args.func(args))
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
