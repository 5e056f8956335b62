"""The last reader of a log no form reads: the shape of a line that the program prints again and again.

A training loop that prints its own words ("[Iteration 16300] ... Loss is 2.41.", "epoch 3 avg train loss: 0.87")
says the same sentence at every record, only its numbers changing. Where no form of :mod:`ntui.core.progress.lines`
read a point from the log, the lines that name a loss are grouped by their **shape** (the line with each number
taken out, its runs of blanks as one): a shape whose lines

* count the run with a named counter (a number after ``step``, ``iter``, ``iteration``, ``update`` or ``epoch``,
  "Epoch - 3" too, or before their plurals: "1200 updates"; else a number leading the line as a field of its own;
  not a part of a date, a time or a total) that went up at each of the first :data:`PROMOTE_AT` lines of the lowest
  rank printing it, and
* name a loss (a number after the word, or before it where the word ends its field: "8.31 loss, ..."; no
  evaluation's word before it: not a validation's; where none is named a loss, a number named by the training's
  phase alone beside an evaluation's after it: "train 0.0437  val 0.0512"), or else count of a
  total that stays the same ("step:120/1536"), with another number that changes (a time, a rate: a loop that
  prints no loss, modded-nanogpt's "step:N/T train_time:Tms step_avg:Ams"), no evaluation's word in it,

is taken as the run's progress line: its lines seen so far become points, and so does each one after it. Its
counter's total is the number after ``/``, ``of`` or ``out of`` where that stays the same; an ``epoch`` counter
counts the run in epochs. Nothing else is read from the shape (its other numbers may be anything: a throughput, a
time).

A log that another reader reads (a point before the shape is taken) is left to it; so the shapes only ever turn a
"no progress line seen" into a reading. The state is bounded: at most :data:`MAX_SHAPES` shapes and
:data:`KEEP` lines of each are kept until one is taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["KEEP", "MAX_SHAPES", "PROMOTE_AT", "Shape", "ShapeReader", "Taken"]

#: A shape is taken at its lowest rank's this many lines, its counter up at each.
PROMOTE_AT = 3
#: The lines of a shape kept until it is taken (a shape that never qualifies within them is dropped).
KEEP = 12
#: The shapes followed at once before one is taken (a log of many kinds of lines naming a loss: the rest are not).
MAX_SHAPES = 256

#: a number on its own: not glued after a word's letters (a node's "nid200101", "fp16"), with its sign, fraction,
#: exponent; a unit ("0.61s") or a sentence's full stop ("Loss is 2.41.") may follow it
_NUMBER_RE = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?!\d|\.\d)")
_BLANKS_RE = re.compile(r"\s+")
#: the words a counter of the run goes by, the last word before its number (``[Iteration 16300]``, ``epoch: 3``)
_COUNTER_WORD_RE = re.compile(r"(?i)\b(?P<word>global[_ ]step|steps?|iters?|iterations?|updates?|epochs?)[\s:=#\[(-]*$")
#: the same after its number ("1200 updates done", "3 epochs")
_COUNTER_AFTER_RE = re.compile(r"(?i)^\s*(?P<word>steps|iters|iterations|updates|epochs)\b")
_STEP_WORDS = ("step", "iter", "update", "global")
#: the joints between the parts of a date, a time or a version ("2025-07-02", "09:14:03", "1.2.3") and of a count of
#: its total ("5/240"): a number after one is no counter of its own
_JOINTS = frozenset({":", "-", "/", ".", "_", "T", ","})
#: a loss named before its number ("Train Loss: ", "avg train loss: ", "Loss is ", "loss=")
_LOSS_WORD_RE = re.compile(r"(?i)loss")
#: or after it, the word then a field's end ("8.3125 loss, 0.00008 LR": tinygrad's trainers' records)
_LOSS_AFTER_RE = re.compile(r"(?i)^\s*\w*loss\w*\s*(?:[,;|)]|$)")
#: an evaluation's words: a shape that says one before its loss is an evaluation's line, not the training's
_EVAL_RE = re.compile(r"(?i)\b(?:val\w*|valid\w*|eval\w*|test\w*|dev)\b")
#: a number's name that is a phase alone, the training's ("train 0.0437", "trn: 0.61", "training=0.5"), and an
#: evaluation's ("val 0.0512", "dev: 0.70"): the word right before the number
_TRAIN_PHASE_RE = re.compile(r"(?i)(?:^|[\s|,;(\[])(?:train|training|trn)\s*[:=]?\s*$")
_EVAL_PHASE_RE = re.compile(r"(?i)(?:^|[\s|,;(\[])(?:val|valid|validation|eval|test|dev)\s*[:=]?\s*$")
#: the words that introduce a total after a count ("5/240", "5 of 240", "5 out of 240")
_TOTAL_JOINT_RE = re.compile(r"^\s*(?:/|of|out of)\s*$")


@dataclass(frozen=True)
class Taken:
    """What a shape's line says: its counter, the run's total where it says it, its loss, and whether it counts
    epochs."""

    step: int
    total: int | None
    loss: float | None  # None: the shape counts of a total and names no loss
    epochs: bool


@dataclass
class Shape:
    """One shape's layout (the text between its numbers) and its lines kept until it is taken."""

    gaps: tuple[str, ...]  # the text before each number (the first: from the line's start)
    tail: str  # the text after the last number
    lines: list[tuple[tuple[str, ...], float, int | None]] = field(default_factory=list)  # numbers, time, rank
    dead: bool = False  # no counter nor loss in it, or its kept lines never qualified

    def evaluation(self) -> bool:
        """Whether the line names an evaluation (its words anywhere)."""
        return _EVAL_RE.search(" ".join((*self.gaps, self.tail))) is not None

    def total_at(self, i: int) -> int | None:
        """The number after the ``i``-th that says its total ("120/1536", "3 of 10"), if any."""
        after = i + 1
        return after if after < len(self.gaps) and _TOTAL_JOINT_RE.match(self.gaps[after]) is not None else None

    def loss_at(self) -> int | None:
        """The number that is the loss: the first after the word (or before it, where the word ends its field), no
        evaluation's word before it in the line; where no number is named a loss, the training's named by its phase
        alone beside an evaluation's after it (:func:`_phase_loss_at`)."""
        for i, gap in enumerate((*self.gaps, self.tail)):
            if _LOSS_WORD_RE.search(gap) is None:
                continue
            at = i - 1 if i > 0 and _LOSS_AFTER_RE.match(gap) is not None else i
            if at >= len(self.gaps):
                return None
            return None if _EVAL_RE.search("".join(self.gaps[: at + 1])) is not None else at
        return self._phase_loss_at()

    def _phase_loss_at(self) -> int | None:
        """A loop's summary that names its losses by their phase alone, the training's first, then an evaluation's
        ("epoch 3/240  train 0.0437  val 0.0512  lr 7.9e-04", "ep 3 | trn 0.61 | dev 0.70"): the training's
        number, not a percentage (an accuracy's, "train 91.2%"); None where no such pair is."""
        after = (*self.gaps[1:], self.tail)
        for i, gap in enumerate(self.gaps):
            if _TRAIN_PHASE_RE.search(gap) is None or after[i].startswith("%"):
                continue
            if any(_EVAL_PHASE_RE.search(later) is not None for later in self.gaps[i + 1:]):
                return i
        return None

    def counters(self) -> list[int]:
        """The numbers a named counter says (the steps' words before the epochs'), not joined to another number."""
        named: list[tuple[int, int]] = []
        for i, gap in enumerate(self.gaps):
            if i > 0 and gap in _JOINTS:
                continue  # a date's, a time's, a total's part
            if i + 1 < len(self.gaps) and self.gaps[i + 1] in (":", "-", "."):
                continue  # the first part of a date or a time
            word = self.counter_word(i)
            if word is not None:
                named.append((0 if word.startswith(_STEP_WORDS) else 1, i))
            elif i == 0 and not self.gaps[0].strip():
                named.append((2, i))  # a count that leads the line, a field of its own ("   42 3.12 s run, ...")
        return [i for _, i in sorted(named)]

    def counter_word(self, i: int) -> str | None:
        """The counter's word the ``i``-th number goes by: the word before it, else the one after it."""
        if (m := _COUNTER_WORD_RE.search(self.gaps[i])) is not None:
            return m["word"].lower()
        after = self.gaps[i + 1] if i + 1 < len(self.gaps) else self.tail
        return m["word"].lower() if (m := _COUNTER_AFTER_RE.match(after)) is not None else None


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


