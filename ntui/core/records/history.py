"""The submission history and the job records: files in the state directory, safe on a home many hosts share.

What ntui submitted and what became of each job, kept as one small file per fact under
``<state dir>/records/`` (``$NTUI_STATE_DIR``, else ``$XDG_STATE_HOME/ntui``): written once each, by one writer, as a
temp file renamed into place, so several login nodes (and any number of processes) can write at once without a
lock, and a reader always sees whole files (:mod:`ntui.core.records.recordfiles` says how). This host's index
(:mod:`ntui.core.records.index`, SQLite, never WAL on a network filesystem) makes listing cheap and is rebuilt from
the files whenever it is missing or damaged.

A submission's life: an *intent* before ``sbatch`` runs (so a crash between the two leaves a trace that
``reconcile`` matches against the queue), then *submitted* with the job id (or *failed*); *recovered* when reconcile
found the job; after the job ended its *record* (:class:`FinalRecord`: state, exit code, reason, start/end/elapsed,
nodes, the triage verdict, where it came from: ``job`` (its own journal), ``sacct``, ``scontrol`` or ``inferred``
from the batch log, and which Slurm source confirmed a journal's record) and its GPU usage summary
(:class:`GpuSummary`). :class:`History` merges them into one :class:`HistoryEntry` per submission.

The SQLite history of older versions (``history.sqlite3``, schema 1-3) is migrated on open, once, every row kept
(:mod:`ntui.core.records.legacy`). A file that cannot be read (cut short, garbage, wrong types; the old database
too) is moved to ``damaged/`` with one warning naming it: never a traceback, never a refused submission.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from ntui.core.fstype import is_network_fs
from ntui.core.paths import atomic_write, state_dir
from ntui.core.records.index import INDEX_DIR, EntryRow, RecordIndex
from ntui.core.records.legacy import LEGACY_NAME, MIGRATED_SUFFIX, LegacyDamaged, read_legacy_rows
from ntui.core.records.recordfiles import (
    DAMAGED_DIR,
    RECORDS_DIR,
    Damaged,
    FactName,
    best_final,
    host_name,
    list_names,
    parse_name,
    read_fact,
    record_key,
    set_aside,
    write_fact,
)

_T = TypeVar("_T")

__all__ = [
    "FinalRecord",
    "GpuSummary",
    "History",
    "HistoryEntry",
    "default_history_path",
    "entry_from_facts",
    "pick_entry",
]


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
    record_source: str | None = None  # job | sacct | scontrol | inferred
    resolved_at: float | None = None
    resubmit_of: str | None = None
    gpu: GpuSummary | None = None  # None: no samples (or not summarised yet)
    confirmed_by: str | None = None  # a record from the job's journal that Slurm (sacct | scontrol) confirmed

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
    source: str  # job | sacct | scontrol | inferred
    confirmed_by: str | None = None  # source "job": the Slurm source that agreed (and added reason, times)


def default_history_path() -> Path:
    """Where ntui kept its history before the record files (migrated from there on open)."""
    return state_dir() / LEGACY_NAME


def _stderr_warning(text: str) -> None:
    print(f"ntui: warning: {text}", file=sys.stderr)


# ---------------------------------------------------------------- facts -> one entry

_FINAL_FIELDS = ("state", "exit_code", "reason", "start_time", "end_time", "elapsed_s", "node_list", "verdict",
                 "source", "resolved_at", "confirmed_by")
_GPU_FIELDS = tuple(f.name for f in fields(GpuSummary))


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _gpu_from(doc: dict[str, Any]) -> GpuSummary | None:
    if doc.get("clear") or not isinstance(doc.get("gpus"), int):
        return None
    return GpuSummary(_opt_float(doc.get("util_mean")), _opt_float(doc.get("idle_fraction")),
                      _opt_float(doc.get("mem_peak_fraction")), int(doc["gpus"]), _opt_float(doc.get("energy_wh")),
                      _opt_int(doc.get("findings")) or 0, str(doc.get("first_finding") or ""))


def _v3_final(v3: dict[str, Any]) -> dict[str, Any] | None:
    if not v3.get("final_state"):
        return None
    return {"state": v3["final_state"], "exit_code": v3.get("exit_code"), "reason": v3.get("reason"),
            "start_time": v3.get("start_time"), "end_time": v3.get("end_time"), "elapsed_s": v3.get("elapsed_s"),
            "node_list": v3.get("node_list"), "verdict": v3.get("verdict"),
            "source": v3.get("record_source") or "sacct", "resolved_at": v3.get("resolved_at") or 0.0,
            "_name": v3.get("_name", "")}


def _v3_gpu(v3: dict[str, Any]) -> dict[str, Any] | None:
    if v3.get("gpu_count") is None:
        return None
    return {"gpus": v3["gpu_count"], "util_mean": v3.get("gpu_util_mean"), "idle_fraction": v3.get("gpu_idle_fraction"),
            "mem_peak_fraction": v3.get("gpu_mem_peak_fraction"), "energy_wh": v3.get("gpu_energy_wh"),
            "findings": v3.get("gpu_findings"), "first_finding": v3.get("gpu_finding"), "at": 0.0}


def pick_entry(found: Sequence[HistoryEntry], cluster: str | None, *, strict: bool = False) -> HistoryEntry | None:
    """Of the entries with one job id (newest first): ``cluster``'s, else one of an unknown cluster, else (unless
    ``strict``) the newest of another cluster."""
    if cluster is not None:
        for e in found:
            if e.cluster is not None and e.cluster.lower() == cluster.lower():
                return e
    for e in found:
        if e.cluster is None:
            return e
    return None if strict or not found else found[0]


def entry_from_facts(facts: Sequence[dict[str, Any]]) -> HistoryEntry | None:
    """One submission's facts (any order) as its entry; None without one that names the submission (intent, v3,
    submitted, recovered, failed). The same facts always give the same entry, on every host."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for fact in sorted(facts, key=lambda f: str(f.get("_name", ""))):
        by_kind.setdefault(str(fact.get("kind")), []).append(fact)
    if not by_kind.keys() & {"v3", "intent", "submitted", "recovered", "failed"}:
        # Only a final or GPU fact: the facts that name the submission are not here yet (a shared home shows
        # another host's files in any order). The entry appears with them; the file stays where it is.
        return None
    v3: dict[str, Any] | None = by_kind["v3"][0] if by_kind.get("v3") else None
    intent: dict[str, Any] | None = by_kind["intent"][0] if by_kind.get("intent") else None
    submitted = sorted(by_kind.get("submitted", []), key=lambda f: (f["submitted_at"], f.get("_name", "")))
    recovered = sorted(by_kind.get("recovered", []), key=lambda f: (f["at"], f.get("_name", "")))
    base = v3 or intent or (recovered[0] if recovered else None) or {}
    first = next(iter(facts))
    token = str(base.get("token") or first.get("token") or "")
    job_id: str | None = None
    cluster = script_path = None
    submitted_at: float | None = None
    status = str(v3["status"]) if v3 else "intent"
    if v3 and v3.get("job_id"):
        job_id, cluster = str(v3["job_id"]), _opt_str(v3.get("cluster"))
        script_path, submitted_at = _opt_str(v3.get("script_path")), _opt_float(v3.get("submitted_at"))
    if job_id is None and submitted:
        sub = submitted[0]
        job_id, cluster = str(sub["job_id"]), _opt_str(sub.get("cluster"))
        script_path = _opt_str(sub.get("script_path"))
        submitted_at, status = float(sub["submitted_at"]), "submitted"
    if job_id is None and recovered:
        rec = recovered[0]
        job_id, script_path, submitted_at = str(rec["job_id"]), _opt_str(rec.get("script_path")), float(rec["at"])
        status = "recovered"
    if job_id is None and by_kind.get("failed"):
        status = "failed"
    created = _opt_float(base.get("created_at"))
    if created is None:
        created = min((float(f.get("at") or f.get("submitted_at") or f.get("resolved_at") or 0.0) for f in facts),
                      default=0.0)
    finals = list(by_kind.get("final", []))
    if job_id is not None:
        finals = [f for f in finals if f.get("job_id") == job_id]
    if v3 and (legacy_final := _v3_final(v3)) is not None:
        finals.append(legacy_final)
    final = best_final(finals)
    gpu_facts = [g for g in by_kind.get("gpu", []) if job_id is None or g.get("job_id") == job_id]
    gpu_doc = max(gpu_facts, key=lambda g: (float(g.get("at") or 0.0), str(g.get("_name", "")))) if gpu_facts else None
    if gpu_doc is None and v3:
        gpu_doc = _v3_gpu(v3)
    overrides = base.get("overrides")
    f = final or {}
    return HistoryEntry(
        token=token, job_id=job_id, cluster=cluster, preset=str(base.get("preset") or "?"),
        preset_path=_opt_str(base.get("preset_path")),
        overrides=tuple(str(o) for o in overrides) if isinstance(overrides, list) else (),
        job_name=str(base.get("job_name") or ""), launcher=str(base.get("launcher") or "?"),
        nodes=_opt_int(base.get("nodes")) or 0, world_size=_opt_int(base.get("world_size")) or 0,
        log_dir=str(base.get("log_dir") or ""), log_stem=str(base.get("log_stem") or ""),
        script=str(base.get("script") or ""), script_path=script_path, created_at=created,
        submitted_at=submitted_at, status=status,
        final_state=_opt_str(f.get("state")), exit_code=_opt_str(f.get("exit_code")), reason=_opt_str(f.get("reason")),
        start_time=_opt_str(f.get("start_time")), end_time=_opt_str(f.get("end_time")),
        elapsed_s=_opt_int(f.get("elapsed_s")), node_list=_opt_str(f.get("node_list")),
        verdict=_opt_str(f.get("verdict")), record_source=_opt_str(f.get("source")),
        resolved_at=_opt_float(f.get("resolved_at")), resubmit_of=_opt_str(base.get("resubmit_of")),
        gpu=_gpu_from(gpu_doc) if gpu_doc is not None else None, confirmed_by=_opt_str(f.get("confirmed_by")),
    )


