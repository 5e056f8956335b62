"""Local submission history: SQLite in ``$XDG_STATE_HOME/ntui/history.sqlite3`` (WAL).

One transaction per submission. An *intent* row is written before ``sbatch`` runs and
completed with the job id after, so a crash between the two leaves a trace that
``reconcile`` can match against the queue. The file is readable by the user only.

Schema version 2 (``PRAGMA user_version``; files without it are version 1) adds the job's
*record*, filled once the job has ended (:mod:`ntui.core.records.record`): final state, exit code,
reason, start/end/elapsed, nodes, the triage verdict, where the state came from
(``sacct`` | ``scontrol`` | ``inferred`` from the batch log) and the job it was resubmitted from.
Schema version 3 adds the job's GPU usage *summary* (:class:`GpuSummary`, from the in-job sampler's files when the
record is resolved; NULL when the job left no samples): mean utilisation, idle share, peak memory share, GPU count,
energy, and the findings (count and the first one's line). The samples themselves stay in their files.
An older file (version 1 or 2) is migrated in place (``ALTER TABLE ADD COLUMN``, one transaction) on open.
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
SCHEMA_VERSION = 3
#: Columns added by version 2 (the job record), in this order; all nullable.
RECORD_COLUMNS: tuple[tuple[str, str], ...] = (
    ("final_state", "TEXT"),  # COMPLETED, FAILED, CANCELLED, TIMEOUT, ... (None: not resolved yet)
    ("exit_code", "TEXT"),  # Slurm's "code:signal"
    ("reason", "TEXT"),
    ("start_time", "TEXT"),  # ISO, as Slurm prints it
    ("end_time", "TEXT"),
    ("elapsed_s", "INTEGER"),
    ("node_list", "TEXT"),
    ("verdict", "TEXT"),  # one line from triage, "" when it found nothing
    ("record_source", "TEXT"),  # sacct | scontrol | inferred
    ("resolved_at", "REAL"),
    ("resubmit_of", "TEXT"),  # the job id this one was resubmitted from
)
#: Columns added by version 3 (the GPU usage summary, :class:`GpuSummary`), in this order; all nullable.
USAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("gpu_util_mean", "REAL"),  # percent, mean over the job's GPUs
    ("gpu_idle_fraction", "REAL"),  # 0..1, mean over the GPUs of the share of time below the idle threshold
    ("gpu_mem_peak_fraction", "REAL"),  # 0..1, the highest peak memory / total of any GPU
    ("gpu_count", "INTEGER"),  # GPUs sampled
    ("gpu_energy_wh", "REAL"),
    ("gpu_findings", "INTEGER"),  # how many findings the report has
    ("gpu_finding", "TEXT"),  # the first finding's line ("" when none)
)


@dataclass(frozen=True)
class GpuSummary:
    """A job's GPU usage in a few numbers (from :func:`ntui.core.records.record.gpu_summary`); any may be unknown."""

    util_mean: float | None
    idle_fraction: float | None
    mem_peak_fraction: float | None
    gpus: int
    energy_wh: float | None
    findings: int
    first_finding: str


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
    final_state: str | None = None
    exit_code: str | None = None
    reason: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    elapsed_s: int | None = None
    node_list: str | None = None
    verdict: str | None = None
    record_source: str | None = None
    resolved_at: float | None = None
    resubmit_of: str | None = None
    gpu: GpuSummary | None = None  # None: no samples (or not summarised yet)

    @property
    def resolved(self) -> bool:
        return self.final_state is not None


