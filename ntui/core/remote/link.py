"""The link to each cluster reached over ssh, as one value per cluster (Textual-free).

What feeds it: the cluster's files (:class:`~ntui.core.remote.files.AgentFiles`: each request to the agent begins and
ends here, a dropped or stuck channel is said here before it is opened again) and the cluster's runner (the jobs
view's squeue over that cluster's master: an ssh failure, or an answer). What reads it: the jobs view (the cluster's
banner line and its part of the status line) and the Logs tab (the rows of that cluster's job), on their own ticks.

A link is in one of four states (:class:`LinkView`):

* ``up``: the last request was answered, none waits past its own wait;
* ``slow``: a request has waited more than :data:`SLOW_S` seconds beyond its own wait (a stalled link says nothing
  until its channel is given up: this is what the view shows meanwhile);
* ``down``: a channel broke or a request was given up, or ssh failed, and nothing has been answered since (the
  channel is opened again after a backoff); a login refused (an expired key or certificate) is said in ssh's words
  with the command that renews it;
* ``back``: answered again after being down, for :data:`BACK_S` seconds; then ``up``.

Thread-safe: the files' and the runner's worker threads write, the UI thread reads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BACK", "BACK_S", "DOWN", "ROW_DOWN", "ROW_SLOW", "SLOW", "SLOW_S", "UP", "LinkBoard", "LinkView",
           "LinkWatch"]

UP, SLOW, DOWN, BACK = "up", "slow", "down", "back"
#: Seconds a request may wait beyond its own wait before the link is said to be slow.
SLOW_S = 4.0
#: Seconds the link is said to be back after it was down.
BACK_S = 10.0
#: What a row of the Logs tab says of its file while its cluster's link is down, or slow.
ROW_DOWN = "link down, retrying"
ROW_SLOW = "link slow, waiting"


@dataclass(frozen=True)
class LinkView:
    """A link's state now: ``state`` one of :data:`UP`, :data:`SLOW`, :data:`DOWN`, :data:`BACK`; ``words``: what
    happened (ssh's or the channel's words; "" when up); ``seconds``: how long it has been so (slow, down) or was
    down (back); ``login``: down because the login was refused, not because the link dropped."""

    state: str
    words: str = ""
    seconds: int = 0
    login: bool = False


class LinkWatch:
    """One cluster's link (see the module docstring)."""

    def __init__(self, name: str, *, monotonic: Callable[[], float] = time.monotonic, slow_s: float = SLOW_S,
                 back_s: float = BACK_S) -> None:
        self.name = name
        self.slow_s = slow_s
        self.back_s = back_s
        self._now = monotonic
        self._lock = threading.Lock()
        self._late_from: dict[int, float] = {}  # a request in flight -> when it is past its own wait
        self._next = 0
        self._down_since: float | None = None
        self._words = ""
        self._login = False
        self._back: tuple[float, float] | None = None  # (when it came back, how long it was down)
        self.drops = 0  # how many times it went down

    # -- events (any thread)

    def begin(self, wait: float = 0.0) -> int:
        """A request goes out that may wait ``wait`` seconds for its answer: its token for :meth:`end`."""
        with self._lock:
            self._next += 1
            self._late_from[self._next] = self._now() + max(0.0, wait)
            return self._next

    def end(self, token: int) -> None:
        """The request of ``token`` is over (answered, or given up: :meth:`answered` or :meth:`dropped` says
        which)."""
        with self._lock:
            self._late_from.pop(token, None)

    def answered(self) -> None:
        """The cluster answered (the agent, or a command over its master): the link is up (back, if it was down)."""
        with self._lock:
            if self._down_since is not None:
                now = self._now()
                self._back = (now, now - self._down_since)
                self._down_since = None
            self._words, self._login = "", False

    def dropped(self, words: str, *, login: bool = False) -> None:
        """The link dropped (a channel broke, a request was given up, ssh said so); ``login``: the login itself was
        refused (``words`` say what to run)."""
        with self._lock:
            if self._down_since is None:
                self._down_since = self._now()
                self.drops += 1
            self._words, self._login = words, login
            self._back = None

    # -- reads (the UI thread)

    def view(self) -> LinkView:
        """The link's state now."""
        with self._lock:
            now = self._now()
            if self._down_since is not None:
                return LinkView(DOWN, self._words, int(now - self._down_since), self._login)
            late = [now - t for t in self._late_from.values() if now - t > self.slow_s]
            if late:
                return LinkView(SLOW, f"no answer for {int(max(late))} s", int(max(late)))
            if self._back is not None:
                when, down_for = self._back
                if now - when < self.back_s:
                    return LinkView(BACK, "", int(down_for))
                self._back = None
            return LinkView(UP)

    def banner(self) -> str:
        """The cluster's banner line ("" while the link is up)."""
        v = self.view()
        if v.state == DOWN:
            what = "cannot log in" if v.login else "link down"
            return (f"⚠ {self.name}: {what} for {v.seconds} s, reconnecting with backoff"
                    + (f"  ·  {v.words}" if v.words else ""))
        if v.state == SLOW:
            return f"⚠ {self.name}: link slow: {self.name} has not answered for {v.seconds} s, waiting"
        return ""  # up, or back: the banner clears (the status line says it reconnected a while)

    def status(self) -> str | None:
        """The cluster's word in the status line while the link is not up: ``link down``, ``link slow`` (instead of
        its counts), ``reconnected`` (after them, for :data:`BACK_S`); None: up."""
        state = self.view().state
        return {DOWN: "link down", SLOW: "link slow", BACK: "reconnected"}.get(state)

    def row_status(self) -> str | None:
        """What a row of the Logs tab of this cluster's job says now (None: its own status)."""
        state = self.view().state
        return ROW_DOWN if state == DOWN else ROW_SLOW if state == SLOW else None


class LinkBoard:
    """Every cluster's :class:`LinkWatch`, by name, made on first use (from any thread)."""

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._links: dict[str, LinkWatch] = {}

    def of(self, name: str) -> LinkWatch:
        with self._lock:
            link = self._links.get(name)
            if link is None:
                link = self._links[name] = LinkWatch(name, monotonic=self._monotonic)
            return link
