"""What would start sooner: a dialog with a few shapes of one job side by side, each with Slurm's estimate
(:mod:`ntui.core.waiting.whatif`). The compose view opens it on the form (``w``; Enter applies the chosen shape's
override to the form), the jobs view on a pending job (``w``; Enter opens its resubmission with that change, for
ntui's jobs).

The planning (which may ask Slurm for the partitions and the user's QOS) and every ``sbatch --test-only`` run in
one thread worker, started when the dialog opens and cancelled when it closes; each answer fills its row as it
comes. Nothing runs again until the dialog is opened again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static
from textual.worker import Worker, WorkerState, get_current_worker

from ntui.core.waiting.whatif import Shape, ShapeResult, Tester, run_shapes, summary
from ntui.core.waiting.why import format_start
from ntui.ui.messages import WhatIfAnswered, WhatIfPlanned

__all__ = ["WHATIF_GROUP", "Planner", "WhatIfScreen"]

WHATIF_GROUP = "ntui-whatif"

#: *Thread-side*: the shapes to ask about and the tester that asks Slurm of one, with a note for the dialog.
Planner = Callable[[], tuple[tuple[Shape, ...], Tester, str]]


class WhatIfScreen(ModalScreen[Shape | None]):
    """Dismisses with the chosen shape (Enter on a row with a change, when ``apply`` is set) or None."""

    DEFAULT_CSS = """
    WhatIfScreen {
        align: center middle;
        & > Vertical {
            width: 96%;
            max-width: 130;
            height: auto;
            max-height: 90%;
            border: thick $primary;
            background: $surface;
            padding: 0 1;
        }
        & .title { text-style: bold; }
        & .note { color: $text-muted; height: auto; }
        & #whatif-table { height: auto; max-height: 12; margin: 1 0; }
        & #whatif-summary { height: auto; text-style: bold; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "apply", "Apply", id="ntui.whatif.apply", tooltip="Use the highlighted shape"),
        Binding("escape,q,w", "close", "Close", id="ntui.whatif.close"),
    ]

    def __init__(self, title: str, planner: Planner, *, apply: str = "", clock: Callable[[], datetime]) -> None:
        super().__init__()
        self.title_text = title
        self.planner = planner
        self.apply_text = apply
        self.clock = clock
        self.shapes: tuple[Shape, ...] = ()
        self.results: dict[Shape, ShapeResult] = {}
        self.done = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"What would start sooner · {self.title_text}", classes="title", markup=False)
            yield Static("planning: the cluster's partitions and your QOS…", id="whatif-note", classes="note",
                         markup=False)
            table: DataTable[str | Text] = DataTable(id="whatif-table", cursor_type="row", zebra_stripes=False)
            yield table
            yield Static("", id="whatif-summary", markup=False)
            keys = (f"Enter: {self.apply_text} · " if self.apply_text else "") + "Esc: close"
            yield Static(f"Each row is sbatch --test-only of the job with one change (nothing is submitted). {keys}",
                         classes="note", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#whatif-table", DataTable)
        for title in ("Shape", "Slurm's estimate", "Where"):
            table.add_column(title, key=title)
        table.focus()
        self._ask()

    @work(thread=True, exclusive=True, exit_on_error=False, group=WHATIF_GROUP, description="what would start sooner")
    def _ask(self) -> None:
        shapes, test, note = self.planner()
        self.post_message(WhatIfPlanned(shapes, note))
        worker = get_current_worker()

        def answered(result: ShapeResult) -> None:
            self.post_message(WhatIfAnswered(result))

        run_shapes(shapes, test, on_result=answered, cancelled=lambda: worker.is_cancelled)

    @on(WhatIfPlanned)
    def _planned(self, msg: WhatIfPlanned) -> None:
        msg.stop()
        self.shapes = msg.shapes
        table = self.query_one("#whatif-table", DataTable)
        for shape in msg.shapes:
            table.add_row(shape.label, Text("asking…", style="dim"), "", key=shape.label)
        count = len(msg.shapes)
        self.query_one("#whatif-note", Static).update(
            (msg.note + " · " if msg.note else "") + f"{count} sbatch --test-only call{'s' if count != 1 else ''}")

    @on(WhatIfAnswered)
    def _answered(self, msg: WhatIfAnswered) -> None:
        msg.stop()
        r = msg.result
        self.results[r.shape] = r
        now = self.clock()
        table = self.query_one("#whatif-table", DataTable)
        if r.ok and r.start is not None:
            cell = Text(format_start(r.start, now), style="bold green" if r.starts_now(now) else "")
        elif r.ok:
            cell = Text(r.reason or "accepted")
        else:
            cell = Text(f"refused: {r.reason}", style="red")
        where = " · ".join(x for x in (r.nodes or "", r.partition or "") if x)
        table.update_cell(r.shape.label, "Slurm's estimate", cell, update_width=True)
        table.update_cell(r.shape.label, "Where", where, update_width=True)
        if len(self.results) == len(self.shapes):
            self.done = True
            ordered = [self.results[s] for s in self.shapes if s in self.results]
            self.query_one("#whatif-summary", Static).update(summary(ordered, now))

    def failed(self, message: str) -> None:
        """The worker failed (the app's notification is out): say so in the dialog."""
        self.done = True
        self.query_one("#whatif-summary", Static).update(f"✗ {message}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The worker's failure (an unreachable controller, a missing sbatch) is said in the dialog."""
        if event.state is WorkerState.ERROR:
            from ntui.core.errors import describe_error

            self.failed(describe_error(event.worker.error))

    def action_apply(self) -> None:
        if not self.apply_text:
            return
        table = self.query_one("#whatif-table", DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        shape = next((s for s in self.shapes if s.label == key), None)
        if shape is not None and shape.key:
            self.dismiss(shape)

    @on(DataTable.RowSelected, "#whatif-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:  # Enter on the table (it binds the key itself)
        event.stop()
        self.action_apply()

    def action_close(self) -> None:
        for worker in self.workers:
            worker.cancel()
        self.dismiss(None)
