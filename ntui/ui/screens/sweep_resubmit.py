"""``ctrl+r`` on a sweep with failed tasks: those tasks alone, with the same values (``ntui resubmit --failed``).

The jobs view's worker asks :func:`failed_plan` (one Slurm call for every task,
:func:`ntui.core.jobs.sweep.plan_failed`); with failed or cancelled tasks it shows :class:`ResubmitFailedScreen`
(which tasks, with which values), and on ``y`` :func:`submit_failed` renders the recorded preset with its
overrides, checks that it gives the same task index -> values (the manifest), and submits ``--array=1,4%P`` linked
to the sweep (``resubmit_of``). A sweep without failed tasks resubmits as any job (the compose view).
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ntui.core.jobs.sweep import FailedPlan, plan_failed, same_manifest
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.runner import CommandRunner
from ntui.core.textsafe import inert

__all__ = ["ResubmitFailedScreen", "failed_plan", "submit_failed"]

#: Tasks listed with their values in the dialog (the rest are counted).
SHOWN_TASKS = 8


def failed_plan(entry: HistoryEntry, runner: CommandRunner, timeout: float) -> FailedPlan | None:
    """*Thread-side*: the failed tasks of ``entry``'s sweep; None when it is no sweep or none failed."""
    from ntui.core.jobfiles.manifest import is_sweep_script

    if not is_sweep_script(entry.script):
        return None
    plan = plan_failed(entry, runner, timeout=timeout)
    return plan if plan.indices else None


def _shown(values: dict[str, str] | Any) -> str:
    return "  ".join(f"{k}={v!r}" if not str(v).isprintable() or " " in str(v) else f"{k}={v}"
                     for k, v in dict(values).items())


class ResubmitFailedScreen(ModalScreen[bool]):
    """Dismisses True to resubmit the failed tasks, False to leave them."""

    BINDINGS = [
        Binding("y", "answer(True)", "Resubmit", id="ntui.sweep_resubmit.yes"),
        Binding("n,escape", "answer(False)", "Cancel", id="ntui.sweep_resubmit.no"),
    ]

    def __init__(self, plan: FailedPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        lines = [f"Sweep {plan.job_id}: {plan.counts}.",
                 f"Resubmit tasks {plan.array} alone, each with the same values (--array={plan.array}):"]
        lines += [f"  task {i}: {inert(_shown(v))}" for i, v in plan.values[:SHOWN_TASKS]]
        if len(plan.values) > SHOWN_TASKS:
            lines.append(f"  ... and {len(plan.values) - SHOWN_TASKS} more")
        with Vertical(classes="dialog", id="resubmit-failed-dialog"):
            yield Label("Resubmit the failed tasks?", classes="dialog-title")
            yield Static("\n".join(lines), id="resubmit-failed-summary", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Resubmit (y)", variant="success", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


def submit_failed(screen: Any, entry: HistoryEntry, plan: FailedPlan) -> None:
    """*Thread-side* (a worker of the jobs view ``screen``): submit ``plan``'s tasks; says how it went."""
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.sitecheck import check_array_size
    from ntui.core.compose.spec import validate
    from ntui.core.errors import describe_error
    from ntui.core.jobs.resubmit import preset_ref
    from ntui.core.jobs.submission import submit_job
    from ntui.core.problems import PresetError
    from ntui.core.slurm.runner import SlurmError
    from ntui.ui.messages import JobSubmitted

    app = screen.app

    def say(text: str, severity: str = "error") -> None:
        app.call_from_thread(screen.notify, text, title=f"Sweep {plan.job_id}", severity=severity, timeout=12)

    ref = preset_ref(entry)
    try:
        loaded = load_preset(ref, entry.overrides)
    except PresetError as exc:
        say(f"preset {ref} no longer loads: {exc.problems[0] if exc.problems else exc}")
        return
    spec, problems = validate(loaded)
    if spec is None or spec.sweep is None:
        first = next((str(p) for p in problems if p.is_error), "it is no sweep now")
        say(f"preset {ref} no longer renders the sweep: {first}")
        return
    changed = same_manifest(plan, spec.sweep.manifest_bytes())
    if changed:
        say(f"not resubmitted: {changed}")
        return
    runner = screen.runner
    refused = [p for p in check_array_size(spec, runner, loaded=loaded) if p.is_error]
    if refused:
        say(f"not resubmitted: {refused[0].message}")
        return
    history = screen._open_history()
    try:
        job = submit_job(loaded, spec, runner, history, resubmit_of=entry.job_id, indices=plan.indices)
    except (SlurmError, OSError, ValueError) as exc:
        say(f"not resubmitted: {describe_error(exc)}")
        return
    finally:
        if history is not None:
            history.close()
    say(f"tasks {plan.array} resubmitted as job {job.job_id}", "information")
    app.call_from_thread(app.post_message, JobSubmitted(loaded.name, job))
