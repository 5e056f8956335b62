"""Following the in-job GPU sample files (one per node) within the log watcher's metadata budget.

One responsibility: reading the new lines of every node's sample file no more often than the sampling
interval, and only the bytes appended since the last read. A read is one ``stat`` of the path while a
descriptor is held (within a shared :class:`~ntui.core.logs.tail.FdBudget`), else ``open`` + ``fstat``; then a
``pread`` of the new bytes. 256 nodes sampled every 10 s cost 25.6 polls per second at most, spread over the
interval (``per_poll`` files per call, round robin), not 256 opens in one burst; ``max_per_s`` caps that where
the sample files share the log watcher's budget (10/s: each of 256 files every 25.6 s instead of 10 s).

Unlike a rank log (:class:`~ntui.core.logs.tail.FileTail`: tail-first, a line index for scrolling back), a sample
file is read **from its first byte** on the first poll (the GPU history starts at the job's first sample) and
nothing is kept but the offset and an unterminated last line: the reader's aggregates are bounded, so memory does
not grow with the job. A file that shrinks or is replaced starts over (``on_reset``).

The lines' meaning is the sample reader's (:class:`ntui.core.gpu.usage.NodeSampleReader`; the GPU pane's file
source :mod:`ntui.core.gpu.samples` plugs it into ``on_lines(node, lines)``). No Textual, no threads of its own.
"""

from __future__ import annotations

import errno
import math
import os
import time as _time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from ntui.core.logs.fdbudget import FdBudget, close_held

__all__ = ["RemoteChunk", "RemoteReads", "RemoteSampleFile", "SampleFile", "SampleTail"]

CHUNK = 1024 * 1024
#: most bytes one read takes from one file (a month-long job's file is caught up over several reads)
MAX_READ = 8 * CHUNK
#: an unterminated line longer than this is not a sample line (NUL garbage after a crash): dropped
MAX_PARTIAL = 64 * 1024


class SampleFile:
    """One sample file followed by byte offset from its start: only whole lines are handed out."""

    def __init__(self, path: Path | str, budget: FdBudget | None = None) -> None:
        self.path = Path(path)
        self.budget = budget
        self.offset = 0
        self.partial = b""
        self.ident: tuple[int, int] | None = None
        self.opens = 0
        self.stats = 0
        self.bytes_read = 0
        self.error: str | None = None
        #: the file shrank or was replaced since the last read (the reader must start over)
        self.reset = False
        #: bytes left for the next read (more than :data:`MAX_READ` had been appended)
        self.behind = 0
        self._fd: int | None = None

    def read_new(self) -> list[str]:
        """The complete lines appended since the last call (all of them on the first)."""
        self.reset = False
        fd = self._fd
        st: os.stat_result | None = None
        if fd is not None:
            self.stats += 1
            try:
                st = os.stat(self.path)
            except OSError:
                st = None
            if st is None or (st.st_dev, st.st_ino) != self.ident:
                self.release()
                fd = st = None
            elif st.st_size == self.offset:
                return []
        if fd is None or st is None:
            try:
                self.opens += 1
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                if exc.errno == errno.EMFILE and self.budget is not None:
                    self.budget.exhausted()
                self.error = None if exc.errno == errno.ENOENT else f"{self.path}: {exc.strerror or exc}"
                return []
            self.stats += 1
            try:
                st = os.fstat(fd)
            except OSError as exc:
                os.close(fd)
                self.error = f"{self.path}: {exc.strerror or exc}"
                return []
            if self.budget is not None and self.budget.acquire():
                self._fd = fd
        try:
            return self._read(fd, st)
        except OSError as exc:
            self.error = f"{self.path}: {exc.strerror or exc}"
            return []
        finally:
            if fd is not self._fd:
                os.close(fd)

    def _read(self, fd: int, st: os.stat_result) -> list[str]:
        self.error = None
        ident = (st.st_dev, st.st_ino)
        if self.ident is not None and (ident != self.ident or st.st_size < self.offset):
            self.offset, self.partial, self.reset = 0, b"", True
        self.ident = ident
        chunks: list[bytes] = []
        end = min(st.st_size, self.offset + MAX_READ)
        while self.offset < end:
            data = os.pread(fd, min(CHUNK, end - self.offset), self.offset)
            if not data:
                break
            self.bytes_read += len(data)
            self.offset += len(data)
            chunks.append(data)
        self.behind = max(0, st.st_size - self.offset)
        if not chunks:
            return []
        data = self.partial + b"".join(chunks)
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        if len(self.partial) > MAX_PARTIAL:
            self.partial = b""
        return data[:cut].decode("utf-8", "replace").splitlines()

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            close_held(fd, self.budget)


class RemoteChunk(Protocol):
    """Bytes of a file of a cluster reached over ssh (:class:`ntui.core.remote.protocol.Chunk`)."""

    @property
    def exists(self) -> bool: ...

    @property
    def data(self) -> bytes: ...

    @property
    def size(self) -> int: ...

    @property
    def inode(self) -> int: ...


class RemoteReads(Protocol):
    """What a sample file of a cluster reached over ssh is read through (its agent,
    :class:`ntui.core.remote.files.ClusterFiles`)."""

    def read(self, path: str, offset: int, limit: int = ..., *, from_end: bool = ...) -> RemoteChunk: ...


