"""Confirm a submission: the exact script that will go to sbatch, and a one-line summary."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ntui.core.compose.render import log_paths
from ntui.core.compose.spec import JobSpec
from ntui.ui.widgets.script_preview import ScriptPreview


def summary(spec: JobSpec, preset: str, overrides: tuple[str, ...]) -> Content:
    per_node = spec.ntasks_per_node if spec.launcher == "srun" else spec.nproc_per_node
    opts = {d.option: d.value for d in spec.directives}
    where = ", ".join(f"{k} {opts[k]}" for k in ("partition", "account", "qos") if opts.get(k)) or "default partition"
    lines = [
        Content.assemble(("Preset ", "$text-muted"), (preset, "bold"),
                         (f"  ({len(overrides)} field(s) changed)" if overrides else "", "$text-warning")),
        Content.assemble(("Job ", "$text-muted"), (spec.job_name, "bold"), ("  ", ""),
                         (f"{spec.launcher}: {spec.nodes} node(s) × {per_node} = world size {spec.world_size}", ""),
                         (f", time {opts.get('time') or 'partition default'}, {where}", "")),
        Content.assemble(("Logs ", "$text-muted"), (log_paths(spec).batch_pattern, "")),
    ]
    return Content("\n").join(lines)


class ConfirmSubmitScreen(ModalScreen[bool]):
    """Dismisses True to submit, False to go back (the form is untouched either way)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Submit", id="ntui.confirm.submit"),
        Binding("n,escape", "answer(False)", "Cancel", id="ntui.confirm.cancel"),
    ]

    def __init__(self, spec: JobSpec, script: str, preset: str, overrides: tuple[str, ...],
                 destination: str | None = None) -> None:
        super().__init__()
        self.destination = destination  # a cluster reached over ssh (None: Slurm here)
        self.spec = spec
        self.script = script
        self.preset = preset
        self.overrides = overrides

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="confirm-dialog"):
            where = f" to {self.destination} (over ssh)" if self.destination else ""
            yield Label(f"Submit this job{where}?", classes="dialog-title")
            yield Static(summary(self.spec, self.preset, self.overrides), id="confirm-summary")
            preview = ScriptPreview.create(self.script, id="confirm-script")
            preview.border_title = "sbatch script (what is submitted; ntui's own lines folded: f shows them)"
            yield preview
            with Horizontal(classes="dialog-buttons"):
                yield Button("Submit (y)", variant="success", id="submit")
                yield Button("Cancel (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#submit", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "submit")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
