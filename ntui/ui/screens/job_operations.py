"""What the jobs view does to a job: cancel, signal, hold or release, requeue, resubmit, what would start sooner
(``w``) and a shell inside a running job (``x``).

:class:`JobOperations` is a collaborator of :class:`~ntui.ui.screens.jobs.JobsScreen` (the screen's key actions call it
in one line each): it reads the view through :class:`JobsView` (the model, the queue table and its folded arrays, the
runner) and acts through the screen (dialogs, workers, notices). Every Slurm call is planned in the core
(:func:`ntui.core.jobs.actions.plan_action`, :func:`ntui.core.jobs.resubmit.plan_resubmit`,
:func:`ntui.core.waiting.whatif.plan_for_job`) and runs in a thread worker; a call's result comes back as
:class:`~ntui.ui.messages.ActionDone`, which the screen hands to :meth:`JobOperations.done`.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from ntui.core.jobs.actions import ActionKind, loss_warning, plan_action
from ntui.core.jobs.arrays import Folded
from ntui.core.jobs.clusters import split_key
from ntui.core.jobs.resubmit import ResubmitPlan, plan_resubmit
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.squeue import QueueJob
from ntui.ui.messages import ActionDone
from ntui.ui.screens.action_dialogs import ConfirmCancelScreen, ConfirmRequeueScreen, SignalPickerScreen
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.screens.jobs_view import JobsViewCore

if TYPE_CHECKING:
    from ntui.core.waiting.whatif import Shape

__all__ = ["ACTION_GROUP", "RESUBMIT_GROUP", "JobOperations", "JobsView"]

#: Workers' groups (the jobs view's ``busy`` counts the actions' workers).
ACTION_GROUP = "ntui-action"
RESUBMIT_GROUP = "ntui-resubmit"


class JobsView(JobsViewCore, Protocol):
    """What the actions read of the jobs view, besides its core."""

    @property
    def folded(self) -> Folded: ...

    def runner_for(self, cluster: str | None) -> CommandRunner: ...

    def open_history_entry(self, job_id: str) -> HistoryEntry | None: ...

    def refresh_now(self) -> None: ...


class JobOperations:
    """The jobs view's actions on the selected job (see the module docstring)."""

    def __init__(self, screen: NtuiScreen, view: JobsView) -> None:
        self.screen = screen
        self.view = view

    # ------------------------------------------------------------ the job acted on

    def target(self, what: str) -> tuple[str, QueueJob] | None:
        """The queue's selected job (a job array's row: the whole array, as Slurm takes it), or None with a word
        why there is none."""
        view, screen = self.view, self.screen
        key = view.table.cursor_key
        if key is None:
            screen.notify(f"No job selected to {what}.", severity="warning")
            return None
        if self.cluster_of(key) is not None:  # a job of a cluster reached over ssh: the action goes there
            remote = view.clusters.row(key)
            if remote is None:
                screen.notify(f"Job {key} has left the queue; nothing to {what}.", severity="warning")
                return None
            return key, remote.job
        arrays = view.folded.arrays
        if key in arrays:
            live = [view.model.live[t] for t in arrays[key] if t in view.model.live]
            if not live:
                screen.notify(f"Job array {key} has left the queue; nothing to {what}.", severity="warning")
                return None
            return key, live[0]
        job = view.model.live.get(key)
        if job is None:
            screen.notify(f"Job {key} has left the queue; nothing to {what}.", severity="warning")
            return None
        return key, job

    def cluster_of(self, key: str) -> str | None:
        """The cluster reached over ssh of row ``key`` (None: the local cluster's row)."""
        cluster, _ = split_key(key)
        return cluster if cluster is not None and cluster in self.view.clusters.names() else None

    @staticmethod
    def summary(job: QueueJob) -> str:
        where = job.nodelist or (f"({job.reason})" if job.reason else "")
        return f"{job.name} · {job.state} · {job.elapsed} of {job.time_limit} · {where}".strip(" ·")

    # ------------------------------------------------------------ cancel, signal, hold, requeue

    def cancel(self) -> None:
        """``c``: asks first; a long run's chained successor in the queue may be cancelled with it."""
        target = self.target("cancel")
        if target is None:
            return
        key, job = target
        model = self.view.model
        journal = model.journals.get(key)
        successor = journal.run_next if journal is not None and journal.continued == "chain" else None
        if successor is not None and successor not in model.live:
            successor = None  # already ended, or not in the queue: nothing left to ask about
        run_id = (journal.run_id or "") if journal is not None else ""
        self.screen.app.push_screen(ConfirmCancelScreen(key, self.summary(job), successor, run_id),
                                    partial(self._confirmed, "cancel", key, job, successor))

    def _confirmed(self, kind: ActionKind, key: str, job: QueueJob, also: str | None = None,
                   yes: bool | str | None = None) -> None:
        if yes == "chain" and also:
            self.act(kind, key, job, also=(also,))
        elif yes:
            self.act(kind, key, job)

    def signal(self) -> None:
        target = self.target("signal")
        if target is not None:
            self.screen.app.push_screen(SignalPickerScreen(target[0]), partial(self._picked_signal, *target))

    def _picked_signal(self, key: str, job: QueueJob, signal: str | None) -> None:
        if signal:
            self.act("signal", key, job, signal)

    def hold_release(self) -> None:
        target = self.target("hold")
        if target is not None:
            self.act("hold", *target)

    def requeue(self) -> None:
        """``R`` asks first: a running job's work since its last checkpoint is lost."""
        target = self.target("requeue")
        if target is None:
            return
        key, job = target
        self.screen.app.push_screen(
            ConfirmRequeueScreen(key, self.summary(job), loss_warning("requeue", job) or ""),
            partial(self._confirmed, "requeue", key, job, None))

    def act(self, kind: ActionKind, key: str, job: QueueJob, signal: str | None = None,
            also: tuple[str, ...] = ()) -> None:
        view, screen = self.view, self.screen
        cluster = self.cluster_of(key)
        job_id = split_key(key)[1] if cluster is not None else key
        # the job's own cluster's runner: two clusters' job 1234 are two jobs
        action = plan_action(kind, view.runner_for(cluster), job_id, job, timeout=view.model.slurm_timeout,
                             signal=signal, also=also)
        if isinstance(action, str):
            screen.notify(action, severity="warning")
            return
        where = f" on {cluster}" if cluster is not None else ""
        description, done = f"{action.description}{where}", f"{action.done.rstrip('.')}{where}."

        def work() -> None:
            action.call()
            screen.post_message(ActionDone(done))

        screen.run_worker(work, thread=True, exit_on_error=False, group=ACTION_GROUP, description=description)

    def done(self, text: str) -> None:
        self.screen.notify(text, timeout=4)
        self.view.refresh_now()

    # ------------------------------------------------------------ resubmit (ntui/ui/screens/resubmit.py)

    def resubmit(self, job_id: str, extra: tuple[str, ...] = ()) -> None:
        """Plan the resubmission of ``job_id`` (with ``extra`` overrides on top) in a worker: a sweep with failed
        tasks resubmits those (ntui/ui/screens/sweep_resubmit.py), any other job opens in the compose view."""
        self.screen.run_worker(partial(self._plan_resubmit, job_id, extra), thread=True, exclusive=True,
                               exit_on_error=False, group=RESUBMIT_GROUP, description="resubmit")

    def _plan_resubmit(self, job_id: str, extra: tuple[str, ...]) -> None:
        app = self.screen.app
        entry = self.view.open_history_entry(job_id)
        if entry is None:
            app.call_from_thread(self.screen.notify, f"Job {job_id} was not submitted by ntui: no preset to open.",
                                 severity="warning")
            return
        if not extra:
            from ntui.ui.screens.sweep_resubmit import failed_plan

            failed = failed_plan(entry, self.view.runner, self.view.model.slurm_timeout)
            if failed is not None:
                app.call_from_thread(self._resubmit_failed, entry, failed)
                return
        app.call_from_thread(self._resubmit_planned, plan_resubmit(entry, extra))

    def _resubmit_failed(self, entry: HistoryEntry, plan: Any) -> None:
        from ntui.ui.screens.sweep_resubmit import ResubmitFailedScreen, submit_failed

        screen = self.screen

        def answered(yes: bool | None) -> None:
            if yes:
                screen.run_worker(partial(submit_failed, screen, entry, plan), thread=True, exit_on_error=False,
                                  group=RESUBMIT_GROUP, description="resubmit failed tasks")

        screen.app.push_screen(ResubmitFailedScreen(plan), answered)

    def _resubmit_planned(self, plan: ResubmitPlan) -> None:
        from ntui.ui.screens.resubmit import ResubmitDiffScreen, open_in_compose

        app = self.screen.app
        if plan.problem:
            self.screen.notify(plan.problem, title=f"Cannot resubmit job {plan.job_id}", severity="error",
                               timeout=12)
        elif plan.diff:
            def answered(yes: bool | None) -> None:
                if yes:
                    app.call_later(open_in_compose, app, plan)

            app.push_screen(ResubmitDiffScreen(plan), answered)
        else:
            app.call_later(open_in_compose, app, plan)

    # ------------------------------------------------------------ what would start sooner (w)

    def what_if(self) -> None:
        """``w`` on a pending job: its shapes asked of sbatch --test-only with its own script (ntui's record of it,
        else ``scontrol write batch_script``); Enter resubmits an ntui job with the chosen change."""
        from ntui.core.waiting.whatif import plan_for_job
        from ntui.ui.screens.whatif import WhatIfScreen

        view, screen = self.view, self.screen
        model = view.model
        key = view.table.cursor_key
        job = model.live.get(key) if key else None
        if key is None or job is None or job.category is not StateCategory.PENDING:
            screen.notify("Select a pending job to see what would start sooner (in the compose view, w asks it of "
                          "the form).", severity="warning")
            return
        entry = model.entries.get(key)
        cached = model.cache.get(key)
        script = entry.script if entry is not None and entry.script else None
        plan = partial(plan_for_job, view.runner, key, job, cached.details if cached else None, script,
                       timeout=model.slurm_timeout)

        def chosen(shape: Shape | None) -> None:
            if shape is not None and shape.override:
                self.resubmit(key, (shape.override,))

        apply = "resubmit with this change (the compose view)" if entry is not None else ""
        screen.app.push_screen(WhatIfScreen(f"job {key} {job.name}", plan, apply=apply, clock=model.clock), chosen)

    # ------------------------------------------------------------ a shell inside a running job (x)

    def shell(self) -> None:
        """``x`` on a running job: the app steps aside for ``srun --jobid=ID --overlap --pty -N 1 -n 1 -w NODE
        bash`` on its first node (another node: ``ntui attach ID --node N``), and comes back when it exits. A job
        of a cluster reached over ssh: the same step on that cluster's login node, ``ssh -t`` over its master, as
        ``ntui --cluster NAME attach`` runs it (:func:`~ntui.core.remote.shell.job_shell`)."""
        from textual.app import SuspendNotSupported

        from ntui.core.remote.shell import job_shell

        target = self.target("open a shell in")
        if target is None:
            return
        key, job = target
        screen = self.screen
        cluster = self.cluster_of(key)
        job_id = split_key(key)[1] if cluster is not None else key
        if job.category is not StateCategory.RUNNING:
            screen.notify(f"Job {key} is {job.state}: a shell needs a running job.", severity="warning")
            return
        node = job.nodes[0] if job.nodes else None
        shell = job_shell(self.view.runner_for(cluster), job_id, node=node,
                          bin_dir=self.view.full_settings.slurm.bin_dir)
        attach = f"ntui --cluster {cluster} attach {job_id}" if cluster is not None else f"ntui attach {key}"
        if cluster is not None and shell.ssh is None:  # no ssh under the cluster's runner: nothing to hand over to
            screen.notify(f"Job {key} is on {cluster}, but its runner is not an ssh login: run {attach}",
                          severity="warning")
            return
        try:
            with screen.app.suspend():
                terminal = sys.__stderr__
                if terminal is not None:
                    terminal.write(f"ntui: {shell.words}\n"
                                   f"ntui: a shell in job {key} on {node}; exit it to come back to ntui\n")
                    terminal.flush()
                code = shell.run()
        except SuspendNotSupported:
            screen.notify(f"This terminal cannot hand over to a shell here: run {attach}", severity="warning")
            return
        except SlurmError as exc:  # ssh not installed here: said, the app back
            screen.notify(f"No shell in job {key}: {exc}", severity="error")
            return
        screen.notify(f"back from the shell on {node} (exit {code})", title=f"job {key}", timeout=4)
        self.view.refresh_now()
