"""Ctrl-C as a flag for the CLI's follow loops (``ntui logs --follow``, ``ntui gpus``), not an exception.

A ``KeyboardInterrupt`` is raised wherever the main thread happens to be: inside a buffered write, between two
steps of giving a held descriptor back, inside a lock that the cleanup after it needs again. Inside
:class:`CtrlC` the SIGINT handler sets :attr:`CtrlC.pressed` (no lock, no I/O) and cuts short a
:meth:`CtrlC.sleep` (the one place it raises); the loop sees the flag between two polls and ends the way it ends
at the job's end: descriptors given back, the last line or table printed.
Outside the ``with`` Ctrl-C is an exception again (the CLI's entry point turns it into exit 130).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["CtrlC"]

#: How often :meth:`CtrlC.wait` looks at the flag (seconds): Ctrl-C ends such a wait within this.
STEP_S = 0.1


class _Wake(Exception):
    """Raised by the handler only inside :meth:`CtrlC.sleep` (a point where nothing of ours is half done)."""


class CtrlC:
    def __init__(self) -> None:
        self.pressed = False
        self._sleeping = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self.pressed = True
        if self._sleeping:  # cut the sleep short; at most once per sleep
            self._sleeping = False
            raise _Wake

    def sleep(self, seconds: float, sleeper: Callable[[float], object] = time.sleep) -> bool:
        """Sleep ``seconds`` (``sleeper``: the caller's ``time.sleep``), cut short by Ctrl-C; True once it came."""
        if self.pressed:
            return True
        try:
            try:
                self._sleeping = True
                sleeper(seconds)
            finally:
                self._sleeping = False
        except _Wake:
            pass
        return self.pressed

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait for ``event`` at most ``seconds``, less once Ctrl-C comes; True when the event is set. (Polled:
        an exception raised inside ``Event.wait`` could land in its own lock handling.)"""
        end = time.monotonic() + seconds
        while not self.pressed and (left := end - time.monotonic()) > 0:
            if event.wait(min(STEP_S, left)):
                return True
        return event.is_set()
