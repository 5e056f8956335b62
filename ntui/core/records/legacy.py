"""The SQLite history of ntui before the record files (``history.sqlite3``, schema 1 to 3), read once to migrate it.

The file is opened read-only and never written: every row becomes one ``v3`` fact file
(:mod:`ntui.core.records.recordfiles`) named after its token with a fixed writer, so migrating again (killed
half-way, or on another login node at the same time) writes the same names and adds nothing twice. A file
SQLite cannot read raises :class:`LegacyDamaged` (the caller sets it aside with a warning).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["LEGACY_NAME", "MIGRATED_SUFFIX", "LegacyDamaged", "read_legacy_rows"]

LEGACY_NAME = "history.sqlite3"
#: ``history.sqlite3.migrated``: written once every row is a file (its presence skips the migration).
MIGRATED_SUFFIX = ".migrated"

#: The columns of schema 3 (older files lack the record and usage ones: read as NULL).
_COLUMNS = (
    "token", "job_id", "cluster", "preset", "preset_path", "overrides", "job_name", "launcher", "nodes",
    "world_size", "log_dir", "log_stem", "script", "script_path", "created_at", "submitted_at", "status",
    "final_state", "exit_code", "reason", "start_time", "end_time", "elapsed_s", "node_list", "verdict",
    "record_source", "resolved_at", "resubmit_of", "gpu_util_mean", "gpu_idle_fraction", "gpu_mem_peak_fraction",
    "gpu_count", "gpu_energy_wh", "gpu_findings", "gpu_finding",
)


class LegacyDamaged(Exception):
    """The old history file cannot be read."""


def read_legacy_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of the old history, oldest first, as plain values (``overrides`` decoded)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as exc:
        raise LegacyDamaged(str(exc)) from None
    try:
        have = {str(r[1]) for r in conn.execute("PRAGMA table_info(submissions)")}
        if not have:
            raise LegacyDamaged("no submissions table")
        cols = [c for c in _COLUMNS if c in have]
        order = "id" if "id" in have else "rowid"
        # column names from _COLUMNS only
        rows = conn.execute(f"SELECT {', '.join(cols)} FROM submissions ORDER BY {order}").fetchall()  # noqa: S608
    except sqlite3.Error as exc:
        raise LegacyDamaged(str(exc)) from None
    finally:
        conn.close()
    out: list[dict[str, Any]] = []
    for values in rows:
        row: dict[str, Any] = dict.fromkeys(_COLUMNS)
        row.update(zip(cols, values, strict=True))
        try:
            overrides = json.loads(str(row["overrides"] or "[]"))
        except ValueError:
            overrides = []
        row["overrides"] = [str(o) for o in overrides] if isinstance(overrides, list) else []
        out.append(row)
    return out