class RemoteSampleFile(SampleFile):
    """One sample file of a cluster reached over ssh, followed by byte offset through its agent: one request a read
    (the new bytes and the file's size and inode in one answer), no descriptor held here."""

    def __init__(self, path: str, files: RemoteReads) -> None:
        super().__init__(path, None)
        self.remote_path = path
        self.files = files

    def read_new(self) -> list[str]:
        self.reset = False
        self.stats += 1
        try:
            chunk = self.files.read(self.remote_path, self.offset, MAX_READ)
        except Exception as exc:  # a refusal or a lost link: said as this file's error, read again next time
            self.error = f"{self.remote_path}: {exc}"
            return []
        if not chunk.exists:
            self.error = None
            return []
        self.error = None
        if self.ident is not None and (chunk.inode != self.ident[1] or chunk.size < self.offset):
            self.offset, self.partial, self.reset, self.ident = 0, b"", True, (0, chunk.inode)
            return []  # replaced or shrunk: read from its start next time
        self.ident = (0, chunk.inode)
        self.bytes_read += len(chunk.data)
        self.offset += len(chunk.data)
        self.behind = max(0, chunk.size - self.offset)
        if not chunk.data:
            return []
        data = self.partial + chunk.data
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        if len(self.partial) > MAX_PARTIAL:
            self.partial = b""
        return data[:cut].decode("utf-8", "replace").splitlines()

    def release(self) -> None:
        """Nothing held here."""


class SampleTail:
    """Every node's sample file, each read at most every ``interval_s``, only its new bytes.

    ``poll(now)`` reads the files that are due (their last read at least ``interval_s`` ago), at most
    ``ceil(files / ticks_per_interval)`` of them per call so the reads spread over the interval, and returns
    ``{node: new complete lines}`` (also given to ``on_lines``).
    """

    def __init__(
        self,
        files: Mapping[str, Path | str],
        interval_s: float,
        *,
        tick_s: float = 1.0,
        on_lines: Callable[[str, Sequence[str]], None] | None = None,
        on_reset: Callable[[str], None] | None = None,
        budget: FdBudget | None = None,
        max_per_s: float | None = None,
        monotonic: Callable[[], float] = _time.monotonic,
        remote: RemoteReads | None = None,
    ) -> None:
        self.interval_s = max(0.1, float(interval_s))
        #: the files are on a cluster reached over ssh, read through this (None: here)
        self.remote = remote
        self.tick_s = max(0.01, float(tick_s))
        self.on_lines = on_lines
        self.on_reset = on_reset
        self.max_per_s = max_per_s
        self.monotonic = monotonic
        self.budget = budget
        self.tails: dict[str, SampleFile] = {}
        self._last: dict[str, float] = {}
        for node, path in files.items():
            self.add(node, path)

    @property
    def per_poll(self) -> int:
        ticks = max(1.0, self.interval_s / self.tick_s)
        spread = max(1, math.ceil(len(self.tails) / ticks))
        if self.max_per_s is None:
            return spread
        return max(1, min(spread, int(self.max_per_s * self.tick_s)))

    def add(self, node: str, path: Path | str) -> None:
        """A node's file appeared (the caller lists the directory rarely; see the sampler's file names)."""
        if node not in self.tails:
            self.tails[node] = (SampleFile(path, self.budget) if self.remote is None
                                else RemoteSampleFile(str(path), self.remote))

    def due(self, now: float) -> list[str]:
        waiting = [n for n in self.tails
                   if now - self._last.get(n, -math.inf) >= self.interval_s]
        waiting.sort(key=lambda n: self._last.get(n, -math.inf))
        return waiting[: self.per_poll]

    def poll(self, now: float | None = None) -> dict[str, tuple[str, ...]]:
        when = self.monotonic() if now is None else now
        return self.read_nodes(self.due(when), when)

    def read_all(self, now: float | None = None) -> dict[str, tuple[str, ...]]:
        """Every file now, due or not (the first read of a job's files: its whole history at once)."""
        return self.read_nodes(list(self.tails), self.monotonic() if now is None else now)

    def read_nodes(self, nodes: Sequence[str], when: float) -> dict[str, tuple[str, ...]]:
        """These nodes' files now (due or not)."""
        out: dict[str, tuple[str, ...]] = {}
        for node in nodes:
            self._last[node] = when
            tail = self.tails[node]
            lines = tail.read_new()
            if tail.reset and self.on_reset is not None:
                self.on_reset(node)
            if lines:
                out[node] = tuple(lines)
                if self.on_lines is not None:
                    self.on_lines(node, out[node])
        return out

    def ops(self) -> tuple[int, int]:
        """File-system metadata operations so far: (opens, stats)."""
        return (sum(t.opens for t in self.tails.values()), sum(t.stats for t in self.tails.values()))

    def bytes_read(self) -> int:
        return sum(t.bytes_read for t in self.tails.values())

    def errors(self) -> dict[str, str]:
        return {n: t.error for n, t in self.tails.items() if t.error}

    def close(self) -> None:
        for t in self.tails.values():
            t.release()
