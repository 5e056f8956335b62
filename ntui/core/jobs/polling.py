"""The jobs view model's book of squeue refreshes: when the next one runs, and what the last one said (Textual-free).

:class:`PollBook` starts a refresh unless one runs (then exactly one more follows it: :meth:`PollBook.request`), and
gives the delay before the next one when a refresh ends (:meth:`PollBook.rearm`; the pace is
:class:`~ntui.core.jobs.queue.PollPolicy`'s: short while own jobs are active, long when none are or the view is in
the background, exponential back-off on controller errors). The caller re-arms only after a refresh ends, so
refreshes never overlap. It also words the back-off banner. Its one refresh in flight is a flag, not an
:class:`~ntui.core.jobs.inflight.InFlight`: a request during a refresh is not dropped but remembered (``again``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ntui.core.config import QueueSettings
from ntui.core.errors import describe_error
from ntui.core.jobs.queue import PollPolicy
from ntui.core.slurm.runner import ControllerUnreachable, SlurmConfigError, SlurmTimeout
from ntui.core.slurm.squeue import QueueJob

__all__ = ["PollBook", "PollRequest"]


@dataclass(frozen=True)
class PollRequest:
    """One refresh to run (:meth:`~ntui.core.jobs.model.JobModel.fetch` in a worker)."""

    generation: int  # the view (own jobs / all users) it was started for
    all_users: bool
    seq: int  # which poll (counted from 1)


class PollBook:
    """The refreshes (see the module docstring)."""

    def __init__(self, settings: QueueSettings, clock: Callable[[], datetime]) -> None:
        self.settings = settings
        self.clock = clock
        self.policy = PollPolicy(settings)
        self.generation = 0  # the view (own jobs / all users): bumped when it changes
        self.polling = False
        self._again = False
        self.next_poll: datetime | None = None
        self.error: BaseException | None = None
        self.last_update: datetime | None = None
        self.refresh_count = 0
        self.seq = 0
        self.counts: dict[str, int] = {}

    def request(self, all_users: bool) -> PollRequest | None:
        """A refresh to start now, or None when one is running (then another follows right after it)."""
        if self.polling:
            self._again = True
            return None
        self.polling = True
        self._again = False
        self.next_poll = None
        self.seq += 1
        return PollRequest(self.generation, all_users, self.seq)

    def current(self, request: PollRequest) -> bool:
        """The refresh is of the view as it is (False: it changed during the fetch; another follows)."""
        if request.generation == self.generation:
            return True
        self._again = True
        return False

    def applied(self, counts: dict[str, int]) -> None:
        """A refresh's answer was applied."""
        self.error = None
        self.last_update = self.clock()
        self.refresh_count += 1
        self.counts = counts

    def rearm(self, delay: float, *, background: bool) -> float:
        """A refresh ended: the delay before the next one (0 when one was asked for meanwhile)."""
        self.polling = False
        if self._again:
            delay = 0.0
        elif self.error is None and background:
            delay = max(delay, self.settings.idle_interval)  # in the background: poll slowly
        self._again = False
        self.next_poll = self.clock() + timedelta(seconds=delay)
        return delay

    def paced(self, jobs: Iterable[QueueJob], *, unchanged: bool, user: str | None) -> float:
        """The pace after an applied answer, before :meth:`rearm`: the one rule of the local queue and of every
        cluster's (an answer like the last keeps the activity it found; another counts the active jobs anew, only
        ``user``'s in everyone's view: others' jobs never speed the poll up)."""
        policy = self.policy
        if unchanged:
            policy.errors = 0
            return policy.delay()
        return policy.on_success(jobs, user=user)

    def failed(self, error: BaseException, *, background: bool) -> float:
        """A refresh failed: keep the rows, back off; returns the delay before the next try."""
        self.error = error
        return self.rearm(self.policy.on_error(), background=background)

    def stale(self) -> bool:
        """The rows are older than the active interval and no refresh runs (the view came back)."""
        if self.last_update is None or self.polling:
            return False
        return (self.clock() - self.last_update).total_seconds() >= self.settings.active_interval

    def banner(self, polling_now: bool | None = None) -> str:
        """The back-off banner ("" when squeue answered last time)."""
        err = self.error
        if err is None:
            return ""
        polling = self.polling if polling_now is None else polling_now
        if isinstance(err, SlurmConfigError):  # Slurm's own words; the controller was never asked
            what = "Slurm's configuration cannot be read"
        elif isinstance(err, (ControllerUnreachable, SlurmTimeout)):
            what = "controller unreachable"
        else:
            what = "squeue failed"
        head = f"⚠ {what}, retrying now…" if polling else f"⚠ {what}, retry in {self.retry_in()} s"
        return f"{head}  ·  {describe_error(err)}  ·  r: retry now"

    def retry_in(self) -> int:
        if self.next_poll is None:
            return 0
        return max(0, round((self.next_poll - self.clock()).total_seconds()))
