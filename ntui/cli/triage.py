"""``ntui triage FILE...``: which rank failed first, where and why, in any log files: a job ntui did not submit, a
colleague's log, a downloaded ``.out``; one combined log or one file per rank. The same engine as ``ntui logs
--triage`` and the log pane (:func:`ntui.core.logs.joblogs.files_verdict`).

Exit codes: 0 no failure found; 1 a failure found; 2 a file missing or unreadable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS
from ntui.core.logs.joblogs import files_verdict
from ntui.core.textsafe import inert

LAUNCHERS = ("srun", "torchrun", "accelerate")


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="log files: one combined log, or one per rank (a name like ...-rank-3.out says the rank)")
    p.add_argument("--launcher", choices=LAUNCHERS,
                   help="how the ranks were started (default: read off the logs): with torchrun and accelerate, "
                        "srun's 'task N' is node N's launcher, not rank N")
    p.add_argument("--json", action="store_true", help="the verdict's fields as JSON")
    p.set_defaults(func=cmd_triage)


def cmd_triage(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    for path in paths:
        problem = ("no such file" if not path.exists() else "a directory, not a log file" if path.is_dir()
                   else None)
        if problem is None:
            try:
                with path.open("rb"):
                    pass
            except OSError as exc:
                problem = exc.strerror or str(exc)
        if problem is not None:
            print(f"ntui: {path}: {problem}", file=sys.stderr)
            return EXIT_PROBLEMS
    verdict, read_as = files_verdict(paths, launcher=args.launcher)
    if args.json:
        out = dict(verdict.as_dict(), failed=verdict.failed,
                   files=[{"path": str(p), "read_as": how} for p, how in zip(paths, read_as, strict=True)])
        print(json.dumps(out, indent=2))
    else:
        line = verdict.line if verdict.kind != "none" else (
            f"no failure found ({len(paths)} log{'s' if len(paths) != 1 else ''} read)")
        print(inert(line))
    return 1 if verdict.failed else EXIT_OK
