"""``ntui presets`` and ``ntui render``; and loading a preset (with ``--set`` overrides), which ``check``,
``submit`` and ``resubmit`` share. No Slurm: nothing here imports the Slurm layer.

Exit codes: 0 ok; 2 the preset has errors.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, print_problems
from ntui.core.compose.presets import PresetInfo, list_presets, load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import JobSpec, validate
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.paths import atomic_write
from ntui.core.problems import PresetError, Problem
from ntui.core.textsafe import ellipsize

__all__ = ["add_preset_args", "configure", "load_spec"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    if name == "presets":
        p.add_argument("--paths", action="store_true",
                       help="add each preset's file as a last column (default: name, launcher, origin, description)")
        p.set_defaults(func=cmd_presets)
    elif name == "render":
        add_preset_args(p)
        p.add_argument("-o", "--output", type=Path, help="write the script to this file (atomically)")
        p.add_argument("--full", action="store_true",
                       help="on a terminal too, print ntui's own lines (event journal, GPU sampler, ...) in full; "
                            "they are folded there into one marked line each (piped or -o: always in full)")
        p.set_defaults(func=cmd_render)


def add_preset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("preset", help="preset name (user dir first, then shipped) or path to a YAML file")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a dotted key with a YAML value, e.g. --set sbatch.nodes=4 (repeatable)",
    )


def load_spec(preset: str, overrides: Sequence[str]) -> tuple[LoadedPreset, JobSpec | None, list[Problem]]:
    """Load + validate. Returns spec None on errors (the problems say which)."""
    try:
        loaded = load_preset(preset, overrides)
    except PresetError as exc:
        return LoadedPreset(preset, None, {}), None, exc.problems
    spec, problems = validate(loaded)
    return loaded, spec, problems


def cmd_presets(args: argparse.Namespace) -> int:
    rows = list_presets()
    if not rows:
        print("no presets found", file=sys.stderr)
        return EXIT_PROBLEMS
    for line in preset_lines(rows, paths=bool(getattr(args, "paths", False)), width=_terminal_width()):
        print(line)
    return EXIT_OK


def preset_lines(rows: Sequence[PresetInfo], *, paths: bool, width: int | None) -> list[str]:
    """``ntui presets``' lines: name, launcher, origin and description, each column starting at one place; with
    ``paths`` the preset's file last (a path is long: before the description it made lines of 230 columns). On a
    terminal (``width``) a description is cut to the line with an ellipsis; piped, lines are whole."""
    name_width = max(len(r.name) for r in rows)
    path_width = max(len(str(r.path)) for r in rows)
    lines = []
    for r in rows:
        desc = f"BROKEN: {r.problem}" if r.problem else r.description
        head = f"{r.name:<{name_width}}  {r.launcher or '-':<10}  {r.origin:<7}  "
        if paths:
            head += f"{str(r.path):<{path_width}}  "
        room = None if width is None else width - len(head)
        if room is not None:
            desc = ellipsize(desc, room) if room > 1 else ""
        lines.append(f"{head}{desc}".rstrip())
    return lines


def _terminal_width() -> int | None:
    """The terminal's width when standard output is one, else None (piped output is never cut)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def cmd_render(args: argparse.Namespace) -> int:
    _, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems, warnings=False)
    if spec is None:
        return EXIT_PROBLEMS
    script = render(spec)
    if args.output:
        atomic_write(args.output, script, mode=0o600)
    elif sys.stdout.isatty() and not args.full:  # for a person: the job first (a pipe gets the whole script)
        from ntui.core.jobfiles.machinery import fold_machinery

        sys.stdout.write(fold_machinery(script).text)
    else:
        sys.stdout.write(script)
    return EXIT_OK
