"""Several files followed together: :class:`MultiTail` polls one :class:`~ntui.core.logs.tail.FileTail` per file
(one per rank) from one caller thread and merges their lines by arrival (``[r2] ...``).

Wiring failure triage (:mod:`ntui.core.logs.triage`), one ``RankDetector`` per file::

    for key, up in multi.poll_all().items():
        if up.reset:
            detectors[key].reset()
        detectors[key].feed_many(up.lines, first_line_no=up.first_line_no + 1,
                                 time=up.mtime if up.backlog else now, first_seq=up.first_seq)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, TypeVar

from ntui.core.logs.fdbudget import FdBudget
from ntui.core.logs.tail import DEFAULT_WINDOW, FileTail, TailUpdate

__all__ = ["MergedLine", "MultiTail", "merge_lines", "rank_label"]

K = TypeVar("K", bound=Hashable)


def rank_label(key: object) -> str:
    """``2`` -> ``"[r2] "``; other keys -> ``"[key] "``."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"[r{key}] "
    return f"[{key}] "


@dataclass(frozen=True)
class MergedLine(Generic[K]):
    seq: int
    key: K
    line_no: int
    text: str

    def render(self, label: Callable[[K], str] = rank_label) -> str:
        return f"{label(self.key)}{self.text}"


def merge_lines(
    updates: Mapping[K, TailUpdate] | Iterable[tuple[K, TailUpdate]],
    *,
    label: Callable[[K], str] = rank_label,
) -> list[str]:
    """Lines of several updates with a per-file prefix (``[r2] ...``), by arrival (``first_seq``).

    Within one poll the files' lines arrived together; ties keep the order in which files were polled.
    """
    items = list(updates.items()) if isinstance(updates, Mapping) else list(updates)
    tagged: list[tuple[int, int, int, str]] = []
    for order, (key, up) in enumerate(items):
        prefix = label(key)
        for i, text in enumerate(up.lines):
            tagged.append((up.first_seq + i, order, i, prefix + text))
    tagged.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t[3] for t in tagged]


class MultiTail(Generic[K]):
    """Several :class:`FileTail` polled together by one caller thread.

    Each line gets a global arrival sequence number (``TailUpdate.first_seq`` + i); :attr:`merged` keeps
    the last ``merged_window`` lines of all files in that order.
    """

    def __init__(
        self,
        paths: Mapping[K, Path | str] | None = None,
        *,
        window: int = DEFAULT_WINDOW,
        merged_window: int = DEFAULT_WINDOW,
        budget: FdBudget | None = None,
        **tail_kwargs: int,
    ) -> None:
        self.budget = budget
        self._window = window
        self._tail_kwargs = tail_kwargs
        self._tails: dict[K, FileTail] = {}
        self._seq = 0
        self.merged: deque[MergedLine[K]] = deque(maxlen=merged_window)
        for key, path in (paths or {}).items():
            self.add(key, path)

    def add(self, key: K, path: Path | str, *, window: int | None = None) -> FileTail:
        """Follow one more file (``window``: its own window size, default the tails' one)."""
        tail = FileTail(path, window=window or self._window, budget=self.budget, **self._tail_kwargs)
        self._tails[key] = tail
        return tail

    def remove(self, key: K) -> None:
        tail = self._tails.pop(key, None)
        if tail is not None:
            tail.release()

    def close(self) -> None:
        """Close every held descriptor (the tails still work: they open again on their next poll)."""
        for tail in self._tails.values():
            tail.release()

    def ops(self) -> tuple[int, int]:
        """File-system metadata operations so far: (opens, stats) over all files."""
        tails = list(self._tails.values())
        return sum(t.opens for t in tails), sum(t.stats for t in tails)

    def reads(self) -> int:
        """``pread`` calls so far over all files (not metadata operations)."""
        return sum(t.reads for t in list(self._tails.values()))

    def keys(self) -> list[K]:
        return list(self._tails)

    def tail(self, key: K) -> FileTail:
        return self._tails[key]

    def __contains__(self, key: object) -> bool:
        return key in self._tails

    def __len__(self) -> int:
        return len(self._tails)

    def poll_all(self, keys: Iterable[K] | None = None, *, light: Collection[K] = (), now: float | None = None
                 ) -> dict[K, TailUpdate]:
        """Poll every file (or only ``keys``: poll the visible rank often, the others less); those in ``light``
        with a light poll (:meth:`FileTail.poll`; ``now`` its time)."""
        out: dict[K, TailUpdate] = {}
        for key in list(self._tails) if keys is None else list(keys):
            tail = self._tails.get(key)
            if tail is None:
                continue
            up = replace(tail.poll(light=key in light, now=now), first_seq=self._seq, held=tail.held)
            for i, text in enumerate(up.lines):
                self.merged.append(MergedLine(self._seq + i, key, up.first_line_no + i, text))
            self._seq += len(up.lines)
            out[key] = up
        return out

    def merged_view(self, last: int | None = None, *, label: Callable[[K], str] = rank_label) -> list[str]:
        items = list(self.merged)
        if last is not None:
            items = items[-last:] if last > 0 else []
        return [m.render(label) for m in items]
