"""This host's index of the job records: SQLite, one file per host, rebuilt from the record files at any time.

The record files (:mod:`ntui.core.records.recordfiles`) are the truth; the index only spares a listing from
parsing them all again. It keeps each fact file it has read (by name: a name is never rewritten) and the entry
merged from a submission's facts, with the columns queries filter on. :meth:`RecordIndex.sync` takes one
directory listing, reads only the names it has not seen, drops the ones gone, and re-merges the submissions they
belong to.

Its file is ``index/<host>.sqlite3``: only this host's processes ever open it, so SQLite's locking stays among
processes of one kernel. On a network filesystem (:func:`ntui.core.fstype.is_network_fs`) it uses the rollback
journal, never WAL (WAL's readers share memory through a ``-shm`` file, which needs one host and a shared
``mmap``: not there on NFS or DVS); on a local disk, WAL. A damaged index is moved aside and rebuilt by the caller.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ntui.core.records.recordfiles import FactName

__all__ = ["INDEX_DIR", "EntryRow", "RecordIndex"]

INDEX_DIR = "index"
INDEX_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, key TEXT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS files_key ON files(key);
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    created REAL NOT NULL,
    seen REAL NOT NULL,
    job_id TEXT,
    base_job TEXT,
    status TEXT NOT NULL,
    resolved INTEGER NOT NULL,
    doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_job ON entries(base_job);
CREATE INDEX IF NOT EXISTS entries_created ON entries(created);
"""


@dataclass(frozen=True)
class EntryRow:
    """A submission's merged entry with the columns the queries use."""

    key: str
    created: float  # when the submission was made (the sort order)
    seen: float  # submitted_at, else created (the "since" filter)
    job_id: str | None
    status: str
    resolved: bool
    doc: dict[str, Any]


Merge = Callable[[str, list[dict[str, Any]]], "EntryRow | None"]


class RecordIndex:
    def __init__(self, path: Path | None, *, network: bool) -> None:
        """``path`` None: an in-memory index (a state directory that cannot hold one)."""
        self.path = path
        self.network = network
        target = ":memory:"
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not path.exists():
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
            target = str(path)
        self._conn = sqlite3.connect(target, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            mode = "DELETE" if network or path is None else "WAL"
            self.journal_mode = str(self._conn.execute(f"PRAGMA journal_mode={mode}").fetchone()[0]).lower()
            self._conn.execute("PRAGMA synchronous=NORMAL")
            version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            if version not in (0, INDEX_VERSION):  # another layout: it is only an index, start again
                self._conn.executescript("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS entries;")
            self._conn.executescript(_SCHEMA)
            self._conn.execute(f"PRAGMA user_version={INDEX_VERSION}")
            self._conn.execute("SELECT count(*) FROM files").fetchone()
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # ------------------------------------------------------------ keeping it in step with the files

    def known_names(self) -> set[str]:
        return {str(r[0]) for r in self._conn.execute("SELECT name FROM files")}

    def update(self, added: Sequence[tuple[str, FactName, dict[str, Any]]], removed: Iterable[str],
               merge: Merge) -> set[str]:
        """Add read facts and drop vanished names in one transaction; re-merge the keys they touch. Returns those
        keys."""
        removed = list(removed)
        if not added and not removed:
            return set()
        dirty: set[str] = set()
        with self._tx() as c:
            for name in removed:
                row = c.execute("SELECT key FROM files WHERE name=?", (name,)).fetchone()
                if row is not None:
                    dirty.add(str(row[0]))
                    c.execute("DELETE FROM files WHERE name=?", (name,))
            for name, parsed, doc in added:
                c.execute("INSERT OR REPLACE INTO files (name, key, doc) VALUES (?,?,?)",
                          (name, parsed.key, json.dumps(doc, separators=(",", ":"))))
                dirty.add(parsed.key)
            for key in dirty:
                facts = [dict(json.loads(str(r[1])), _name=str(r[0]))
                         for r in c.execute("SELECT name, doc FROM files WHERE key=? ORDER BY name", (key,))]
                row = merge(key, facts) if facts else None
                if row is None:
                    c.execute("DELETE FROM entries WHERE key=?", (key,))
                    continue
                job = row.job_id
                c.execute("INSERT OR REPLACE INTO entries (key, created, seen, job_id, base_job, status, resolved,"
                          " doc) VALUES (?,?,?,?,?,?,?,?)",
                          (key, row.created, row.seen, job, job.split("_", 1)[0] if job else None, row.status,
                           int(row.resolved), json.dumps(row.doc, separators=(",", ":"))))
        return dirty

    # ------------------------------------------------------------ queries (merged entries, as JSON documents)

    def _docs(self, where: str = "", params: Sequence[object] = (), order: str = "created DESC, key DESC",
              limit: int | None = None) -> list[dict[str, Any]]:
        # ``where`` and ``order`` are this module's constants; values go in as parameters
        sql = "SELECT doc FROM entries" + (f" WHERE {where}" if where else "") + f" ORDER BY {order}"  # noqa: S608
        args = list(params)
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [dict(json.loads(str(r[0]))) for r in self._conn.execute(sql, args)]

    def all(self, limit: int | None = None) -> list[dict[str, Any]]:
        return self._docs(limit=limit)

    def since(self, when: float) -> list[dict[str, Any]]:
        return self._docs("seen >= ?", (when,))

    def by_job(self, job_id: str) -> list[dict[str, Any]]:
        base = job_id.split("_", 1)[0]
        return self._docs("(job_id = ? OR job_id = ?)", (job_id, base))

    def unresolved(self) -> list[dict[str, Any]]:
        return self._docs("job_id IS NOT NULL AND resolved = 0", order="created, key")

    def without_job(self, statuses: Sequence[str]) -> list[dict[str, Any]]:
        marks = ",".join("?" for _ in statuses)
        return self._docs(f"job_id IS NULL AND status IN ({marks})", tuple(statuses), order="created, key")

    def has_key(self, key: str) -> bool:
        return self._conn.execute("SELECT 1 FROM entries WHERE key=?", (key,)).fetchone() is not None

    def job_ids(self) -> set[str]:
        return {str(r[0]) for r in self._conn.execute("SELECT job_id FROM entries WHERE job_id IS NOT NULL")}

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM entries").fetchone()[0])

    def facts_of(self, key: str) -> list[dict[str, Any]]:
        return [dict(json.loads(str(r[1])), _name=str(r[0]))
                for r in self._conn.execute("SELECT name, doc FROM files WHERE key=? ORDER BY name", (key,))]
