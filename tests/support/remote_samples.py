"""A cluster's files for the GPU watch's tests of a job reached over ssh (issue #45): the agent's answers made by the
agent's own functions (:class:`~ntui.core.remote.files.LocalFiles`) on a test directory, with the cluster's history
given as entries and every read recorded."""

from __future__ import annotations

from ntui.core.remote.files import LocalFiles
from ntui.core.remote.protocol import MAX_CHUNK, Chunk

__all__ = ["RecordedFiles"]


class RecordedFiles(LocalFiles):
    """The history there holds ``entries`` (job id -> its fields) for ``job``, and lists nothing (never this
    machine's); every read is recorded as (path, offset)."""

    def __init__(self, entries: dict[str, dict[str, str]] | None = None) -> None:
        self.entries = dict(entries or {})
        self.reads: list[tuple[str, int]] = []

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, object] | None:
        entry = self.entries.get(job_id)
        return {"entry": entry, "others": [], "warnings": []} if entry is not None else None

    def history(self, limit: int | None = None) -> list[dict[str, object]]:
        return []  # the recent list's read: not what these tests look at

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        self.reads.append((path, offset))
        return super().read(path, offset, limit, from_end=from_end)
