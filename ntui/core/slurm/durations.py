"""Slurm's durations: the one reading of its time forms, and one spelling per place a duration is shown.

Reading (:func:`parse_duration`, :func:`parse_time_limit`): the forms Slurm prints (``M:SS``, ``H:MM:SS``,
``D-HH:MM:SS``) and the forms it accepts as ``--time`` (``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``,
``D-H:M:S``): ``30`` is 30 minutes, ``2:03`` is 2 min 3 s, minutes and seconds below 60. The words Slurm prints
for no duration (``UNLIMITED``, ``INFINITE``, ``INVALID``, ``N/A``, ``Partition_Limit``, ``NOT_SET``, ...) are
no number; sacct's ``TotalCPU`` adds a fraction of a second (:func:`parse_cpu_time`). The model keeps
seconds (``elapsed_s``, ``time_limit_s``, ``run_time_s``); text is made from them only where it is shown, by
one of these spellings:

========================  ==============================  =====================================================
place                     spelling                        formatter
========================  ==============================  =====================================================
queue cell, details, CLI  squeue's: ``0:00``, ``5:07``,   :func:`format_elapsed` (an elapsed time, a run time,
tables and reports        ``1:02:03``, ``1-01:01:01``;    a limit beside an elapsed: the jobs view, ``ntui
                          ``-`` unknown                   history``, ``ntui runs``, the report)
a ``--time`` value        ``HH:MM:SS``, ``D-HH:MM:SS``,   :func:`format_time_limit` (presets, ``--set
                          rounded up to the minute        sbatch.time=...`` fixes, what-if shapes, MaxTime)
compact (a span in a      ``50 s``, ``40 min``,           :func:`format_span` ("ends in", "quiet for", "in 3 h
sentence)                 ``2 h 10 min``, ``1 d 3 h``     10 min")
========================  ==============================  =====================================================

The queue cell spells an elapsed time as squeue prints it, so a cell ticked between polls and a cell squeue
filled read alike; details and the CLI use the same spelling, so one job's elapsed reads the same in every place.
"""

from __future__ import annotations

import re

__all__ = [
    "NO_DURATION",
    "format_elapsed",
    "format_span",
    "format_time_limit",
    "parse_cpu_time",
    "parse_duration",
    "parse_time_limit",
    "time_limit_from_script",
]

#: Words Slurm prints where a duration has no value (compared upper-cased).
NO_DURATION = frozenset(
    {"", "N/A", "NONE", "UNKNOWN", "UNLIMITED", "INFINITE", "INVALID", "(NULL)", "PARTITION_LIMIT", "NOT_SET"}
)
#: Of those, the ones a user may write as ``--time`` for no limit.
_NO_LIMIT = frozenset({"UNLIMITED", "INFINITE"})

_FORMATS = "min, min:sec, h:m:s, d-h, d-h:m or d-h:m:s"
_DAYS = re.compile(r"^(\d+)-(\d+)(?::(\d+))?(?::(\d+))?$")
_PLAIN = re.compile(r"^(\d+)(?::(\d+))?(?::(\d+))?$")


def _seconds(value: str) -> int:
    """Seconds in one of Slurm's time forms; ValueError naming the forms otherwise."""
    text = value.strip()
    m = _DAYS.match(text)
    if m:
        d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        if mi >= 60 or s >= 60:
            raise ValueError(f"minutes and seconds must be below 60 in {value!r}")
        return ((d * 24 + h) * 60 + mi) * 60 + s
    m = _PLAIN.match(text)
    if m:
        parts = [int(g) for g in m.groups() if g is not None]
        if len(parts) == 1:
            return parts[0] * 60
        if len(parts) == 2:
            if parts[1] >= 60:
                raise ValueError(f"seconds must be below 60 in {value!r}")
            return parts[0] * 60 + parts[1]
        if parts[1] >= 60 or parts[2] >= 60:
            raise ValueError(f"minutes and seconds must be below 60 in {value!r}")
        return (parts[0] * 60 + parts[1]) * 60 + parts[2]
    raise ValueError(f"expected a Slurm time ({_FORMATS}), got {value!r}")


def parse_duration(text: str | None) -> int | None:
    """Seconds in a duration Slurm printed, or ``None`` for its no-duration words, empty text or garbage."""
    if text is None or text.strip().upper() in NO_DURATION:
        return None
    try:
        return _seconds(text)
    except ValueError:
        return None


def parse_cpu_time(text: str) -> float | None:
    """sacct's ``TotalCPU``: a printed duration whose seconds may carry a fraction (``00:00.056``, ``12:34.5``,
    ``1-00:00:01``); empty text or garbage -> None."""
    whole, dot, fraction = text.strip().partition(".")
    if ":" not in whole or (dot and not fraction.isdigit()):
        return None
    seconds = parse_duration(whole)
    if seconds is None:
        return None
    return seconds + (float(f"0.{fraction}") if dot else 0.0)


def parse_time_limit(value: str) -> int:
    """Seconds in a ``--time`` value a user wrote (``0`` = no limit). Raises ValueError naming the forms."""
    if value.strip().upper() in _NO_LIMIT:
        return 0
    return _seconds(value)


def format_elapsed(seconds: float | None) -> str:
    """squeue's spelling (``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``; ``-`` unknown): every elapsed time shown."""
    if seconds is None:
        return "-"
    days, rem = divmod(max(0, int(round(seconds))), 86400)
    hours, rem = divmod(rem, 3600)
    minutes, secs = divmod(rem, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def format_time_limit(seconds: int) -> str:
    """A ``--time`` value, ``[D-]HH:MM:SS``: Slurm's resolution is one minute, so seconds round up; ``0`` none."""
    if seconds <= 0:
        return "0"
    minutes = -(-seconds // 60)
    d, rem = divmod(minutes, 24 * 60)
    h, mi = divmod(rem, 60)
    return f"{d}-{h:02d}:{mi:02d}:00" if d else f"{h:02d}:{mi:02d}:00"


def format_span(seconds: float) -> str:
    """A span in a sentence, in its two largest units: ``50 s``, ``40 min``, ``2 h 10 min``, ``1 d 3 h``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    hours, minutes = divmod(round(s / 60), 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min"


_TIME_DIRECTIVE = re.compile(r"^#SBATCH\s+(?:--time[=\s]|-t\s*)(\S+)", re.MULTILINE)


def time_limit_from_script(script: str) -> int | None:
    """The ``#SBATCH --time`` of a submitted script (seconds; None when absent, unparsable or unlimited)."""
    m = _TIME_DIRECTIVE.search(script)
    if m is None:
        return None
    try:
        seconds = parse_time_limit(m.group(1).strip("'\""))
    except ValueError:
        return None
    return seconds or None
