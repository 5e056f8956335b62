"""A job's progress series and what it means: the rate, the ETA, and whether the run finishes before its time limit.

:class:`Series` takes the points of :mod:`ntui.core.progress.lines` as the log is read (each with the time it was
read, or its line's own time): the run's bar, the Trainer's dicts between its bar's updates (they carry the metrics,
the bar the step), a step that goes back or the program's start again (:meth:`Series.new_start`: a restart, a
new segment, its boundary kept). It keeps at most
:data:`MAX_POINTS` points, halving its resolution when full (a week-long run stays bounded).

:func:`estimate` reads the series at a moment: the rate over the last :data:`RATE_WINDOW` points of the current
segment, skipping its first :data:`SKIP_AFTER_START` (the first steps after a start or a restart are slow) and the
gaps longer than :data:`PAUSE_FACTOR` times the median interval (an evaluation, a checkpoint: pauses, not rate), or
the median of the program's own last rates where it prints them (tqdm's ``it/s``, finer than its elapsed); then
the ETA, and against the allocation's time left the verdict in words (:attr:`Estimate.words`): "finishes in about
2 h 10 min, 1 h 40 min before the limit", or "will be cut at about step 9,200 of 10,000 (92 %): ...". Pure.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from datetime import datetime

from ntui.core.progress.context import LineContext
from ntui.core.progress.forms import BAR_COUNTED
from ntui.core.progress.lines import INNER_BAR, LOOP_EPOCH_BAR, Point, evaluation_record, training_loss
from ntui.core.slurm.durations import format_span
from ntui.core.timestamps import local_epoch

__all__ = ["INNER_MAX", "MAX_POINTS", "PAUSE_FACTOR", "RATE_WINDOW", "SKIP_AFTER_START", "Estimate", "Sample", "Series",
           "estimate"]

MAX_POINTS = 2000
#: How many of the program's own rate reports (tqdm's smoothed it/s) the rate is the median of.
PRINTED_RATES = 5
RATE_WINDOW = 30
SKIP_AFTER_START = 2
PAUSE_FACTOR = 5.0
#: At most this many steps' time since the last line counts as progress made since.
SINCE_STEPS = 3
#: A bar held apart as one inside the run's (an evaluation) that shows more points than this is the run's.
INNER_MAX = 1000
#: A bar's redraw this many steps behind the last (or a hundredth of its total), its elapsed time within JITTER_S
#: seconds of the last's, is another rank's redraw of the same bar, not a restart.
JITTER_STEPS = 3
JITTER_S = 5.0
#: the formats of an engine's lines that count the run's optimizer steps (DeepSpeed's log_dist "step=N", Megatron's
#: "iteration N/T", torchtitan's "step: N"), never an epoch's batches
_RUN_STEP_FORMATS = frozenset(("deepspeed", "megatron", "torchtitan"))
#: An end said, then this many points of training past its step: the run was not over (the word was another's: an
#: epoch's best result, a tuner's fit).
PAST_END = 2


@dataclass(frozen=True)
class Sample:
    """One point of the series: when (epoch seconds), the step, and the metrics known at that step."""

    time: float
    step: int
    metrics: dict[str, float] = field(default_factory=dict)
    segment: int = 0  # counts the restarts before it


@dataclass
class Series:
    """The run's progress (see the module docstring)."""

    samples: list[Sample] = field(default_factory=list)
    total: int | None = None
    epoch: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)  # the latest value of each
    restarts: list[float] = field(default_factory=list)  # when each new segment began
    epochs: int | None = None  # the run's epochs, where a line said (then the total is epochs x an epoch's steps)
    per_epoch: int | None = None  # an epoch's steps, when the bars count per epoch
    _stride: int = 1
    _seen: int = 0
    printed_rates: list[float] = field(default_factory=list)  # the program's own rate (tqdm's), the latest few
    _bar_origin: float | None = None
    _last_elapsed: float | None = None
    _fresh: bool = False  # the program started again (new_start) and no point came since
    _counted: bool = False  # that start is counted in restarts already (ntui's header of an allocation said it)
    _banner: bool = False  # a start's banner came after points (banner): a new start if the next step goes back
    _latest: Point | None = None  # the last point added, as read
    # the program's first line printed again after this point: a start, undone (the fields a start sets back as they
    # were) where the next point goes on with its bar (:meth:`printed_again`)
    _again: tuple[Point, dict[str, object]] | None = None
    _summary_epoch: int | None = None  # the last epoch a loop's summary said is over, its lines naming no epoch
    _one_unit_form: str | None = None  # the last point's form where it said the first and last unit of a run of one
    _steps_per_epoch_seen: bool = False  # the loop's step went back as its epoch went on: it counts an epoch's batches
    _run_batches_seen: bool = False  # an epoch's batch counter went on as its epoch went on: it counts the run's steps
    _provisional: bool = False  # the last sample is the newest point, kept although the stride skips it
    declared_total: int | None = None  # the run's total as its configuration says (max_steps, max_update, ...)
    ended: bool = False  # the program said its training is over (Lightning's "max_epochs reached", ...)
    declared_epochs: int | None = None  # the run's epochs as its configuration or banner says ("max: 12 epochs")
    stopped_at: int | None = None  # the step the program said it stopped at (Lightning's "max_steps=N reached")
    stopped_on: int | None = None  # the step whose bar line an error's report is glued to (stopped there, at its total)
    stopped: str | None = None  # what stopped the run after its last point (a cancel, a kill, an error), if anything
    soft_end: bool = False  # the end was said as a program says it also after an error: a stop after it undoes it
    _own_lines: bool = False  # the program prints its own progress lines (a row of FORMS): its bars are not the run
    _bar_total: int | None = None  # the total of the run's bar (the whole run's, not an epoch's)
    _bar_epoch: float | None = None  # the epoch an epoch's bar without a total counts
    _epoch_base: int = 0  # the steps of the epochs before it, as their bars counted
    _batch: int | None = None  # where in its epoch the last point of an epoch-counted run was
    _rank: int | None = None  # the rank whose lines the series follows (the first that printed a point)
    _loss_rank: int | None = None  # the rank whose loop lines say the loss the followed rank's do not (see add)
    _epoch_of_total: tuple[float, int, int] | None = None  # the last loop line's epoch, step, total (see below)
    _epoch_first: float | None = None  # the first epoch such a line named
    _epoch_steps_local: bool = False  # those lines' steps count each epoch's batches (:meth:`_epoch_step_of_total`)
    _from_zero: bool = False  # an epoch 0 was seen where the form numbers epochs from 1
    _header_from_zero: bool = False  # an epoch's header said "Epoch 0/E": its epochs from 0, of the last one's index
    _unit: str = ""  # what the loop's own lines count the run in: "step" or "epoch"
    own_times: bool = False  # the points carry the log's own timestamps (not the time they were read)
    _held: tuple[Point, float] | None = None  # the latest point of a bar inside the run's, and when it was read
    _held_count: int = 0  # how many points that bar has shown
    _held_first: tuple[Point, float] | None = None  # its first point
    declared_per_epoch: int | None = None  # an epoch's steps as the configuration says (max_steps_per_epoch)
    micro_per_epoch: int | None = None  # an epoch's micro-batches as DeepSpeed-Chat's scripts say them
    micro_per_step: int | None = None  # the micro-batches of an optimizer step, as DeepSpeed's timer line counts them
    flag_total: int | None = None  # a command line's bare "--steps N": the total where the loop's lines count steps
    in_periods: bool = False  # the loop trains in periods of steps it calls epochs (t5x's "Epoch 3 of 20")
    _total_iters: bool = False  # the declared total counts iterations (max_iters), not optimizer steps
    _resumed_at: int | None = None  # the step the program said it goes on from ("Continuing ... global step N")
    # the segments of a point or two, each point with two metrics or more, that a restart closed: maybe an excerpt of
    # the run pasted before it (:meth:`_excerpt_again`): the restart's index, and its points' metrics not seen again
    _excerpts: list[tuple[int, list[dict[str, float]]]] = field(default_factory=list)
    _version: int | None = None  # the version of the logger the last Lightning bar said ("v_num"): its fit's
    _reopen: bool = False  # a start was said: the end or stop read before holds until a point comes
    # the declared total, the epochs and the total before an end said them, and as it left them
    _before_end: tuple[tuple[int | None, int | None, int | None], tuple[int | None, int | None, int | None]] | None \
        = None
    _epoch_steps: int | None = None  # an epoch's steps, as the bar of a loop whose lines say the run's step counts
    _early_end: tuple[str, int] | None = None  # an end said before any point, held (see end)
    _after_end_bars: int = 0  # the points of bars held after the run's end
    _end_on_trial: bool = False  # the end held was applied on the one point after it, undone if training goes on
    _evaluating: bool = False  # the program said an evaluation starts: its bars are not the run's
    _eval_bar: tuple[int | None, bool] | None = None  # that evaluation's bar: its total, and whether it ended
    _eval_held: int = 0  # the points of other bars held while that evaluation is under way
    _lines_after: int = 0  # the lines that are not points since the last point (none: the last line was a point)
    # since the last point: the fit's own result line came ("Test Accuracy: 0.81", "smape score:  2.4"), and no
    # sign of the program's start (a line that says a start, a Python warning) after it (:meth:`fit_result`)
    _fit_result: bool = False
    _header_again: bool = False  # the program's first line again right after a Keras fit's last epoch: a restart
    # unless the next point is a new fit's first epoch of the same length (:meth:`printed_again`)
    _zero_step: bool = False  # the loop's own lines count steps from 0 (its last step is its total less one)
    _zero_epoch: bool = False  # an epoch-counted run named an epoch 0
    _epoch_complete: bool = False  # the epoch an epoch-counted run is in has reached its last batch
    _header_open: bool = False  # the last point was a loop's "Epoch e of E" header, no summary of that epoch yet
    _min_batch: int | None = None  # the smallest batch an epoch-counted run named (its lines' interval)
    _train_batches: int | None = None  # an epoch's training batches where its bar also counts the validation's
    _raw: tuple[int, int, float] | None = None  # the last point of an epoch's bar as it counted (batch, total, epoch)
    _raw_prev: int | None = None  # the count that epoch's bar showed before its last (another), in the same epoch
    _counter_raw: tuple[float, int, int] | None = None  # a loop's last "epoch e ... iter i/N" line as it counted
    _counter_runs: bool = False  # those lines' counter went on across an epoch's change: it counts the run's steps
    _counter_span: tuple[float, int] | None = None  # the epoch of those lines and the first counter said in it
    _declared_last: tuple[float, int] | None = None  # a loop's last "epoch e ... step s" line, where an epoch's steps
    # were said (:meth:`_declared_epoch_steps`)
    _val_seen: bool = False  # a validation bar came while an epoch's bar was short of its total
    _val_done: int = 0  # the batches of this epoch's validations that ended (its bar counted them too)
    _val_from: int | None = None  # the training batch a validation under way started at
    _bars_train_only: bool = False  # the epoch's bar counts training batches only (Lightning 2.x's bars)
    _end_step: int | None = None  # the step the run was at when an end was said
    _last_bar: tuple[int, int | None] | None = None  # the last point of a bar taken as the run's: its count, its total
    examples_said: int | None = None  # the examples the Trainer's banner said (its training's, or its evaluation's)
    epoch_updates: float | None = None  # an epoch's optimizer steps as the Trainer's banner says (examples / batch)
    _keras_bar: tuple[int, int | None] | None = None  # the last Keras step bar's count and total in this epoch
    _keras_other: bool = False  # Keras' bars since the epoch's ended are another phase's (evaluate, predict)
    _keras_fit: tuple[int, int | None] | None = None  # Keras' fit call: the run's epochs before it, and its epochs
    _epoch_line_last: tuple[int, int] | None = None  # a loop's last "Epoch e/E | Step s/S" line's e and E, where
    # the run counts global steps of them
    _steps_printed: bool = False  # a training point that said its step came (a bar, a loop's line)
    _run_steps: bool = False  # an engine's lines counted the run's steps (:data:`_RUN_STEP_FORMATS`)
    _loop_epoch_bars: bool = False  # a loop's bars said "Epoch e/E" of an epoch's batches: the run counts their steps
    _epochs_bar: tuple[int, int | None] | None = None  # the last count of a bar over the run's epochs, and its total
    _nested: bool = False  # a bar drawn below that bar (INNER_BAR) counts each epoch's steps: it is the run's
    _inner_last: tuple[int, int] | None = None  # that inner bar's last count and total
    _inner_epochs: int = 0  # the inner bars that reached their total since the epochs bar last changed its count
    _summary_losses: frozenset[str] = frozenset()  # the loss names an epoch's summary said (:meth:`_latest_loss`)
    _from_epochs: bool = False  # the samples' steps are the Trainer's dicts' epochs in steps (:meth:`_step_of_epoch`)
    _before_bar: dict[str, object] | None = None  # the series before a bar of another total was taken as the run's
    table: tuple[str, ...] | None = None  # the columns of the table the program prints a row of each epoch in
    _round_base: int = 0  # the batches of the epochs before, where the run's bar is an epoch's, drawn again each epoch
    _step_begins: bool = False  # the last step was said as it began (NeMo-RL's banner): it is under way, not done
    _side_total: int | None = None  # the total of a bar that counts the same steps as the loop's own lines beside it
    _side_bar_other: bool = False  # a bar beside those lines counted less than their step: it counts something else
    _round_total: int | None = None  # that bar's total
    _after_inner: bool = False  # the run's bar came back after a bar held inside it
    table_base: int = 0  # the epochs of the tables before it (a header printed again after rows: a next stage)
    _metrics_before: dict[str, float] = field(default_factory=dict)  # the metrics before the last point that said any
    _table_first: bool = False  # no row under the table's header yet (its first row says how it numbers its epochs)
    _skipped: int = 0  # the steps the program said it skips to go on from where its state was saved
    _past_end: int = 0  # the points of the run's training past that step since
    points_seen: int = 0  # the points of new steps read, all along (never thinned nor reset)
    lines: LineContext = field(default_factory=LineContext)  # the file reader's state between lines (read.py)
    _rows_from_zero: bool = False  # the epoch table's rows named the epoch's index of the last one's ("299/299" of 300)
    _rows_said_from_zero: bool = False  # the epoch table's header is YOLOv3/v5/v7's (an "obj" loss column): its rows
    # name the epoch's index from 0 of the last one's ("3/299" of 300 epochs)

    def _forget_points(self) -> None:
        """The points so far were not the run's (another phase's, an epoch's count, the dicts' epochs): gone, with the
        restarts and rates read from them."""
        self.samples, self.restarts, self.printed_rates, self._counted = [], [], [], False
        self._excerpts = []
        self._seen, self._stride, self._provisional = 0, 1, False

    def new_start(self, *, until_point: bool = False, from_step: int | None = None, at: float | None = None) -> None:
        """The program started again: its rank log's header line once more after points (a requeued job, or a run's
        next allocation, appending to the same log), or its own word (``until_point``: the end or stop read before
        holds until a point comes, as a checkpoint restored for a test after the run does not reopen it). The next
        point opens a new segment, also where the step goes on from a checkpoint instead of going back;
        ``from_step``: the step the program said it goes on from. ``at``: when ntui's own header of an allocation was
        read: that allocation is a restart from then, whether or not it prints a point (a requeue whose signal came in
        the run's last step: the next allocation has no step left, and only says the run is done)."""
        if self.samples:
            self._fresh = True
            if at is not None:
                self.restarts.append(at)
                self._counted = True
            self._bar_origin = self._last_elapsed = None
        self._resumed_at = from_step or None
        self._skipped = 0
        if until_point and self.samples:
            self._reopen = True
        elif not until_point:
            self.ended = self.soft_end = False
            self.stopped_at = self.stopped = None
            self._early_end, self._end_on_trial = None, False
        self._bar_total, self._held, self._held_first, self._held_count = None, None, None, 0
        self._bar_epoch, self._epoch_base, self._last_bar = None, 0, None
        self._round_base, self._round_total = 0, None
        self._rank = self._loss_rank = None  # a new start: the ranks may print in another order
        self._evaluating = False

    def new_table(self, names: tuple[str, ...]) -> None:
        """The program printed a table's header (fastai's console table: "epoch  train_loss  valid_loss  time"):
        its rows are the run's epochs, named from 0. A header again after rows starts the table of the next stage
        (fastai's fine_tune: a frozen epoch's table, then the others'): its epochs go on from the last."""
        if self.table is not None and self.samples and self._unit == "epoch":
            if self.ended and self.stopped is None:
                # the fit before it said its end (fastprogress' "Total time: ..." once its bar over the epochs is
                # done, as fastai v1's every fit prints it; fastai 2's fine_tune prints none between its stages): this
                # table is a fit of its own (another learner's, the classifier's after the language model's, a
                # gradual unfreezing's next fit), not the same run's epochs going on: its rows are the run's now
                self.samples, self.printed_rates = [], []
                self._seen, self._stride, self._provisional = 0, 1, False
                self._undo_end()
                self.table_base = 0
            else:
                self.table_base = self.samples[-1].step + 1
        self._table_first = True
        self.table = names
        # YOLOv3/v5/v7's train.py: its header names the objectness loss ("obj_loss", "obj") and each row's epoch is
        # f"{epoch}/{epochs - 1}", from 0 (ultralytics 8's header has none, its rows f"{epoch + 1}/{self.epochs}")
        if any(name.lower() in ("obj", "obj_loss") for name in names):
            self._rows_said_from_zero = True

    def table_step(self, epoch: int) -> int:
        """The run's step of a table's row that names ``epoch``: the epochs of the tables before it plus its own,
        unless the new table's first row names an epoch past the start (0, or 1 where the rows count from 1): the
        program numbers its epochs across fits (skorch's history table, whose second fit resumed from a checkpoint's
        history goes on from the epoch after it: "16" after a first fit's 1-18), so its rows name the run's epochs."""
        if self._table_first:
            self._table_first = False
            if epoch > 1:
                self.table_base = 0
        return self.table_base + epoch

    def banner(self) -> None:
        """The program printed its banner of a start (the Trainer's "***** Running training *****") and nothing says a
        new process printed it: every node of a multi-node run prints it, and another node's may land after the
        bar has started. A new start (:meth:`new_start`) only where the step then goes back (a new run appended to
        the log, from its beginning); a start before any point is one."""
        if not self.samples:
            self.new_start(until_point=True)
        else:
            self._banner = True

    def mean_loss_said(self, mean: float) -> None:
        """The Trainer's summary of the run said its mean training loss (``train_loss``). The Trainer hands that
        summary to its callbacks' ``on_log`` as it prints it (``self.log(metrics)`` at the end of its loop): a
        script's callback that prints the loss it is given ("step=742 | loss=0.714568") printed the mean as its
        last step's. Where the last point's loss is that mean (to the summary's printed digits) and the one before
        it is not, the last training loss is the one before."""
        said, before = training_loss(self.metrics), training_loss(self._metrics_before)
        if said is None or before is None or said[0] != before[0] or not self.samples \
                or not math.isclose(said[1], mean, rel_tol=5e-4) or math.isclose(before[1], mean, rel_tol=5e-4):
            return
        self.metrics[said[0]] = before[1]
        last = self.samples[-1]
        if said[0] in last.metrics:
            self.samples[-1] = Sample(last.time, last.step, {**last.metrics, said[0]: before[1]}, last.segment)

    def summary_end(self) -> None:
        """The program printed its summary of the run, which it prints once its training is over (the Trainer's
        ``{'train_runtime': ..., 'train_loss': ...}``): the end, also of a run whose lines said no step."""
        if self.samples:
            self.end()
        else:
            self.ended = True

    def _epoch_bar_done(self, point: Point) -> int | None:
        """The epoch ``point`` names where it is the training bar of the epoch after the last one the loop's own
        lines counted, at its total; else None."""
        last = self.samples[-1].step if self.samples else None
        if self._unit != "epoch" or not point.per_epoch or point.phase != "train" or last is None \
                or point.step is None or point.total is None or point.step != point.total or point.epoch is None:
            return None
        return int(point.epoch) if point.epoch == last + 1 else None

    def skipped_steps(self, n: int) -> None:
        """The program said it skips ``n`` steps, the ones done before its state was saved (kohya's sd-scripts'
        "skipping N steps"): a bar that counts the rest (its total the run's declared one less ``n``) is at ``n``
        plus its count."""
        self._skipped = n

    def declare_epochs(self, epochs: int) -> None:
        """The run's epochs a configuration or banner line says. Fewer than said before, once the training's points
        came (no start said since), are another loop's, not the run's: an evaluator engine's own run (ignite's
        Engine.run logs "Engine run starting with max_epochs=1." for the evaluator as for the trainer)."""
        if self.declared_epochs and epochs < self.declared_epochs and self.samples and not self._fresh:
            return
        self.declared_epochs = epochs

    def declare_total(self, total: int, *, iters: bool = False) -> None:
        """The run's total as its configuration says; ``iters``: it counts iterations (micro-batches), where the
        loop's lines say iterations and optimizer steps both."""
        self.declared_total, self._total_iters = total, iters

    def counts_iterations(self) -> None:
        """The loop's lines say iterations and optimizer steps both, its run sized in iterations (lit-gpt 2023's
        max_iters) where no total is said: its step is the iteration."""
        self._total_iters = True

    def bars_train_only(self) -> None:
        """The program draws its bars in Lightning 2.x's format (a bar of no total written ``| 0/? [``, its
        sanity check's or its validation's before it counts): its epoch's bar counts that epoch's training batches
        only, a validation has a bar of its own that the epoch's bar does not count."""
        self._bars_train_only = True

    def evaluation(self) -> None:
        """The program said an evaluation (or a prediction) starts, on a line of its own (the Trainer's "*****
        Running Evaluation *****"): the bars that follow count its batches, not the run's steps, until the run's
        own bar comes back (its total) or the program starts its training (again): where the run's bar is not
        known yet (an evaluation before the training), the bar after the evaluation's end, of another total."""
        self._evaluating, self._eval_bar, self._eval_held = True, None, 0

    def epoch_begins(self, epoch: int | None = None, at: float = 0.0) -> None:
        """The loop said that an epoch begins (its header, "Training Epoch: 2 / 3"): where the run's bar reached its
        total, its bar from 0 next is that epoch's (:meth:`_round`), as after a validation's bar between. Where the
        loop's own lines count the run in epochs and the last one named is over, the header's ``epoch``, the next,
        is where the run is (MONAI's tutorials' "epoch 3/600", then lines that name their batch alone)."""
        last_bar = self._last_bar
        if last_bar is not None and last_bar[1] is not None and last_bar[0] >= last_bar[1]:
            self._after_inner = True
        if epoch is not None and self._own_lines and self._unit == "epoch" and self.samples \
                and self._epoch_complete and self.samples[-1].step == epoch - 1:
            self.add(Point("log", epoch, None, float(epoch), form="epoch-header", counts_epochs=True), at)

    def epoch_over(self, epoch: int) -> None:
        """The loop said that its epoch ``epoch`` is over (its summary of the epoch's averages, PccAI's "Epoch: 4/4 ---
        time: ..., avg_loss: ..."), where its own lines name no epoch: a count of them that goes back after it is the
        next epoch's batches (:meth:`_next_epoch_count`), no restart."""
        if self._own_lines and self.samples and (self._unit == "step" or self._summary_epoch is not None):
            self._summary_epoch = self.epoch = epoch

    def epochs_instead(self) -> None:
        """The count read so far was an epoch's, not the run's (ignite's trainer says its only epoch complete while the
        count sits short of its total): its points gone, the run counted in epochs from the next point on."""
        self._steps_per_epoch_seen, self._unit = True, "epoch"
        self._forget_points()
        self.total = self.per_epoch = None

    def epoch_evaluated(self, epoch: int, at: float = 0.0) -> None:
        """The loop said it evaluates its epoch ``epoch`` (from 0) right after its own lines' count reached their
        total (the last within a print's interval of it): where that epoch is not the first, the count was not the
        run's (it would have been over after the first epoch) but an epoch's batches, started again each epoch and
        no epoch said on them. The run counts epochs then, at the epoch named (its points in the count dropped, its
        total unknown)."""
        samples = self.samples
        if epoch < 1 or not self._own_lines or self._unit != "step" or self.total is None or len(samples) < 2 \
                or self._fresh or self.ended or self.stopped is not None:
            return
        last, total = samples[-1].step, self.total
        interval = last - samples[-2].step
        if interval <= 0 or not 0 <= total - last < interval:
            return
        self.epochs_instead()
        self.add(Point("log", epoch, None, float(epoch), form="epoch-header", counts_epochs=True), at)

    def _next_epoch_count(self, point: Point) -> Point:
        """A loop's line of a count and no epoch after its epoch's summary (:meth:`epoch_over`): where it went back
        (or the loop's counts went back so before), the batch of the next epoch's, that epoch named (then
        :meth:`_epoch_local` counts the run in epochs)."""
        last = self.samples[-1] if self.samples else None
        if self._steps_per_epoch_seen or (last is not None and point.step is not None and point.step < last.step):
            assert self._summary_epoch is not None
            return point.but(epoch=float(self._summary_epoch + 1))
        return point

    def _latest_loss(self, point: Point) -> None:
        """An epoch's summary loss ("Epoch[3/120] Average Training Loss: x", the epoch's mean) is the run's until the
        loop's next line of another form says its own loss: that line's is then the latest, the summary's name
        forgotten (else the names' order in :func:`training_loss` keeps the stale mean)."""
        if point.form == "epoch-summary":
            said = training_loss(point.metrics)
            self._summary_losses = frozenset({said[0]}) if said is not None else self._summary_losses
            while said is not None and (before := training_loss({**self.metrics, **point.metrics})) is not None \
                    and before[0] != said[0] and before[0] not in point.metrics:
                # and the other way: the summary after the epoch's bar is the latest, the bar's running loss under
                # another name ("loss=0.42" of its postfix before "Epoch 10: Train loss: 0.47") forgotten
                self.metrics.pop(before[0], None)
        elif self._summary_losses and point.metrics and training_loss(point.metrics) is not None:
            for name in self._summary_losses - point.metrics.keys():
                self.metrics.pop(name, None)
            self._summary_losses = frozenset()

    def more_metrics(self, metrics: dict[str, float]) -> None:
        """Metrics said on a line of their own after the last point: the last step's. A loss among them is the
        latest until the next point says its own under another name (:meth:`_latest_loss`: an epoch's block of
        "key : value" lines, pytorch-template's "loss : x" after its "Train Epoch: e [n/N (p%)] Loss: x" lines)."""
        self.metrics.update(metrics)
        if (said := training_loss(metrics)) is not None:
            self._summary_losses = self._summary_losses | {said[0]}
            if self._header_open:  # the epoch's training summary under a loop's "Epoch e of E" header: it is over
                self._header_open, self._epoch_complete = False, True
        finite = {k: v for k, v in metrics.items() if math.isfinite(v)}
        if self.samples and finite:
            last = self.samples[-1]
            self.samples[-1] = Sample(last.time, last.step, {**last.metrics, **finite}, last.segment)

    def after_points(self) -> None:
        """A line that is not a point came after the points (a checkpoint saved, an evaluation, the end)."""
        self._lines_after += 1

    def fit_result(self, said: bool) -> None:
        """A line after the last point that is a fit's result (``said``: its test score) or says a start (not):
        a script that trains several models one after another in one process prints each model's score after its
        last point, and the next model's counter starts again right after it, nothing of the program's start
        between (a relaunch prints its banner, its start time, its warnings first): that count is a new fit's, no
        restart, and the run is the last fit's (:meth:`add`)."""
        self._fit_result = said and bool(self.samples)

    @property
    def run_total(self) -> int | None:
        """The run's total: its points', else its configuration's (its total, or its epochs, said by it or by the
        loop's lines, times an epoch's steps where the loop counts steps)."""
        total = self.total or self.declared_total
        epochs = self.declared_epochs or self.epochs  # (the lines' own "epoch: [1/3]" where nothing else said them)
        if total is None and self._unit != "epoch" and self.declared_per_epoch and epochs:
            total = epochs * self.declared_per_epoch
        if total is None and self._unit != "epoch" and self.micro_per_epoch and self.micro_per_step and epochs:
            total = epochs * (self.micro_per_epoch // self.micro_per_step)  # (its steps are optimizer steps)
        if total is None and self._unit == "step" and self._epoch_steps and self.declared_epochs:
            total = self.declared_epochs * self._epoch_steps  # an epoch's steps as the loop's bar counts them
        if total is None and self._own_lines and self._unit == "step":
            total = self.flag_total or self._side_total
        return total

    def evaluated_at(self, step: int, total: int, at: float) -> None:
        """The loop's own line in its training lines' counter (``step:N/T``, the run's total) that names an
        evaluation's metrics only: the loop evaluated after ``step`` steps (nanoGPT's loops evaluate at their last step
        and stop, their training lines printed every N steps only): past the last training line, the run's step."""
        last = self.samples[-1] if self.samples else None
        if last is None or not self._own_lines or self._unit != "step" or self.total != total or step <= last.step \
                or step > total or self._fresh or self.ended:
            return
        self.add(Point("log", step, total, None, {}, form="evaluated-at"), at)

    def reached(self, step: int, total: int) -> bool:
        """Whether ``step`` is the run's last of ``total``, in the run's unit: an epoch-counted run in its last
        epoch once that epoch reached its last batch (epochs named from 0 where an epoch 0 was seen); a loop that
        counts its steps from 0 at its total less one once it printed something else after it (a checkpoint, the
        end); else the step at its total (not past a total the loop's lines never said: the configuration's total
        counts something else than they do, optimizer steps where they count micro-batches)."""
        if self._unit == "epoch":
            return step + (1 if self._zero_epoch else 0) >= total and self._epoch_complete
        if self._zero_step and self._lines_after > 0 and step == total - 1:
            return True
        if step > total and self.total is None and self._own_lines:
            return False  # past a total only a configuration said: it counts something else (optimizer steps)
        if self._step_begins:
            return False  # the last step said is the one under way (its banner as it begins): over at the end's word
        if self.total is None and self.declared_total is None and total == self._side_total:
            return False  # a bar's beside the loop's lines: an epoch's may count the same steps up to its end
        return step >= total

    def end(self, what: str = "", n: int = 0) -> None:
        """The program said its training is over; ``what`` and ``n`` what it stopped at, where it says
        (:func:`ntui.core.progress.lines.run_end`): ``max_steps`` reached is the run's last step and its total,
        ``max_epochs`` reached its epochs (then an epoch's steps times them is its total). Said before any point of
        the run's training, it is held: the end of something run before it where training steps follow (Lightning's
        learning-rate finder runs a fit of its own, "`Trainer.fit` stopped: `max_steps=100` reached", before the
        run's), the run's where one point only follows (Lightning's Rich bar, which a file gets at its teardown,
        after the word)."""
        if not self.samples:
            self._early_end = (what, n)
            return
        self._end_on_trial, self._after_end_bars = False, 0
        self._end_step, self._past_end = self.samples[-1].step, 0
        before = (self.declared_total, self.epochs, self.total)
        was_ended, self.ended, self.soft_end = self.ended, True, False
        if what == "steps" and n > 0:
            self.stopped_at = self.declared_total = n
        elif what == "completed" and self._unit == "epoch" and not self._rows_from_zero and self.total is not None \
                and self.samples[-1].step == n - 1 and (self.total == n - 1 or self._zero_epoch):
            # the epochs done are one more than the last row named, of a total as many, or of rows that named an
            # epoch 0: the rows named the epoch's index, from 0 (YOLOv5's "299/299" of 300; its "35/1999" then
            # "36 epochs completed" after an early stop), the run's epochs done are the end's
            self._rows_from_zero = True
            if self.total == n - 1:
                self.total = n
            last = self.samples[-1]
            self.samples[-1] = Sample(last.time, n, last.metrics, last.segment)
        elif not what and self._unit == "epoch" and self._zero_epoch and self._epoch_complete \
                and self.run_total is not None and self.samples[-1].step == self.run_total - 1:
            # the program's word that its loop is over after its last epoch, named by its index from 0 (the
            # MetricLogger scripts' "Epoch: [99]" of 100, then "Training time 1 day, 2:03:04"): its epochs are done
            last = self.samples[-1]
            self.samples[-1] = Sample(last.time, self.run_total, last.metrics, last.segment)
        elif what == "epochs" and n > 0:
            self.epochs = n
            if self.per_epoch:
                self.total = n * self.per_epoch
        elif what == "at" and self._unit != "epoch" and self.samples[-1].step < n:
            # stopped early at a step past the last one its training lines printed (they print every N steps; its
            # last step's line was an evaluation's): that step is the run's last
            last = self.samples[-1]
            self.samples[-1] = Sample(last.time, n, last.metrics, last.segment)
        if not was_ended:
            self._before_end = (before, (self.declared_total, self.epochs, self.total))

    @property
    def step(self) -> int | None:
        last = self.samples[-1].step if self.samples else None
        stopped = self.stopped_at
        if stopped is not None and self.ended and self.total is None and (last is None or last < stopped):
            # the program's own word for where it stopped, where its bars counted no total of the run (an epoch's
            # batches); a bar that counts the run keeps its own unit (batches, where the word counts optimizer steps)
            return stopped
        resumed = self._resumed_at
        if resumed is not None and self._unit != "epoch" and (last is None or last < resumed):
            return resumed  # resumed from a checkpoint: a bar that counts from 0 again has not gone back
        return last

    def _inner(self, point: Point, at: float) -> bool:
        """Whether a bar is one inside the run's, held apart: a bar of a smaller total that starts while the run's
        bar is short of its end (the Trainer's evaluation every N steps, where nothing else says so) is not the
        run's, nor a restart, when the run's bar comes back after it. A held bar that ends and is followed by
        another than the run's, or that goes on for :data:`INNER_MAX` points, was the run's next bar (a new run
        appended to the log): its points count from then on."""
        if point.format != "tqdm" or point.per_epoch or point.total is None or self._fresh:
            return False
        current, held = self._bar_total, self._held
        if current is None or point.total == current:
            if held is not None:
                self._after_inner = True  # the run's bar again after a bar held inside it (its validation)
            self._bar_total, self._held, self._held_first, self._held_count = point.total, None, None, 0  # the run's
            return False
        if held is not None:
            hp, _ = held
            if point.total == hp.total and hp.step is not None and point.step is not None \
                    and point.step >= hp.step and (hp.step < hp.total or point.step == hp.step) \
                    and self._held_count < INNER_MAX:
                self._held, self._held_count = (point, at), self._held_count + 1  # the held bar goes on
                return True
            self._held, self._held_count, self._bar_total = None, 0, hp.total  # it was the run's next bar
            first, self._held_first = self._held_first, None
            if first is not None and first[0].step != hp.step:
                self.add(*first)  # where it began (a restart where it went back)
            self.add(*held)
            return self._inner(point, at)
        last = self.step
        if self._round_base and self._last_bar is not None:
            last = self._last_bar[0]  # (where the run's bar counts each epoch again: where that bar is)
        if point.total < current and last is not None and last <= current:
            # (also where the run's bar is at its end: the Trainer's evaluation at the last step, before its end)
            self._held = self._held_first = (point, at)
            self._held_count = 1
            return True
        if self.samples and self._before_bar is None:
            self._keep_before_bar()  # (the run's again, unless an evaluation's results follow it)
        self._bar_total = point.total
        return False

    def _keep_before_bar(self) -> None:
        """Keep the series as it is before a bar of another total is taken as the run's: where the program's next
        dict is an evaluation's results, that bar was the evaluation's (:meth:`_evaluation_results`)."""
        self._before_bar = {k: list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v
                            for k, v in self.__dict__.items() if k != "_before_bar"}

    def _step_of_epoch(self, point: Point) -> Point:
        """The Trainer's log dict where nothing prints the step (``disable_tqdm``: its PrinterCallback prints the dicts
        alone): its ``epoch`` is the epochs done (``epoch + (step + 1) / steps_in_epoch``, its Trainer.log), so the
        run's step is about that times an epoch's optimizer steps: the banner's examples over its total train batch,
        else its total over its epochs (``Total optimization steps`` / ``Num Epochs``). A training's dict only (its
        loss), at step 1 at least (it logs after a step), never past the total."""
        if point.step is not None or point.epoch is None or self._steps_printed or training_loss(point.metrics) is None:
            return point
        per = self.epoch_updates
        if per is None and self.declared_total and self.declared_epochs:
            per = self.declared_total / self.declared_epochs
        if not per:
            return point
        step = max(1, round(point.epoch * per))
        self._from_epochs = True
        return point.but(step=min(step, self.declared_total) if self.declared_total else step)

    def _evaluation_results(self, point: Point) -> None:
        """A dict of the program's (the Trainer's), the first since a bar of another total was taken as the run's:
        an evaluation's results (its keys ``eval_*``) say that bar was the evaluation's (the Trainer's, at a step or
        at the last one, where its nesting escapes were lost: a log copied from a terminal), the series back as it
        was before it; any other dict (the training's loss) says that bar was the run's."""
        kept, self._before_bar = self._before_bar, None
        if kept is not None and any(k.startswith("eval_") for k in point.metrics) \
                and training_loss(point.metrics) is None:
            self.__dict__.update(kept)
            self._before_bar = None

    def _after_evaluation(self, point: Point) -> bool:
        """Whether a bar read while an evaluation is under way (:meth:`evaluation`) is the run's again: its bar's
        total, before the run's end; or, where the run's bar is not known yet, a bar of another total after the
        evaluation's own ended. Else it is the evaluation's."""
        if self.samples and not self.ended and point.total == self._bar_total:
            self._evaluating = False  # the run's bar again
            return True
        held = self._eval_bar
        if held is None or point.total == held[0]:
            over = point.total is not None and point.step is not None and point.step >= point.total
            self._eval_bar = (point.total, over)
            return False
        if held[1] and not self.samples:  # the evaluation before the training is over: this bar is the run's
            self._evaluating, self._eval_bar = False, None
            return True
        self._eval_held += 1  # a bar of a third total: held, for INNER_MAX points at most (the run's, after all)
        if self._eval_held > INNER_MAX:
            self._evaluating, self._eval_bar = False, None
            return True
        return False

    def _followed(self, point: Point) -> bool:
        """Whether the point is of the rank the series follows: where every rank prints its progress (srun -l's
        labelled lines, torch's "[rank3]:"), their lines interleave out of step order; one rank's are the run's."""
        if point.rank is None:
            return True
        if self._rank is None:
            self._rank = point.rank
        return point.rank == self._rank

    def printed_again(self) -> None:
        """The program's first line printed again after points: it started again, unless the next point goes on
        with the bar the last one was drawn on (:func:`_goes_on`): then a child process printed it, not a new run
        (Windows' spawn start method runs the main module's top level again in each DataLoader worker, its prints
        too: ultralytics' banner and its trainer's arguments once per worker, glued into the epoch's first redraws).
        Printed again right after a Keras fit's last epoch (its result line, a blank one, then it), it is a loop's
        header of each fit (a sweep that builds, compiles and fits a model per setting, its first line the block's)
        where the next point is a new fit's first epoch of the same length: decided at that point."""
        fit = self._keras_fit
        if fit is not None and fit[1] and fit[1] > 1 and self._lines_after <= 3 and self.samples \
                and not self._fresh and not self.ended and self.stopped is None and self.samples[-1].metrics \
                and self.samples[-1].step == fit[0] + fit[1]:
            self._header_again = True
            return
        self._started_again()

    def _started_again(self) -> None:
        before = dict(vars(self))
        self.new_start(until_point=True)
        if self._latest is not None and self.samples and not before["_fresh"]:
            # what the start set, as it was: the fields whose value it replaced
            self._again = (self._latest, {name: value for name, value in before.items()
                                          if vars(self)[name] is not value})

    def follows(self, rank: int | None) -> bool:
        """Whether a line of ``rank`` (None: a line that names none) is of the rank the series follows, or of any
        where it follows none yet: metrics printed apart on another rank's line are that rank's, not the run's."""
        return rank is None or self._rank is None or rank == self._rank

    def _loss_of_other_rank(self, point: Point) -> bool:
        """Whether another rank's loop line says the run's loss where the followed rank's lines say none: a pipeline
        parallel run's loss is computed on its last stage only (torchtitan's first stages print no loss in its place,
        the lines of the ranks otherwise alike), so that rank's loss is the run's, its other metrics not."""
        if point.format == "tqdm" or point.phase != "train" or point.step is None or not self.samples:
            return False
        if self._loss_rank is None:
            if training_loss(self.samples[-1].metrics) is not None or training_loss(point.metrics) is None \
                    or abs(point.step - self.samples[-1].step) > 1:
                return False
            self._loss_rank = point.rank
        return point.rank == self._loss_rank

    def _follow_rank_zero(self) -> None:
        """Rank 0 drew its first training bar after another rank's: where every rank draws its bar, rank 0's is
        the run's (its loggers print on rank 0 only, its loss is the one the run reports), so the series follows it
        from now, its points so far (another rank's bar, a little ahead or behind) dropped: no restart where rank 0
        is behind. (Loop lines printed by every rank keep the first rank's: each says the same step.)"""
        self._rank = 0
        self.samples, self.printed_rates = [], []
        self._seen, self._stride, self._provisional = 0, 1, False
        self._bar_origin = self._last_elapsed = None
        self._raw, self._val_from, self._val_done = None, None, 0

    def _validation(self, point: Point) -> None:
        """A validation bar while an epoch's bar is short of its total (Lightning 1.x: its epoch's bar counts the
        validation's batches too, at the epoch's end or every ``val_check_interval``): the epoch's bar moves on
        with the validation, its points then are not steps."""
        raw = self._raw
        if raw is None or not 0 < raw[0] < raw[1] or self._bars_train_only:
            return
        self._val_seen = True
        if self._val_from is None:
            # the epoch's bar, drawn last before the validation's first count seen (k), had counted k - 1 of its
            # batches where the two are drawn together (a Rich display's render; tqdm's bars redraw apart, its
            # validation's shows its 0 first). Where the epoch's bar went on in steps of k and the validation's first
            # count seen is that k, both are drawn each k batches (Lightning 1.0-1.4's refresh_rate), and the epoch's
            # draw before it had counted those k too: 1.0 updates the epoch's bar then the validation's at each k-th
            # batch; 1.1-1.4 add a step of k to the epoch's as the validation starts, then update the two each k
            k = point.step or 0
            paced = k > 0 and self._raw_prev is not None and raw[0] - self._raw_prev == k
            lag = max(0, min(k - 1 if point.form == "rich" else k if paced else 0, raw[0] - 1 - self._val_done))
            self._val_from = raw[0] - self._val_done - lag
            last = self.samples[-1] if self.samples else None
            if lag and last is not None and not self._fresh:
                # the points past the validation's start were its batches: the run's step is where it started
                floor = self.samples[-2].step if len(self.samples) > 1 else 0
                self.samples[-1] = Sample(last.time, max(floor, last.step - lag), last.metrics, last.segment)
        if point.step is not None and point.total and point.step >= point.total:
            self._val_done += point.total  # it ended: the epoch's bar goes on with training
            self._val_from = None

    def _rebase_epochs(self, counted: int, per: int) -> None:
        """The epochs' training share first known (``per`` of the bar's ``counted``): this start's points so far
        counted each epoch before theirs as the bar's whole total; each now counts them as ``per`` (a log that starts
        within the run: its first epoch's points, else the next epoch's would seem a step back, a restart)."""
        segment = len(self.restarts)
        self.samples = [Sample(s.time, s.step - (s.step // counted) * (counted - per), s.metrics, s.segment)
                        if s.segment == segment else s for s in self.samples]

    def _train_part(self, n: int, total: int, epoch: float) -> tuple[int, int | None]:
        """An epoch's bar's point as training batches: less the validations' batches it counted; and the epoch's
        training batches (None: its validations' share not known yet)."""
        raw = self._raw
        if raw is None or raw[2] != epoch:
            self._raw_prev = None
        elif n != raw[0]:
            self._raw_prev = raw[0]
        if not self._val_seen:  # no validation counted in the bar (the most): as it counts
            self._raw = (n, total, epoch)
            return n, total
        if raw is not None and epoch != raw[2]:  # a new epoch: the last one says its share
            last_total = raw[1]
            known = self._train_batches is not None
            self._train_batches = self._val_from if self._val_from is not None else last_total - self._val_done
            if not known and 0 < self._train_batches < last_total:
                self._rebase_epochs(last_total, self._train_batches)
            self._val_done, self._val_from = 0, None
        self._raw = (n, total, epoch)
        done = self._val_from if self._val_from is not None else n - self._val_done
        per = self._train_batches
        return max(0, min(done, per) if per else done), per

    def _epoch_local(self, point: Point) -> bool:
        """Whether a loop's line that names its epoch and a step counts that epoch's batches, not the run's steps:
        once its step went back to a lower one (or to 0 again) as its epoch went on (no restart: the next epoch's first
        batch).
        Then the run counts epochs, its points so far (in the loop's steps) dropped."""
        if self._steps_per_epoch_seen:
            return True
        last = self.samples[-1] if self.samples else None
        if last is None or self._unit != "step" or self.epoch is None or point.total is not None \
                or point.step is None or point.epoch is None or point.epoch <= self.epoch \
                or (point.step >= last.step and not point.step == last.step == 0) or self._fresh:
            # (a step 0 again as the epoch went on is the epoch's first batch, no run's count: the run trained since;
            # PyTorch's minGPT-ddp example prints "Epoch {epoch} | Iter {iter}" every 100 of an epoch's batches,
            # "Iter 0" alone where an epoch has fewer)
            return False
        self._steps_per_epoch_seen, self._unit = True, "epoch"
        self._forget_points()
        return True

    def _run_batches(self, point: Point) -> bool:
        """Whether a loop's "epoch e, iter i" line, read as a batch within its epoch (the run counted in epochs),
        counts the run's steps instead: once the next epoch's batch went on past the last one of the epoch before
        (no restart at the epoch: the SQuAD baselines' 'epoch %d, iter %d, loss %.5f, ...' of their global_step).
        Then the run counts those steps, its points so far (in epochs) dropped."""
        if self._run_batches_seen:
            return True
        if not self.samples or self._batch is None or self.epoch is None or point.epoch is None \
                or point.batch is None or point.epoch <= self.epoch or point.batch <= self._batch or self._fresh:
            return False
        self._run_batches_seen = True
        self._forget_points()
        return True

    def _declared_epoch_steps(self, point: Point) -> Point | None:
        """A loop's line that names its epoch and a step of no total, where the run said an epoch's steps
        (:attr:`declared_per_epoch`: DeepSpeed-Chat's "Total Generation Batches 1187" before its "epoch: 0|step: s"
        lines, from 0 in each epoch): once its step went back as its epoch went on, the run's step is the epochs
        before (from the first one named, 0 or 1) times an epoch's steps, plus the step; its total the run's epochs
        times them. None before that (the step is the run's so far) and where the step outruns an epoch's."""
        per = self.declared_per_epoch
        assert per is not None and point.epoch is not None and point.step is not None
        if self._epoch_first is None:
            self._epoch_first = point.epoch
        last = self._declared_last
        self._declared_last = (point.epoch, point.step)
        if not self._epoch_steps_local:
            if last is None or self._fresh or point.epoch <= last[0] or point.step >= last[1] or last[1] > per:
                return None
            self._epoch_steps_local = True
        if point.step > per:
            return None
        base = min(1, int(self._epoch_first))
        epochs = point.epochs or self.epochs or self.declared_epochs
        return point.but(step=max(0, int(point.epoch) - base) * per + point.step,
                         total=epochs * per if epochs else None)

    def _runs_on(self, point: Point) -> bool:
        """Whether a loop's line that names its epoch and a counter of a total ("epoch 2/10 ... iter 2020/20000", read
        as that epoch's batches) counts the run's steps after all: once its epoch went on while its counter went on
        from where it was, short of its total, of the same total (an epoch's batches start again at each epoch, after
        reaching their total; a counter of the whole run's, the epoch its share of the run's, does not: a few-shot
        loop's one pass over its tasks, the epoch its tasks' block). Its total is then the run's."""
        if point.format != "log" or not point.per_epoch or point.step is None or point.total is None \
                or point.epoch is None or point.phase != "train":
            return False
        last, self._counter_raw = self._counter_raw, (point.epoch, point.step, point.total)
        span = self._counter_span
        if span is None or span[0] != point.epoch or self._fresh:
            self._counter_span = (point.epoch, point.step)
        epochs = point.epochs or self.epochs or self.declared_epochs
        if not self._counter_runs and last is not None and not self._fresh and point.epoch > last[0] \
                and last[1] < point.step < point.total == last[2] \
                and not (epochs and span is not None and span[0] == last[0]
                         and (last[1] - span[1]) * epochs > point.total):
            # (the steps said within the epoch before were more than its share of the total over the epochs said: a
            # run's counter over epochs of like size gives each at most that; more is an epoch's batches, its lines
            # apart from the next epoch's by an elision (YOLOX's "epoch: 1/150, iter: 80/774", then "...", then
            # "epoch: 150/150, iter: 710/774"))
            self._counter_runs = True
            if self.samples and self.samples[-1].step > point.step:
                self._forget_points()  # (an epoch's steps counted from a later epoch than the first)
        return self._counter_runs

    def _epoch_step_of_total(self, point: Point) -> Point:
        """A loop's line that names its epoch and a step of a total ("epoch 2/3 | step 50/234"): once its step went
        back to a lower one as its epoch went on, of the same total (no start said between: the next epoch's
        first lines), it counts each epoch's batches, the total an epoch's. The run's step is then the epochs before
        times that total plus the step (epochs numbered from the first one named, 0 or 1), the run's total its epochs
        times it (unknown where they are not said), so that the run's other lines that count the run's steps (an
        engine's "step=N") go on with it and no epoch counts as a restart."""
        assert point.epoch is not None and point.step is not None and point.total is not None
        last, self._epoch_of_total = self._epoch_of_total, (point.epoch, point.step, point.total)
        if self._epoch_first is None:
            self._epoch_first = point.epoch
        if not self._epoch_steps_local:
            if last is None or self._fresh or point.epoch <= last[0] or point.step >= last[1] \
                    or point.total != last[2]:
                return point
            self._epoch_steps_local = True
        base = min(1, int(self._epoch_first))
        epochs = point.epochs or self.epochs or self.declared_epochs
        step = max(0, int(point.epoch) - base) * point.total + point.step
        self.total = epochs * point.total if epochs else None
        return point.but(step=step, total=self.total)

    def _evaluation_line(self, point: Point) -> bool:
        """While an evaluation said in words is under way (:meth:`evaluation`), whether a loop's own line is the
        evaluation's, in the training lines' form (the Speech-Transformer solver's "Epoch 5 | Iter 1 | ..." after its
        "Cross validation..."): one that goes back from the last training step, in the same epoch, without a start
        said. One past it, or of a later epoch, is training's again: the evaluation is over."""
        last = self.samples[-1] if self.samples else None
        if last is None or point.step is None or not self._own_lines or self._fresh:
            return False
        if point.epoch is not None and self.epoch is not None and point.epoch > self.epoch:
            self._evaluating = False
            return False
        back = point.step < last.step or (point.counts_epochs and point.step == last.step and point.batch is not None
                                          and self._batch is not None and point.batch < self._batch)
        if not back:
            self._evaluating = False
        return back

    def _jitter(self, point: Point) -> bool:
        """Whether a bar's point is another process's redraw of the run's bar, a little behind the last one: where
        every rank of a data-parallel run draws its own bar on the same stream without a prefix, their redraws
        interleave a step or two apart (:data:`JITTER_STEPS`, or a hundredth of the total), their elapsed times
        together. A restart goes back further (to 0, to a checkpoint's step) and its bar's time starts again."""
        last = self.samples[-1] if self.samples else None
        if point.format != "tqdm" or point.rank is not None or last is None or self._fresh or point.step is None \
                or point.total is None or last.segment != len(self.restarts):
            return False
        ahead = last.step
        if point.per_epoch:  # an epoch's bar ("Epoch 3: 40%|..."): behind this epoch's last count, of its total
            raw = self._raw
            if raw is None or point.epoch != raw[2] or point.total != raw[1] or point.step >= raw[0]:
                return False
            ahead = raw[0]
        elif point.total != self._bar_total or point.step >= last.step or self._last_bar is None \
                or self._last_bar[1] != point.total:
            return False
        timed = point.elapsed is not None and self._last_elapsed is not None
        if point.elapsed is not None and self._last_elapsed is not None \
                and point.elapsed + JITTER_S < self._last_elapsed:
            return False  # its time started again: a restart's bar
        if ahead - point.step <= max(JITTER_STEPS, point.total // 100):
            return True
        # further behind: another process's bar over the same steps where both bars' times are known, its time
        # with the run's (a restart's bar starts its time again, tqdm's elapsed from 0, also where it starts at a
        # checkpoint's step). accelerate's loops draw one bar a process unless they pass disable=not
        # accelerator.is_local_main_process; each redraws every mininterval, at its own count
        return timed

    def _round(self, point: Point) -> Point:
        """A bar of no epoch's name that starts again from its beginning right after it reached its total, of the
        same total, with no start said, and a bar of its own between (the epoch's validation, held inside the
        run's): a loop's bar over each epoch's batches (``for batch in tqdm(loader)`` inside the epochs' loop, its
        validation's loop after it), not a restart. Its points then count on from the epochs before (the run's
        total is its epochs times the bar's, where the configuration says its epochs; unknown else). The same bar
        again with nothing between is a run started again (a requeued job appending to its log)."""
        total = point.total
        prev = self._last_bar
        between = self._after_inner
        if prev is None or point.step != prev[0] or total != prev[1]:
            # (not the same count again: tqdm's close() redraws the bar's last state after the validation's loop)
            self._after_inner = False
        if between and prev is not None and prev[1] == total and prev[0] is not None and total is not None \
                and prev[0] >= total and point.step is not None and point.step < prev[0] and not self._fresh \
                and total == self._bar_total and self.samples:
            self._round_base = (self._round_base if self._round_total == total else 0) + total
            self._round_total, self.total = total, None
        if self._round_total != total or not self._round_base or point.step is None or total is None:
            return point
        epochs = self.declared_epochs
        return point.but(step=self._round_base + point.step, total=epochs * total if epochs else None)

    def _another_fit(self, point: Point) -> bool:
        """Whether a training bar whose step goes back is another fit's in the same program: Lightning's bar says the
        version of its Trainer's logger ("v_num"), and a new Trainer (a cross-validation's folds, a fit again after a
        test) logs under the next; the same fit's bar keeps it. That fit is the run's now: the points before were
        an earlier fit's (:meth:`new_table`'s fits of fastai), not a restart. A start said before it (ntui's header of
        an allocation, the program's word) is one still."""
        return (point.version is not None and self._version is not None and point.version != self._version
                and not self._fresh and point.phase == "train")

    def _excerpt_again(self) -> None:
        """The last point's metrics are, all of them, those of a point of a short segment a restart closed at the top
        of the log (:attr:`_excerpts`): where every point of that segment is printed again so, it was an excerpt of
        this run pasted before it (a README's or an issue's quoted epochs, then the whole run), not a start of its
        own: its points and its restart go. (No run prints the same values of every metric twice: a new start would
        not.)"""
        last = self.samples[-1]
        for k, (index, waiting) in enumerate(self._excerpts):
            if last.segment <= index or last.metrics not in waiting:
                continue
            waiting.remove(last.metrics)
            if waiting:
                return
            del self._excerpts[k]
            del self.restarts[index]
            self.samples = [x if x.segment < index else Sample(x.time, x.step, x.metrics, x.segment - 1)
                            for x in self.samples if x.segment != index]
            self._excerpts = [(i - 1 if i > index else i, w) for i, w in self._excerpts]
            return

    def _other_phase_before(self, point: Point, total: int | None) -> bool:
        """Whether the bars taken so far were another phase's, over before this bar began: the last one reached its
        total, and this one, of another total, starts below where it ended (sd-scripts' latents cache, "caching
        latents..." then a bar of no words, before its "steps:" bar; a dataset's download, torchvision's bar of no
        words, before Lightning's epoch bar). Not a restart: a step that goes back in the same process after a phase
        that ended is a new phase's count. ``total``: the bar's own, as it counted (an epoch's bar's, not the run's)."""
        prev = self._last_bar
        return (point.format == "tqdm" and prev is not None and prev[1] is not None
                and prev[0] >= prev[1] and total is not None and total != prev[1]
                and point.step is not None and bool(self.samples) and point.step < self.samples[-1].step
                and not self._fresh)

    def _last_epoch_summary(self, point: Point) -> bool:
        """Whether an epoch's summary line ("Epoch 3/3 | train_loss: ... | test_acc: ...") names the run's last epoch,
        E of E, after the loop's own "Epoch e/E | Step s/S" lines (counted in the run's steps, of a total the epochs
        times an epoch's steps) reached that epoch: a hand-written loop prints it after the epoch's batches and its
        evaluation, so the last epoch's loop is over and the run's training with it. A log cut in its last epoch
        ends on a step line, before any such summary."""
        last = self._epoch_line_last
        return (point.form == "epoch-summary" and self._unit == "step" and last is not None and bool(point.total)
                and point.step == point.total == last[0] == last[1] and bool(self.per_epoch)
                and self.total == point.total * (self.per_epoch or 0) and bool(self.samples)
                and self.samples[-1].step > (point.total - 1) * (self.per_epoch or 0))

    def _writer_behind(self, point: Point) -> bool:
        """Whether a record is a second writer's copy of one already read: two processes that append the same
        records to one file (LLaMA-Factory's trainer_log.jsonl written by every rank that saves), one of them a
        record behind, interleave them ("410, 420, 410, 430, 420"): a record whose step is the one before the last
        step read, one logging interval back, is that copy, no restart (a resume goes back to its checkpoint's step,
        and the records after it go on from there). Records (a dict a line) only."""
        if point.form != "dict" or point.step is None or len(self.samples) < 3:
            return False
        before, last = self.samples[-2].step, self.samples[-1].step
        return point.step == before < last and last - before == before - self.samples[-3].step

    def _keras_fit_again(self, point: Point) -> Point:
        """Keras' epoch header ("Epoch 1/1") as the run's epoch: fit called again (a loop of the script's own, each
        call's epochs numbered from 1, each call's "Train on N samples" before them) after the last call's last epoch
        ended goes on from the epochs before, and the run's epochs are no longer any call's. An epoch 1 after an
        epoch not over is the same call started again (a restart), as before."""
        fit, step = self._keras_fit, point.step or 0
        base = fit[0] if fit is not None else 0
        if step == 1 and fit is not None and self.samples and not self._fresh and fit[1] and fit[1] > 1 \
                and (self.ended or (point.total == fit[1] and bool(self.samples[-1].metrics)
                                    and self.samples[-1].step == base + fit[1])):
            # a call of several epochs again, after one that ended early (EarlyStopping said so) or ran all its
            # epochs, of the same length: another fit of the same program (a sweep's next model, a retraining), not a
            # restart and not a stage that goes on; the run is this fit's, the earlier fits' points dropped
            self._forget_points()
            self._undo_end()
            self._keras_fit, self.total = (0, point.total), None
            return point
        if step == 1 and fit is not None and self.samples and self._epoch_complete and fit[1] \
                and self.samples[-1].step == base + fit[1]:
            base += fit[1]
            self.total = None  # (the last call's epochs were not the run's)
        self._keras_fit = (base, point.total)
        if not base:
            return point
        return point.but(step=base + step, epoch=float(base + step), total=None)

    def _other_keras_bar(self, point: Point) -> bool:
        """Whether a Keras step bar is not fit's: one that starts again (its count back, or another total) after the
        epoch's bar reached its total, with no "Epoch N/M" before it. Fit prints that header as each epoch begins;
        evaluate() and predict() draw the same bar without one, and their metrics are not the training's."""
        if point.step is not None:  # the header: fit's epoch begins
            self._keras_other, self._keras_bar = False, None
            return False
        if point.batch is None:
            return False
        last, self._keras_bar = self._keras_bar, (point.batch, point.batches)
        if not self._keras_other and self._epoch_complete and self._unit == "epoch" and last is not None \
                and (point.batches != last[1] or point.batch < last[0]):
            self._keras_other = True
        return self._keras_other

    def _epoch_progress(self, point: Point) -> None:
        """Where an epoch-counted run is in its epoch: whether the epoch reached its last batch (a batch within one
        interval of the lines of its epoch's batches; a summary printed after an epoch; not its header)."""
        self._header_open = point.form == "epoch-of-header"
        if point.form == "epochs-bar":  # a bar's count of the epochs done: the last one it counted is over
            self._epoch_complete = True
            return
        if point.step == 0:
            self._zero_epoch = True
        elif point.step is not None and point.batch is None and not point.metrics:
            self._epoch_complete = False  # an epoch's header ("Epoch 5/5"): the epoch starts
            return
        batch, batches = point.batch, point.batches
        if batch is not None and batch > 0:
            self._min_batch = batch if self._min_batch is None else min(self._min_batch, batch)
        if batch is not None and batches and point.form in BAR_COUNTED:
            self._epoch_complete = batch >= batches  # a bar draws its count exactly: its epoch ends at its total
        elif batch is not None and batches:
            self._epoch_complete = batches - batch < (self._min_batch or 1)
        elif batch is None:
            self._epoch_complete = True  # an epoch's summary (its loss)
        else:
            self._epoch_complete = False

    def _jumps_to_last_epoch(self, point: Point) -> bool:
        """Whether a step-counted loop's line names an epoch more than one past the last one named, at the same step:
        the engine jumped to its last epoch to stop (fairseq's Lua engine sets the epoch to its maximum when its
        learning rate falls below its minimum, or its early stop says so, then saves its state under that epoch)."""
        last, epoch = self.epoch, point.epoch
        return (point.format == "log" and not point.counts_epochs and not point.per_epoch and last is not None
                and epoch is not None and epoch > last + 1 and bool(self.samples) and point.step is not None
                and point.step == self.samples[-1].step)

    @staticmethod
    def _ends_here(point: Point, what: str, n: int) -> bool:
        """Whether a point (the run's step) is where an end said before it stopped: at ``max_steps=n``, in the last
        of ``max_epochs=n`` (named from 0), or at its bar's total where the end names neither (never the first step
        of a run that starts after a tuner's fit)."""
        step = point.step
        if step is None:
            return False
        if what in ("steps", "at"):
            return step == n
        if what == "epochs":
            return point.epoch is not None and (int(point.epoch) + 1 == n or point.epochs == n)
        return point.total is not None and step >= point.total > 1

    def _undo_end(self) -> None:
        """The end said was not the run's: the run is not over, and the total or the epochs it said are undone."""
        if self.ended and self._before_end is not None:  # each as it was, unless a point changed it since
            (declared, epochs, total), (said_declared, said_epochs, said_total) = self._before_end
            if self.declared_total == said_declared:
                self.declared_total = declared
            if self.epochs == said_epochs:
                self.epochs = epochs
            if self.total == said_total:
                self.total = total
        self.ended, self.soft_end, self.stopped_at, self._before_end = False, False, None, None
        self._end_on_trial, self._end_step, self._past_end = False, None, 0

    def _same_count_bar(self, point: Point) -> Point | None:
        """A training bar beside the loop's own lines that count steps of a total, its total theirs and its count
        ahead of their last step by no more than their interval (ms-swift's Trainer's bar between its dicts that
        say "global_step/max_steps"): it counts the same steps, drawn at each one, they every few: its count is the
        run's latest step, at the time its rate says. None where it is not such a bar."""
        if self._unit != "step" or point.phase != "train" or point.per_epoch or point.epoch is not None \
                or point.step is None or point.total is None or point.total != (self.total or self._side_total) \
                or len(self.samples) < 2:
            return None
        last, before = self.samples[-1], self.samples[-2]
        if not last.step < point.step <= last.step + max(1, last.step - before.step):
            return None
        at = last.time + ((point.step - last.step) / point.rate if point.rate else 0.0)
        # (its total the run's where the lines said it; where a bar beside them said it, it stays theirs: an
        # epoch's bar's total may be its epoch's, the run's said by a declaration)
        return point.but(format="log", form="same-count-bar", time=at, elapsed=None, rate=None, total=self.total)

    def _beside_bar(self, point: Point) -> None:
        """A training bar beside the loop's own lines that count steps with no total: where its count keeps with
        their step (within one of their intervals), it counts the same steps and its total is the run's; once it
        counts less than their step (it started again: an epoch's batches), it is not the run's, never again."""
        if self._side_bar_other or self._unit != "step" or point.phase != "train" or point.per_epoch \
                or point.epoch is not None or point.step is None or point.total is None or len(self.samples) < 2 \
                or self._fresh:  # (a new start's bar, from its checkpoint: judged by that start's lines)
            return
        last, before = self.samples[-1].step, self.samples[-2].step
        if point.step < last - 1:
            self._side_bar_other, self._side_total = True, None
        elif point.step <= last + max(1, last - before) and point.total >= last:
            self._side_total = point.total

    def _batch_back(self, point: Point) -> bool:
        """Whether an epoch-counted run went back within its epoch (a relaunch that repeats the epoch from its
        checkpoint): the same epoch named, an earlier batch."""
        return (point.counts_epochs and point.batch is not None and self._batch is not None and bool(self.samples)
                and point.step == self.samples[-1].step and point.batch < self._batch)

    def _epoch_of_epochs_bar(self, point: Point) -> Point:
        """A bar drawn below a bar over the run's epochs (a loop's ``for epoch in trange(E): for batch in
        tqdm(loader)``, tqdm placing the inner bar at position 1 by itself): the epoch's training bar, not an
        evaluation's. The run counts its global steps (the epochs done, as the bar above counts them or as the inner
        bar went back after its total since, times the epoch's steps, plus this bar's count; its total the epochs
        times the epoch's steps); the epochs bar's points so far were a coarser count of the same run: gone."""
        done, epochs = self._epochs_bar or (0, None)
        last, self._inner_last = self._inner_last, (point.step or 0, point.total or 0)
        if last is not None and last[1] and last[0] >= last[1] and (point.step or 0) < last[0]:
            # the inner bar went back after its total, the bar above not redrawn since (tqdm redraws a bar at most
            # each mininterval: a short epoch's end may go unsaid): the next epoch's bar
            self._inner_epochs += 1
        done += self._inner_epochs
        if not self._nested:
            self._nested = True
            self._forget_points()
            self._own_lines, self._unit, self.total = False, "", None
        return point.but(phase="train", epoch=float(done + 1), epochs=epochs, per_epoch=True, first_epoch=1,
                         form="")

    def add(self, point: Point, at: float) -> None:
        """One point read at ``at`` (a bar of another phase, Lightning's validation, is not the run's). Its time is
        the line's own when it has one, else the bar's start plus its elapsed (so that a log read at once, after the
        fact, still has its pace), else ``at``."""
        fit_again = False  # (a fit's result line came right before this point: fit_result)
        if point.percent is not None and point.step is None:
            # a bar of its percentage only (Rich's default columns): a step where the run's total is said, else none
            total = self.total or self.declared_total
            if total is None:
                return
            point = point.but(step=round(total * point.percent / 100), total=total, percent=None)
        if point.form == LOOP_EPOCH_BAR:
            # a loop's bar over an epoch's batches that says "Epoch e/E": an epoch's bar (its count and total the
            # epoch's batches) of the run's epochs, so that the run counts its global steps
            point = point.but(format="tqdm", step=point.batch, total=point.batches, epochs=point.total, per_epoch=True,
                              counts_epochs=False, batch=None, batches=None, form="")
        if point.form == "epochs-bar" and point.step is not None:
            if self._epochs_bar is None or point.step != self._epochs_bar[0]:
                # (its count moved: the epochs done are its; an inner bar at its total is the one it counted)
                self._inner_epochs, self._inner_last = 0, None
            self._epochs_bar = (point.step, point.total)
            if self._nested:
                return  # the epochs done, said by the bar above the run's (the epoch's bar counts them already)
        elif point.step is not None and point.total and self._epochs_bar is not None and (
                point.form == INNER_BAR or (point.format == "tqdm" and point.phase == "train" and self._nested
                                            and self._inner_last is not None and point.total == self._inner_last[1])):
            # (an inner bar's last draw, as it closes, moves the cursor up no more: of its total, it is the same bar)
            point = self._epoch_of_epochs_bar(point)
        if self._header_again:
            self._header_again = False
            fit = self._keras_fit
            if not (point.form == "keras" and point.batch is None and point.step == 1 and fit is not None
                    and point.total == fit[1]):
                self._started_again()  # not a new fit of the same length: the program started again
        if self._again is not None:
            (again, kept), self._again = self._again, None
            if _goes_on(again, point):
                for name, value in kept.items():
                    setattr(self, name, value)
        self._latest = point
        skipped = self._skipped
        if skipped and point.format == "tqdm" and point.phase == "train" and not point.per_epoch \
                and point.step is not None and point.total is not None \
                and self.declared_total == point.total + skipped:
            point = point.but(step=point.step + skipped, total=point.total + skipped)
        if self._banner and point.phase == "train" and point.step is not None and self.samples:
            self._banner = False  # another node's banner goes on at the same step or after it; a new run goes back
            if not point.per_epoch and not point.counts_epochs and point.step < self.samples[-1].step:
                # (the step it said it goes on from, after the banner, holds: "Continuing training from global step")
                self.new_start(until_point=True, from_step=self._resumed_at)
        if point.rank is not None and (point.phase == "train" or self._rank is not None):
            if point.rank == 0 and self._rank and point.phase == "train" and point.format == "tqdm":
                self._follow_rank_zero()
            elif self._rank is not None and point.rank < self._rank and point.format == "log" \
                    and point.phase == "train" and point.step is not None and self.samples \
                    and point.step >= self.samples[-1].step:
                # a lower rank's loop line, level with the run: where every rank prints its own loss, the run's is
                # rank 0's (the lowest printed), as its loggers report; followed from here, its steps never behind
                self._rank = point.rank
            elif not self._followed(point):
                if self._loss_of_other_rank(point) and (loss := training_loss(point.metrics)) is not None:
                    self.more_metrics(dict((loss,)))
                return  # another rank's bar, of any phase (its validation's batches are not the followed rank's)
        # XGBoost's evaluation log counting from [0] again under other names of its evaluation sets and metrics
        # ("[0]\tvalidation_0-rmse:..." after "[21]\ttrain-rmse:..."): another model's fit in the same process (a
        # relaunch of the program evaluates the same sets under the same names), no restart (see fit_result)
        xgb_again = point.form == "xgboost" and point.step == 0 and bool(self.samples) and not self._fresh \
            and self.samples[-1].step > 0 and bool(point.metrics) and not set(point.metrics) & set(self.metrics)
        if point.format == "log" and point.step is not None and self.samples and not self._fresh and not xgb_again \
                and point.step < self.samples[-1].step and evaluation_record(point.metrics):
            # an evaluation's scalars at the step it evaluated, behind the training's last: an asynchronous metric
            # writer's late write (clu's, the flax examples' default), not a run started again
            return
        if point.phase != "train":
            if point.phase == "validation" and point.format == "tqdm":
                self._validation(point)
            if point.format == "tqdm" and (last_bar := self._last_bar) is not None and last_bar[1] is not None \
                    and last_bar[0] >= last_bar[1]:
                # an evaluation's own bar after the run's bar reached its total: the epoch's validation, between
                # that bar and the next epoch's (see _round), as a bar held inside the run's is
                self._after_inner = True
            return
        if point.format == "hf":
            self._evaluation_results(point)
            point = self._step_of_epoch(point)
        elif point.step is not None and not self._steps_printed:
            self._steps_printed = True
            if self._from_epochs:  # the program's own steps from now: the ones read from the dicts' epochs go
                self._from_epochs = False
                self._forget_points()
        if self._evaluating and point.format == "tqdm" and not self._after_evaluation(point):
            return
        if self.ended and point.format == "tqdm" and not point.per_epoch and self._bar_total is not None \
                and point.total != self._bar_total and not self._fresh and not self._reopen:
            # a bar of another total after the run's end: an evaluation or a prediction, not a new run; unless it
            # goes on for INNER_MAX points (a new run appended to the log, that said nothing of its start)
            self._after_end_bars += 1
            if self._after_end_bars <= INNER_MAX:
                return
            self._undo_end()
        if point.total is not None and point.format == "tqdm" and self._inner(point, at):
            return
        if self._reopen and point.step is not None:  # the program went on after it said it started again
            self._reopen, self.ended, self.stopped_at, self.stopped = False, False, None, None
        raw = point
        if (self._round_base or self._after_inner) and point.format == "tqdm" and not point.per_epoch \
                and point.step is not None and point.total:
            point = self._round(point)
        if point.format == "tqdm" and point.per_epoch and point.epochs and point.total:
            self._loop_epoch_bars = True
        if point.format != "tqdm":
            if point.step is not None:
                self._lines_after = 0
                fit_again, self._fit_result = self._fit_result or xgb_again, False
                if point.format in _RUN_STEP_FORMATS:
                    self._run_steps = True
            if point.iters is not None and self._total_iters:
                point = point.but(step=point.iters)  # the run's total counts iterations: so does its step
            if point.format == "log" and point.epoch is not None and point.step is not None and point.total \
                    and not point.counts_epochs and not point.per_epoch:
                point = self._epoch_step_of_total(point)
            if self._summary_epoch is not None and point.format == "log" and point.epoch is None \
                    and point.step is not None and point.total is None and not point.counts_epochs \
                    and not point.per_epoch:
                point = self._next_epoch_count(point)
            if point.format == "log" and point.epoch is not None and point.step is not None and point.total is None \
                    and not point.counts_epochs and not point.per_epoch and self.declared_per_epoch \
                    and (composed := self._declared_epoch_steps(point)) is not None:
                point = composed
            elif point.format == "log" and point.epoch is not None and point.step is not None \
                    and not point.counts_epochs and not point.per_epoch and self._epoch_local(point):
                # the loop's step counts its epoch's batches (it went back as the epoch went on): the run counts
                # epochs, the step its batch within the epoch
                point = point.but(step=int(point.epoch), total=point.epochs, counts_epochs=True, batch=point.step)
            if self._evaluating and point.format == "log" and self._evaluation_line(point):
                return
            if point.batches and not point.counts_epochs and not point.per_epoch:
                self._epoch_steps = point.batches
            if point.form == "keras" and self._other_keras_bar(point):
                return
            if point.form == "keras" and point.batch is None and point.step is not None:
                point = self._keras_fit_again(point)
            elif point.form == "keras" and self._keras_fit is not None and self._keras_fit[0]:
                point = point.but(total=None)
            if point.form == "epoch-batch" and self._run_batches(point):
                point = point.but(step=point.batch, total=None, counts_epochs=False, batch=None)
            if point.counts_epochs:
                self._epoch_progress(point)
            elif point.step == 0 and not any(s.step for s in self.samples):
                self._zero_step = True  # the loop's lines count from 0 (a bar counts what is done: not this)
        if point.format == "log" and point.step is not None:
            unit = "epoch" if point.counts_epochs else "step"
            if unit == "epoch" and point.form == "epoch-summary" and (self._run_steps or self._loop_epoch_bars) \
                    and not self._own_lines:
                # an epoch's summary after an engine's lines that count the run's optimizer steps (DeepSpeed's
                # log_dist "step=N", under DeepSpeed-Chat's "Epoch 1/1 with loss x"), or after a loop's bars that say
                # "Epoch e/E" over each epoch's batches (counted in the run's steps): its metrics only
                point = point.but(step=None, total=None, counts_epochs=False)
            elif not self._own_lines or (unit == "step" and self._unit == "epoch"):
                # the loop's own line counts the run; the bars before it counted something else (a dataset's map,
                # an epoch's batches, an evaluation): they are not the run's points. A loop's lines that count
                # steps count it finer than its epoch summaries before them
                self._own_lines, self._unit = True, unit
                if self.samples:  # (a bar's "0/25" too: its total is an epoch's)
                    self._forget_points()
                    self.total = self.per_epoch = None
            elif unit != self._unit:  # an epoch's summary beside the lines that count steps: its metrics only
                if self._last_epoch_summary(point):
                    self.end()
                point = point.but(step=None, total=None, counts_epochs=False)
        elif point.format == "tqdm" and self._own_lines and (same := self._same_count_bar(point)) is not None:
            point = same  # the bar counts the steps the loop's lines count, of their total: it is ahead of them
        elif point.format == "tqdm" and self._own_lines:
            if (done := self._epoch_bar_done(point)) is not None:
                # an epoch's training bar at its end where the loop's own lines count epochs (its summary after
                # each epoch's evaluation): that epoch's training is done, as its summary would name it
                self.add(point.but(format="log", step=done, total=None, rate=None, per_epoch=False,
                                   counts_epochs=True, elapsed=None, form="epoch-bar"), at)
                return
            # a bar beside the loop's own lines (ultralytics' validation, an epoch's batches): not the run's step; a
            # training bar's postfix that says the training loss (SpeechBrain's "train_loss=0.603" between its epoch
            # lines) is the latest one printed
            self._beside_bar(point)
            if self.samples and training_loss(point.metrics) is not None:
                self.more_metrics(point.metrics)
            return
        back = bool(self.samples) and point.step is not None and point.step < self.samples[-1].step
        if back and self._jitter(point):
            return  # another process's redraw of the same bar, a step or two behind
        if point.time is not None:
            at, self.own_times = point.time, True
        elif point.clock is not None:
            at, self.own_times = _in_year(point.clock, at), True
        elif point.elapsed is not None:
            if self._bar_origin is None or self._last_elapsed is None or point.elapsed < self._last_elapsed:
                # a bar starts (or restarts: Lightning's bar of each epoch): from now, never before the last point
                latest = self.samples[-1].time if self.samples else -math.inf
                self._bar_origin = max(at - point.elapsed, latest)
            self._last_elapsed = point.elapsed
            at = self._bar_origin + point.elapsed
        if point.epochs:
            self.epochs = point.epochs
        if point.epoch is not None:
            if self._jumps_to_last_epoch(point):
                self.end()
            self.epoch = point.epoch
        if point.per_epoch and point.step == 0:
            return  # an epoch's bar reset for the next epoch, still labelled with the last one (Lightning)
        epoch = point.epoch if point.epoch is not None else self.epoch  # Keras says its epoch on a line before
        epochs = self.epochs or self.declared_epochs
        if self._runs_on(point):
            point = point.but(per_epoch=False)
        if point.per_epoch and point.step is not None and point.total and epoch is not None:
            # an epoch's bar (Lightning, Keras, mmengine): the run's step is the epochs before times an epoch's
            # batches, plus this one's; the run's total is its epochs times an epoch's batches, else unknown (never
            # the epoch's, nor an earlier bar's)
            n: int = point.step
            known: int | None = point.total
            if point.format == "tqdm":
                n, known = self._train_part(point.step, point.total, epoch)
            per = known if known is not None else point.total
            if known is None:  # its validation's batches are in its total, how many not known yet: the run's unknown
                epochs = None
            self.per_epoch = per
            if epoch < point.first_epoch:  # the program numbers its epochs from 0 after all
                self._from_zero = True
            if self._from_zero and epochs and point.epochs == epochs and self.declared_epochs == epochs + 1:
                epochs = self.declared_epochs  # its bar names the last epoch's index ("Epoch 0/39" of 40 said)
            before = max(0, int(epoch) - (0 if self._from_zero else point.first_epoch))
            if point.format == "log" and point.epochs:
                self._epoch_line_last = (int(epoch), point.epochs)
            point = point.but(step=before * per + n, total=epochs * per if epochs else None)
            self.total = point.total
        elif point.per_epoch and point.step is not None and point.total is None and epoch is not None:
            # an epoch's bar without a total (Lightning's "Epoch 2: : 5200it"): the next epoch's bar counts from
            # where the run is, it is no restart
            if self._bar_epoch is not None and epoch > self._bar_epoch and self.samples:
                self._epoch_base = self.samples[-1].step
            self._bar_epoch = epoch
            point = point.but(step=self._epoch_base + point.step)
        elif point.per_epoch and epoch is None:  # an epoch's count, no epoch named: its total is not the run's
            point = point.but(total=None)
        elif point.counts_epochs and point.total is None and self.declared_epochs:
            point = point.but(total=self.declared_epochs)  # the run's epochs, said before its lines
        elif point.counts_epochs and point.total and point.form == "keras" and point.batch is None \
                and (point.step == 0 or self._header_from_zero):
            # an epoch's header "Epoch 0/74" (Keras' from 1 never says 0): the program numbers its epochs from 0 and
            # names the last one's index, AllenNLP's Trainer's logger.info("Epoch %d/%d", epoch, num_epochs - 1)
            self._header_from_zero = self._zero_epoch = True
            point = point.but(total=point.total + 1)
        elif point.counts_epochs and point.total and (self.declared_epochs == point.total + 1 or (
                not self.declared_epochs and self._rows_said_from_zero and point.form == "ultralytics")):
            # the line names its epoch of the last one's index ("0/79" of 80 epochs said before, or the table's header
            # is one whose rows number so): from 0
            self._zero_epoch = True
            point = point.but(total=point.total + 1)
        if point.total:
            self.total = point.total
        if not self._fresh and self._writer_behind(point):
            return
        finite = {k: v for k, v in point.metrics.items() if math.isfinite(v)}
        self._latest_loss(point)
        if point.metrics:  # a nan loss is shown as what it is
            self._metrics_before, self.metrics = self.metrics, {**self.metrics, **point.metrics}
        if point.rate is not None and point.rate > 0 and point.step:
            self.printed_rates = [*self.printed_rates[-(PRINTED_RATES - 1):], point.rate]
        if point.step is not None:
            self.stopped = None  # it went on after what looked like its end
        if point.step is None:  # the Trainer's dict: metrics for the latest step
            if self.samples and finite:
                last = self.samples[-1]
                self.samples[-1] = Sample(last.time, last.step, {**last.metrics, **finite}, last.segment)
                if self._excerpts:
                    self._excerpt_again()
            return
        if back and self._another_fit(point) or (
                point.format != "tqdm" and fit_again and not self._fresh and point.step is not None
                and bool(self.samples) and point.step < self.samples[-1].step):
            # the points were an earlier fit's, its end too: no restart
            self._forget_points()
            self._undo_end()
        elif back and self._other_phase_before(point, raw.total):  # its points were not the run's: no restart
            if self._before_bar is None:
                self._keep_before_bar()
            self._forget_points()
        if point.version is not None:
            self._version = point.version
        if point.format == "tqdm" and not point.per_epoch and raw.step is not None:
            self._last_bar = (raw.step, raw.total)
        elif point.format == "tqdm" and point.per_epoch:
            self._last_bar = None  # (the epoch's bar is the run's: a bar before it that ended is no longer the last)
        segment = len(self.restarts)
        # a run of one epoch-like unit, its summary line "1/1" (a loop's "Episode 1/1 | ...", "Epoch 1/1, loss ..."),
        # then the same loop's line of its first unit again: nothing comes after a run's last unit, so a launch again
        # (a run of more units has its step go back instead)
        one_again = self._one_unit_form is not None and point.form == self._one_unit_form and point.step == 1
        self._one_unit_form = point.form if (point.format == "log" and point.counts_epochs and point.batch is None
                                             and point.step == 1 and point.total == 1) else None
        if self._fresh or (self.samples and point.step < self.samples[-1].step) or self._batch_back(point) \
                or one_again:
            # a restart (or back to a step, or back within the epoch an epoch-counted run is in)
            self._fresh = False
            # an end said before it was not this training's: the program trains again (a tuner's fit before the
            # run's, as Lightning's batch-size finder runs, whose bars look like the run's; a run appended to the log)
            self._undo_end()
            if self._counted:  # (its allocation's header counted it: the segment is numbered already)
                self._counted = False
            else:
                closed = [x.metrics for x in self.samples[-(EXCERPT_POINTS + 1):] if x.segment == segment]
                if 0 < len(closed) <= EXCERPT_POINTS and len(self.samples) == len(closed) + sum(
                        len(e[1]) for e in self._excerpts) and all(len(m) >= 2 for m in closed):
                    self._excerpts.append((len(self.restarts), closed))
                self.restarts.append(at)
                segment += 1
            self.printed_rates = self.printed_rates[-1:]
        elif self.samples and point.step == self.samples[-1].step:  # the same step again (a bar's redraw)
            self._batch = point.batch if point.counts_epochs else None
            last = self.samples[-1]
            self.samples[-1] = Sample(last.time, last.step, {**last.metrics, **finite}, last.segment)
            if self._excerpts and finite:
                self._excerpt_again()
            return
        self._seen += 1
        self.points_seen += 1
        self._step_begins = point.form == "step-banner"
        self._batch = point.batch if point.counts_epochs else None
        sample = Sample(at, point.step, finite, segment)
        # thinned (every stride-th point kept), the newest point is kept too, in the last place: the step shown is
        # always the last one printed; the next point takes that place unless its stride falls on it
        if self._provisional:
            self.samples[-1] = sample
        else:
            self.samples.append(sample)
        self._provisional = self._seen % self._stride != 0
        if self._excerpts and finite:
            self._excerpt_again()
        if self._early_end is not None:  # the first point after an end said before any
            what, n = self._early_end
            self._early_end = None
            if self._ends_here(point, what, n):  # where it agrees with that end, the end holds, for now
                self.end(what, n)
                self._end_on_trial = True
        elif self._end_on_trial:  # a second step: training went on after that end, it was not the run's
            self._undo_end()
        elif self.ended and self._end_step is not None and point.step > self._end_step:
            # training goes on past the step where an end was said: one step more is the last batch's (a stop is
            # signalled during a batch, Lightning's bar draws that batch after the word); two, it was not the end
            self._past_end += 1
            if self._past_end >= PAST_END:
                self._undo_end()
        if len(self.samples) > MAX_POINTS:  # halve the resolution: every other point, the last kept
            self.samples = self.samples[::2] if len(self.samples) % 2 else [*self.samples[:-1:2], self.samples[-1]]
            self._stride *= 2


#: the most points a segment at the top of a log may have to be taken as an excerpt of the run pasted before it
EXCERPT_POINTS = 2


def _in_year(clock: tuple[int, int, int, int, int, float], at: float) -> float:
    """A stamp printed without its year (month, day, time) as epoch seconds: in the year of ``at`` (when the line was
    read, or its file written), or the year before where that would put it more than a day after ``at``."""
    year = datetime.fromtimestamp(at).year
    mo, d, h, mi, s, frac = clock
    stamp = local_epoch(year, mo, d, h, mi, s, None)
    if stamp is not None and stamp > at + 86400:
        stamp = local_epoch(year - 1, mo, d, h, mi, s, None)
    return stamp + frac if stamp is not None else at


@dataclass(frozen=True)
class Estimate:
    """What the series says at a moment. ``rate`` in steps per second (None: too few points); ``eta_s`` the seconds
    to the total; ``margin_s`` the time left in the allocation after that (negative: cut); ``cut_at`` the step the
    limit falls at."""

    step: int | None
    total: int | None
    rate: float | None
    eta_s: float | None
    margin_s: float | None
    cut_at: int | None
    words: str


def _rate(samples: list[Sample], own_times: bool = False) -> float | None:
    """Steps per second over the recent window of the last segment (see the module docstring). ``own_times``: the
    points carry the log's own timestamps, exact where a poll's are not: two of them already say a pace, and the
    first after a start are skipped only where enough remain."""
    if not samples:
        return None
    segment = samples[-1].segment
    current = [s for s in samples if s.segment == segment]
    least = 2 if own_times else 3
    skip = SKIP_AFTER_START if not own_times or len(current) >= SKIP_AFTER_START + least else 0
    current = current[skip:]
    # the lines read together share one time (a poll's, or the file's, when a line has none of its own): each
    # time's last step stands for them, so that a poll's steps count over the time since the one before
    timed: list[Sample] = []
    for sample in current:
        if timed and sample.time == timed[-1].time:
            timed[-1] = sample
        elif not timed or sample.time > timed[-1].time:
            timed.append(sample)
    window = timed[-RATE_WINDOW - 1:]
    if len(window) < least:
        return None
    gaps = [(b.time - a.time, b.step - a.step) for a, b in zip(window, window[1:], strict=False)]
    if not gaps:
        return None
    typical = statistics.median(dt for dt, _ in gaps)
    kept = [(dt, ds) for dt, ds in gaps if dt <= PAUSE_FACTOR * typical]
    seconds = sum(dt for dt, _ in kept)
    steps = sum(ds for _, ds in kept)
    return steps / seconds if seconds > 0 and steps > 0 else None


def estimate(series: Series, *, now: float, time_left_s: float | None) -> Estimate:
    """The rate, the ETA and the verdict at ``now`` with ``time_left_s`` seconds left in the allocation (None: no
    limit known). A total the step went past, where the program has not said its training is over, is not the
    run's (it counts something else: an inner loop's, a stage's, an epoch's), so it is said unknown, and never
    "done" for reaching it (a run resumed past a smaller new total, which the Trainer ends at once, says its end)."""
    step, total = series.step, series.run_total
    if total is not None and step is not None and step > total and not series.ended:
        total = None
    # the program's own smoothed rate where it prints one (tqdm: per update, not rounded to the second as its
    # elapsed time is), else the pace of the points over the recent window
    rate = statistics.median(series.printed_rates) if series.printed_rates else _rate(series.samples, series.own_times)
    if step is None and series.ended:  # its metrics without a step, then its word that the training is over
        return Estimate(None, total, rate, 0.0, time_left_s, None, "done (the program printed no step)")
    if step is None:
        return Estimate(None, total, None, None, None, None, "no progress line seen yet")
    of = f" of {total:,}" if total else ""
    if series.ended:  # the program said so: where it stopped is the end of the run (its total unknown where unsaid)
        early = " (before its total: the program said its training is over)" if total and step < total else ""
        return Estimate(step, total, rate, 0.0, time_left_s, None, f"step {step:,}{of}: done{early}")
    if series.stopped is not None and (total is None or step < total or series.stopped_on == step):
        # the log says the run was stopped after its last point: no finish time for a run that is not finishing
        return Estimate(step, total, rate, None, None, None, f"step {step:,}{of}: stopped ({series.stopped})")
    if total is not None and series.reached(step, total):  # over: no rate (a log read after the fact has none)
        return Estimate(step, total, rate, 0.0, time_left_s, None, f"step {step:,}{of}: done")
    if total is not None and step >= total:  # at its total, in its unit, short of its end (its last epoch's batches)
        return Estimate(step, total, rate, None, None, None, f"step {step:,}{of}: at its last, not over yet")
    if total is None or rate is None:
        why = "no total printed" if total is None else "too few steps yet for a rate"
        return Estimate(step, total, rate, None, None, None, f"step {step:,}{of} ({why})")
    # the run went on since its last line for a moment at most: a log quiet for longer says nothing of the steps
    # since (a stale file, a pause, a hang), so no more than SINCE_STEPS steps' time counts
    since = min(max(0.0, now - series.samples[-1].time), SINCE_STEPS / rate)
    remaining = max(0, total - step)
    eta = max(0.0, remaining / rate - since)
    if time_left_s is None:
        return Estimate(step, total, rate, eta, None, None, f"step {step:,}{of}: finishes in about "
                        f"{format_span(eta)}")
    margin = time_left_s - eta
    if margin >= 0:
        return Estimate(step, total, rate, eta, margin, None, f"step {step:,}{of}: finishes in about "
                        f"{format_span(eta)}, {format_span(margin)} before the limit")
    cut = min(total, step + int(rate * (time_left_s + since)))
    short = format_span(-margin)
    return Estimate(step, total, rate, eta, margin, cut,
                    f"will be cut at about step {cut:,}{of} ({100 * cut // total} %): add {short} to the time "
                    "limit, or set up run: to continue in a new allocation")



def _goes_on(before: Point, point: Point) -> bool:
    """Whether ``point`` goes on with the bar ``before`` was drawn on, as one process's bar does and a program
    started again does not (its bars begin again): the same form and phase, the same total, the same epoch and its
    batches, its count ahead; a tqdm bar's elapsed time not behind (a new bar's clock starts from 0, also where a
    resumed run's bar starts at its checkpoint's step); a loop's line of an epoch's batches, a later batch of the same
    epoch (a run resumed starts its epoch's batches again)."""
    if (point.format, point.form, point.phase, point.total, point.epoch, point.batches, point.rank) != \
            (before.format, before.form, before.phase, before.total, before.epoch, before.batches, before.rank):
        return False
    if point.counts_epochs and before.counts_epochs:
        return point.step == before.step and point.batch is not None and before.batch is not None \
            and point.batch > before.batch
    return point.format == "tqdm" and point.elapsed is not None and before.elapsed is not None \
        and point.elapsed >= before.elapsed and point.step is not None and before.step is not None \
        and point.step > before.step
