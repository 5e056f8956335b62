"""A job's logs and records on the cluster, read through :class:`~ntui.core.remote.files.ClusterFiles`.

* :class:`RemoteTail`: a log's last lines, then its new lines, by byte offsets: each read names where the last one
  ended, so a follow that lost its channel resumes there (no line lost or printed twice); a file cut or replaced
  (another inode) is read again from its start and said.
* :class:`Mirror`: local copies of a few of the cluster's files, appended to as they grow, for the readers that
  work on files (triage's watcher, progress): they read the copies as they would the originals.
* :func:`entry_from_dict`: the cluster's history entry of a job (the agent's ``job`` answer) as a
  :class:`~ntui.core.records.history.HistoryEntry`; :func:`remote_entry`: that entry asked of the cluster's files.
* :func:`copy_log_dir`: a history entry whose log directory is a local copy of some of its files on the cluster (the
  readers that work on a job's directory: ``ntui --cluster NAME report`` and the app's Report tab over ssh).
* :func:`read_remote_progress`: a rank log's progress read on a local copy of its tail (the app's Progress tab of a
  job on a cluster reached over ssh; the same reader and the same tail as on the login node).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ntui.core.jobfiles.samplefiles import GPU_PART
from ntui.core.progress.lines import Pattern
from ntui.core.progress.read import TAIL_BYTES, read_progress
from ntui.core.progress.series import Series
from ntui.core.records.history import GpuSummary, HistoryEntry
from ntui.core.remote.files import ClusterFiles, FileRefused
from ntui.core.remote.protocol import MAX_CHUNK, Chunk
from ntui.core.slurm.runner import SlurmError

__all__ = ["MIRROR_MAX", "Mirror", "RemoteTail", "TailLines", "copy_log_dir", "entry_from_dict",
           "read_remote_progress", "remote_entry"]

#: The most bytes of one file a mirror keeps: a longer file's copy starts this far from its end.
MIRROR_MAX = 64 * 1024 * 1024


@dataclass(frozen=True)
class TailLines:
    """What one poll of a :class:`RemoteTail` found: whole new ``lines``; ``reset``: the file was ``truncated`` or
    ``replaced`` (read again from its start); ``exists``: the file is there."""

    lines: list[str]
    exists: bool
    reset: str | None = None


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")


class RemoteTail:
    """The tail of one file of the cluster (see the module's docstring). ``offset``: where the next read starts;
    ``partial``: an unterminated last line, held until its newline comes."""

    def __init__(self, files: ClusterFiles, path: str, *, lines: int = 100, start_bytes: int = 4 * MAX_CHUNK) -> None:
        self.files = files
        self.path = path
        self.lines = max(1, lines)
        self.start_bytes = start_bytes
        self.offset = 0
        self.inode = 0
        self.started = False
        self._partial = b""

    @property
    def partial(self) -> str:
        return _decode(self._partial) if self._partial else ""

    def _take(self, chunk: Chunk) -> list[str]:
        data = self._partial + chunk.data
        self.offset = chunk.end
        self.inode = chunk.inode or self.inode
        *whole, self._partial = data.split(b"\n")
        return [_decode(line) for line in whole]

    def start(self) -> TailLines:
        """The last :attr:`lines` lines (read from at most ``start_bytes`` before the end)."""
        st = self.files.stat(self.path)
        if not st.exists:
            return TailLines([], exists=False)
        self.started = True
        begin = max(0, st.size - self.start_bytes)
        got: list[str] = []
        first = True
        self.offset, self.inode = begin, st.inode
        while True:
            chunk = self.files.read(self.path, self.offset)
            if not chunk.exists:
                return TailLines([], exists=False)
            if chunk.inode != self.inode and not first:
                return self.start()  # replaced while read: again, from the new file's end
            first = False
            self.inode = chunk.inode
            got += self._take(chunk)
            if not chunk.data or chunk.end >= st.size:
                break
        if begin > 0 and got:
            got = got[1:]  # the first line read began before ``begin``: not whole
        return TailLines(got[-self.lines:], exists=True)

    def poll(self, wait: float = 0.0) -> TailLines:
        """The new whole lines since the last poll (waiting up to ``wait`` seconds on the cluster for some, where
        the files' way can wait). A file that appeared is read from its start."""
        if not self.started:
            st = self.files.stat(self.path)
            if not st.exists:
                return TailLines([], exists=False)
            self.started, self.offset, self.inode = True, 0, st.inode
        chunk = self.files.follow(self.path, self.offset, inode=self.inode, wait=wait)
        reset: str | None = None
        if not chunk.exists:
            return TailLines([], exists=False)
        if self.inode and chunk.inode and chunk.inode != self.inode:
            reset = "replaced"
        elif chunk.size < self.offset:
            reset = "truncated"
        if reset is not None:
            chunk = self.files.read(self.path, 0)  # raises before anything moved: the next poll sees the reset again
            self.offset, self.inode, self._partial = 0, chunk.inode, b""
        lines = self._take(chunk)
        # more than one chunk appended: read on to the end (bounded reads), so a poll returns all that is there; a
        # link that drops meanwhile ends the poll with the lines taken so far (the offset is where they end: the
        # next poll reads on from there, nothing lost, nothing twice)
        try:
            while chunk.data and chunk.end < chunk.size:
                chunk = self.files.read(self.path, self.offset)
                if not chunk.exists or (chunk.inode and chunk.inode != self.inode):
                    break
                lines += self._take(chunk)
        except SlurmError:
            if not lines and reset is None:
                raise
        return TailLines(lines, exists=True, reset=reset)


class Mirror:
    """Local copies under ``directory`` of files of the cluster (each under its own name: a job's logs keep their
    names, so the local readers find them by their patterns). :meth:`sync` appends what each file gained since the
    last; a file cut or replaced is copied again."""

    def __init__(self, files: ClusterFiles, directory: Path, *, max_bytes: int = MIRROR_MAX) -> None:
        self.files = files
        self.directory = directory
        self.max_bytes = max_bytes
        self._state: dict[str, tuple[int, int]] = {}  # remote path -> (offset, inode)
        self.bytes_copied = 0

    def local(self, remote: str) -> Path:
        return self.directory / os.path.basename(remote)

    def add(self, remotes: Iterable[str]) -> list[Path]:
        out = []
        for remote in remotes:
            self._state.setdefault(remote, (-1, 0))
            out.append(self.local(remote))
        return out

    def sync(self) -> int:
        """Copy what every file gained; returns the bytes copied (0: nothing changed)."""
        copied = 0
        for remote in list(self._state):
            copied += self._sync_one(remote)
        self.bytes_copied += copied
        return copied

    def _sync_one(self, remote: str) -> int:
        offset, inode = self._state[remote]
        local = self.local(remote)
        st = self.files.stat(remote)
        if not st.exists:
            return 0
        if offset < 0 or (inode and st.inode != inode) or st.size < offset:
            offset = max(0, st.size - self.max_bytes)
            local.write_bytes(b"")
        copied = 0
        with open(local, "ab") as out:
            while offset < st.size:
                chunk = self.files.read(remote, offset)
                if not chunk.exists or not chunk.data:
                    break
                out.write(chunk.data)
                offset = chunk.end
                copied += len(chunk.data)
        os.utime(local, (st.mtime, st.mtime))
        self._state[remote] = (offset, st.inode)
        return copied


def entry_from_dict(data: dict[str, Any]) -> HistoryEntry | None:
    """The :class:`HistoryEntry` the agent sent (its fields by name; a field this side does not know is left out,
    one it lacks is its default, or the entry is None when a required one is missing)."""
    known = {f.name: f for f in fields(HistoryEntry)}
    values = {k: v for k, v in data.items() if k in known}
    if "overrides" in values and isinstance(values["overrides"], list):
        values["overrides"] = tuple(str(v) for v in values["overrides"])
    gpu = values.get("gpu")
    if isinstance(gpu, dict):
        gpu_known = {f.name for f in fields(GpuSummary)}
        try:
            values["gpu"] = GpuSummary(**{k: v for k, v in gpu.items() if k in gpu_known})
        except TypeError:
            values["gpu"] = None
    try:
        return HistoryEntry(**values)
    except TypeError:
        return None


def remote_entry(files: ClusterFiles, job_id: str) -> HistoryEntry | None:
    """The cluster's history entry of ``job_id``, read there by its files (None: ntui did not submit it there).
    Raises what the files raise when the cluster cannot be asked (a dropped link, in words)."""
    found = files.job(job_id)
    entry = found.get("entry") if isinstance(found, dict) else None
    return entry_from_dict(entry) if isinstance(entry, dict) else None


def read_remote_progress(files: ClusterFiles, path: str, *, pattern: Pattern | None = None) -> Series:
    """The progress in the cluster's file ``path``: its last :data:`~ntui.core.progress.read.TAIL_BYTES` (and one
    byte more, so a longer log reads as a tail, as on the login node) copied into a temporary directory through
    ``files``, read there and removed. Raises FileNotFoundError when the file is not there, and what the files
    raise when the cluster cannot be asked."""
    with tempfile.TemporaryDirectory(prefix="ntui-progress-") as directory:
        mirror = Mirror(files, Path(directory), max_bytes=TAIL_BYTES + 1)
        (local,) = mirror.add([path])
        mirror.sync()
        if not local.is_file():
            raise FileNotFoundError(errno.ENOENT, "no such file on the cluster", path)
        return read_progress(local, pattern=pattern)


def copy_log_dir(files: ClusterFiles, entry: HistoryEntry, wanted: Callable[[str], bool], directory: Path, *,
                 tail_bytes: int | None = None) -> HistoryEntry:
    """``entry`` with ``directory`` as its log directory, holding local copies of the files of its log directory on
    the cluster whose names ``wanted`` takes (one listing, then the files through ``files``; GPU sample files whole
    up to :data:`MIRROR_MAX`, the others their last ``tail_bytes``). A log directory not there copies nothing.
    Raises what the files raise when the cluster cannot be asked."""
    try:
        names = [e.name for e in files.listdir(entry.log_dir) if e.kind in ("f", "l") and wanted(e.name)]
    except FileRefused as exc:
        if exc.kind != "not-found":
            raise
        names = []
    samples = Mirror(files, directory)
    logs = Mirror(files, directory, max_bytes=tail_bytes or MIRROR_MAX)
    for name in names:
        (samples if GPU_PART in name else logs).add([f"{entry.log_dir.rstrip('/')}/{name}"])
    samples.sync()
    logs.sync()
    return replace(entry, log_dir=str(directory))
