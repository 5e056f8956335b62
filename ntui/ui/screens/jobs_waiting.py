"""The jobs view's part of :mod:`ntui.core.waiting`: why the selected pending job waits (in the details), a
running job's elapsed time ticking in the details, what shape of a pending job would start sooner (``w``), a
shell inside a running job (``x``), and a word when one of the user's jobs starts or ends.

The base class of :class:`~ntui.ui.screens.jobs.JobsScreen` (it uses the view's model, table, panels and runner),
so that the view's module only calls in at the points where the queue, a look-up or the clock moves:

* the why's extras (``sprio``, ``sacctmgr``, the dependencies' states) are fetched in a worker for the selected
  pending job only, once per job and reason (:class:`~ntui.core.waiting.why.WhyBook`), never per refresh; the words
  are recomputed every second from that and the queue's latest line (the countdown moves, the estimate follows
  each squeue);
* the transitions are read from each applied squeue answer, the final-state look-ups and the recent-jobs loads
  (:class:`~ntui.core.waiting.notify.Transitions`), and told through :func:`ntui.ui.terminal.announce`;
* the shell suspends the app (``App.suspend``) and runs ``srun --overlap --pty`` on the terminal; the app comes
  back when the shell exits.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual import work

from ntui.core.records.outcome import Outcome
from ntui.core.records.record import RecentJobs
from ntui.core.slurm.common import StateCategory, parse_duration
from ntui.core.waiting.notify import Notice, Transitions
from ntui.core.waiting.why import WhyBook, WhyRequest
from ntui.ui.messages import WhyFetched
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.terminal import announce

if TYPE_CHECKING:
    from ntui.core.config import Settings
    from ntui.core.jobs.model import JobModel
    from ntui.core.records.record import RecentJob
    from ntui.core.slurm.runner import CommandRunner
    from ntui.core.slurm.squeue import QueueJob
    from ntui.core.waiting.whatif import Shape
    from ntui.ui.widgets.job_details import JobDetailsPanel
    from ntui.ui.widgets.queue_table import QueueTable

__all__ = ["WHY_GROUP", "WaitingActions"]

WHY_GROUP = "ntui-why"


class WaitingActions(NtuiScreen):
    """The base of :class:`~ntui.ui.screens.jobs.JobsScreen` for these features (see the module docstring); what
    it uses of the view is declared here and defined there."""

    _why_book: WhyBook
    _transitions: Transitions

    if TYPE_CHECKING:  # defined by JobsScreen
        model: JobModel
        full_settings: Settings
        _recent_job: RecentJob | None

        @property
        def runner(self) -> CommandRunner: ...

        @property
        def table(self) -> QueueTable: ...

        @property
        def details_panel(self) -> JobDetailsPanel: ...

        def _target(self, what: str) -> tuple[str, QueueJob] | None: ...

        def resubmit(self, job_id: str, extra: tuple[str, ...] = ()) -> None: ...

        def refresh_now(self) -> None: ...

    def _init_waiting(self) -> None:
        self._why_book = WhyBook(monotonic=self.model.monotonic)
        self._transitions = Transitions(self.model.user)

    # ------------------------------------------------------------ why (details)

    def _waiting_selected(self, key: str | None) -> None:
        """The selection moved, or its details arrived: the why's extras for a pending job, once."""
        if key is None:
            self.details_panel.show_why(None)
            return
        cached = self.model.cache.get(key)
        request = self._why_book.request(key, cached.details if cached else None, self.model.live.get(key))
        if request is not None:
            self._why_worker(request)
        self._waiting_tick()

    @work(thread=True, exclusive=True, exit_on_error=False, group=WHY_GROUP, description="why it waits")
    def _why_worker(self, request: WhyRequest) -> None:
        self.post_message(WhyFetched(self._why_book.fetch(self.runner, request, timeout=self.model.slurm_timeout)))

    def on_why_fetched(self, msg: WhyFetched) -> None:
        msg.stop()
        self._why_book.stored(msg.extras)
        key = self.table.cursor_key
        if key != msg.extras.key and self._recent_job is None:
            self._waiting_selected(key)  # the cursor moved on while this ran: the job it is on now
        else:
            self._waiting_tick()

    def _waiting_failed(self) -> None:
        """The why's worker died unexpectedly (its Slurm failures are notes, not errors): the next selection of
        the job asks again (not at once: a bug would loop)."""
        self._why_book.failed()

    def _waiting_tick(self) -> None:
        """Every second: the selected job's why (pending) or elapsed time (running) as of now."""
        if self._recent_job is not None or not self.is_mounted:
            return
        key = self.table.cursor_key
        panel = self.details_panel
        if key is None or key != self.model.selected:
            panel.show_why(None)
            return
        cached = self.model.cache.get(key)
        job = self.model.live.get(key)
        now: datetime = self.model.clock()
        panel.show_why(self._why_book.why(key, cached.details if cached else None, job, now))
        ticked = self.model.ticked_elapsed().get(key) if job is not None and job.category is StateCategory.RUNNING \
            else None
        panel.tick(parse_duration(ticked) if ticked else None)

    # ------------------------------------------------------------ a word when a job starts or ends

    def _waiting_queue_applied(self) -> None:
        self._announce(self._transitions.observe(self.model.live, all_users=self.model.all_users))

    def _waiting_outcomes(self, outcomes: tuple[tuple[str, Outcome], ...]) -> None:
        told: list[Notice] = []
        for key, outcome in outcomes:
            if outcome.finished:
                told += self._transitions.outcome(key, outcome.state, outcome.exit_code)
        self._announce(told)

    def _waiting_records(self, jobs: RecentJobs | None) -> None:
        found = {j.job_id: (j.state, j.verdict) for j in (jobs.jobs if jobs is not None else ())}
        self._announce(self._transitions.records(found))

    def _announce(self, notices: list[Notice]) -> None:
        settings = self.full_settings.notify
        for notice in notices:
            announce(self.app, notice, settings)

    # ------------------------------------------------------------ what would start sooner (w)

    def action_what_if(self) -> None:
        """``w`` on a pending job: its shapes asked of sbatch --test-only with its own script (ntui's record of it,
        else ``scontrol write batch_script``); Enter resubmits an ntui job with the chosen change."""
        from ntui.ui.screens.whatif import WhatIfScreen

        key = self.table.cursor_key
        job = self.model.live.get(key) if key else None
        if key is None or job is None or job.category is not StateCategory.PENDING:
            self.notify("Select a pending job to see what would start sooner (in the compose view, w asks it of "
                        "the form).", severity="warning")
            return
        entry = self.model.entries.get(key)
        cached = self.model.cache.get(key)
        details = cached.details if cached else None
        runner, timeout = self.runner, self.model.slurm_timeout

        def plan() -> Any:
            from ntui.core.slurm.runner import SlurmError
            from ntui.core.slurm.sacctmgr import user_associations
            from ntui.core.slurm.scontrol import batch_script, list_partitions
            from ntui.core.waiting.whatif import ShapeInput, plan_shapes, script_tester

            try:
                parts = list_partitions(runner, timeout=timeout)
            except SlurmError:
                parts = ()
            assoc = user_associations(runner, timeout=timeout)
            account = details.account if details else None
            qos = next((q for a, q in assoc.pairs if a == account), assoc.qos) if account else assoc.qos
            script = entry.script if entry is not None and entry.script else batch_script(runner, key,
                                                                                          timeout=timeout)
            shape = ShapeInput(job.num_nodes or 1, job.time_limit_s, (details.qos if details else None) or job.qos,
                               job.partition or None, account)
            where = "its script from ntui's history" if entry is not None and entry.script else \
                "its script from scontrol write batch_script"
            return plan_shapes(shape, partitions=parts, qos_choices=qos), script_tester(runner, script), where

        def chosen(shape: Shape | None) -> None:
            if shape is not None and shape.override:
                self.resubmit(key, (shape.override,))

        apply = "resubmit with this change (the compose view)" if entry is not None else ""
        self.app.push_screen(WhatIfScreen(f"job {key} {job.name}", plan, apply=apply, clock=self.model.clock),
                             chosen)

    # ------------------------------------------------------------ a shell inside a running job (x)

    def action_shell(self) -> None:
        """``x`` on a running job: the app steps aside for ``srun --jobid=ID --overlap --pty -N 1 -n 1 -w NODE
        bash`` on its first node (another node: ``ntui attach ID --node N``), and comes back when it exits."""
        from textual.app import SuspendNotSupported

        from ntui.core.slurm.srun import build_shell_argv, run_interactive

        target = self._target("open a shell in")
        if target is None:
            return
        key, job = target
        if job.category is not StateCategory.RUNNING:
            self.notify(f"Job {key} is {job.state}: a shell needs a running job.", severity="warning")
            return
        node = job.nodes[0] if job.nodes else None
        argv = build_shell_argv(key, node=node)
        try:
            with self.app.suspend():
                terminal = sys.__stderr__
                if terminal is not None:
                    terminal.write(f"ntui: {' '.join(argv)}\n"
                                   f"ntui: a shell in job {key} on {node}; exit it to come back to ntui\n")
                    terminal.flush()
                code = run_interactive(argv, bin_dir=self.full_settings.slurm.bin_dir)
        except SuspendNotSupported:
            self.notify(f"This terminal cannot hand over to a shell here: run ntui attach {key}",
                        severity="warning")
            return
        self.notify(f"back from the shell on {node} (exit {code})", title=f"job {key}", timeout=4)
        self.refresh_now()
