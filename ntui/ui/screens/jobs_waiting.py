"""The jobs view's part of :mod:`ntui.core.waiting`: why the selected pending job waits and a running job's elapsed
time, each second, to the tabs (one :class:`~ntui.ui.widgets.job_tab.Tick`: the Details tab shows both), and a word
when one of the user's jobs starts or ends.

:class:`WaitingWatch` is a collaborator of :class:`~ntui.ui.screens.jobs.JobsScreen`: the view calls it at the points
where the queue, a look-up or the clock moves, and it reads the view through :class:`WaitingView`:

* the why's extras (``sprio``, ``sacctmgr``, the dependencies' states) are fetched in a worker for the selected
  pending job only, once per job and reason (:class:`~ntui.core.waiting.why.WhyBook`), never per refresh; the words
  are recomputed every second from that and the queue's latest line (the countdown moves, the estimate follows
  each squeue);
* the transitions are read from each applied squeue answer, the final-state look-ups and the recent-jobs loads
  (:class:`~ntui.core.waiting.notify.Transitions`), and told through :func:`ntui.ui.terminal.announce`.

What would start sooner (``w``) and a shell in a running job (``x``) are job actions:
:mod:`ntui.ui.screens.job_operations`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Protocol

from ntui.core.records.outcome import Outcome
from ntui.core.records.record import RecentJobs
from ntui.core.slurm.common import StateCategory
from ntui.core.waiting.notify import Notice, Transitions
from ntui.core.waiting.why import Extras, WhyBook, WhyRequest
from ntui.ui.messages import WhyFetched
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.jobs_view import JobsViewCore
from ntui.ui.terminal import announce
from ntui.ui.widgets.job_tab import Tick

if TYPE_CHECKING:
    from ntui.ui.widgets.job_tabs import JobTabs

__all__ = ["WHY_GROUP", "WaitingView", "WaitingWatch"]

WHY_GROUP = "ntui-why"


class WaitingView(JobsViewCore, Protocol):
    """What the why and the notices read of the jobs view, besides its core."""

    @property
    def tabs(self) -> JobTabs: ...

    @property
    def record_selected(self) -> bool:
        """A recent job's record is selected, not the queue's row."""
        ...


class WaitingWatch:
    """Why the selected job waits, and the start/end notices (see the module docstring)."""

    def __init__(self, screen: NtuiScreen, view: WaitingView) -> None:
        self.screen = screen
        self.view = view
        self.why_book = WhyBook(monotonic=view.model.monotonic)
        self.transitions = Transitions(view.model.user)

    @property
    def inflight(self) -> bool:
        return self.why_book.inflight is not None

    # ------------------------------------------------------------ why (details)

    def selected(self, key: str | None) -> None:
        """The selection moved, or its details arrived: the why's extras for a pending job, once."""
        view = self.view
        if key is None:
            self.tick()
            return
        model = view.model
        cached = model.cache.get(key)
        request = self.why_book.request(key, cached.details if cached else None, model.live.get(key))
        if request is not None:
            self.screen.run_worker(partial(self._fetch, request), thread=True, exclusive=True, exit_on_error=False,
                                   group=WHY_GROUP, description="why it waits")
        self.tick()

    def _fetch(self, request: WhyRequest) -> None:
        """*Thread-side*."""
        extras = self.why_book.fetch(self.view.runner, request, timeout=self.view.model.slurm_timeout)
        self.screen.post_message(WhyFetched(extras))

    def fetched(self, extras: Extras) -> None:
        self.why_book.stored(extras)
        key = self.view.table.cursor_key
        if key != extras.key and not self.view.record_selected:
            self.selected(key)  # the cursor moved on while this ran: the job it is on now
        else:
            self.tick()

    def failed(self) -> None:
        """The why's worker died unexpectedly (its Slurm failures are notes, not errors): the next selection of
        the job asks again (not at once: a bug would loop)."""
        self.why_book.failed()

    def tick(self) -> None:
        """Every second: the selected job's why (pending) and elapsed time (running) as of now, to the tabs."""
        view = self.view
        if not self.screen.is_mounted:
            return
        model = view.model
        now: datetime = model.clock()
        key = view.table.cursor_key
        remote = view.clusters.row(key) if not view.record_selected else None
        if remote is not None:  # a job of a cluster reached over ssh: its elapsed as that cluster's squeue said
            seconds = view.clusters[remote.cluster].ticked_seconds(remote.job_id)
            view.tabs.tick(Tick(now, key, seconds))
            return
        if view.record_selected or key is None or key != model.selected:
            view.tabs.tick(Tick(now, None))
            return
        cached = model.cache.get(key)
        job = model.live.get(key)
        why = self.why_book.why(key, cached.details if cached else None, job, now)
        running = job is not None and job.category is StateCategory.RUNNING
        view.tabs.tick(Tick(now, key, model.ticked_seconds().get(key) if running else None, why))

    # ------------------------------------------------------------ a word when a job starts or ends

    def queue_applied(self) -> None:
        model = self.view.model
        self._announce(self.transitions.observe(model.live, all_users=model.all_users))

    def outcomes(self, outcomes: tuple[tuple[str, Outcome], ...]) -> None:
        told: list[Notice] = []
        for key, outcome in outcomes:
            if outcome.finished:
                told += self.transitions.outcome(key, outcome.state, outcome.exit_code)
        self._announce(told)

    def records(self, jobs: RecentJobs | None) -> None:
        found = {j.job_id: (j.state, j.verdict) for j in (jobs.jobs if jobs is not None else ())}
        self._announce(self.transitions.records(found))

    def _announce(self, notices: list[Notice]) -> None:
        settings = self.view.full_settings.notify
        for notice in notices:
            announce(self.screen.app, notice, settings)
