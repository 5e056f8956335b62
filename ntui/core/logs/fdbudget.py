"""The descriptors the tails may hold open: one budget shared by every follower of files (rank logs, GPU samples,
journals), and the process's ``RLIMIT_NOFILE`` raised toward what a large job needs.

A tail with a descriptor (:class:`FdBudget.acquire`) polls a file with one ``stat`` of its path, or a light poll
with one ``pread``; without one it opens the file each time. The budget is a quarter of the soft limit at most.
"""

from __future__ import annotations

import os
import resource
import threading

__all__ = ["FD_BUDGET_MAX", "FD_RESERVE_MAX", "NOFILE_SOFT_MAX", "FdBudget", "close_held", "raise_nofile"]

FD_BUDGET_MAX = 256
#: most descriptors :meth:`FdBudget.reserve` grants one default budget (a 4,096-rank job holds every rank file)
FD_RESERVE_MAX = 4096
#: the soft ``RLIMIT_NOFILE`` is never raised above this (nor above the hard limit)
NOFILE_SOFT_MAX = 16384


def _nofile_room() -> int:
    """A quarter of the soft ``RLIMIT_NOFILE`` (the rest of the process needs descriptors too)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return FD_RESERVE_MAX if soft == resource.RLIM_INFINITY else max(0, soft // 4)


def raise_nofile(target: int) -> int:
    """Raise the process's soft ``RLIMIT_NOFILE`` toward ``target``, never above its hard limit nor
    :data:`NOFILE_SOFT_MAX` (raising the soft limit up to the hard one needs no privilege; it is the common
    practice of programs that hold many files). Returns the soft limit now; a refusal leaves it as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return NOFILE_SOFT_MAX
    ceiling = NOFILE_SOFT_MAX if hard == resource.RLIM_INFINITY else min(hard, NOFILE_SOFT_MAX)
    new = min(max(0, target), ceiling)
    if new <= soft:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ValueError, OSError):
        return soft
    return new


class FdBudget:
    """How many log files may stay open between polls (shared by the tails of one watcher).

    ``limit`` defaults to :data:`FD_BUDGET_MAX`, and never more than a quarter of the soft ``RLIMIT_NOFILE``
    (the rest of the process needs descriptors too). A default budget grows with :meth:`reserve` (a big job:
    one descriptor per rank file, so polls need no metadata operation), up to :data:`FD_RESERVE_MAX`, raising
    the soft ``RLIMIT_NOFILE`` toward the hard limit when a quarter of it is too small (:func:`raise_nofile`;
    ``nofile_raised`` records it); an explicit ``limit`` is a hard cap. Past the limit, or after an ``EMFILE``
    (the limit then stays at what is held, and no longer grows), tails fall back to open/close on each poll
    (correct, just more metadata operations); :attr:`refused` counts those.
    """

    def __init__(self, limit: int | None = None) -> None:
        room = _nofile_room()
        self.cap = FD_RESERVE_MAX if limit is None else max(0, limit)
        self.limit = min(FD_BUDGET_MAX if limit is None else max(0, limit), room)
        self.held = 0
        self.refused = 0
        #: (soft before, soft after) when :meth:`reserve` raised ``RLIMIT_NOFILE``
        self.nofile_raised: tuple[int, int] | None = None
        self._exhausted = False
        self._lock = threading.Lock()

    def reserve(self, files: int) -> int:
        """``files`` files would each like a descriptor: grow the limit toward that (never past :attr:`cap`,
        nor past a quarter of the soft ``RLIMIT_NOFILE``, raised toward the hard limit if needed). Returns the
        limit now."""
        with self._lock:
            want = min(max(0, files), self.cap)
            if self._exhausted or want <= self.limit:
                return self.limit
            room = _nofile_room()
            if room < want:
                before = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                after = raise_nofile(4 * want)
                if after > before:
                    self.nofile_raised = (before, after)
                room = _nofile_room()
            self.limit = max(self.limit, min(want, room))
            return self.limit

    def acquire(self) -> bool:
        with self._lock:
            if self.held < self.limit:
                self.held += 1
                return True
            self.refused += 1
            return False

    def release(self) -> None:
        with self._lock:
            self.held = max(0, self.held - 1)

    def exhausted(self) -> None:
        """The process ran out of descriptors: hold no more than are held now (and grow no more)."""
        with self._lock:
            self.limit = self.held
            self._exhausted = True


def close_held(fd: int, budget: FdBudget | None) -> None:
    """Close a descriptor held within ``budget`` and give its slot back (also when the close fails)."""
    try:
        os.close(fd)
    finally:
        if budget is not None:
            budget.release()

