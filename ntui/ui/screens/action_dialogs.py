"""Dialogs for the jobs view's actions: confirm a cancel, pick a signal."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

__all__ = ["SIGNALS", "ConfirmCancelScreen", "ConfirmJobActionScreen", "ConfirmRequeueScreen", "SignalPickerScreen"]

#: The signals the picker offers (turm's set), with what each usually does to a training job.
SIGNALS: tuple[tuple[str, str], ...] = (
    ("TERM", "terminate: the polite stop (what scancel sends first)"),
    ("INT", "interrupt, as Ctrl-C: Python raises KeyboardInterrupt"),
    ("HUP", "hang up: some programs reload or checkpoint"),
    ("USR1", "user signal 1: often 'checkpoint now'"),
    ("USR2", "user signal 2: program-defined"),
    ("STOP", "pause every process (the allocation is kept)"),
    ("CONT", "resume stopped processes"),
    ("KILL", "kill at once: no cleanup, no checkpoint"),
)

_DIALOG_CSS = """
{name} {
    align: center middle;
    & > Vertical {
        width: 72;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 1 2;
    }
    & .title { text-style: bold; margin-bottom: 1; }
    & .text { margin-bottom: 1; height: auto; }
    & .note { color: $text-muted; height: auto; }
    & .buttons { height: auto; align-horizontal: right; margin-top: 1; }
    & .buttons Button { margin-left: 2; }
    & OptionList { height: auto; max-height: 12; }
}
"""


class ConfirmJobActionScreen(ModalScreen["bool | str"]):
    """"<Verb> job N?" for an action that loses work. Dismisses with True only for an explicit yes; the focus
    starts on the safe button."""

    DEFAULT_CSS = _DIALOG_CSS.replace("{name}", "ConfirmJobActionScreen")

    # each action's dialog binds y / n,escape to ``answer`` with ids of its own (help lists them per dialog)

    def __init__(self, job_id: str, summary: str = "", *, verb: str, runs: str, warning: str = "") -> None:
        super().__init__()
        self.job_id = job_id
        self.summary = summary
        self.verb = verb
        self.runs = runs
        self.warning = warning

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.verb.capitalize()} job {self.job_id}?", classes="title")
            if self.summary:
                yield Static(self.summary, classes="text", markup=False)
            if self.warning:
                yield Static(self.warning, classes="text", id="warning", markup=False)
            yield Static(f"Runs: {self.runs}", classes="note", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.verb.capitalize()} job (y)", variant="error", id="yes")
                yield Button("Keep it (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ConfirmCancelScreen(ConfirmJobActionScreen):
    """"Cancel job N?" (``c``). A link of a long run whose successor already waits (``continue: chain``) is asked
    about the chain too: ``a`` cancels both (dismisses with ``"chain"``), ``y`` this job only (the successor then
    starts after it and resumes the run)."""

    DEFAULT_CSS = _DIALOG_CSS.replace("{name}", "ConfirmCancelScreen")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Cancel the job", id="ntui.jobs.confirm_cancel.yes"),
        Binding("a", "chain", "Cancel it and the run's next job", id="ntui.jobs.confirm_cancel.chain"),
        Binding("n,escape", "answer(False)", "Keep it", id="ntui.jobs.confirm_cancel.no"),
    ]

    def __init__(self, job_id: str, summary: str = "", successor: str | None = None, run_id: str = "") -> None:
        warning = (f"Job {successor} waits to continue run {run_id} after this one (continue: chain). "
                   f"a: cancel both and stop the run; y: cancel only {job_id} (job {successor} then starts and "
                   "resumes from the last checkpoint).") if successor else ""
        runs = f"scancel {job_id}" + (f" (a: scancel {job_id} {successor})" if successor else "")
        super().__init__(job_id, summary, verb="cancel", runs=runs, warning=warning)
        self.successor = successor

    def on_mount(self) -> None:
        if self.successor:
            self.query_one(".buttons", Horizontal).mount(Button("Cancel both (a)", variant="error", id="chain"),
                                                          before=0)
        super().on_mount()

    @on(Button.Pressed, "#chain")
    def _chain_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss("chain")

    def action_chain(self) -> None:
        if self.successor:
            self.dismiss("chain")


class ConfirmRequeueScreen(ConfirmJobActionScreen):
    """"Requeue job N?" (``R``): a running job is killed and starts again from the beginning."""

    DEFAULT_CSS = _DIALOG_CSS.replace("{name}", "ConfirmRequeueScreen")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Requeue the job", id="ntui.jobs.confirm_requeue.yes"),
        Binding("n,escape", "answer(False)", "Keep it", id="ntui.jobs.confirm_requeue.no"),
    ]

    def __init__(self, job_id: str, summary: str = "", warning: str = "") -> None:
        super().__init__(job_id, summary, verb="requeue", runs=f"scontrol requeue {job_id}", warning=warning)


class SignalPickerScreen(ModalScreen["str | None"]):
    """Pick a signal to send to a job's steps; dismisses with its name (``"USR1"``) or None."""

    DEFAULT_CSS = _DIALOG_CSS.replace("{name}", "SignalPickerScreen")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="ntui.jobs.signal.cancel"),
    ]

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Send a signal to job {self.job_id}", classes="title")
            yield OptionList(
                *(Option(f"{name:<5} {what}", id=name) for name, what in SIGNALS),
                id="signal-list",
            )
            yield Static(
                f"Runs: scancel --signal=SIG {self.job_id}: every step gets it; the batch shell does not.",
                classes="note",
                markup=False,
            )

    def on_mount(self) -> None:
        options = self.query_one("#signal-list", OptionList)
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected, "#signal-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
