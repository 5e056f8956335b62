"""Resubmit from the app: the diff dialog, opening the compose view with a job's preset and overrides.

The plan (which preset, which overrides, what changed in the script) is the core's
(:func:`ntui.core.jobs.resubmit.plan_resubmit`, the same as ``ntui resubmit``); this module only shows it:

* :class:`ResubmitDiffScreen`: the preset changed since the job was submitted; the unified diff of the
  recorded script against the script the preset renders now; ``enter`` opens it in the compose view anyway;
* :func:`open_in_compose`: switches to the compose view and opens the preset with the overrides filled into
  the form (:func:`form_texts`); the submission then records ``resubmit_of``.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.highlight import highlight
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ntui.core.jobs.resubmit import ResubmitPlan

if TYPE_CHECKING:
    pass

__all__ = ["ResubmitDiffScreen", "open_in_compose"]


class ResubmitDiffScreen(ModalScreen[bool]):
    """The preset changed since the job ran: what changed in the script. True: open it in compose anyway."""

    DEFAULT_CSS = """
    ResubmitDiffScreen #resubmit-dialog { width: 90%; height: 90%; }
    ResubmitDiffScreen #resubmit-diff { height: 1fr; border: round $panel-lighten-2; }
    """

    BINDINGS = [
        Binding("enter,y", "answer(True)", "Open in compose", id="ntui.resubmit.open"),
        Binding("escape,n", "answer(False)", "Cancel", id="ntui.resubmit.cancel"),
    ]

    def __init__(self, plan: ResubmitPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(classes="dialog", id="resubmit-dialog"):
            yield Label(f"Preset {plan.ref} changed since job {plan.job_id} was submitted", classes="dialog-title")
            yield Static("The script it renders now with the job's overrides differs from the one the job ran:",
                         classes="dialog-text", markup=False)
            with VerticalScroll(id="resubmit-diff"):
                yield Static(highlight(plan.diff.rstrip("\n"), language="diff"), id="resubmit-diff-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open in compose (enter)", variant="primary", id="open")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#open", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "open")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


async def open_in_compose(app: App[Any], plan: ResubmitPlan) -> None:
    """Switch to the compose view and open the plan's preset with its overrides (the next submission
    records ``resubmit_of``)."""
    from ntui.ui.screens.compose import ComposeScreen

    await app.switch_mode("compose")
    screen = app.screen
    if isinstance(screen, ComposeScreen):  # edits in the form are never dropped without asking
        screen.guard_edits(f"Resubmitting job {plan.job_id}",
                           partial(screen.open_preset, plan.ref, plan.overrides, resubmit_of=plan.job_id))
    app.notify(f"Job {plan.job_id}: preset {plan.ref}" + (f" with {len(plan.overrides)} override(s)"
                                                           if plan.overrides else "") + "; s submits it again",
               title="Resubmit")
