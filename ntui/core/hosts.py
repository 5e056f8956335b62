"""Slurm hostlist expressions (``nid[001-003,007]``), expanded and compressed in-process.

ntui never calls ``scontrol show hostnames``: that is one more process (and on some versions one more
RPC) per refresh. ``python-hostlist`` implements the same grammar.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import hostlist

__all__ = ["compress_nodelist", "expand_nodelist"]

#: Values Slurm prints where a node list is empty.
_EMPTY = frozenset({"", "(null)", "None", "none", "None assigned", "N/A", "n/a"})


@lru_cache(maxsize=4096)
def _expand(expr: str) -> tuple[str, ...]:
    if "[" not in expr:
        # plain names (the common case in a queue listing): no parser needed
        return tuple(name for name in expr.split(",") if name)
    names: list[str] = hostlist.expand_hostlist(expr)
    return tuple(str(n) for n in names)


def expand_nodelist(expr: str | None, *, strict: bool = True) -> tuple[str, ...]:
    """``"nid[001-002],gpu7"`` -> ``("nid001", "nid002", "gpu7")``; empty / ``(null)`` / ``N/A`` -> ``()``.

    A malformed expression raises ``ValueError``, or with ``strict=False`` comes back as ``(expr,)`` (so a
    parser never loses the text Slurm printed). Results are cached: queue refreshes repeat the same lists.
    """
    if expr is None:
        return ()
    text = expr.strip()
    if text in _EMPTY:
        return ()
    try:
        return _expand(text)
    except hostlist.BadHostlist as exc:
        if strict:
            raise ValueError(f"bad Slurm hostlist {expr!r}: {exc}") from exc
        return (text,)


def compress_nodelist(nodes: Iterable[str]) -> str:
    """``["nid001", "nid002", "gpu7"]`` -> ``"gpu7,nid[001-002]"`` (sorted, duplicates dropped)."""
    names = [n for n in nodes if n]
    if not names:
        return ""
    return str(hostlist.collect_hostlist(names))


def format_index_ranges(indices: Iterable[int]) -> str:
    """``(0, 1, 2, 3, 6)`` -> ``"0-3,6"`` (GPU indices as Slurm prints them)."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(indices)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)
