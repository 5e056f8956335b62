"""Following training logs without reading them whole (toolong's approach, no Textual).

One responsibility, tailing one file by offset (:class:`FileTail`); several files together are
:mod:`ntui.core.logs.multitail`'s, the descriptors a tail may hold :mod:`ntui.core.logs.fdbudget`'s, a rank's log
at a glance :mod:`ntui.core.logs.rankstatus`'s. Display cleaning is :mod:`ntui.core.textsafe`'s, file names
:mod:`ntui.core.jobfiles.lognames`', a job's files as a whole :mod:`ntui.core.logs.watch`'s.

* :class:`FileTail` follows one file by byte offset. A full poll (:meth:`FileTail.poll`) opens the file
  (open/close also revalidates NFS's attribute cache), ``fstat``\\ s it and ``os.pread``\\ s only the appended
  bytes in 64 KiB chunks; with a descriptor granted by an :class:`FdBudget` it keeps the file open and a full
  poll is one ``stat`` of the path (re-opened when the inode changes). A *light* poll (``poll(light=True)``)
  skips the metadata: through a held descriptor it is one ``pread`` from the last offset (no open, no stat:
  on Lustre a read of an open file goes to the object servers, not the metadata server), without one it is
  ``open`` + ``pread`` + ``close`` (one metadata operation instead of two); the ``pread`` starts 16 bytes
  before the offset, so a truncation shows as changed bytes and turns the poll into a full one. Only a file
  *replaced* under the path (a new inode) needs a full poll to be seen. ``opens`` / ``stats`` count the
  metadata operations (each one an RPC on Lustre), ``reads`` the ``pread`` calls. It keeps ``(dev, inode,
  offset, partial line)``; a smaller size, a different inode or changed bytes just before the offset mean the
  file was truncated or replaced (a requeue without ``--open-mode=append``): it restarts from 0 and says so
  (``TailUpdate.reset``). A missing file (pending job) is polled until it appears; a vanished one is reported
  and picked up again when it reappears.
* Memory is bounded: a window of the last N cleaned lines (``deque``), and an ``array('Q')`` of line-start
  offsets (8 bytes a line) so older lines are read lazily with :meth:`FileTail.read_lines` (``os.pread``).
* Opening a huge file is tail-first: the first poll scans **backwards from the end** (``pread`` chunks +
  ``rfind(b"\\n")``, toolong's ``scan_line_breaks``) until it has the last N lines, so a 256 MB log costs
  about the size of its last N lines. :meth:`FileTail.index_all` indexes the rest in chunks for a
  background thread (progress callback, cancellation). toolong mmaps; ntui preads because a log that is
  truncated while mapped turns the next page access into ``SIGBUS``, and because reads are then countable
  (``FileTail.bytes_read``).
* Lines are made safe to show by :mod:`ntui.core.textsafe` (its ``clean_line``: no escape sequence or control
  character survives, ``\\r`` progress bars keep their last state, display cap ``… [+N bytes]`` while offsets
  stay true; long lines are accumulated head-only, so a 10 MB line costs 64 KiB of memory).
* The file names (``<stem>-<job>-rank-N.out``) are :mod:`ntui.core.jobfiles.lognames`' (finding a job's rank files
  too).

Line numbers: ``TailUpdate.first_line_no`` and :meth:`FileTail.read_lines` use 0-based *index* numbers.
While a big file is not fully indexed they count from the first indexed line (``FileTail.fully_indexed`` is
False); :meth:`FileTail.index_all` returns how many lines it put in front, by which every number shifts.
Small files (fewer lines than the window) are fully indexed on open, so their numbers are absolute.

Thread-safety: one thread polls (the UI's watcher); ``index_all`` may run in another thread and
``read_lines`` in a third; shared state is guarded by a lock and file IO happens on private descriptors.
"""

from __future__ import annotations

import errno
import os
import threading
import time as _time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Literal

from ntui.core.logs.fdbudget import FdBudget, close_held
from ntui.core.textsafe import DISPLAY_CAP, LineAccumulator

#: FdBudget and close_held are fdbudget's, named here too for the modules that still import them from the tail
__all__ = ["CHUNK_SIZE", "DEFAULT_WINDOW", "FileTail", "ResetReason", "TailUpdate"]

