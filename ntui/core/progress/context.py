"""What the file reader carries from one line of a log to the next, apart from the run's progress itself.

:func:`ntui.core.progress.read.feed_line` reads a log one line at a time; a few of its rules need the lines before:
a record hard-wrapped at a comma, a logger's header on the line before its message, a section titled as an
evaluation's, an epoch's banner, the columns of a table drawn before its rows, an editor's line numbers, pdsh's
hosts, ignite's engines running, the program's first line (printed again: a start again) and the shapes of the
lines no form reads (:mod:`ntui.core.progress.shapes`). They live here, one value in each
:class:`~ntui.core.progress.series.Series` (its ``lines``), so that the series' own fields say the run only and the
reader's state is copied with it (the file reader's trial of a cut last line, the followed log's series).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ntui.core.progress.shapes import ShapeReader

__all__ = ["LineContext"]


@dataclass
class LineContext:
    """The reader's state between lines (see the module doc)."""

    wrapped: str | None = None  # the record read so far, where the last line ended in a comma (glued to the next)
    header_rank: int | None = None  # the rank a logger's header named on the line before, its message on this one
    # a section titled as an evaluation's began after the last point (a rule "──── Validation ────" over its
    # results): its lines' metrics are not the training's, until the next point
    in_eval_section: bool = False
    banner_epoch: tuple[int, int | None] | None = None  # the epoch, of the run's epochs, the last epoch's banner named
    notebook_table: tuple[str, ...] | None = None  # the columns of the Trainer's notebook table
    # the cells of the notebook table's HTML row read so far (its <th> or <td> lines, one a line), until its </tr>
    html_cells: list[str] = field(default_factory=list)
    table_starts: tuple[int, ...] | None = None  # where each column of the last table's header starts
    checkpoint_at: tuple[int, int] | None = None  # the epoch and global step ModelCheckpoint's last line named
    gutter: tuple[int, int] | None = None  # an editor's line numbers before each line: their width, the next
    gutter_seen: tuple[int, int] | None = None  # the last line's number as one (its width, the next), not yet known
    pdsh_hosts: dict[str, int] | None = None  # pdsh's hosts in its -w list's order: their nodes' ranks
    first_line: str | None = None  # the program's first line (printed again after points: it started again)
    first_line_at: int = 0  # the series' points_seen when the program's first line was last printed
    # the shell's prompt the log's first line typed the run's command after (a terminal's session pasted whole), and
    # whether a Ctrl-C was echoed since ("^C": the command interrupted, its prompt back no end)
    shell_prompt: str | None = None
    interrupted: bool = False
    # LightGBM's "... Best iteration is:" was the last line: the round line after it restates the best round, no step
    best_round_next: bool = False
    # the braces still open of a learning-rate scheduler's parameters printed over several lines (DeepSpeed's user
    # json, '"scheduler": {'): what they say of steps is the scheduler's, not the run's
    scheduler_braces: int = 0
    # ignite's engines running, outermost first: each run's max_epochs (its Engine.run's "Engine run starting with
    # max_epochs=N."): an evaluator's run inside the trainer's says its own epochs, not the run's
    engines: list[int] = field(default_factory=list)
    # the series' points_seen as each of them started: a run that ends with no point read inside it (an evaluator's,
    # its trainer's start before the excerpt) ran no training
    engine_marks: list[int] = field(default_factory=list)
    # an outermost engine of one epoch is the trainer: the count read inside its run was its epoch's iterations
    one_epoch_trainer: bool = False
    engine_points: bool = False  # the trainer's "Epoch[N] Complete" lines are the run's points (no other line is)
    shapes: ShapeReader = field(default_factory=ShapeReader)  # the last reader's state: the lines' shapes
