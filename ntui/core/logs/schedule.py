"""Which of a job's log files one poll of the watcher reads (:class:`~ntui.core.logs.watch.JobLogWatcher`).

:class:`FixedScheduler` polls the shown files every tick and the others every ``hidden_every``-th tick (simple;
one open+fstat per file per poll). :class:`PoliteScheduler` (many ranks, shared file systems) reads the shown
files and the batch log every tick, the others with back-off, through held descriptors where it can (a read of an
open file is no metadata operation), spends the metadata budget (open/stat) on the files it cannot hold and on
rare full checks, and polls a file at once when asked.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from ntui.core.logs.rows import BATCH, Key
from ntui.core.logs.tail import TailUpdate

__all__ = ["FixedScheduler", "PollScheduler", "PoliteScheduler"]


class PollScheduler(Protocol):
    """Decides which files one :meth:`JobLogWatcher.poll` reads."""

    #: seconds between two polls of the caller's loop
    tick_s: float
    #: the pane is not on screen: nothing is shown, poll as little as keeps failures found
    hidden: bool
    #: of the keys the last :meth:`due` gave, those to poll light (a read, no ``stat``: :meth:`FileTail.poll`)
    light: Collection[Key]

    def due(self, keys: Sequence[Key], shown: Collection[Key], now: float) -> list[Key]:
        """The files to poll now (``shown`` first: the caller shows their lines before the others)."""
        ...

    def observed(self, key: Key, update: TailUpdate, now: float) -> None:
        """A file was polled (``update.changed``: it moved)."""
        ...

    def want(self, key: Key) -> None:
        """Poll this file at the next tick (the user looks at it)."""
        ...


class FixedScheduler:
    """Shown files every tick, the others every ``hidden_every``-th tick."""

    def __init__(self, tick_s: float = 0.5, hidden_every: int = 4) -> None:
        self.tick_s = max(0.01, tick_s)
        self.hidden_every = max(1, hidden_every)
        self.hidden = False
        self.light: Collection[Key] = frozenset()
        self._tick = 0
        self._wanted: set[Key] = set()

    def due(self, keys: Sequence[Key], shown: Collection[Key], now: float) -> list[Key]:
        shown = () if self.hidden else shown
        out = [k for k in keys if k in shown]
        if self._tick % self.hidden_every == 0:
            out += [k for k in keys if k not in shown]
        else:
            out += [k for k in keys if k in self._wanted and k not in shown]
        self._wanted.clear()
        self._tick += 1
        return out

    def observed(self, key: Key, update: TailUpdate, now: float) -> None:
        return None

    def want(self, key: Key) -> None:
        self._wanted.add(key)


class PoliteScheduler:
    """Polite to a shared file system (Lustre: every open/stat is a metadata-server RPC; a read of a file
    already open is not).

    Two budgets: **metadata operations** (open, stat: ``rest_per_s`` per second, ``hidden_rest_per_s`` while
    the pane is hidden) and **reads through held descriptors** (``read_per_s`` / ``hidden_read_per_s``).

    * Shown files and the batch log (where srun's task exits and slurmstepd's cancellations land first) are
      polled every ``fast_s`` (the batch log every ``hidden_fast_s`` while hidden), light: a read when their
      descriptor is held, with a full check every ``fast_check_s`` while the pane is shown (a read through a
      held descriptor still succeeds after the file or its directory was deleted: only a ``stat`` of the path
      tells, and the user should hear of it within seconds).
    * Every other file held open is *read* (light poll) from ``slow_s``, doubling while it does not change up
      to ``revisit_s`` (8 s: a failure shown only in a rank's own file is named within the 10 s target), or
      longer when ``read_per_s`` cannot read every held file that often. Its *full check* (a ``stat`` of the
      path: a file replaced under its name, the true mtime) comes every ``check_s``, or as often as the
      metadata budget allows over all held files. Truncation needs no check: a light read starts 16 bytes
      before the offset and sees them change.
    * A file without a descriptor (past the :class:`~ntui.core.logs.tail.FdBudget`) costs a metadata operation
      per poll (``open``; light: no ``fstat``). It starts at ``slow_s`` and doubles while unchanged up to
      ``max_s``; while the metadata budget allows it (few such files) the back-off stops at ``revisit_s``,
      with many, ``files / rest_per_s`` seconds.
    * Polls costing metadata operations are capped at the metadata budget, the overdue ones first, so the
      rate does not grow with the rank count; reads likewise within theirs. A file never read yet is read
      once regardless (the rank table needs every file once).
    * :meth:`want` polls a file at the next tick (the user moved to its row; the batch log named its rank).
    """

    def __init__(
        self,
        fast_s: float = 0.5,
        slow_s: float = 2.0,
        max_s: float = 30.0,
        *,
        fast_keys: Collection[Key] = (BATCH,),
        rest_per_s: float = 40.0,
        hidden_rest_per_s: float = 0.5,
        hidden_fast_s: float = 1.0,
        revisit_s: float = 8.0,
        read_per_s: float = 256.0,
        hidden_read_per_s: float = 64.0,
        check_s: float = 60.0,
        fast_check_s: float = 2.0,
    ) -> None:
        self.tick_s = max(0.01, fast_s)
        self.revisit_s = revisit_s
        self._rest_count = 0
        self.slow_s = max(self.tick_s, slow_s)
        self.max_s = max(self.slow_s, max_s)
        self.fast_keys = set(fast_keys)
        self.rest_per_s = rest_per_s
        self.hidden_rest_per_s = hidden_rest_per_s
        self.hidden_fast_s = hidden_fast_s
        self.read_per_s = read_per_s
        self.hidden_read_per_s = hidden_read_per_s
        self.check_s = max(self.slow_s, check_s)
        self.fast_check_s = max(self.tick_s, fast_check_s)
        #: the files polled every tick now (shown ones and the batch log; only the batch log while hidden)
        self._fast: set[Key] = set()
        self.hidden = False
        self.light: Collection[Key] = frozenset()
        #: metadata schedule: a held file's next full check, another file's next poll
        self._next: dict[Key, float] = {}
        self._every: dict[Key, float] = {}
        #: read schedule of the held files
        self._held: set[Key] = set()
        self._rnext: dict[Key, float] = {}
        self._revery: dict[Key, float] = {}
        self._wanted: set[Key] = set()
        self._tokens = 0.0
        self._rtokens = 0.0
        self._refilled: float | None = None
        self._next_fast: dict[Key, float] = {}

    def _rates(self) -> tuple[float, float]:
        """(metadata operations, reads) per second now."""
        if self.hidden:
            return self.hidden_rest_per_s, self.hidden_read_per_s
        return self.rest_per_s, self.read_per_s

    def due(self, keys: Sequence[Key], shown: Collection[Key], now: float) -> list[Key]:
        rate, rrate = self._rates()
        if self._refilled is not None:
            span = now - self._refilled
            self._tokens = min(max(1.0, 2 * rate), self._tokens + span * rate)
            self._rtokens = min(max(1.0, 2 * rrate), self._rtokens + span * rrate)
        self._refilled = now
        if self.hidden:
            fast = {k for k in self.fast_keys if self._next_fast.get(k, 0.0) <= now}
            for k in fast:
                self._next_fast[k] = now + self.hidden_fast_s
        else:
            fast = self.fast_keys | set(shown)
        self._fast = set() if self.hidden else fast
        first = [k for k in keys if k in fast or k in self._wanted]
        taken = set(first) | self.fast_keys
        self._rest_count = len(keys) - len(taken & set(keys))
        never = [k for k in keys if k not in taken and k not in self._every]
        overdue = sorted((k for k in keys if k not in taken and k in self._every and self._next[k] <= now),
                         key=lambda k: self._next[k])
        allowed = overdue[: int(self._tokens)]
        self._tokens -= len(allowed)
        chosen = set(allowed)
        reading = sorted((k for k in self._held if k not in taken and k not in chosen
                          and self._rnext.get(k, now) <= now), key=lambda k: self._rnext.get(k, now))
        reading = reading[: int(self._rtokens)]
        self._rtokens -= len(reading)
        checks = [k for k in first if k in self._held and self._next.get(k, 0.0) <= now]
        checks = checks[: max(0, int(self._tokens))]
        self._tokens -= len(checks)
        self.light = (set(first) - set(checks)) | set(reading) | {k for k in allowed if k not in self._held}
        self._wanted.clear()
        return first + never + allowed + reading

    def observed(self, key: Key, update: TailUpdate, now: float) -> None:
        light = key in self.light
        if update.held:
            self._held.add(key)
        else:
            self._held.discard(key)
            self._rnext.pop(key, None)
            self._revery.pop(key, None)
        if update.held and (not light or key not in self._next):  # a full check of a held file, or its first poll
            every = self._check_every()
            if key in self._fast:  # what the user looks at: a deleted or replaced file is said within seconds
                every = min(every, self.fast_check_s)
            self._every[key] = every
            self._next[key] = now + every
        if key in self.fast_keys:
            return
        if update.held:
            prev = self._revery.get(key)
            every = self.slow_s if update.changed or prev is None else min(self._read_cap(), prev * 2)
            self._revery[key] = every
            self._rnext[key] = now + every
            return
        every = self.slow_s if update.changed or key not in self._every else min(self._cap(), self._every[key] * 2)
        self._every[key] = every
        self._next[key] = now + every

    def _cap(self) -> float:
        """The longest back-off of a file without a descriptor now: ``revisit_s`` while the metadata budget can
        poll every such file that often."""
        rate = self._rates()[0]
        if rate <= 0:
            return self.max_s
        unheld = self._rest_count - len(self._held - self.fast_keys)
        return min(self.max_s, max(self.slow_s, self.revisit_s, unheld / rate))

    def _read_cap(self) -> float:
        """The longest read back-off of a held file now: ``revisit_s`` while the read budget allows."""
        rrate = self._rates()[1]
        return max(self.slow_s, self.revisit_s, len(self._held) / rrate if rrate > 0 else self.max_s)

    def _check_every(self) -> float:
        """How often a held file gets a full check: ``check_s``, or less often when half the metadata budget of
        the open pane cannot check every held file that often (hidden, the budget's cap spaces them further)."""
        rate = self.rest_per_s
        return max(self.check_s, 2 * len(self._held) / rate if rate > 0 else self.check_s)

    def next_look(self, key: Key) -> float | None:
        """When ``key``'s new bytes are next read, on the schedule (benchmarks pick the worst-placed file)."""
        times = [t for t in (self._next.get(key), self._rnext.get(key)) if t is not None]
        return min(times) if times else None

    def want(self, key: Key) -> None:
        self._wanted.add(key)
