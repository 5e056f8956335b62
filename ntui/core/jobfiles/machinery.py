"""ntui's machinery in a generated script, and the folded view of a script that shows the job first.

A generated script is the user's job (directives, environment, setup, launch) plus blocks of ntui's own lines:
the event journal (J2), a sweep task's values, a long run's signal handling (T10), the GPU sampler. Each such
block is a run of non-blank lines whose first line starts with :data:`MARK`. The script that runs is always the
whole text; where a person reads it (the compose preview, the submit confirmation, a job's details, ``ntui render``
on a terminal) each block folds into its first line, which says what it is and how many lines it holds. Scripts
rendered before the mark existed simply show unfolded.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MARK", "Folded", "fold_machinery"]

#: The first line of every block of ntui's machinery in a generated script starts with this.
MARK = "# [ntui] "
_FOLDED = ", folded here (the script holds them all)"


@dataclass(frozen=True)
class Folded:
    """A script with ntui's blocks folded: ``text`` to show, and how many of the script's lines are the job's
    and how many ntui's (folded into ``folds`` lines)."""

    text: str
    job_lines: int
    machinery_lines: int
    folds: int


def _title(first: str) -> str:
    """``# [ntui] The job's event journal (J2): /path, ...`` -> ``The job's event journal (J2)``."""
    text = first[len(MARK):]
    head, sep, _ = text.partition(": ")
    return head if sep else text.rstrip(".")


def fold_machinery(script: str) -> Folded:
    """``script`` with each block of ntui's machinery folded into one marked line (pure: the same script, the same
    view). Lines that are not in such a block are kept as they are, in order."""
    lines = script.split("\n")
    out: list[str] = []
    machinery = folds = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(MARK) and (i == 0 or lines[i - 1] == ""):
            end = i
            while end < len(lines) and lines[end] != "":
                end += 1
            n = end - i
            out.append(f"{MARK}{_title(line)}: {n} lines of ntui's{_FOLDED}")
            machinery += n
            folds += 1
            i = end
            continue
        out.append(line)
        i += 1
    job = sum(1 for ln in lines if ln) - machinery
    if folds:  # a folded line separates enough: the blank lines beside it go, so the launch shows sooner
        fold_at = {i for i, ln in enumerate(out) if ln.startswith(MARK) and ln.endswith(_FOLDED)}
        out = [ln for i, ln in enumerate(out) if ln or not (i - 1 in fold_at or i + 1 in fold_at)]
    return Folded("\n".join(out), job, machinery, folds)