@dataclass
class ShapeReader:
    """The shapes of a log's lines (see the module doc); :meth:`feed` a line no form read, while no other reader read
    a point."""

    shapes: dict[str, Shape] = field(default_factory=dict)
    taken: str | None = None  # the key of the shape taken as the run's progress line
    counter: int = 0  # which of its numbers is the counter
    loss: int | None = 0  # and which the loss (None: a shape of a count of its total, no loss)
    total: int | None = None  # which says the total (None: it says none)
    epochs: bool = False  # its counter counts epochs

    def feed(self, text: str, at: float, rank: int | None, *, others_read: bool) -> list[tuple[Taken, float,
                                                                                                 int | None]]:
        """The points ``text`` gives: none while no shape is taken; a taken shape's lines so far when this line
        takes it; this line's, when it is of the taken shape. ``others_read``: another reader has read a point (no
        shape is taken then)."""
        if self.taken is None and others_read:
            return []
        if _LOSS_WORD_RE.search(text) is None and "/" not in text and " of " not in text and "rain" not in text \
                and "trn" not in text:
            return []
        numbers = list(_NUMBER_RE.finditer(text))
        if not numbers:
            return []
        gaps: list[str] = []
        values: list[str] = []
        end = 0
        for m in numbers:
            gaps.append(_BLANKS_RE.sub(" ", text[end:m.start()]))
            values.append(m.group())
            end = m.end()
        tail = _BLANKS_RE.sub(" ", text[end:]).rstrip()
        key = "\x00".join([*gaps, tail])
        if self.taken is not None:
            if key != self.taken:
                return []
            said = self._said(tuple(values))
            return [] if said is None else [(said, at, rank)]
        shape = self.shapes.get(key)
        if shape is None:
            if len(self.shapes) >= MAX_SHAPES:
                return []
            shape = self.shapes[key] = Shape(tuple(gaps), tail)
            counters = shape.counters()
            if not counters or (shape.loss_at() is None and (
                    shape.evaluation() or all(shape.total_at(i) is None for i in counters))):
                shape.dead = True
        if shape.dead:
            return []
        shape.lines.append((tuple(values), at, rank))
        return self._try(key, shape)

    def _try(self, key: str, shape: Shape) -> list[tuple[Taken, float, int | None]]:
        lowest = min((r for _, _, r in shape.lines), key=lambda r: -1 if r is None else r)
        lead = [values for values, _, r in shape.lines if r == lowest]
        if len(lead) < PROMOTE_AT:
            return []
        loss = shape.loss_at()
        for i in shape.counters():
            counts = [c for values in lead if (c := _int(values[i])) is not None]
            if len(counts) < len(lead) or any(a >= b for a, b in zip(counts, counts[1:], strict=False)):
                continue
            total = shape.total_at(i)
            if total is not None and (len({values[total] for values, _, _ in shape.lines}) != 1
                                      or max(counts) > int(float(lead[0][total]))):
                total = None  # (a count of a total that changes, or past it: no total)
            if loss is None and (total is None or not self._changing(shape, {i, total})):
                continue  # no loss: only a count of its total, beside a number that changes
            self.taken, self.counter, self.loss, self.total = key, i, loss, total
            self.epochs = (shape.counter_word(i) or "").startswith("epoch")
            kept, self.shapes = shape.lines, {}
            return [(said, at, rank) for values, at, rank in kept if (said := self._said(values)) is not None]
        if len(shape.lines) >= KEEP:
            shape.dead = True
            shape.lines = []
        return []

    @staticmethod
    def _changing(shape: Shape, counts: set[int]) -> bool:
        """Whether a number of the shape other than ``counts`` changes over its lines (a time, a rate)."""
        return any(len({values[j] for values, _, _ in shape.lines}) > 1
                   for j in range(len(shape.gaps)) if j not in counts)

    def _said(self, values: tuple[str, ...]) -> Taken | None:
        step = _int(values[self.counter])
        loss: float | None = None
        if self.loss is not None:
            try:
                loss = float(values[self.loss])
            except ValueError:
                return None
        if step is None:
            return None
        total = _int(values[self.total]) if self.total is not None else None
        if total is not None and total < step:
            total = None
        return Taken(step, total, loss, self.epochs)
