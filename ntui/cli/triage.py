"""``ntui triage FILE...``: which rank failed first, where and why, in any log files: a job ntui did not submit, a
colleague's log, a downloaded ``.out``; one combined log or one file per rank. The same engine as ``ntui logs
--triage`` and the log pane (:func:`ntui.core.logs.joblogs.files_verdict`).

``-`` is standard input; it and any other stream (``/dev/stdin``, a pipe, a FIFO, ``<(...)``) are read to their end
first, into a private temporary file (a stream has no size to tail from and cannot be read twice), then triaged
as that file. On a terminal the verdict wraps to its width.

Exit codes: 0 no failure found; 1 a failure found; 2 a file missing or unreadable.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, local_copies
from ntui.core.logs.joblogs import files_verdict
from ntui.core.textsafe import inert

LAUNCHERS = ("srun", "torchrun", "accelerate")


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="log files: one combined log, or one per rank (a name like ...-rank-3.out says the rank); "
                        "- reads standard input")
    p.add_argument("--launcher", choices=LAUNCHERS,
                   help="how the ranks were started (default: read off the logs): with torchrun and accelerate, "
                        "srun's 'task N' is node N's launcher, not rank N")
    p.add_argument("--json", action="store_true", help="the verdict's fields as JSON")
    p.set_defaults(func=cmd_triage)


def _problem(path: Path) -> str | None:
    if str(path) == "-":
        return None
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "a directory, not a log file"
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _is_stream(path: Path) -> bool:
    """Standard input, or anything that is not a regular file (a pipe, a FIFO, a character device)."""
    if str(path) == "-":
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def _as_files(paths: list[Path]) -> Iterator[list[Path]]:
    """The paths as regular files: each stream read to its end into a private temporary directory (removed after),
    under its own name (``stdin`` for ``-``), so that a name like ``...-rank-3.out`` still says the rank."""
    if not any(_is_stream(p) for p in paths):
        yield paths
        return
    with tempfile.TemporaryDirectory(prefix="ntui-triage-") as tmp:
        files = []
        for i, path in enumerate(paths):
            if not _is_stream(path):
                files.append(path)
                continue
            copy = Path(tmp) / str(i) / ("stdin" if str(path) == "-" else path.name or "stream")
            copy.parent.mkdir()
            with open(copy, "wb") as out:
                if str(path) == "-":
                    shutil.copyfileobj(sys.stdin.buffer, out)
                else:
                    with open(path, "rb") as src:
                        shutil.copyfileobj(src, out)
            files.append(copy)
        yield files


def _wrapped(line: str) -> str:
    """On a terminal: the verdict wrapped to its width (continuations indented); elsewhere one line, for scripts."""
    if not sys.stdout.isatty():
        return line
    width = shutil.get_terminal_size().columns
    return "\n".join(textwrap.wrap(line, width=max(40, width), subsequent_indent="  ", break_on_hyphens=False))


def cmd_triage(args: argparse.Namespace) -> int:
    paths = local_copies(args.files)
    if sum(str(p) == "-" for p in paths) > 1:
        print("ntui: - (standard input) can be given once", file=sys.stderr)
        return EXIT_PROBLEMS
    for path in paths:
        if (problem := _problem(path)) is not None:
            print(f"ntui: {path}: {problem}", file=sys.stderr)
            return EXIT_PROBLEMS
    try:
        with _as_files(paths) as files:
            verdict, read_as = files_verdict(files, launcher=args.launcher)
    except OSError as exc:
        print(f"ntui: {exc.filename or 'standard input'}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    if args.json:
        out = dict(verdict.as_dict(), failed=verdict.failed,
                   files=[{"path": p, "read_as": how} for p, how in zip(args.files, read_as, strict=True)])
        print(json.dumps(out, indent=2))
    else:
        line = verdict.line if verdict.kind != "none" else (
            f"no failure found ({len(paths)} log{'s' if len(paths) != 1 else ''} read)")
        print(_wrapped(inert(line)))
    return 1 if verdict.failed else EXIT_OK