@dataclass(frozen=True)
class FinalRecord:
    """What became of a job that ended (see :mod:`ntui.core.records.record`)."""

    state: str
    exit_code: str | None
    reason: str | None
    start_time: str | None
    end_time: str | None
    elapsed_s: int | None
    node_list: str | None
    verdict: str
    source: str  # sacct | scontrol | inferred


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
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.executescript(SCHEMA)
        self._migrate()

    def _migrate(self) -> None:
        """Bring the file to :data:`SCHEMA_VERSION` (idempotent; concurrent openers serialise on the lock)."""
        if self._conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        with self._tx() as c:
            have = {row[1] for row in c.execute("PRAGMA table_info(submissions)")}
            for name, kind in (*RECORD_COLUMNS, *USAGE_COLUMNS):
                if name not in have:
                    c.execute(f"ALTER TABLE submissions ADD COLUMN {name} {kind}")
            c.execute("CREATE INDEX IF NOT EXISTS submissions_unresolved ON submissions(final_state)")
            c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

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
        resubmit_of: str | None = None,
    ) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT INTO submissions (token, preset, preset_path, overrides, job_name, launcher, nodes,"
                " world_size, log_dir, log_stem, script, created_at, resubmit_of)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (token, preset, preset_path, json.dumps(list(overrides)), job_name, launcher, nodes,
                 world_size, log_dir, log_stem, script, time.time(), resubmit_of),
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

    def unresolved(self) -> list[HistoryEntry]:
        """Submitted jobs (with a job id) whose final state is not recorded yet, oldest first."""
        rows = self._conn.execute(
            "SELECT * FROM submissions WHERE job_id IS NOT NULL AND final_state IS NULL ORDER BY id")
        return [self._entry(row) for row in rows]

    def since(self, when: float) -> list[HistoryEntry]:
        """Rows submitted (or created) at or after ``when``, newest first."""
        rows = self._conn.execute(
            "SELECT * FROM submissions WHERE COALESCE(submitted_at, created_at) >= ? ORDER BY id DESC", (when,))
        return [self._entry(row) for row in rows]

    def record_final(self, job_id: str, rec: FinalRecord, when: float | None = None) -> bool:
        """Store a job's record; False when no unresolved row has this job id (resolved meanwhile)."""
        with self._tx() as c:
            cur = c.execute(
                "UPDATE submissions SET final_state=?, exit_code=?, reason=?, start_time=?, end_time=?,"
                " elapsed_s=?, node_list=?, verdict=?, record_source=?, resolved_at=?"
                " WHERE job_id=? AND final_state IS NULL",
                (rec.state, rec.exit_code, rec.reason, rec.start_time, rec.end_time, rec.elapsed_s, rec.node_list,
                 rec.verdict, rec.source, time.time() if when is None else when, job_id),
            )
            return cur.rowcount > 0

    def record_gpu_summary(self, job_id: str, summary: GpuSummary | None) -> bool:
        """Store (or with None clear) the GPU usage summary of ``job_id``'s newest row; False when no row has it."""
        values = (None,) * len(USAGE_COLUMNS) if summary is None else (
            summary.util_mean, summary.idle_fraction, summary.mem_peak_fraction, summary.gpus, summary.energy_wh,
            summary.findings, summary.first_finding)
        with self._tx() as c:
            cur = c.execute(
                "UPDATE submissions SET gpu_util_mean=?, gpu_idle_fraction=?, gpu_mem_peak_fraction=?, gpu_count=?,"
                " gpu_energy_wh=?, gpu_findings=?, gpu_finding=?"
                " WHERE id=(SELECT MAX(id) FROM submissions WHERE job_id=?)",
                (*values, job_id),
            )
            return cur.rowcount > 0

    def known_job_ids(self) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT job_id FROM submissions WHERE job_id IS NOT NULL")}

    @staticmethod
    def _entry(row: sqlite3.Row) -> HistoryEntry:
        submitted_at, elapsed, resolved_at = row["submitted_at"], row["elapsed_s"], row["resolved_at"]
        return HistoryEntry(
            token=str(row["token"]), job_id=_opt(row["job_id"]), cluster=_opt(row["cluster"]),
            preset=str(row["preset"]), preset_path=_opt(row["preset_path"]),
            overrides=tuple(json.loads(str(row["overrides"]))), job_name=str(row["job_name"]),
            launcher=str(row["launcher"]), nodes=int(row["nodes"]), world_size=int(row["world_size"]),
            log_dir=str(row["log_dir"]), log_stem=str(row["log_stem"]), script=str(row["script"]),
            script_path=_opt(row["script_path"]), created_at=float(row["created_at"]),
            submitted_at=float(submitted_at) if submitted_at else None, status=str(row["status"]),
            final_state=_opt(row["final_state"]), exit_code=_opt(row["exit_code"]), reason=_opt(row["reason"]),
            start_time=_opt(row["start_time"]), end_time=_opt(row["end_time"]),
            elapsed_s=int(elapsed) if elapsed is not None else None, node_list=_opt(row["node_list"]),
            verdict=_opt(row["verdict"]), record_source=_opt(row["record_source"]),
            resolved_at=float(resolved_at) if resolved_at is not None else None,
            resubmit_of=_opt(row["resubmit_of"]), gpu=_gpu_summary(row),
        )


def _float(value: object) -> float | None:
    return None if value is None else float(str(value))


def _gpu_summary(row: sqlite3.Row) -> GpuSummary | None:
    if row["gpu_count"] is None:
        return None
    return GpuSummary(_float(row["gpu_util_mean"]), _float(row["gpu_idle_fraction"]),
                      _float(row["gpu_mem_peak_fraction"]), int(row["gpu_count"]), _float(row["gpu_energy_wh"]),
                      int(row["gpu_findings"] or 0), str(row["gpu_finding"] or ""))


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
