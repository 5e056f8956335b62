"""The rank table at scale: rows grouped by node, status filters, and the "slowest / silent ranks" view.

One responsibility: turning the watcher's :class:`~ntui.core.logs.rows.RankRow` s into the lines the log pane
draws (no IO, no Textual). A small job (at most :data:`GROUP_OVER` ranks) is drawn flat, one line per rank,
as before; a bigger one is drawn one line per node (256 lines for a 256-node, 1,024-rank job), each node
expandable to its ranks. Filters keep the ranks that matter:

* ``failed``: the rank triage names as failing first, and every rank the batch log names (srun's
  ``task N: Exited``, torchrun's ``ChildFailedError``);
* ``errored``: every rank whose own log shows an error (peers' NCCL errors included);
* ``silent``: ranks of a running job that wrote nothing for more than ``silent_s`` seconds (or never);
* ``slowest``: not a filter but a view: the ranks by their last write, oldest first (the stragglers and hung
  ranks of a job whose ranks should all write at the same pace), at most :data:`SLOWEST_MAX`.

A filter draws the matching ranks flat under their node's line; nodes without a match are left out.
Last writes are the files' mtimes as of their last poll (a backed-off file's may be that poll's age old).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ntui.core.logs.rows import Key, RankRow, human_age, key_sort

__all__ = [
    "FILTERS",
    "GROUP_OVER",
    "SILENT_S",
    "SLOWEST_MAX",
    "Filter",
    "TableLine",
    "grouped",
    "matches",
    "node_key",
    "table_lines",
]

Filter = Literal["all", "failed", "errored", "silent", "slowest"]
#: the order ``f`` cycles through them
FILTERS: tuple[Filter, ...] = ("all", "failed", "errored", "silent", "slowest")
GROUP_OVER = 32
"""More ranks than this: one line per node."""
SILENT_S = 120.0
"""A running rank that wrote nothing for this long is silent."""
SLOWEST_MAX = 64
NODE_PREFIX = "node:"
_STATUS_ORDER = ("errored", "failed", "killed", "missing", "never started", "pending", "running", "finished")


def node_key(node: str | None) -> str:
    """The table key of a node's line (rank lines use the rank number, the batch log ``"batch"``)."""
    return NODE_PREFIX + (node or "?")


@dataclass(frozen=True)
class TableLine:
    """One line of the rank table: a rank (``row``) or a node (``ranks`` summarised)."""

    key: str
    """Unique table key: ``str(rank)``, ``"batch"``, or :func:`node_key`."""
    kind: Literal["rank", "node"]
    row: RankRow | None = None
    node: str | None = None
    ranks: tuple[RankRow, ...] = ()
    expanded: bool = False
    indent: bool = False
    """A rank drawn under its node's line."""

    @property
    def rank_key(self) -> Key | None:
        return self.row.key if self.row is not None else None

    # -- a node line's summary (what the widget draws in the rank table's columns) --------------------

    def ranks_text(self) -> str:
        keys = sorted(int(r.key) for r in self.ranks if isinstance(r.key, int))
        if not keys:
            return ""
        return str(keys[0]) if len(keys) == 1 else f"{keys[0]}-{keys[-1]}" if keys[-1] - keys[0] + 1 == len(
            keys) else f"{keys[0]}…{keys[-1]}"

    def size(self) -> int:
        return sum(r.size for r in self.ranks)

    def newest(self) -> RankRow | None:
        """The rank that wrote last."""
        dated = [r for r in self.ranks if r.mtime is not None]
        return max(dated, key=lambda r: r.mtime or 0.0) if dated else None

    def worst(self) -> RankRow | None:
        """The rank whose status matters most (first failure, errored, missing, ... ; ties: lowest rank)."""
        if not self.ranks:
            return None
        return min(self.ranks, key=lambda r: (not r.first, _status_rank(r.status), key_sort(r.key)))

    def status_text(self) -> str:
        counts: dict[str, int] = {}
        for r in self.ranks:
            counts[r.status] = counts.get(r.status, 0) + 1
        parts = [f"{counts[s]} {s}" for s in sorted(counts, key=_status_rank)]
        first = any(r.first for r in self.ranks)
        return ", ".join(parts) + (" (first)" if first else "")

    def errored(self) -> bool:
        return any(r.status.startswith("errored") for r in self.ranks)


def _status_rank(status: str) -> int:
    base = status.split(" ", 1)[0]
    return _STATUS_ORDER.index(base) if base in _STATUS_ORDER else len(_STATUS_ORDER)


def silent_for(row: RankRow, now: float) -> float | None:
    """Seconds since the rank's last write (None: never wrote)."""
    return None if row.mtime is None else max(0.0, now - row.mtime)


def matches(row: RankRow, flt: Filter, *, now: float, silent_s: float = SILENT_S, job_active: bool = True) -> bool:
    """Whether a rank passes a filter (``slowest`` and ``all``: every rank)."""
    if flt == "failed":
        return row.first or row.named
    if flt == "errored":
        return row.status.startswith("errored")
    if flt == "silent":
        if not job_active or row.status.startswith(("finished", "errored")):
            return False
        age = silent_for(row, now)
        return age is None or age > silent_s
    return True


def grouped(rows: Iterable[RankRow]) -> dict[str | None, list[RankRow]]:
    """Ranks by node (in the order of their lowest rank; unknown node: ``None``, last)."""
    out: dict[str | None, list[RankRow]] = {}
    for r in sorted((r for r in rows if isinstance(r.key, int)), key=lambda r: key_sort(r.key)):
        out.setdefault(r.node, []).append(r)
    if None in out:
        out[None] = out.pop(None)
    return out


def table_lines(
    rows: Sequence[RankRow],
    *,
    flt: Filter = "all",
    expanded: Collection[str | None] = (),
    now: float,
    silent_s: float = SILENT_S,
    job_active: bool = True,
    group_over: int = GROUP_OVER,
) -> list[TableLine]:
    """What the rank table draws, top to bottom. The batch log's line always comes first."""
    batch = [TableLine(str(r.key), "rank", r) for r in rows if not isinstance(r.key, int)]
    ranks = [r for r in rows if isinstance(r.key, int)]
    if flt == "slowest":
        live = [r for r in ranks if r.exists]
        live.sort(key=lambda r: (r.mtime if r.mtime is not None else float("-inf"), key_sort(r.key)))
        never = [r for r in ranks if not r.exists]
        return batch + [TableLine(str(r.key), "rank", r) for r in (never + live)[:SLOWEST_MAX]]
    keep = [r for r in ranks if matches(r, flt, now=now, silent_s=silent_s, job_active=job_active)]
    if len(ranks) <= group_over:
        return batch + [TableLine(str(r.key), "rank", r) for r in keep]
    out = list(batch)
    all_by_node = grouped(ranks)
    for node, members in grouped(keep).items():
        open_ = flt != "all" or node in expanded
        out.append(TableLine(node_key(node), "node", node=node, ranks=tuple(all_by_node[node]), expanded=open_))
        if open_:
            out.extend(TableLine(str(r.key), "rank", r, indent=True) for r in members)
    return out


def describe(line: TableLine, now: float) -> str:
    """One line in words (tests, the status line): ``nid000017 ranks 64-67: 1 errored, 3 running``."""
    if line.kind == "node":
        newest = line.newest()
        age = f", last write {human_age(now - newest.mtime)}" if newest and newest.mtime is not None else ""
        return f"{line.node or '?'} ranks {line.ranks_text()}: {line.status_text()}{age}"
    row = line.row
    assert row is not None
    return f"rank {row.key} on {row.node or '?'}: {row.status}"
