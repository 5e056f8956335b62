"""What the log watcher reports, immutable: the files' keys (a global rank, or :data:`BATCH`), a rank table's
row (:class:`RankRow`), the triage line (:class:`TriageLine`) and a view's content (:class:`Loaded`,
:class:`Appended`), with the sizes and ages as the rank table spells them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "BATCH",
    "Appended",
    "Key",
    "Loaded",
    "RankRow",
    "TriageLine",
    "ViewMode",
    "human_age",
    "human_size",
    "key_name",
    "key_sort",
]

Key: TypeAlias = int | str
"""A file of the job: a global rank, or :data:`BATCH`."""
BATCH = "batch"
ViewMode = Literal["rank", "merged"]


def key_sort(key: Key) -> tuple[int, int]:
    return (-1, 0) if isinstance(key, str) else (0, key)


def key_name(key: Key) -> str:
    return "batch log" if isinstance(key, str) else f"rank {key}"


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # pragma: no cover


def human_age(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s ago"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s ago"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m ago"
    return f"{s // 86400}d{s % 86400 // 3600}h ago"


# ---------------------------------------------------------------------------------------------------------
# what the watcher reports (immutable)


@dataclass(frozen=True)
class RankRow:
    """One row of the rank table (``key`` a rank or ``"batch"``)."""

    key: Key
    node: str | None
    exists: bool
    size: int
    age: str
    last_line: str
    status: str
    first: bool = False
    """This rank failed first (triage)."""
    error_start: int | None = None
    """0-based index number of the first line of its first error block (a traceback's header)."""
    error_line: int | None = None
    """0-based index number of that error's telling line (``XError: message``)."""
    mtime: float | None = None
    """The file's last write (None: not read yet, or missing)."""
    named: bool = False
    """The batch log names this rank as failed (srun's task exit, torchrun's ChildFailedError)."""


@dataclass(frozen=True)
class TriageLine:
    text: str
    failed: bool
    key: Key | None = None
    rank: int | None = None
    node: str | None = None
    error_start: int | None = None
    """0-based index numbers, in ``key``'s file, of the first error's block start and telling line."""
    error_line: int | None = None
    problem: bool = False
    """``text`` says why the logs cannot be read (log directory gone or unreadable), not what failed."""


@dataclass(frozen=True)
class Loaded:
    """The whole content of a view (after a view change, a reset, or a jump outside the window)."""

    lines: tuple[str, ...]
    header: tuple[str, ...] = ()
    first_index: int | None = None
    """Index number of ``lines[0]`` (rank views), None for merged views."""
    partial: str = ""
    excerpt: bool = False
    focus: tuple[int, int] | None = None


@dataclass(frozen=True)
class Appended:
    """New lines for the shown view."""

    lines: tuple[str, ...]
    partial: str = ""
