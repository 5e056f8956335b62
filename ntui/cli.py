"""``ntui`` subcommands. Plain argparse, no Textual: scripts can rely on them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ntui import __version__, cli_gpus, cli_history, cli_report, cli_slurm
from ntui.cli_common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_SLURM,
    add_preset_args,
    exit_codes_help,
    load_spec,
    print_problems,
)
from ntui.core.paths import atomic_write
from ntui.core.presets import list_presets
from ntui.core.render import render

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_SLURM", "build_parser", "load_spec", "print_problems", "run"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ntui",
        description="Compose, check, submit and watch distributed training jobs on Slurm. "
        "Without a subcommand, opens the terminal app.",
        epilog=exit_codes_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ntui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("presets", help="list presets: name, launcher, description, source file")
    p.set_defaults(func=cmd_presets)

    p = sub.add_parser("render", help="print (or write) the sbatch script of a preset")
    add_preset_args(p)
    p.add_argument("-o", "--output", type=Path, help="write the script to this file (atomically)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("check", help="check a preset statically; exits non-zero listing every problem")
    add_preset_args(p)
    p.add_argument("--test-only", action="store_true", help="also ask Slurm: sbatch --test-only")
    p.set_defaults(func=cmd_check)

    cli_slurm.add_commands(sub)
    cli_history.add_commands(sub)  # after cli_slurm: replaces its `history`, wraps its `jobs`
    cli_gpus.add_command(sub)
    cli_report.add_command(sub)
    return parser


def run(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.command is None:
        from ntui.ui.app import run_app

        return int(run_app())
    try:
        return int(args.func(args))
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def cmd_presets(args: argparse.Namespace) -> int:
    rows = list_presets()
    if not rows:
        print("no presets found", file=sys.stderr)
        return EXIT_PROBLEMS
    width = max(len(r.name) for r in rows)
    path_width = max(len(str(r.path)) for r in rows)  # the description column starts at one place
    for r in rows:
        desc = f"BROKEN: {r.problem}" if r.problem else r.description
        print(f"{r.name:<{width}}  {r.launcher or '-':<10}  {r.origin:<7}  {str(r.path):<{path_width}}  {desc}"
              .rstrip())
    return EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    _, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems, warnings=False)
    if spec is None:
        return EXIT_PROBLEMS
    script = render(spec)
    if args.output:
        atomic_write(args.output, script, mode=0o600)
    else:
        sys.stdout.write(script)
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    loaded, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems)
    if spec is None:
        n = sum(1 for p in problems if p.is_error)
        print(f"{n} error(s)", file=sys.stderr)
        return EXIT_PROBLEMS
    if args.test_only:
        return cli_slurm.test_only(spec, loaded)
    refused, site_warnings = cli_slurm.site_check(spec, loaded)
    if refused:
        return EXIT_PROBLEMS
    warn = len(problems) + site_warnings
    print(f"ok: {spec.name} ({spec.launcher}, {spec.nodes} node(s), world size {spec.world_size})"
          + (f", {warn} warning(s)" if warn else ""))
    return EXIT_OK
