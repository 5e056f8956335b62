"""The job records as files: one small JSON file per fact, written once, safe on a home shared by many hosts.

Layout (docs/architecture.md, "The job records"), under the state directory (``$NTUI_STATE_DIR``, else
``$XDG_STATE_HOME/ntui``)::

    records/<key>.<kind>.<writer>.json    one fact, never rewritten
    index/<host>.sqlite3                  this host's index of them (ntui.core.records.index), rebuildable
    damaged/<name>.damaged-<time>         files that could not be read, set aside

``key`` is the submission's token (a uuid4 hex; other tokens are reduced to a safe name, the token itself is in the
file). ``kind`` is what happened: ``intent`` (before sbatch), ``submitted`` (the job id), ``failed`` (sbatch
refused or timed out), ``recovered`` (reconcile found the job), ``final`` (its record after it ended), ``gpu``
(its GPU usage summary), ``v3`` (a row migrated from the SQLite history of schema 3). ``writer`` is
``<host>-<pid>-<time in ns, hex>``: unique to one process on one host at one moment.

Why this holds with several login nodes (and the jobs) at once, with no lock: every file has exactly one writer (a
name no other process can produce), which writes it as a temp file in the same directory, fsyncs it and renames it
into place (a rename within a directory is atomic on NFS, GPFS, Lustre and local disks), so a reader sees a whole
file or none, and nothing is ever appended to or rewritten by two writers. Two hosts resolving the same job write two
``final`` files; the reader keeps one by a fixed rule (:func:`best_final`), so nothing is lost and nothing
listed twice. A file that does not parse, or has the wrong types, is moved to ``damaged/`` with a warning that
names it; the rest stays readable.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DAMAGED_DIR",
    "HOST_ENV",
    "KINDS",
    "RECORDS_DIR",
    "Damaged",
    "FactName",
    "best_final",
    "host_name",
    "parse_name",
    "read_fact",
    "record_key",
    "set_aside",
    "write_fact",
    "writer_id",
]

RECORDS_DIR = "records"
DAMAGED_DIR = "damaged"
VERSION = 1
#: Overrides this host's name in writer ids and the index's file name (tests run several "hosts" on one machine).
HOST_ENV = "NTUI_HOSTNAME"
KINDS = frozenset({"intent", "submitted", "failed", "recovered", "final", "gpu", "v3"})
_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_NAME = re.compile(r"^(?P<key>[A-Za-z0-9_-]{1,64})\.(?P<kind>[a-z0-9]+)\.(?P<writer>[A-Za-z0-9_.-]{1,200})\.json$")
#: Temp files older than this are a killed writer's: removed when the directory is listed.
STALE_TEMP_S = 3600.0

# Fields each kind must have, with their JSON types (a file without them is damaged).
_STR, _NUM, _INT, _LIST, _OPT_STR = "str", "num", "int", "list", "opt-str"
_REQUIRED: dict[str, dict[str, str]] = {
    "intent": {"preset": _STR, "overrides": _LIST, "job_name": _STR, "launcher": _STR, "nodes": _INT,
               "world_size": _INT, "log_dir": _STR, "log_stem": _STR, "script": _STR, "created_at": _NUM},
    "submitted": {"job_id": _STR, "submitted_at": _NUM},
    "failed": {"at": _NUM},
    "recovered": {"job_id": _STR, "at": _NUM},
    "final": {"job_id": _STR, "state": _STR, "source": _STR, "resolved_at": _NUM},
    "gpu": {"job_id": _STR, "at": _NUM},
    "v3": {"preset": _STR, "overrides": _LIST, "job_name": _STR, "launcher": _STR, "nodes": _INT,
           "world_size": _INT, "log_dir": _STR, "log_stem": _STR, "script": _STR, "created_at": _NUM,
           "status": _STR},
}


def host_name() -> str:
    """This host's short name, for writer ids and the index (``$NTUI_HOSTNAME`` overrides it), file-name safe."""
    name = os.environ.get(HOST_ENV) or socket.gethostname() or "localhost"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "localhost"


def writer_id() -> str:
    """``<host>-<pid>-<ns hex>``: no other process, here or on another host, can produce it."""
    return f"{host_name()}-{os.getpid()}-{time.time_ns():x}"


def record_key(token: str) -> str:
    """The file-name key of a submission token: the token itself when it is a plain word, else a digest."""
    if _SAFE.match(token):
        return token
    return "k" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass(frozen=True)
