"""Local submission history: SQLite in ``$XDG_STATE_HOME/ntui/history.sqlite3`` (WAL).

One transaction per submission. An *intent* row is written before ``sbatch`` runs and
completed with the job id after, so a crash between the two leaves a trace that
``reconcile`` can match against the queue. The file is readable by the user only.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ntui.core.paths import state_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    job_id TEXT,
    cluster TEXT,
    preset TEXT NOT NULL,
    preset_path TEXT,
    overrides TEXT NOT NULL,
    job_name TEXT NOT NULL,
    launcher TEXT NOT NULL,
    nodes INTEGER NOT NULL,
    world_size INTEGER NOT NULL,
    log_dir TEXT NOT NULL,
    log_stem TEXT NOT NULL,
    script TEXT NOT NULL,
    script_path TEXT,
    created_at REAL NOT NULL,
    submitted_at REAL,
    status TEXT NOT NULL DEFAULT 'intent'
);
CREATE INDEX IF NOT EXISTS submissions_job ON submissions(job_id);
"""


@dataclass(frozen=True)
class HistoryEntry:
    token: str
    job_id: str | None
    cluster: str | None
    preset: str
    preset_path: str | None
    overrides: tuple[str, ...]
    job_name: str
    launcher: str
    nodes: int
    world_size: int
    log_dir: str
    log_stem: str
    script: str
    script_path: str | None
    created_at: float
    submitted_at: float | None
    status: str  # intent | submitted | failed | recovered


def default_history_path() -> Path:
    return state_dir() / "history.sqlite3"


class History:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_history_path()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.path.exists():
            fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        self._conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.executescript(SCHEMA)

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

    def record_intent(
        self,
        *,
        token: str,
        preset: str,
        preset_path: str | None,
        overrides: Sequence[str],
        job_name: str,
        launcher: str,
        nodes: int,
        world_size: int,
        log_dir: str,
        log_stem: str,
        script: str,
    ) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT INTO submissions (token, preset, preset_path, overrides, job_name, launcher, nodes,"
                " world_size, log_dir, log_stem, script, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (token, preset, preset_path, json.dumps(list(overrides)), job_name, launcher, nodes,
                 world_size, log_dir, log_stem, script, time.time()),
            )

    def record_submitted(self, token: str, job_id: str, cluster: str | None, script_path: str | None) -> None:
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET job_id=?, cluster=?, script_path=?, submitted_at=?, status='submitted'"
                " WHERE token=?",
                (job_id, cluster, script_path, time.time(), token),
            )

    def record_failed(self, token: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE submissions SET status='failed' WHERE token=?", (token,))

    def record_recovered(
        self,
        job_id: str,
        job_name: str,
        log_dir: str = "",
        when: float | None = None,
        *,
        log_stem: str = "",
        token: str | None = None,
        script_path: str | None = None,
    ) -> None:
        """A job of ours found in the queue that the history lacked (e.g. ntui was killed mid-submit).
        ``token`` defaults to ``recovered-<job_id>``; reconcile passes the one in the script's name."""
        with self._tx() as c:
            c.execute(
                "INSERT INTO submissions (token, job_id, preset, overrides, job_name, launcher, nodes, world_size,"
                " log_dir, log_stem, script, script_path, created_at, submitted_at, status)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'recovered')",
                (token or f"recovered-{job_id}", job_id, "?", "[]", job_name, "?", 0, 0, log_dir, log_stem, "",
                 script_path, when or time.time(), when or time.time()),
            )

    def record_recovered_intent(self, token: str, job_id: str, script_path: str | None = None) -> bool:
        """Complete an intent (or failed) row that never got its job id; False when it already has one."""
        with self._tx() as c:
            cur = c.execute(
                "UPDATE submissions SET job_id=?, script_path=COALESCE(?, script_path), submitted_at=?,"
                " status='recovered' WHERE token=? AND job_id IS NULL",
                (job_id, script_path, time.time(), token),
            )
            return cur.rowcount == 1

    def intents(self, *, include_failed: bool = False) -> list[HistoryEntry]:
        """Rows without a job id: status 'intent' (ntui stopped between writing the row and recording the
        job id), and with ``include_failed`` also 'failed' (sbatch errored or timed out)."""
        statuses = ("intent", "failed") if include_failed else ("intent", "intent")
        rows = self._conn.execute(
            "SELECT * FROM submissions WHERE job_id IS NULL AND status IN (?, ?) ORDER BY id", statuses
        )
        return [self._entry(row) for row in rows]

    def has_token(self, token: str) -> bool:
        return self._conn.execute("SELECT 1 FROM submissions WHERE token=?", (token,)).fetchone() is not None

    def entries(self, limit: int | None = None) -> list[HistoryEntry]:
        sql = "SELECT * FROM submissions ORDER BY id DESC"
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (limit,)
        return [self._entry(row) for row in self._conn.execute(sql, params)]

    def get(self, job_id: str) -> HistoryEntry | None:
        base = job_id.split("_", 1)[0]
        row = self._conn.execute(
            "SELECT * FROM submissions WHERE job_id=? OR job_id=? ORDER BY id DESC LIMIT 1", (job_id, base)
        ).fetchone()
        return self._entry(row) if row else None

    def known_job_ids(self) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT job_id FROM submissions WHERE job_id IS NOT NULL")}

    @staticmethod
    def _entry(row: tuple[object, ...]) -> HistoryEntry:
        (_id, token, job_id, cluster, preset, preset_path, overrides, job_name, launcher, nodes, world_size,
         log_dir, log_stem, script, script_path, created_at, submitted_at, status) = row
        return HistoryEntry(
            token=str(token), job_id=_opt(job_id), cluster=_opt(cluster), preset=str(preset),
            preset_path=_opt(preset_path), overrides=tuple(json.loads(str(overrides))), job_name=str(job_name),
            launcher=str(launcher), nodes=int(str(nodes)), world_size=int(str(world_size)), log_dir=str(log_dir),
            log_stem=str(log_stem), script=str(script), script_path=_opt(script_path),
            created_at=float(str(created_at)), submitted_at=float(str(submitted_at)) if submitted_at else None,
            status=str(status),
        )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
