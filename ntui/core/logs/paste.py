"""Logs pasted by hand into an issue or a chat, then saved to a file: the artefacts the paste added, taken off again.

``ntui triage FILE`` reads what users have, and a log copied from a bug report often comes with every line quoted
(``> ``), numbered (``12: ``, ``12 | ``, ``12<TAB>``) or indented by the same amount. :func:`unpaster` looks at a
file's first lines and returns the function that takes that artefact off each line, or None when the file has none
(a log as its program wrote it). A numbered paste is told from srun's ``--label`` (``3: ``) by its numbers: a paste
counts up by one from line to line, srun's labels repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["SAMPLE_LINES", "unpaster"]

#: How many of a file's first lines are looked at.
SAMPLE_LINES = 200
#: The share of non-empty lines that must carry the artefact.
_SHARE = 0.8

_QUOTE_RE = re.compile(r"^> ?")
_NUMBER_RE = re.compile(r"^\s*(?P<n>\d+)(?:: |:$| ?\| ?|\t)")


def _strip_indent(width: int) -> Callable[[str], str]:
    def strip(line: str) -> str:
        head = line[:width]
        return line[width:] if not head.strip() else line.lstrip(" \t")

    return strip


def unpaster(lines: Sequence[str]) -> Callable[[str], str] | None:
    """The artefact remover for a file whose first lines are ``lines`` (see the module docstring), or None."""
    body = [ln for ln in lines[:SAMPLE_LINES] if ln.strip()]
    if len(body) < 3:
        return None
    need = _SHARE * len(body)
    if sum(1 for ln in body if ln.startswith(">")) >= need:
        return lambda line: _QUOTE_RE.sub("", line, count=1)
    numbers = [m for m in (_NUMBER_RE.match(ln) for ln in body) if m is not None]
    if len(numbers) >= need:
        values = [int(m["n"]) for m in numbers]
        steps = sum(1 for a, b in zip(values, values[1:], strict=False) if b == a + 1)
        if steps >= _SHARE * (len(values) - 1):
            return lambda line: _NUMBER_RE.sub("", line, count=1)
    indent = min(len(ln) - len(ln.lstrip(" \t")) for ln in body)
    if indent >= 2:
        return _strip_indent(indent)
    return None
