"""The log pane's status line, in words: what the live view shows (one file, or a merged view of several), whether it
follows the end, is paused with new lines below, or shows an excerpt around an error, and the rank table's filter,
the search and the unfinished last line beside it. Textual-free: the pane draws the words it returns."""

from __future__ import annotations

from ntui.core.logs.rows import BATCH, key_name
from ntui.core.logs.session import Reading, Shown

__all__ = ["status_line"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def status_line(shown: Shown, reading: Reading, file_name: str | None = None) -> tuple[str, bool]:
    """The status line of the job ``shown`` with its live view where ``reading`` says, and whether it is set off as
    paused (not following, or an excerpt); ``file_name``: the name of the file a rank view shows (None: not known
    here)."""
    if shown.job_id is None:
        return "", False
    view = shown.view
    if not view.keys:
        return shown.note, False
    if view.mode == "merged":
        what = "merged: " + _plural(sum(1 for k in view.keys if not isinstance(k, str)), "rank")
        if BATCH in view.keys:
            what += " + batch log"
    else:
        key = view.keys[0]
        row = shown.rows.get(key)
        what = key_name(key)
        if row is not None and row.node:
            what += f" on {row.node}"
        if file_name is not None:
            what += f" · {file_name}"
    parts = [what]
    if reading.excerpt:
        parts.append("excerpt around the error · End: back to the live tail")
    elif reading.following:
        parts.append("following")
    else:
        parts.append(f"paused · {_plural(reading.pending_count, 'new line')} below · End: follow")
    if shown.filter != "all":
        ranks = sum(1 for x in shown.lines.values() if x.kind == "rank" and x.row is not None
                    and isinstance(x.row.key, int))
        parts.append(f"table: {shown.filter} ranks ({ranks}) · f: next filter")
    if shown.search_note:
        parts.append(shown.search_note)
    if shown.note and view.mode == "rank":
        parts.append(shown.note)
    if reading.partial and view.mode == "rank":
        parts.append(f"▸ {reading.partial}")
    return " · ".join(parts), not reading.following or reading.excerpt
