"""Slurm ``--time`` values: parse every accepted format, canonicalise to ``[D-]HH:MM:SS``."""

from __future__ import annotations

import re

_FORMATS = "min, min:sec, h:m:s, d-h, d-h:m or d-h:m:s"
_DAYS = re.compile(r"^(\d+)-(\d+)(?::(\d+))?(?::(\d+))?$")
_PLAIN = re.compile(r"^(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_time_limit(value: str) -> int:
    """Seconds for a Slurm time limit (``0`` = no limit). Raises ValueError naming the formats.

    ``30`` is 30 minutes, ``30:00`` is 30 minutes (min:sec), ``1:30:00`` is 90 minutes.
    """
    text = value.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return 0
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


def format_time_limit(seconds: int) -> str:
    """Canonical form; Slurm's resolution is one minute, so seconds round up."""
    if seconds <= 0:
        return "0"
    minutes = -(-seconds // 60)
    d, rem = divmod(minutes, 24 * 60)
    h, mi = divmod(rem, 60)
    return f"{d}-{h:02d}:{mi:02d}:00" if d else f"{h:02d}:{mi:02d}:00"


def format_elapsed(seconds: int | None) -> str:
    """An elapsed time as Slurm prints it, shortest form: ``05:07``, ``01:02:03``, ``2-01:00:00``; ``-`` unknown."""
    if seconds is None:
        return "-"
    d, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}" if d else f"{h:02d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


_TIME_DIRECTIVE = re.compile(r"^#SBATCH\s+(?:--time[=\s]|-t\s*)(\S+)", re.MULTILINE)


def time_limit_from_script(script: str) -> int | None:
    """The ``#SBATCH --time`` of the submitted script (seconds; None when absent, unparsable or unlimited)."""
    m = _TIME_DIRECTIVE.search(script)
    if m is None:
        return None
    try:
        seconds = parse_time_limit(m.group(1).strip("'\""))
    except ValueError:
        return None
    return seconds or None
