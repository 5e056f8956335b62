"""One shown job's logs on this machine, followed: the loop the log pane's worker thread runs, Textual-free.

:func:`follow_job` drives a :class:`~ntui.core.logs.watch.JobLogWatcher` for one
:class:`~ntui.core.logs.session.WatchSession` until it is stopped: every ``interval`` seconds it polls (the shown
files first, whose new lines go out before the others are read; a merged view's ranks beyond
:data:`FAST_SHOWN_MAX` as they come), then hands on the rank table and the triage line when they changed. A view
change (a new :class:`~ntui.core.logs.session.LogView` in the session, its ``wake`` set) is answered at once with the
view's whole content. Files not on screen are read less often the longer they stay still (a
:class:`~ntui.core.logs.schedule.PoliteScheduler`); off screen (``session.hidden``) the watcher reads the batch log
alone now and then. What goes out goes through the caller's two callbacks (the pane posts them as messages; its
backpressure is theirs).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ntui.core.logs.fdbudget import FdBudget
from ntui.core.logs.rows import Appended, Key, Loaded, RankRow, TriageLine
from ntui.core.logs.schedule import PoliteScheduler
from ntui.core.logs.session import LogView, WatchSession
from ntui.core.logs.tail import TailUpdate
from ntui.core.logs.watch import JobLogWatcher

__all__ = ["BACKOFF_CAP_S", "BACKOFF_FIRST", "BACKOFF_MAX", "FAST_SHOWN_MAX", "FIRST_DRAW_WAIT", "INTERVAL_MIN_S",
           "ShowRows", "ShowView", "follow_job"]

BACKOFF_FIRST = 4  # a file not on screen is polled every 4 ticks at first ...
BACKOFF_MAX = 60  # ... doubling while it does not change, up to every 60 ticks (30 s at the 0.5 s default)
BACKOFF_CAP_S = 30.0  # ... and never less often than every 30 s
FAST_SHOWN_MAX = 32  # a merged view of more ranks polls only its first 32 every tick (the rest back off)
FIRST_DRAW_WAIT = 0.5  # seconds the loop waits, on open, for the first view to be drawn (session.shown)
INTERVAL_MIN_S = 0.01

ShowView = Callable[[int, Loaded | Appended], None]
"""A view's content for its generation: the whole of it (:class:`Loaded`) or its new lines (:class:`Appended`)."""
ShowRows = Callable[[tuple[RankRow, ...], TriageLine], None]
"""The rank table and the triage line (or the line saying why the logs cannot be read)."""


def follow_job(session: WatchSession, *, window: int, interval: float, clock: Callable[[], float],
               show_view: ShowView, show_rows: ShowRows, running: Callable[[], bool],
               monotonic: Callable[[], float] | None = None) -> None:
    """Follow ``session``'s job (see the module's docstring) while ``running()`` and the session is not stopped;
    ``clock``: the wall clock of the rows' ages. The watcher's files are closed at the end."""
    mono = monotonic or time.monotonic
    interval = max(INTERVAL_MIN_S, float(interval))
    watcher = JobLogWatcher(
        session.job_id, session.files, paths=session.paths, discover=session.discover, launcher=session.launcher,
        window=max(1, window), clock=clock, budget=FdBudget(),
        scheduler=PoliteScheduler(interval, interval * BACKOFF_FIRST, min(BACKOFF_CAP_S, interval * BACKOFF_MAX)),
    )

    def live() -> bool:
        return not session.stopped and running()

    def show(view: LogView, content: Loaded | Appended | None) -> None:
        if content is not None:
            show_view(view.gen, content)

    shown_gen = -1
    posted: tuple[tuple[RankRow, ...], TriageLine] | None = None
    next_poll = mono()
    try:
        while live():
            view = session.view

            def on_shown(ups: dict[Key, TailUpdate], view: LogView = view) -> None:
                nonlocal shown_gen
                if view.gen != shown_gen:
                    first_open = shown_gen < 0
                    show(view, watcher.view_content(view.mode, view.keys, view.focus))
                    shown_gen = view.gen
                    if first_open:  # on open, let the UI draw the shown file before reading all the others
                        session.shown.wait(FIRST_DRAW_WAIT)
                else:
                    show(view, watcher.view_update(view.mode, view.keys, ups))

            if mono() >= next_poll:
                watcher.set_hidden(session.hidden)
                for key in list(session.wanted):
                    session.wanted.discard(key)
                    watcher.want(key)
                # the shown files first (their lines go out in on_shown), triage after the lines are on their way
                ups = watcher.poll(view.keys[:FAST_SHOWN_MAX], now=clock(), on_shown=on_shown)
                slow = view.keys[FAST_SHOWN_MAX:]
                if slow and view.gen == shown_gen:  # a merged view's ranks beyond the fast ones, as they come
                    show(view, watcher.view_update(view.mode, slow, {k: ups[k] for k in slow if k in ups}))
                if not session.job_active:
                    watcher.finish()
                rows = watcher.rows(job_active=session.job_active)
                current = (rows, watcher.problem() or watcher.triage_line(job_active=session.job_active))
                if current != posted:
                    show_rows(*current)
                    posted = current
                next_poll = mono() + interval
            elif view.gen != shown_gen:
                on_shown({})
            if not live():
                break
            session.wake.wait(max(0.0, next_poll - mono()))
            session.wake.clear()
    finally:
        watcher.close()