CHUNK_SIZE = 64 * 1024
DEFAULT_WINDOW = 5_000
#: Most bytes one poll reads; beyond this the tail catches up over later polls (``TailUpdate.behind``).
DEFAULT_MAX_READ = 16 * 1024 * 1024
_FINGERPRINT = 16
_INDEX_CHUNK = 1024 * 1024

# ---------------------------------------------------------------------------------------------------------
# one file

ResetReason = Literal["truncated", "replaced"]


@dataclass(frozen=True)
class TailUpdate:
    """What one poll of one file found.

    ``lines`` are new complete cleaned lines; ``first_line_no`` is the index number of ``lines[0]``.
    ``backlog`` marks lines that were already in the file when it was (re)opened (their arrival time is
    the file's mtime, not the poll time). ``reset`` means the file was truncated or replaced and the tail
    restarted from 0 (show a marker; earlier line numbers are void). ``partial`` is the unterminated last
    line (a progress bar, say), cleaned. ``behind`` counts bytes appended but left for the next poll.
    ``first_seq`` is an arrival counter set by :class:`MultiTail` (0 from a bare FileTail). After a light
    poll that found new bytes, ``mtime`` is the poll's time (no ``stat`` was made) and ``size`` the offset.
    """

    path: Path
    exists: bool = False
    lines: tuple[str, ...] = ()
    first_line_no: int = 0
    appeared: bool = False
    vanished: bool = False
    reset: bool = False
    reset_reason: ResetReason | None = None
    backlog: bool = False
    partial: str = ""
    partial_changed: bool = False
    size: int = 0
    offset: int = 0
    mtime: float | None = None
    behind: int = 0
    first_seq: int = 0
    error: str | None = None
    held: bool = False
    """A descriptor of the file is held after this poll (set by :class:`MultiTail`): a light poll is a read."""

    @property
    def changed(self) -> bool:
        return bool(self.lines or self.appeared or self.vanished or self.reset or self.partial_changed or self.error)