class FactName:
    key: str
    kind: str
    writer: str


def parse_name(name: str) -> FactName | None:
    """``<key>.<kind>.<writer>.json`` -> its parts; None for any other name (temp files, strangers)."""
    m = _NAME.match(name)
    if m is None or m.group("kind") not in KINDS:
        return None
    return FactName(m.group("key"), m.group("kind"), m.group("writer"))


def _typed(value: object, kind: str) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _OPT_STR:
        return value is None or isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == _LIST:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return False


class Damaged(Exception):
    """A record file that cannot be read as one (cut short, garbage, wrong types)."""


def validate_fact(kind: str, data: object) -> dict[str, Any]:
    """``data`` as a fact of ``kind``; raises :class:`Damaged` saying what is wrong."""
    if not isinstance(data, dict):
        raise Damaged("not a JSON object")
    if data.get("v") != VERSION or data.get("kind") != kind or not isinstance(data.get("token"), str):
        raise Damaged("no version, kind or token")
    for name, want in _REQUIRED[kind].items():
        if not _typed(data.get(name), want):
            raise Damaged(f"field {name!r} missing or not a {want}")
    return data


def read_fact(path: Path, kind: str) -> dict[str, Any]:
    """One fact file; raises :class:`Damaged` for a file that is not one, OSError when it cannot be read."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Damaged(f"not JSON ({len(raw)} bytes): {exc}") from None
    return validate_fact(kind, data)


def write_fact(records: Path, key: str, kind: str, token: str, fields: Mapping[str, object],
               writer: str | None = None) -> str:
    """Write one fact as ``records/<key>.<kind>.<writer>.json`` (temp file, fsync, rename, directory fsync);
    returns the file's name. ``writer``: a fixed writer id (the v3 migration, so that running it again, here or
    on another host, produces the same names)."""
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}")
    name = f"{key}.{kind}.{writer or writer_id()}.json"
    if parse_name(name) is None:
        raise ValueError(f"not a record file name: {name!r}")
    records.mkdir(parents=True, exist_ok=True, mode=0o700)
    payload = json.dumps({"v": VERSION, "kind": kind, "token": token, "host": host_name(), **fields},
                         separators=(",", ":"), sort_keys=True).encode()
    tmp = records / f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, records / name)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(records, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return name


def list_names(records: Path, now: float | None = None) -> list[str]:
    """The names in ``records`` (one directory listing); temp files of writers dead for an hour are removed."""
    try:
        names = os.listdir(records)
    except FileNotFoundError:
        return []
    stale = [n for n in names if n.startswith(".") and n.endswith(".tmp")]
    if stale:
        when = time.time() if now is None else now
        for n in stale:
            with contextlib.suppress(OSError):
                if when - os.stat(records / n).st_mtime > STALE_TEMP_S:
                    os.unlink(records / n)
    return names


def set_aside(path: Path, damaged_dir: Path, now: float | None = None) -> Path | None:
    """Move a damaged file to ``damaged_dir/<name>.damaged-<time>``; None when it was gone already (another
    process set it aside first)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(time.time() if now is None else now))
    damaged_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = damaged_dir / f"{path.name}.damaged-{stamp}"
    n = 1
    while target.exists():
        n += 1
        target = damaged_dir / f"{path.name}.damaged-{stamp}-{n}"
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    return target


#: How much a final record is worth when several exist for one job (two hosts resolved it, or one was confirmed by
#: Slurm later): Slurm's accounting, then the controller, then the job's journal, then the batch log.
_SOURCE_RANK = {"sacct": 4, "scontrol": 3, "job": 2, "inferred": 1}


def best_final(finals: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The final record to show: one Slurm confirmed (or gave) over one it did not, a better source
    (:data:`_SOURCE_RANK`), then the later resolution, then the file name (a fixed order: every host picks the same
    one)."""
    if not finals:
        return None

    def rank(f: dict[str, Any]) -> tuple[int, int, float, str]:
        slurm_said = 1 if f.get("confirmed_by") or f.get("source") in ("sacct", "scontrol") else 0
        return (slurm_said, _SOURCE_RANK.get(str(f.get("source")), 0), float(f.get("resolved_at") or 0.0),
                str(f.get("_name", "")))

    return max(finals, key=rank)