def _entry_doc(entry: HistoryEntry) -> dict[str, Any]:
    doc = asdict(entry)
    doc["overrides"] = list(entry.overrides)
    return doc


def _entry_from_doc(doc: dict[str, Any]) -> HistoryEntry:
    gpu = doc.get("gpu")
    values = dict(doc)
    values["overrides"] = tuple(doc.get("overrides") or ())
    values["gpu"] = GpuSummary(**gpu) if isinstance(gpu, dict) else None
    known = {f.name for f in fields(HistoryEntry)}
    return HistoryEntry(**{k: v for k, v in values.items() if k in known})


def _merge(key: str, facts: list[dict[str, Any]]) -> EntryRow | None:
    entry = entry_from_facts(facts)
    if entry is None:
        return None
    return EntryRow(key, entry.created_at, entry.submitted_at or entry.created_at, entry.job_id, entry.status,
                    entry.resolved, _entry_doc(entry))


# ---------------------------------------------------------------- the store


class History:
    """The history in ``path``: a state directory, or (as before the record files) the ``history.sqlite3`` in it,
    which is then migrated from. Default: :func:`ntui.core.paths.state_dir`.

    ``warn`` gets each warning (a file set aside, an index rebuilt); default: ``ntui: warning: ...`` on stderr.
    They are also kept in :attr:`warnings`."""

    #: A read skips listing the records again within this many seconds of the last listing (its own writes are
    #: in the index already).
    SYNC_EVERY_S = 0.5

    def __init__(self, path: Path | None = None, *, warn: Callable[[str], None] | None = None,
                 cluster: str | Callable[[], str | None] | None = None) -> None:
        if path is None:
            root, legacy = state_dir(), state_dir() / LEGACY_NAME
        elif path.suffix in (".sqlite3", ".sqlite", ".db"):
            root, legacy = path.parent, path
        else:
            root, legacy = path, path / LEGACY_NAME
        self.root = root
        self.path = root
        self.records = root / RECORDS_DIR
        self.damaged_dir = root / DAMAGED_DIR
        self.legacy_path = legacy
        self.warnings: list[str] = []
        self._warn_to = warn or _stderr_warning
        #: the cluster this process talks to (Slurm's ClusterName), or a function that finds it (asked only when
        #: a job id is recorded on more than one cluster): :meth:`get` prefers that cluster's job
        self._cluster = cluster
        if not root.is_dir():
            root.parent.mkdir(parents=True, exist_ok=True)
            root.mkdir(exist_ok=True, mode=0o700)
        self.records.mkdir(exist_ok=True, mode=0o700)
        self.network = is_network_fs(root)
        self.index_path = root / INDEX_DIR / f"{host_name()}.sqlite3"
        self.index = self._open_index()
        self._synced_at = float("-inf")
        self.listings = 0
        self._migrate_legacy()
        self.sync(force=True)

    # ------------------------------------------------------------ housekeeping

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        self._warn_to(text)

    def _open_index(self) -> RecordIndex:
        for attempt in range(2):
            try:
                return RecordIndex(self.index_path, network=self.network)
            except (sqlite3.Error, OSError) as exc:
                if attempt == 0 and isinstance(exc, sqlite3.DatabaseError) and self.index_path.exists():
                    self._set_index_aside(str(exc))
                    continue
                self._warn(f"the record index {self.index_path} cannot be used ({exc}); listing from the files")
                break
        return RecordIndex(None, network=self.network)

    def _set_index_aside(self, why: str) -> None:
        target = set_aside(self.index_path, self.damaged_dir)
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.index_path.with_name(self.index_path.name + suffix)
            if side.exists():
                set_aside(side, self.damaged_dir)
        self._warn(f"the record index {self.index_path} was damaged ({why}); moved to {target}, rebuilt from "
                   f"{self.records}")

    def rebuild_index(self) -> None:
        """Forget the index and build it again from the record files."""
        self.index.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.index_path.with_name(self.index_path.name + suffix))
        self.index = self._open_index()
        self.sync(force=True)

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sync(self, *, force: bool = False) -> None:
        """Bring the index in step with the record files: one directory listing, the new names read."""
        now = time.monotonic()
        if not force and now - self._synced_at < self.SYNC_EVERY_S:
            return
        self._synced_at = now
        try:
            self._sync_once()
        except sqlite3.DatabaseError as exc:  # the index broke under us: it is only an index
            self._recover_index(exc)

    def _recover_index(self, exc: sqlite3.DatabaseError) -> None:
        """The index was found damaged (at open, a listing or any query): set it aside, build it again."""
        self.index.close()
        self._set_index_aside(str(exc))
        self.index = self._open_index()
        self._sync_once()

    def _query(self, ask: Callable[[RecordIndex], _T]) -> _T:
        """``ask(index)`` after a sync; damage found by the query itself (SQLite checks pages as it reads them, so
        a file damaged in its middle passes the open) sets the index aside, rebuilds it and asks again."""
        self.sync()
        try:
            return ask(self.index)
        except sqlite3.DatabaseError as exc:
            self._recover_index(exc)
            return ask(self.index)

    def _sync_once(self) -> None:
        self.listings += 1
        names = set(list_names(self.records))
        known = self.index.known_names()
        added: list[tuple[str, FactName, dict[str, Any]]] = []
        for name in sorted(names - known):
            parsed = parse_name(name)
            if parsed is None:
                continue
            doc = self._read(name, parsed)
            if doc is not None:
                added.append((name, parsed, doc))
        self.index.update(added, [n for n in known if n not in names], _merge)

    def _read(self, name: str, parsed: FactName) -> dict[str, Any] | None:
        path = self.records / name
        try:
            return read_fact(path, parsed.kind)
        except Damaged as exc:
            target = set_aside(path, self.damaged_dir)
            if target is not None:
                self._warn(f"record file {path} is damaged ({exc}); moved to {target}")
            return None
        except OSError:  # set aside by another process meanwhile, or unreadable: not listed now
            return None

    def _write(self, token: str, kind: str, fields_: dict[str, Any], writer: str | None = None) -> str:
        key = record_key(token)
        name = write_fact(self.records, key, kind, token, fields_, writer=writer)
        parsed = parse_name(name)
        if parsed is not None:
            fact = read_fact(self.records / name, kind)
            try:
                self.index.update([(name, parsed, fact)], (), _merge)
            except sqlite3.DatabaseError as exc:  # the file is written; the rebuilt index lists it
                self._recover_index(exc)
        return name

    def _migrate_legacy(self) -> None:
        legacy = self.legacy_path
        marker = legacy.with_name(legacy.name + MIGRATED_SUFFIX)
        if not legacy.is_file() or marker.exists():
            return
        try:
            rows = read_legacy_rows(legacy)
        except LegacyDamaged as exc:
            target = set_aside(legacy, self.damaged_dir)
            for suffix in ("-wal", "-shm"):
                side = legacy.with_name(legacy.name + suffix)
                if side.exists():
                    set_aside(side, self.damaged_dir)
            if target is not None:
                self._warn(f"the old history {legacy} cannot be read ({exc}); moved to {target}, its entries are "
                           "not in the history")
            return
        existing = set(list_names(self.records))
        for row in rows:
            token = str(row["token"])
            key = record_key(token)
            if f"{key}.v3.migrated.json" in existing:
                continue
            values = {k: v for k, v in row.items() if k != "token"}
            values["status"] = str(values.get("status") or "intent")
            try:
                write_fact(self.records, key, "v3", token, values, writer="migrated")
            except (OSError, ValueError, TypeError) as exc:
                self._warn(f"migrating {legacy}: entry {token}: {exc}")
        atomic_write(marker, f"{len(rows)} entries migrated to {self.records} at {time.ctime()}\n")

    # ------------------------------------------------------------ writing

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
        created_at: float | None = None,
    ) -> None:
        self._write(token, "intent", {
            "preset": preset, "preset_path": preset_path, "overrides": list(overrides), "job_name": job_name,
            "launcher": launcher, "nodes": nodes, "world_size": world_size, "log_dir": log_dir,
            "log_stem": log_stem, "script": script, "resubmit_of": resubmit_of,
            "created_at": time.time() if created_at is None else created_at})

    def record_submitted(self, token: str, job_id: str, cluster: str | None, script_path: str | None,
                         when: float | None = None) -> None:
        self._write(token, "submitted", {"job_id": job_id, "cluster": cluster, "script_path": script_path,
                                         "submitted_at": time.time() if when is None else when})

    def record_failed(self, token: str) -> None:
        self._write(token, "failed", {"at": time.time()})

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
        at = when or time.time()
        self._write(token or f"recovered-{job_id}", "recovered", {
            "job_id": job_id, "job_name": job_name, "log_dir": log_dir, "log_stem": log_stem,
            "script_path": script_path, "at": at, "created_at": at, "origin": "no-row"})

    def record_recovered_intent(self, token: str, job_id: str, script_path: str | None = None) -> bool:
        """Complete an intent (or failed) entry that never got its job id; False when it already has one."""
        self.sync()
        docs = [d for d in self.index.without_job(("intent", "failed")) if d.get("token") == token]
        if not docs:
            return False
        self._write(token, "recovered", {"job_id": job_id, "script_path": script_path, "at": time.time(),
                                         "origin": str(docs[0].get("status"))})
        return True

    def record_final(self, job_id: str, rec: FinalRecord, when: float | None = None) -> bool:
        """Store a job's record; False when no unresolved entry has this job id (resolved meanwhile)."""
        same = [e for e in reversed(self.unresolved()) if e.job_id == job_id]  # newest first
        current = self.cluster if same else None
        # another cluster's job with this id is never given this cluster's record
        entry = pick_entry(same, current, strict=current is not None)
        if entry is None:
            return False
        self._write_final(entry.token, job_id, rec, when)
        return True

    def record_confirmation(self, job_id: str, rec: FinalRecord, when: float | None = None) -> bool:
        """A record from the job's journal that Slurm has confirmed since (``rec.confirmed_by``): stored beside
        the first one, which it supersedes (:func:`~ntui.core.records.recordfiles.best_final`)."""
        entry = self.get(job_id)
        if entry is None or entry.job_id != job_id:
            return False
        self._write_final(entry.token, job_id, rec, when)
        return True

    def _write_final(self, token: str, job_id: str, rec: FinalRecord, when: float | None) -> None:
        values: dict[str, Any] = {name: getattr(rec, name) for name in _FINAL_FIELDS if name != "resolved_at"}
        values["job_id"] = job_id
        values["resolved_at"] = time.time() if when is None else when
        self._write(token, "final", values)

    def record_gpu_summary(self, job_id: str, summary: GpuSummary | None) -> bool:
        """Store (or with None clear) the GPU usage summary of ``job_id``'s newest entry; False when none has it."""
        entry = self.get(job_id)
        if entry is None or entry.job_id is None:
            return False
        values: dict[str, Any] = {"job_id": entry.job_id, "at": time.time()}
        if summary is None:
            values["clear"] = True
        else:
            values.update({name: getattr(summary, name) for name in _GPU_FIELDS})
        self._write(entry.token, "gpu", values)
        return True

    # ------------------------------------------------------------ reading

    def _entries(self, docs: list[dict[str, Any]]) -> list[HistoryEntry]:
        return [_entry_from_doc(d) for d in docs]

    def intents(self, *, include_failed: bool = False) -> list[HistoryEntry]:
        """Entries without a job id: status 'intent' (ntui stopped between writing the intent and recording the
        job id), and with ``include_failed`` also 'failed' (sbatch errored or timed out)."""
        statuses = ("intent", "failed") if include_failed else ("intent",)
        return self._entries(self._query(lambda index: index.without_job(statuses)))

    def has_token(self, token: str) -> bool:
        return self._query(lambda index: index.has_key(record_key(token)))

    def entries(self, limit: int | None = None) -> list[HistoryEntry]:
        """Newest first."""
        return self._entries(self._query(lambda index: index.all(limit)))

    @property
    def cluster(self) -> str | None:
        """The cluster this process talks to, when known (found once, on first need)."""
        if callable(self._cluster):
            try:
                self._cluster = self._cluster()
            except Exception:  # a lookup that fails leaves the cluster unknown; records still list
                self._cluster = None
        return self._cluster

    def matches(self, job_id: str) -> list[HistoryEntry]:
        """Every entry recorded with this job id (an array task's: its array's), on any cluster, newest first."""
        return self._entries(self._query(lambda index: index.by_job(job_id)))

    def get(self, job_id: str, cluster: str | None = None) -> HistoryEntry | None:
        """The entry of job ``job_id``: of ``cluster`` (default: :attr:`cluster`) where several clusters have a
        job with this id, else of an unknown cluster (records older than the cluster field), else the newest.
        ``cluster`` given and no entry of it or of an unknown cluster: None."""
        found = self.matches(job_id)
        if not found:
            return None
        clusters = {e.cluster for e in found}
        if cluster is None and len(clusters) == 1:
            return found[0]  # one cluster (or none) recorded: no need to know which is ours
        want = cluster or self.cluster
        return pick_entry(found, want, strict=cluster is not None)

    def others(self, entry: HistoryEntry) -> list[str]:
        """The other clusters that have a job with ``entry``'s id in the history (for a note beside it)."""
        if entry.job_id is None:
            return []
        return sorted({e.cluster or "?" for e in self.matches(entry.job_id) if e.token != entry.token
                       and e.cluster != entry.cluster})

    def unresolved(self) -> list[HistoryEntry]:
        """Submitted jobs (with a job id) whose final state is not recorded yet, oldest first."""
        return self._entries(self._query(lambda index: index.unresolved()))

    def since(self, when: float) -> list[HistoryEntry]:
        """Entries submitted (or created) at or after ``when``, newest first."""
        return self._entries(self._query(lambda index: index.since(when)))

    def known_job_ids(self) -> set[str]:
        return self._query(lambda index: index.job_ids())

    def unconfirmed(self, since: float) -> list[HistoryEntry]:
        """Records from a job's journal that Slurm has not confirmed yet, resolved at or after ``since``."""
        return [e for e in self.since(since - 86400.0)
                if e.record_source == "job" and not e.confirmed_by and (e.resolved_at or 0.0) >= since]
