"""A preset's ``progress:`` section, and how the job's script carries it to whoever reads the job's progress.

``progress: {pattern: '...'}`` names how a program that prints its steps in its own words says them: a regular
expression with a ``step`` group (``total``, ``epoch`` and any other named group, a metric, optional); without it
the forms of :mod:`ntui.core.progress.lines` are recognised by themselves. The rendered script carries the pattern
in one marked comment line (:func:`script_line`), so that the queue rows, the Progress tab and ``ntui progress``
read the job's progress with it from the script kept in the job's history entry (:func:`pattern_of_script`): no
other record to keep in step.
"""

from __future__ import annotations

import json
import re

from ntui.core.progress.lines import Pattern, pattern_problem

__all__ = ["PROGRESS_KEYS", "pattern_of_script", "script_line"]

#: The keys of a preset's ``progress:`` section.
PROGRESS_KEYS = ("pattern",)
#: The comment line's start (not the machinery's mark: it is one line of the job's, not a block to fold).
_PREFIX = "# ntui progress pattern: "
_SCAN_BYTES = 16384  # the marked line is in the script's head


def script_line(pattern: str) -> str:
    """The script's comment line that carries the pattern (JSON, so that any character survives)."""
    return _PREFIX + json.dumps(pattern)


def pattern_of_script(script: str) -> Pattern | None:
    """The pattern a rendered script carries, or None (none, or one that no longer compiles: then the forms are
    recognised by themselves)."""
    head = script[:_SCAN_BYTES]
    at = head.find(_PREFIX)
    if at < 0:
        return None
    line = head[at + len(_PREFIX):].split("\n", 1)[0]
    try:
        text = json.loads(line)
    except ValueError:
        return None
    if not isinstance(text, str) or pattern_problem(text) is not None:
        return None
    return Pattern(re.compile(text))