class FileTail:
    """Follow one file by byte offset. See the module docstring."""

    def __init__(
        self,
        path: Path | str,
        *,
        window: int = DEFAULT_WINDOW,
        chunk_size: int = CHUNK_SIZE,
        max_line_bytes: int = DISPLAY_CAP,
        max_read_per_poll: int = DEFAULT_MAX_READ,
        budget: FdBudget | None = None,
    ) -> None:
        if window < 1 or chunk_size < 1 or max_line_bytes < 1 or max_read_per_poll < 1:
            raise ValueError("window, chunk_size, max_line_bytes and max_read_per_poll must be positive")
        self.path = Path(path)
        self.window_size = window
        self.chunk_size = chunk_size
        self.max_line_bytes = max_line_bytes
        self.max_read_per_poll = max_read_per_poll
        self._lock = threading.RLock()
        self._window: deque[str] = deque(maxlen=window)
        self._starts: array[int] = array("Q")
        self._acc = LineAccumulator(max_line_bytes)
        self._ident: tuple[int, int] | None = None
        self._opened = False
        self._exists = False
        self._offset = 0  # bytes consumed (complete lines + the partial line so far)
        self._partial_start = 0  # where the partial line starts (= end of the complete lines)
        self._index_from = 0  # byte offset of the first indexed line; 0 = fully indexed
        self._fingerprint = b""
        self._generation = 0
        self._size = 0
        self._mtime: float | None = None
        self._last_partial = ""
        #: bytes this tail has read from disk, all paths together (tests and benchmarks read it)
        self.bytes_read = 0
        #: file-system metadata operations (each one an RPC to the metadata server on Lustre)
        self.opens = 0
        self.stats = 0
        #: ``pread`` calls (not metadata operations, but not free either: benchmarks report them)
        self.reads = 0
        #: descriptors this tail may keep open between polls (None: open and close on every poll)
        self.budget = budget
        self._fd: int | None = None

    # -- state ----------------------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self._exists

    @property
    def held(self) -> bool:
        """A descriptor is kept open between polls."""
        return self._fd is not None

    @property
    def size(self) -> int:
        return self._size

    @property
    def mtime(self) -> float | None:
        return self._mtime

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def generation(self) -> int:
        """Bumped on every truncation / replacement."""
        return self._generation

    @property
    def line_count(self) -> int:
        """Complete lines in the index (all lines once :attr:`fully_indexed`)."""
        return len(self._starts)

    @property
    def fully_indexed(self) -> bool:
        return self._index_from == 0

    @property
    def indexed_from(self) -> int:
        """Byte offset of the first indexed line (0 once fully indexed)."""
        return self._index_from

    @property
    def window(self) -> list[str]:
        """The last ``window`` complete lines, cleaned."""
        with self._lock:
            return list(self._window)

    @property
    def partial(self) -> str:
        return self._last_partial

    @property
    def last_line(self) -> str:
        with self._lock:
            if self._last_partial:
                return self._last_partial
            return self._window[-1] if self._window else ""

    # -- IO helpers -----------------------------------------------------------------------------------

    def _pread(self, fd: int, n: int, offset: int) -> bytes:
        data = os.pread(fd, n, offset)
        self.reads += 1
        self.bytes_read += len(data)
        return data

    def _reset_state(self) -> None:
        self._window.clear()
        self._starts = array("Q")
        self._acc = LineAccumulator(self.max_line_bytes)
        self._opened = False
        self._offset = 0
        self._partial_start = 0
        self._index_from = 0
        self._fingerprint = b""
        self._last_partial = ""
        self._generation += 1

    def _consume(self, fd: int, start: int, end: int, *, first: bytes | None = None, short_stops: bool = False
                 ) -> list[str]:
        """Read ``[start, end)`` in chunks; append complete lines to index + window; keep the partial.

        ``first``: the first chunk, already read at ``start``; ``short_stops``: a read shorter than asked is the
        end of the file (the size is not known: a light poll made no ``fstat``)."""
        out: list[str] = []
        pos = start
        fp = self._fingerprint if start == self._offset else b""
        while pos < end:
            ask = min(self.chunk_size, end - pos)
            if first is not None:
                data, first = first, None
            else:
                data = self._pread(fd, ask, pos)
            if not data:
                break
            fp = (fp + data[-_FINGERPRINT:])[-_FINGERPRINT:]
            i = 0
            n = len(data)
            while i < n:
                nl = data.find(b"\n", i)
                if nl < 0:
                    self._acc.feed(data[i:])
                    break
                self._acc.feed(data[i:nl])
                out.append(self._acc.take())
                self._starts.append(self._partial_start)
                self._partial_start = pos + nl + 1
                i = nl + 1
            pos += n
            if short_stops and n < ask:
                break
        self._offset = pos
        self._window.extend(out[-self.window_size :])
        self._fingerprint = fp
        return out

    def _backward_start(self, fd: int, size: int) -> int:
        """Byte offset where the last ``window`` complete lines begin (scan from the end)."""
        need = self.window_size + 1  # newlines: one ending each line + the one before the first
        found = 0
        earliest_nl = -1
        pos = size
        while pos > 0:
            start = max(0, pos - self.chunk_size)
            buf = self._pread(fd, pos - start, start)
            if not buf:
                break
            hi = len(buf)
            while found < need:
                nl = buf.rfind(b"\n", 0, hi)
                if nl < 0:
                    break
                found += 1
                earliest_nl = start + nl
                hi = nl
            pos = start
            if found >= need:
                return earliest_nl + 1
            if found >= 2 and size - pos >= self.max_read_per_poll:
                return earliest_nl + 1  # enough for a first screen; index_all does the rest
        return 0

    # -- polling --------------------------------------------------------------------------------------

    def poll(self, *, light: bool = False, now: float | None = None) -> TailUpdate:
        """Read what was appended since the last poll (the whole tail window on the first one).

        Without a held descriptor: ``open`` + ``fstat`` + ``close`` (open/close also revalidates NFS's
        attribute cache). With one (:attr:`budget` granted a slot): one ``stat`` of the path; the file is
        only read through the held descriptor when it is the same inode and its size or mtime moved.

        ``light``: no metadata operation through a held descriptor (one ``pread`` from the offset), ``open`` +
        ``pread`` + ``close`` without one; a full poll instead when the file was never read, is missing, or
        the bytes before the offset changed (truncated). ``now``: the time a light poll that finds new bytes
        gives as the file's mtime (default ``time.time()``).
        """
        with self._lock:
            if light and self._opened and self._exists:
                got = self._poll_light(now)
                if got is not None:
                    return got
            if self._fd is not None:
                held = self._poll_held()
                if held is not None:
                    return held
            try:
                fd = self._open()
            except OSError as exc:
                return self._failed_open(exc)
            keep = self.budget is not None and self.budget.acquire()
            try:
                return self._poll_fd(fd)
            except OSError as exc:
                return TailUpdate(path=self.path, exists=True, offset=self._offset, error=str(exc))
            finally:
                if keep:
                    self._fd = fd
                else:
                    os.close(fd)

    def _open(self) -> int:
        self.opens += 1
        return os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def _failed_open(self, exc: OSError) -> TailUpdate:
        vanished = self._exists
        self._exists = False
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            return TailUpdate(path=self.path, exists=False, vanished=vanished, offset=self._offset)
        if self.budget is not None and exc.errno == errno.EMFILE:
            self.budget.exhausted()  # out of descriptors: stop holding any more
        return TailUpdate(path=self.path, exists=False, vanished=vanished, offset=self._offset, error=str(exc))

    def _poll_light(self, now: float | None) -> TailUpdate | None:
        """A poll without ``stat``: ``pread`` through the held descriptor, else ``open`` + ``pread`` + ``close``.
        None: do a full poll (the bytes before the offset changed, or the read failed)."""
        fd = self._fd
        owned = fd is None
        if fd is None:
            try:
                fd = self._open()
            except OSError as exc:
                return self._failed_open(exc)
        keep = False
        try:
            got = self._read_new(fd, now)
            if got is None and owned:
                got = self._poll_fd(fd)  # a fresh descriptor: fstat it (truncated? replaced?)
            keep = owned and got is not None and self.budget is not None and self.budget.acquire()
            return got
        except OSError as exc:
            if not owned:
                self.release()
                return None
            return TailUpdate(path=self.path, exists=True, offset=self._offset, error=str(exc))
        finally:
            if owned:
                if keep:
                    self._fd = fd
                else:
                    os.close(fd)

    def _read_new(self, fd: int, now: float | None) -> TailUpdate | None:
        """One ``pread`` from just before the offset: the appended bytes, or None when the bytes before the
        offset are not the ones read last time (the file was truncated, or rewritten)."""
        k = len(self._fingerprint)
        ask = min(self.chunk_size, self.max_read_per_poll)
        data = self._pread(fd, k + ask, self._offset - k)
        if data[:k] != self._fingerprint:
            return None
        new = data[k:]
        if not new:
            return TailUpdate(path=self.path, exists=True, partial=self._last_partial, size=self._size,
                              offset=self._offset, mtime=self._mtime, behind=max(0, self._size - self._offset))
        first_no = len(self._starts)
        lines = self._consume(fd, self._offset, self._offset + self.max_read_per_poll, first=new, short_stops=True)
        self._size = max(self._size, self._offset)
        self._mtime = _time.time() if now is None else now
        partial = "" if self._acc.empty() else self._acc.text()
        partial_changed = partial != self._last_partial
        self._last_partial = partial
        return TailUpdate(path=self.path, exists=True, lines=tuple(lines), first_line_no=first_no, partial=partial,
                          partial_changed=partial_changed, size=self._size, offset=self._offset, mtime=self._mtime)

    def _poll_held(self) -> TailUpdate | None:
        """Poll through the held descriptor; None when the path must be opened again (gone or replaced)."""
        fd = self._fd
        assert fd is not None
        self.stats += 1
        try:
            st = os.stat(self.path)
        except OSError:
            self.release()
            return None
        if (st.st_dev, st.st_ino) != self._ident:
            self.release()
            return None
        if st.st_size == self._size and st.st_mtime == self._mtime and self._opened:
            partial = self._last_partial
            return TailUpdate(path=self.path, exists=True, partial=partial, size=self._size, offset=self._offset,
                              mtime=self._mtime, behind=max(0, self._size - self._offset))
        try:
            return self._poll_fd(fd, st)
        except OSError as exc:
            self.release()
            return TailUpdate(path=self.path, exists=True, offset=self._offset, error=str(exc))

    def release(self) -> None:
        """Close the held descriptor (if any) and give its slot back."""
        with self._lock:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                close_held(fd, self.budget)

    def _poll_fd(self, fd: int, st: os.stat_result | None = None) -> TailUpdate:
        if st is None:
            self.stats += 1
            st = os.fstat(fd)
        size = st.st_size
        ident = (st.st_dev, st.st_ino)
        appeared = not self._exists
        self._exists = True
        self._size = size
        self._mtime = st.st_mtime
        reason: ResetReason | None = None
        if self._ident is not None and self._opened:
            if ident != self._ident:
                reason = "replaced"
            elif size < self._offset:
                reason = "truncated"
            elif size >= self._offset and self._fingerprint:  # rewritten to the same length: bytes differ too
                k = len(self._fingerprint)
                if self._pread(fd, k, self._offset - k) != self._fingerprint:
                    reason = "truncated"
        if reason is not None:
            self._reset_state()
        self._ident = ident
        backlog = not self._opened
        first_no = len(self._starts)
        if not self._opened:
            self._opened = True
            start = self._backward_start(fd, size) if size else 0
            self._offset = self._partial_start = self._index_from = start
            lines = self._consume(fd, start, size)
        else:
            end = min(size, self._offset + self.max_read_per_poll)
            lines = self._consume(fd, self._offset, end) if end > self._offset else []
        partial = "" if self._acc.empty() else self._acc.text()
        partial_changed = partial != self._last_partial
        self._last_partial = partial
        return TailUpdate(
            path=self.path,
            exists=True,
            lines=tuple(lines),
            first_line_no=first_no,
            appeared=appeared,
            reset=reason is not None,
            reset_reason=reason,
            backlog=backlog,
            partial=partial,
            partial_changed=partial_changed,
            size=size,
            offset=self._offset,
            mtime=st.st_mtime,
            behind=max(0, size - self._offset),
        )

    # -- random access --------------------------------------------------------------------------------

    def read_lines(self, start: int, count: int) -> list[str]:
        """Lines ``start .. start+count-1`` by index number (cleaned), read lazily; [] when out of range.

        Served from the window when possible, else by ``os.pread`` at the indexed offsets.
        """
        if count <= 0 or start < 0:
            return []
        with self._lock:
            n = len(self._starts)
            if start >= n:
                return []
            stop = min(n, start + count)
            win_first = n - len(self._window)
            if start >= win_first:
                return list(islice(self._window, start - win_first, stop - win_first))
            begin = self._starts[start]
            end = self._starts[stop] if stop < n else self._partial_start
            ident = self._ident
            gen = self._generation
        try:
            fd = self._open()
        except OSError:
            return []
        try:
            self.stats += 1
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != ident:
                return []
            out: list[str] = []
            acc = LineAccumulator(self.max_line_bytes)
            pos = begin
            while pos < end and len(out) < stop - start:
                data = self._pread(fd, min(self.chunk_size, end - pos), pos)
                if not data:
                    break
                i = 0
                while i < len(data):
                    nl = data.find(b"\n", i)
                    if nl < 0:
                        acc.feed(data[i:])
                        break
                    acc.feed(data[i:nl])
                    out.append(acc.take())
                    i = nl + 1
                pos += len(data)
        finally:
            os.close(fd)
        if gen != self._generation:
            return []
        return out

    def index_all(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        *,
        chunk_size: int = _INDEX_CHUNK,
    ) -> int:
        """Index the lines before the tail window (for a background thread).

        Reads ``[0, indexed_from)`` forward in ``chunk_size`` chunks, collecting line starts in an
        ``array('Q')``; calls ``progress(done_bytes, total_bytes)`` after each chunk and stops early (returning
        -1) when ``cancelled()`` is true or the file was truncated/replaced meanwhile. Returns the number of
        lines put in front of the index (every index number shifts by it); 0 when already complete.
        """
        with self._lock:
            end = self._index_from
            ident = self._ident
            gen = self._generation
        if end == 0 or ident is None:
            return 0
        try:
            fd = self._open()
        except OSError:
            return -1
        try:
            self.stats += 1
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != ident or st.st_size < end:
                return -1
            prefix: array[int] = array("Q", [0])
            pos = 0
            while pos < end:
                if cancelled is not None and cancelled():
                    return -1
                data = self._pread(fd, min(chunk_size, end - pos), pos)
                if not data:
                    return -1
                find = data.find
                i = find(b"\n")
                while i >= 0:
                    s = pos + i + 1
                    if s < end:
                        prefix.append(s)
                    i = find(b"\n", i + 1)
                pos += len(data)
                if progress is not None:
                    progress(pos, end)
        finally:
            os.close(fd)
        with self._lock:
            if gen != self._generation or self._index_from != end:
                return -1
            self._starts = prefix + self._starts
            self._index_from = 0
        return len(prefix)


