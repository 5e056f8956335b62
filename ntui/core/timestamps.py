"""Timestamps printed in log lines, read as epoch seconds: one home for the ISO-like form every logger prints
(``2024-05-01 12:00:00,123``, ``2024-05-01T12:00:00``, torchrun's ``2024-05-01_12:00:00``), read as local time, like
the file modification times beside them. Pure; a leaf (failure triage and progress lines both read them)."""

from __future__ import annotations

import re
from datetime import datetime

__all__ = ["iso_stamp", "local_epoch"]

_ISO_RE = re.compile(
    r"(?P<y>(?:19|20)\d\d)-(?P<mo>\d\d)-(?P<d>\d\d)[T _](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<f>\d+))?"
)


def local_epoch(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str | None) -> float | None:
    """Epoch seconds of a local date and time (``frac``: the digits after the second), None when not a date."""
    try:
        stamp = datetime(y, mo, d, h, mi, s).timestamp()  # naive = local time, like file mtimes shown
    except (ValueError, OverflowError, OSError):
        return None
    if frac:
        stamp += float("0." + frac[:9])
    return stamp


def iso_stamp(text: str, within: int = 64) -> float | None:
    """The epoch seconds of the first ISO-like timestamp in the first ``within`` characters of ``text``, or None."""
    m = _ISO_RE.search(text, 0, within)
    if m is None:
        return None
    return local_epoch(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), m["f"])
