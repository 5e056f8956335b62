"""Which look-ups of one kind are running: the one in-flight idiom of the jobs view's model.

Every book of :class:`~ntui.core.jobs.model.JobModel` that starts work in a worker (a job's details, its history
entry, a journal tick, a batch of final states; a squeue refresh is the one exception: a request during one is
remembered, not dropped, :class:`~ntui.core.jobs.polling.PollBook`) asks :meth:`InFlight.start` before it starts
one, and says :meth:`InFlight.done` when the answer came (or :meth:`InFlight.clear` when the worker died): a look-up
already running is never started twice, and the view is :attr:`InFlight.busy` while any runs. An *exclusive* book
runs one at a time (the view's worker for it cancels the one before): starting another forgets the earlier key,
whose answer may never come.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["InFlight"]

K = TypeVar("K", bound=Hashable)


class InFlight(Generic[K]):
    """The keys whose look-up runs (see the module docstring)."""

    def __init__(self, *, exclusive: bool = False) -> None:
        self.exclusive = exclusive
        self._keys: set[K] = set()

    def start(self, key: K) -> bool:
        """True when a look-up of ``key`` is to start now (and is then running); False when it runs already."""
        if key in self._keys:
            return False
        if self.exclusive:
            self._keys.clear()
        self._keys.add(key)
        return True

    def done(self, key: K) -> None:
        self._keys.discard(key)

    def clear(self) -> None:
        self._keys.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    @property
    def busy(self) -> bool:
        return bool(self._keys)
