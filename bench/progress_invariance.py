"""Whether ``ntui progress`` reads a log the same when it reaches us the way users post it: invariance, per change.

    python bench/progress_invariance.py [--split study|spent|both] [--show] [--only NAME] [--limit N]

A log a user pastes is rarely the file the program wrote: an issue's code block indents it, a Windows editor ends
its lines with CR LF, ``srun -l`` or torchrun's ``--tee`` labels every line with its rank, a coloured logger's
escapes come with a copy from a terminal, and most pastes are the log's last part, not its start. None of these
changes where the run is. Each fixture of the training-log corpus (``tests/data/corpus/progress-logs/``, study and
spent entries only: the held-out part is never looked at for a change) is read as it is and after each change
below, and the two readings compared on what the corpus scores (the step, the total, "done", the restarts, the
last training loss). A change may not apply to a fixture (one whose lines already carry a rank label gets no
second one); those are counted apart.

* ``indent``: four blanks before each line (a Markdown code block);
* ``crlf``: each line ended by CR LF;
* ``srun-l``: ``0: `` before each line (``srun -l``, one task);
* ``tee``: ``[default0]:`` before each line (torchrun ``--tee 3``);
* ``ansi``: each line in a terminal colour's escapes (a copy from a coloured terminal);
* ``tail``: the log's first third cut off (a paste of its end): only the step, "done" and the loss are compared,
  since the total and the restarts may be said only in the part cut off; a "done" that the whole log does not
  say is counted as a false done.

Prints, per change, how many readings stayed the same, and with ``--show`` each one that did not. A figure below
the fixtures tried is a reader that depends on how the log was carried, not on what it says.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ntui.core.progress.lines import training_loss  # noqa: E402
from ntui.core.progress.read import read_progress  # noqa: E402
from ntui.core.progress.series import estimate  # noqa: E402
from tests.support.corpus import entries  # noqa: E402

#: a line that already carries a rank's or a host's label (srun -l, torchrun's tee, pdsh): no second one is added,
#: and a colour goes after it
_LABELLED_RE = re.compile(r"^(?:[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d )?"  # (moreutils' ts before it)
                          r"\s*(?:\d+: |\[(?:default|rank)\d+\]:|[a-z][\w.-]*\d: )")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _prefix(prefix: str) -> Callable[[str], str | None]:
    def change(text: str) -> str | None:
        lines = _lines(text)
        labelled = sum(1 for line in lines if _LABELLED_RE.match(line))
        if prefix.strip() != "" and labelled * 4 >= len(lines):
            return None
        return "\n".join(prefix + line if line else line for line in lines)
    return change


def _crlf(text: str) -> str | None:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _ansi(text: str) -> str | None:
    def coloured(line: str) -> str:
        label = _LABELLED_RE.match(line)  # a launcher's label stays before the program's colours
        cut = label.end() if label else 0
        return f"{line[:cut]}\x1b[32m{line[cut:]}\x1b[0m" if line.strip() else line
    return "\n".join(coloured(line) for line in _lines(text))


def _tail(text: str) -> str | None:
    lines = _lines(text)
    return "\n".join(lines[len(lines) // 3:]) if len(lines) >= 30 else None


CHANGES: dict[str, Callable[[str], str | None]] = {
    "indent": _prefix("    "),
    "crlf": _crlf,
    "srun-l": _prefix("0: "),
    "tee": _prefix("[default0]:"),
    "ansi": _ansi,
    "tail": _tail,
}
#: what is compared after each change (the tail's first third may hold the total and a restart)
COMPARED = {name: ("step", "total", "finished", "restarts", "loss") for name in CHANGES}
COMPARED["tail"] = ("step", "finished", "loss")


def reading(path: Path) -> dict[str, Any]:
    try:
        series = read_progress(path)
        guess = estimate(series, now=time.time(), time_left_s=None)
    except Exception as exc:  # a crash is a reading of its own, and the benchmark says which fixture
        return {"crashed": f"{type(exc).__name__}: {exc}"}
    loss = training_loss(series.metrics)
    return {"step": guess.step, "total": guess.total, "finished": "done" in guess.words,
            "restarts": len(series.restarts), "loss": loss[1] if loss else None}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9)
    return bool(a == b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("study", "spent", "both"), default="both")
    ap.add_argument("--show", action="store_true", help="print each reading a change altered")
    ap.add_argument("--only", choices=tuple(CHANGES), help="this change only")
    ap.add_argument("--limit", type=int, default=0, help="the first N fixtures only")
    args = ap.parse_args()
    splits = ("study", "spent") if args.split == "both" else (args.split,)
    chosen = [e for e in entries("progress-logs") if e.split in splits]
    if args.limit:
        chosen = chosen[:args.limit]
    changes = {args.only: CHANGES[args.only]} if args.only else CHANGES
    tally = {name: [0, 0, 0, 0] for name in changes}  # tried, same, not applied, false done
    with tempfile.TemporaryDirectory() as tmp:
        for entry in chosen:
            raw = entry.path.read_bytes().decode("utf-8", "replace")
            before = reading(entry.path)
            for name, change in changes.items():
                text = change(raw)
                if text is None:
                    tally[name][2] += 1
                    continue
                moved = Path(tmp) / f"{entry.id}.log"
                moved.write_bytes(text.encode())
                after = reading(moved)
                tally[name][0] += 1
                fields = COMPARED[name]
                differs = [f for f in fields if not _same(before.get(f), after.get(f))]
                if "crashed" in after:
                    differs.append("crashed")
                if after.get("finished") and not before.get("finished"):
                    tally[name][3] += 1
                if differs:
                    if args.show:
                        print(f"{name:7} {entry.id} {entry.split:6} {entry.fields['framework']}: "
                              + ", ".join(f"{f} {before.get(f)!r} -> {after.get(f)!r}" for f in differs))
                else:
                    tally[name][1] += 1
    print(f"{'change':8} {'tried':>6} {'same':>6} {'same %':>7} {'n/a':>5} {'false done':>11}")
    for name, (tried, same, skipped, false_done) in tally.items():
        share = 100 * same / tried if tried else 0.0
        print(f"{name:8} {tried:6} {same:6} {share:7.1f} {skipped:5} {false_done:11}")


if __name__ == "__main__":
    main()
