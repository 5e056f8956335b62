"""A log file's progress, read once: the series of :mod:`ntui.core.progress.series` from the file's last
:data:`TAIL_BYTES` (a week-long log is not read whole: the recent part says the rate and the step; the total is on
every bar), streamed line by line, each bar redraw (``\\r``) a line of its own."""

from __future__ import annotations

import copy
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ntui.core.jobfiles.lognames import parse_rank_header
from ntui.core.loglines import parse_prefix
from ntui.core.progress.lines import (
    LABEL_FIRST,
    LABEL_RE,
    Pattern,
    Point,
    column_starts,
    epoch_evaluated,
    epoch_over,
    epoch_phase_metrics,
    key_value_row,
    notebook_table_header,
    notebook_table_row,
    parse_line,
    rank_label,
    table_bar_metrics,
    table_header,
    table_row,
    trailing_metrics,
    training_loss,
    unheader,
)
from ntui.core.progress.runwords import (
    checkpoint_at,
    declared_epochs,
    declared_examples,
    declared_per_epoch,
    declared_periods,
    declared_steps_flag,
    declared_total,
    declared_train_batch,
    eval_start,
    header_epoch,
    model_checkpoint,
    period_steps,
    run_banner,
    run_end,
    run_soft_end,
    run_start,
    run_stop,
    stage_start,
    total_counts_iters,
    widget_counts,
)
from ntui.core.progress.series import Series
from ntui.core.textsafe import without_escapes

__all__ = ["TAIL_BYTES", "Labels", "feed_line", "read_progress", "relabel", "unescape"]

#: How much of the end of a file is read.
TAIL_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024


def _segments(path: Path, tail_bytes: int) -> Iterator[tuple[str, bool]]:
    """The file's last ``tail_bytes`` as text pieces split at newlines and carriage returns (the first, cut, piece
    of a tail dropped); a piece that followed a carriage return starts with it (a redraw of the line it is on). Each
    with whether it may be cut: the file's last line, no line end after it and no redraw (a bar's redraw is written
    whole), is what a block-buffered stdout or a killed job left: maybe only its start."""
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        start = max(0, size - tail_bytes)
        fh.seek(start)
        rest = b""
        first = start > 0
        while chunk := fh.read(_CHUNK):
            pieces = (rest + chunk).replace(b"\r", b"\n\r").split(b"\n")
            rest = pieces.pop()
            if first and pieces:
                pieces, first = pieces[1:], False
            for piece in pieces:
                if piece and piece != b"\r":
                    yield piece.decode("utf-8", "replace"), False
        if rest and rest != b"\r" and not first:
            yield rest.decode("utf-8", "replace"), rest[:1] != b"\r"


def read_progress(path: Path, *, pattern: Pattern | None = None, tail_bytes: int = TAIL_BYTES) -> Series:
    """The series in ``path`` (raises OSError when it cannot be read). Lines without a time of their own count as
    written at the file's modification time."""
    at = path.stat().st_mtime
    series = Series()
    if path.stat().st_size > tail_bytes:
        series.lines.first_line = ""  # a tail's first line is not the program's
    labels = Labels()
    for text, cut in _unindented(_segments(path, tail_bytes)):
        piece, rank = relabel(text, labels)
        if not cut:
            feed_line(series, piece, pattern, at, rank)
            continue
        trial = copy.deepcopy(series)
        feed_line(trial, piece, pattern, at, rank)
        if _whole_enough(series, trial):
            series = trial
    return series


#: The lines a paste's margin is judged on (:func:`_unindented`), and the least of them that must say it.
MARGIN_LINES = 64
_MARGIN_LEAST = 3


def paste_margin(starts: list[str]) -> str:
    """The margin a paste put before every line (``starts``: the first lines of the log, not their redraws): the
    blanks they all begin with, where they are a tab or two blanks at least (a Markdown code block's four, a list
    item's eight); else "" (one blank is a program's own: srun pads its labels with one)."""
    lines = [line for line in starts if line.strip()]
    if len(lines) < _MARGIN_LEAST:
        return ""
    common = os.path.commonprefix(lines)
    margin = common[:len(common) - len(common.lstrip(" \t"))]
    return margin if margin[:1] == "\t" or len(margin) >= 2 else ""


def _unindented(pieces: Iterable[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
    """The pieces with a paste's margin (:func:`paste_margin`, judged on the first :data:`MARGIN_LINES` lines) taken
    off each line that begins with it, so that the forms that read a line from its start read an indented paste's
    (an issue's code block) as the program printed it; a redraw (a piece after a carriage return) has none."""
    stream = iter(pieces)
    head: list[tuple[str, bool]] = []
    starts: list[str] = []
    for piece in stream:
        head.append(piece)
        if piece[0][:1] != "\r" and piece[0].strip():
            starts.append(piece[0])
            if len(starts) >= MARGIN_LINES:
                break
    margin = paste_margin(starts)
    if not margin:
        yield from itertools.chain(head, stream)
        return
    for text, cut in itertools.chain(head, stream):
        yield (text[len(margin):] if text.startswith(margin) else text), cut


def _whole_enough(before: Series, after: Series) -> bool:
    """Whether the file's last line, maybe cut (``"step 61"`` of ``"step 610/1000 ..."``, ``"610/10"`` of
    ``"610/1000"``), said what the run's lines before it agree with: no restart, no step back, no other total, no step
    past its total; else it is left unread (its words of the run's end or stop are read all the same)."""
    if len(after.restarts) != len(before.restarts):
        return False
    if before.step is not None and (after.step is None or after.step < before.step):
        return False
    total = after.run_total
    if before.run_total is not None and total != before.run_total:
        return False
    return total is None or after.step is None or after.step <= total


@dataclass
class Labels:
    """The launcher's label the line of the last piece began with, and the rank it says (:func:`relabel`'s state)."""

    label: str = ""
    rank: int | None = None


def relabel(text: str, labels: Labels) -> tuple[str, int | None]:
    """A piece of a line as :func:`feed_line` reads it, and the rank its line's label says where the piece has none
    of its own: a piece that followed a carriage return (it starts with it: a redraw on the same line) is of the task
    that the launcher's label its line began with says (srun -l writes it once, before the first redraw; torch
    elastic's tail of a worker's file once per piece it read, a chunk of redraws), so that every task's redraws stay
    that task's, also those drawn before a second task's first line showed that the log interleaves several."""
    if text[:1] == "\r":
        text = text[1:]
        return text, labels.rank if labels.label and not text.startswith(labels.label) else None
    if text[:1] in _STAMPED_FIRST and (stamp := _PIPE_STAMP_RE.match(text)) is not None \
            and (label := LABEL_RE.match(text, stamp.end())) is not None:
        text = label.group().lstrip() + stamp.group() + text[label.end():]  # the label first, as srun wrote it
    if text[:1] in LABEL_FIRST and (m := LABEL_RE.match(text)) is not None:
        if m.group() != labels.label:
            labels.label = m.group()
            labels.rank = _label_rank(m)
    else:
        labels.label, labels.rank = "", None
    return text, None




def _label_rank(label: re.Match[str]) -> int:
    """The task a launcher's label (:data:`LABEL_RE`) names."""
    return int(label["task"] if label["task"] is not None else label["worker"])


#: a time stamped before the launcher's label by a pipe the output went through (moreutils' ts, whose default format
#: is "%b %d %H:%M:%S": "srun -l python train.py | ts" writes "Nov 03 19:02:41 2: msg"; its "%Y-%m-%d %H:%M:%S",
#: bracketed forms and -s's time since it started, "00:01:02 2: msg", alike): read as the label's line
_PIPE_STAMP_RE = re.compile(r"\[?(?:(?:[A-Z][a-z]{2} [ \d]\d|\d{4}-\d\d-\d\d)[ T])?\d\d:\d\d:\d\d(?:[.,]\d+)?\]? ")
_STAMPED_FIRST = frozenset("[0123456789ADFJMNOS")


#: a fit's result line printed after its last point by a script that fits several models in one process: its score
#: on the test data, "name: value" (a hand-written PyG loop's print(f'Test Accuracy: {acc:.4f}'), a
#: forecasting comparison's print('smape score: ', score))
_FIT_RESULT_RE = re.compile(r"(?i)\s*(?:test[ _](?:acc(?:uracy)?|score|loss|error)|[a-z0-9]+[ _]score):\s+"
                            r"-?\d+(?:\.\d+)?%?\s*$")
#: a sign of the program's start between two counts: a line that says a start ("Training Session Started: ..."), a
#: Python warning, a traceback: the next count is a launch again, not a fit in the same process
_START_SIGN_RE = re.compile(r"(?i)\bstart(?:ed|ing)?\b|Warning: |^Traceback ")


#: DeepSpeed-Chat's training scripts as each epoch begins: "Beginning of Epoch 1/4, Total Micro Batches 115" (its
#: loader's length, micro-batches); DeepSpeed's ThroughputTimer each steps_per_print optimizer steps:
#: "epoch=0/micro_step=460/global_step=230, RunningAvgSamplesPerSec=..." (their ratio, the gradient accumulation):
#: with the run's epochs, its optimizer steps
_MICRO_BATCHES_RE = re.compile(r"\bBeginning of Epoch \d+/\d+, Total Micro Batches (?P<n>\d+)\b")
_DS_TIMER_RE = re.compile(r"\bmicro_step=(?P<m>\d+)/global_step=(?P<g>\d+)\b")
#: DeepSpeed-Chat's RLHF (PPO) step as each epoch begins: "Beginning of Epoch 1/1, Total Generation Batches 1187"
#: (main.py: its prompt loader's length; each batch one "epoch: 0|step: s|ppo_ep: ..." step, from 0 in each epoch):
#: an epoch's steps
_GENERATION_BATCHES_RE = re.compile(r"\bBeginning of Epoch \d+/\d+, Total Generation Batches (?P<n>\d+)\b")


#: a logger's header that names the process's global and local rank, as vall-e's and its kin's formatters print it:
#: "%(asctime)s - %(name)s - %(levelname)s - GR=0;LR=0 - \n%(message)s" (the message on the next line) and
#: "%(asctime)s :: %(levelname)s :: GR=1;LR=1 :: %(message)s": where every rank logs, the line's rank
_GR_LR_RE = re.compile(r"\bGR=(?P<rank>\d+);LR=\d+ (?:-|::)(?= |$)")
#: icefall's and k2's setup_logger under torch.distributed: "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d]
#: ({rank}/{world_size}) %(message)s": the line's rank
_RANK_OF_WORLD_RE = re.compile(r"\.py:\d{1,5}\] \((?P<rank>\d{1,5})/(?P<world>\d{1,5})\) ")


#: a bar that Lightning 2.x draws before its total is known: an empty bar, then ``0/?`` (tqdm's own bar writes
#: ``0it``): the sanity check's and each validation's, before their first batch
_UNKNOWN_TOTAL_BAR_RE = re.compile(r"\|\s*\| 0/\? \[")


def feed_line(series: Series, text: str, pattern: Pattern | None, at: float, rank: int | None = None) -> None:
    """One line of a rank log into ``series`` (both readers': this one and the view's board): ntui's rank header
    again is a new start (a requeue, a run's next allocation), and so are the program's own word that it starts its
    training (again: from a checkpoint) and its first line printed again after points; a progress line a point read
    at ``at``, a line that says the run's total, its epochs or its end (also after a bar on the same line) what it
    says, and a line that says the run was stopped (a cancel, a kill, an error) after its points, that it is not
    finishing. ``rank``: the task a redraw is of, where the piece says none (:func:`relabel`)."""
    if "#0" in text or "^" in text:
        text = unescape(text)
    if "\x1b" in text:  # a terminal's colours, in a copy of its screen or a logger's coloured level, taken off; the
        # cursor's move up kept: it says a bar is drawn below the run's (tqdm's position 1), which parse_line reads
        text = _CURSOR_UP.join(without_escapes(part) for part in text.split(_CURSOR_UP))
    if text[:1] == ">":  # a log pasted as a Markdown quote (an issue's, a forum's, a mail's "> " before each line)
        text = _QUOTE_RE.sub("", text, count=1)
    elif text[:2] == "# ":  # a log pasted as comments (a script's or a README's code block: "# " before its lines)
        text = text[2:]
    if text[:1] in _GUTTER_FIRST:
        text = _ungutter(series, text)
    if ("]{" in text or "%|  " in text) and (cut := _glued_record(text)) is not None:
        # the Trainer's log dict glued after its bar's redraw: two messages, the bar's and the dict's, read in turn
        feed_line(series, text[:cut], pattern, at, rank)
        if rank is None and text[:1] in LABEL_FIRST and (label := LABEL_RE.match(text)) is not None:
            rank = _label_rank(label)
        feed_line(series, text[cut:], pattern, at, rank)
        return
    if "Epoch " in text and (glued := _GLUED_HEADER_RE.search(text)) is not None \
            and _BAR_BEFORE_RE.match(text, 0, glued.start()) is not None:
        # Keras' next epoch's header glued after its last bar's padding ("13/13 [====] - 31s - loss: 5.2<spaces>Epoch
        # 38/60", a terminal's line that did not break): the bar, then the header
        feed_line(series, text[:glued.start()], pattern, at, rank)
        feed_line(series, text[glued.end():], pattern, at, rank)
        return
    wrapped = series.lines.wrapped
    if wrapped is not None:  # the line before ended in a comma: this one may go on with the same record
        series.lines.wrapped = None
        going_on = text
        if text[:1] in LABEL_FIRST and (label := LABEL_RE.match(text)) is not None \
                and wrapped.startswith(label.group()):
            going_on = text[label.end():]  # (a launcher's label before each line of it: srun -l's "0: ")
        pprinted = wrapped[:2] == "{'" and _PPRINT_ITEM_RE.match(going_on) is not None  # (pprint's next item)
        if (pprinted or _CONTINUES_RE.match(going_on) is not None) and len(wrapped) < _WRAPPED_MAX:
            text = f"{wrapped} {going_on.strip()}"  # read the record whole, so far
    if text.endswith(",") or text.endswith(", "):
        series.lines.wrapped = text.rstrip()  # (a record hard-wrapped at a width, its fields going on on the next line)
    if parse_rank_header(text) is not None:
        series.new_start(at=at)
        return
    if "Micro Batches" in text and (micro := _MICRO_BATCHES_RE.search(text)) is not None and int(micro["n"]) > 0:
        series.micro_per_epoch = int(micro["n"])
    elif "Generation Batches" in text and (generation := _GENERATION_BATCHES_RE.search(text)) is not None \
            and int(generation["n"]) > 0:
        series.declared_per_epoch = int(generation["n"])
    elif "micro_step=" in text and (timer := _DS_TIMER_RE.search(text)) is not None and int(timer["g"]) > 0:
        series.micro_per_step = max(1, round(int(timer["m"]) / int(timer["g"])))
    header_rank, series.lines.header_rank = series.lines.header_rank, None
    if "R=" in text and (gr_lr := _GR_LR_RE.search(text)) is not None:
        if gr_lr.end() >= len(text.rstrip()):
            series.lines.header_rank = int(gr_lr["rank"])  # the header alone: its message, the next line, that rank's
        elif rank is None:
            rank = int(gr_lr["rank"])
    elif rank is None:
        rank = header_rank
    if rank is None and "] (" in text and (of_world := _RANK_OF_WORLD_RE.search(text, 0, 120)) is not None \
            and int(of_world["rank"]) < int(of_world["world"]):
        rank = int(of_world["rank"])
    host_cut = 0  # the length of pdsh's label of a host before the line (taken off its message below)
    if series.lines.pdsh_hosts is not None and rank is None and (host := _PDSH_LABEL_RE.match(text)) is not None:
        rank = series.lines.pdsh_hosts.get(host["host"])  # (pdsh's label of the host a line is from: its node's rank)
        host_cut = host.end() if rank is not None else 0
    elif "pdsh " in text and (hosts := _PDSH_HOSTS_RE.search(text)) is not None:
        # DeepSpeed's multi-node runner: "cmd = pdsh ... -w host0,host1 ...", its hosts in its hostfile's order, the
        # order its launcher numbers the nodes in (node_rank): the first host's lines hold rank 0, the run's
        series.lines.pdsh_hosts = {h: n for n, h in enumerate(hosts["hosts"].split(","))}
    if "kipping " in text and (skip := _SKIPPING_RE.search(text)) is not None:
        series.skipped_steps(int(skip["n"]))  # (kohya's is glued to its bar's first draw: read before it)
    if "TrainOutput(" in text and _TRAIN_OUTPUT_RE.search(text) is not None:
        # the Trainer's return value, printed by a notebook's cell or a script: its training is over (its
        # training_loss is the run's mean, not its last loss)
        if series.stopped is None:
            series.summary_end()
        return
    point = parse_line(text, pattern) if "across cluster]" not in text or _RAY_REPEATED_RE.search(text) is None \
        else None
    if series.lines.best_round_next:  # LightGBM's best round restated after its end word: no step, no restart
        series.lines.best_round_next = False
        if point is not None and point.form == "lightgbm":
            return
    if text.endswith(("est iteration is:", "est iteration is:\n")) and "arly stopping" in text:
        series.lines.best_round_next = True
    if point is not None and point.form == "epoch-of-header" and " of " in text and unheader(text) != text.strip():
        # "Epoch 3 of 20" as a logger's record (t5x's train loop logs it through absl, each of its periods of steps):
        # a period's start (:func:`declared_periods`), not a loop's print of its epoch's header
        point = None
    if series.lines.first_line is None:  # the program's first line: a start, where it prints it again after points
        body = _body(text)
        series.lines.first_line = body if point is None and len(body) >= _FIRST_LINE_MIN and "poch" not in body \
            and not any(line in body for line in _PERIODIC_LINES) and _PER_CALL_LINE_RE.match(body) is None else ""
        if point is None and ("$ " in text or "# " in text) and (typed := _PROMPT_RE.match(text)) is not None:
            series.lines.shell_prompt = typed["prompt"]
    if point is not None:
        if rank is not None and point.rank is None:
            point = point.but(rank=rank)
        if point.form == "epoch-banner" and point.step is not None:
            series.lines.banner_epoch = (point.step, point.total)  # (NeMo-RL's "===== Epoch 2/3 =====")
        elif point.form == "step-banner" and series.lines.banner_epoch is not None:
            # its "===== Step 5/250 =====" after it counts that epoch's steps
            point = point.but(epoch=float(series.lines.banner_epoch[0]), epochs=series.lines.banner_epoch[1])
        if point.form == "ultralytics" and series.table is not None and not point.metrics:
            # the YOLO family's row under its header: its columns' numbers by the header's names (its losses' parts)
            point = point.but(metrics=table_bar_metrics(text, series.table))
        if point.iters is not None and point.form == "litgpt" and "(optimizer.step)" in text:
            # lit-gpt's 2023 loops (pretrain/*.py, finetune/*.py): "iter {iter_num} step {step_count}: loss ...,
            # iter time: ...ms (optimizer.step)", their run sized in iterations (max_iters), said or not
            series.counts_iterations()
        if point.format == "hf" and "train_runtime" in point.metrics and "train_loss" in point.metrics:
            series.mean_loss_said(point.metrics["train_loss"])  # (before the summary's own metrics are the latest)
        series.add(point, at)
        series.lines.in_eval_section = False
        if ("stopped" in text or "Trainer to stop" in text) and (end := run_end(text)) is not None:
            # Lightning's, glued to its bar's redraw
            series.end(*end)
        elif "early stopping" in text and (end := run_end(text[text.rfind("]") + 1:])) is not None:
            # Keras' EarlyStopping's "Epoch 00012: early stopping" (Lightning 0.5's, a copy of it), printed while
            # the bar is drawn: glued after its last redraw
            series.end(*end)
        elif "CANCELLED" in text and (why := run_stop(text)) is not None:  # Slurm's, glued to a bar's redraw
            series.stopped = why
        elif "Error happened" in text and (why := run_stop(text)) is not None:
            # an error's report glued to the bar's last redraw (swanlab's excepthook): the loop raised at that step,
            # its total reached or not, with nothing of the program's own between (no end of its training said)
            series.stopped, series.stopped_on = why, series.step
        elif point.form == "dict" and '"remaining_time"' in text and _trainer_log_end(text):
            series.summary_end()
        elif point.format == "hf":  # a configuration as a dict, or the Trainer's summary of the run at its end
            if "train_runtime" in point.metrics and series.stopped is None:
                series.summary_end()
            else:
                _declarations(series, text)
        return
    if "0/? [" in text and _UNKNOWN_TOTAL_BAR_RE.search(text) is not None:
        series.bars_train_only()
    if series.samples:
        series.after_points()
        if _START_SIGN_RE.search(text) is not None:
            series.fit_result(False)
        elif ":" in text and _FIT_RESULT_RE.match(text) is not None:
            series.fit_result(True)
        first = series.lines.first_line
        if first and text.rstrip().endswith(first) and _body(text) == first and not run_banner(text):
            if series.points_seen - series.lines.first_line_at <= _HEADER_EVERY:
                series.lines.first_line = ""  # printed again after a point or none: a logger's header of each record
                # (Rich's handler's caller line), not the program's start
                return
            series.lines.first_line_at = series.points_seen
            series.printed_again()  # the program's first line again: it started again (or a child printed it)
            return
    raw, text = text, _message(text[host_cut:])  # what the program said, without a launcher's prefix (pdsh's
    # host label too) or a logger's header
    if series.lines.shell_prompt is not None:
        if raw.startswith("^C"):
            series.lines.interrupted = True
        elif raw.strip() == series.lines.shell_prompt:
            _prompt_back(series)
            return
    if ("oss" in text or "OSS" in text or "/" in text or " of " in text or "rain" in text or "trn" in text) \
            and (shaped := series.lines.shapes.feed(text, at, _line_rank(rank, raw),
                                                    others_read=bool(series.samples))):
        for got, when, by in shaped:  # the last reader: the shape of the line the program prints at each record
            series.add(Point("log", got.step, got.total, float(got.step) if got.epochs else None,
                             {} if got.loss is None else {"loss": got.loss}, form="shape", counts_epochs=got.epochs,
                             rank=by), when)
        return
    if text[:6] == "wandb:":
        if series.samples and (m := _WANDB_SUMMARY_RE.match(text)) is not None \
                and training_loss(series.metrics) is None and (value := _float(m["value"])) is not None:
            series.more_metrics({m["key"]: value})  # (a run whose own lines print no loss: its summary's last)
        if _wandb_exit_ok(series, text):
            series.end()
        return  # wandb's own lines say nothing else of the run's progress (its summary is no end: printed on errors)
    if text[:1] == "|" and series.samples and (cell := key_value_row(text)) is not None:
        # a key's row of a table the program prints each record in, after the row that said the step
        # (Stable-Baselines3's "|    loss | 6.12 |" under "train/", after "time/"'s total_timesteps)
        series.more_metrics({cell[0]: cell[1]})
        return
    if series.lines.notebook_table is not None \
            and (row := notebook_table_row(text, series.lines.notebook_table)) is not None:
        _notebook_row(series, row, at)
        return
    if ("<t" in text or "</t" in text) and _notebook_html(series, text, at):
        return
    if "Training Loss" in text and (names := notebook_table_header(text)) is not None:
        series.lines.notebook_table = names
        return
    if series.table is not None and (row := table_row(text, series.table, series.lines.table_starts)) is not None:
        series.add(row.but(step=series.table_step(row.step or 0)), at)  # a row of the table under its header
        return
    if series.table is not None and series.samples and text[:12] == "Total time: " and _FIT_TIME_RE.match(text):
        series.end()  # the fit's table ended by its master bar at its last epoch: the training is over
        return
    if (names := table_header(text)) is not None:
        series.new_table(names)
        series.lines.table_starts = column_starts(text)
        return
    if series.samples and "/" in text and (m := _EVALUATED_AT_RE.match(text)) is not None:
        series.evaluated_at(int(m["n"]), int(m["total"]), at)
        return
    if ("Engine run " in text or "] Complete. " in text) and _ignite(series, text, at):
        return
    # what the program says, read from its first word: a log indented as a whole (a notebook's output pasted as a
    # markdown code block, a wrapper that indents its child's output) says its start, its end, its length as it
    # would unindented (the indentation itself still tells a record's continued line: trailing_metrics)
    said = text.lstrip() if text[:1].isspace() else text
    if (step := run_start(said)) is not None:
        if step == 0 and run_banner(said):
            series.banner()  # (each node of a multi-node run prints it: a start only where the step goes back)
        else:
            series.new_start(until_point=True, from_step=step)
        _declarations(series, said)  # (a start that says the run's length: torchtitan's "..., total steps 300")
    elif eval_start(said):
        series.evaluation()
    elif (end := run_end(said)) is not None:
        series.end(*end)
    elif series.samples and said.rstrip() == "Done!" and "[train" in raw and _TRAIN_DONE_RE.search(raw) is not None:
        # icefall's recipes' training scripts (egs/*/ASR/*/train.py, run()): logging.info("Done!") after their loop
        # over the epochs, under the "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s" format; the
        # training script's own record only (a decode.py says the same of its decoding; a bare "Done!" says nothing)
        series.end()
    elif series.samples and said[:5] == "Done!" and _METAFLOW_DONE_RE.match(raw) is not None:
        # Metaflow's local runtime (runtime.py, NativeRuntime.execute): "Done!" under its logger's time once the flow's
        # end step finished, after its loop and its try/finally (a failed or interrupted flow raises before it)
        series.end()
    elif series.in_periods and series.samples and said.rstrip() == "Finished.":
        # t5x's train loop's last word (its _cleanup after the loop over its periods of steps: "Epoch 3 of 20"); a
        # bare "Finished." says nothing of a training outside such a loop
        series.end()
    elif (saved_at := model_checkpoint(said)) is not None and (not series.samples or series.lines.checkpoint_at):
        # Lightning's ModelCheckpoint lines where they are the only progress (no bar drawn): the run's global step
        # at each epoch's end; beside a bar, the bar says it
        _checkpoint_epoch(series, *saved_at, at)
    elif stage_start(said):
        # a staged pipeline's next stage begins (IRN's "step.make_cam: <ctime>"): the stage before it that trained is
        # over where its steps reached its total (its last within a print's interval of it)
        _prompt_back(series, need_total=True)
    elif run_soft_end(said) or ((saved := checkpoint_at(said)) is not None and _at_last(series, *saved)):
        # (a checkpoint saved at the run's last epoch or iteration: its training is over, an evaluation may follow)
        if series.samples and series.stopped is None:  # the loop's end, said also after an error: none was read
            series.end()
            series.soft_end = True
    elif _declarations(series, said):
        if (epoch := header_epoch(said)) is not None:  # (an epoch begins: the run's bar from 0 after its total is
            series.epoch_begins(epoch, at)  # that epoch's)
    elif text[:1] in _RULE_FIRST and (rule := _TITLED_RULE_RE.match(said)) is not None:
        # a rule with a title (Rich's Console.rule, a "===== Test =====" banner): a section begins; an evaluation's
        # (its title's words) holds its results, not the training's
        series.lines.in_eval_section = _EVAL_TITLE_RE.search(rule["title"]) is not None
    elif series.samples and ("valuat" in said or "alidat" in said) and "poch" in said \
            and (evaluated := epoch_evaluated(said)) is not None:
        # an epoch's evaluation named after the loop's count reached its total: the count may be that epoch's
        series.epoch_evaluated(evaluated, at)
    elif series.samples and not series.lines.in_eval_section and "poch" in said[:8] \
            and (over := epoch_over(said)) is not None:
        # a loop's summary of an epoch that is over (its averages): a count that starts again after it is the next
        # epoch's, no restart
        series.epoch_over(over)
    elif series.samples and not series.lines.in_eval_section and "poch" in said[:8] \
            and (metrics := epoch_phase_metrics(said)) is not None:
        # the loop's line of its epoch's training metrics between the lines that say its steps: the latest step's
        if series.follows(_line_rank(rank, raw)):
            series.more_metrics(metrics)
    elif series.samples and not series.lines.in_eval_section \
            and (metrics := trailing_metrics((labelled := rank_label(text))[1])) is not None:
        # the rest of the last point's line, wrapped (or its metrics printed apart, a rank's label before them: the
        # followed rank's only, where each rank prints its own)
        if series.follows(labelled[0] if labelled[0] is not None else _line_rank(rank, raw)):
            series.more_metrics(metrics)
    elif series.samples and (why := run_stop(said)) is not None:
        series.stopped = why
        if series.soft_end:  # the error came after the loop's end was said: it was the error's end
            series.ended = series.soft_end = False


def _line_rank(rank: int | None, raw: str) -> int | None:
    """The rank of a line: the one read before, else its launcher's prefix's (read only where asked: few lines)."""
    return rank if rank is not None else parse_prefix(raw)[0].rank


#: a shell's prompt (bash's default PS1, "\u@\h:\w\$ ", and Red Hat's, "[\u@\h \W]\$ "; a conda or virtual
#: environment's name before it) with a command typed after it: a terminal's session pasted as the log
_PROMPT_RE = re.compile(r"(?P<prompt>(?:\([\w.-]+\) )?(?:[\w.-]+@[\w.-]+:[^\s$#]*|\[[\w.-]+@[\w.-]+ [^\]]*\])[$#]) \S")


#: ignite's Engine.run, its own records (ignite/engine/engine.py): "Engine run starting with max_epochs=20." as a run
#: starts (an evaluator's engine says its own, max_epochs=1), "Epoch[3] Complete. Time taken: 00:00:21.604" at each
#: of its epochs' end (epochs from 1; "%02d:%02d:%02d" before 0.4.3), "Engine run finished. Time taken: ..." as it
#: ends ("complete" before 0.5); an engine whose state is already set (a checkpoint's loaded, or set before its run as
#: MONAI's workflows do, an evaluator run again after each of the trainer's epochs) says "Engine run resuming from
#: iteration 0, epoch 3 until 4 epochs" (or "... until N iterations") instead of its start
_IGNITE_START_RE = re.compile(r"\bEngine run (?:starting with max_(?:epochs|iters)=(?P<n>\d+)\."
                              r"|resuming from iteration (?P<iteration>\d+), epoch \d+ until (?P<until>\d+) "
                              r"(?:epochs|iterations)\b)")
_IGNITE_EPOCH_RE = re.compile(r"\bEpoch\[(?P<epoch>\d+)\] Complete\. Time taken: \d+:\d\d:\d\d")
_IGNITE_END_RE = re.compile(r"\bEngine run (?:complete|finished)\. Time taken: \d+:\d\d:\d\d")


def _notebook_row(series: Series, row: Point, at: float) -> None:
    """A row of the Trainer's notebook table: its step where it names one past the last point's, else its metrics are
    the last step's (the table is drawn under its bar, which says the step)."""
    if row.step is not None and (not series.samples or row.step > series.samples[-1].step):
        series.add(row, at)
    elif row.metrics:
        series.more_metrics(row.metrics)


#: a cell of the Trainer's notebook table as its HTML shows (transformers/utils/notebook.py, text_to_html_table: one
#: "<th>name</th>" or "<td>value</td>" a line, each row between "<tr>" and "</tr>", floats as "%.6f"), where a
#: notebook's output is exported as its HTML (a notebook saved as Markdown or HTML)
_HTML_CELL_RE = re.compile(r"\s*<t[hd]>(?P<cell>[^<]*)</t[hd]>\s*")


def _notebook_html(series: Series, text: str, at: float) -> bool:
    """The Trainer's notebook table as its HTML (:data:`_HTML_CELL_RE`): its header's cells are its columns' names
    (:func:`notebook_table_header`), each row's cells that row (:func:`notebook_table_row`), read at the row's
    "</tr>". Whether the line was one of the table's."""
    cells = series.lines.html_cells
    if (cell := _HTML_CELL_RE.fullmatch(text)) is not None:
        cells.append(cell["cell"].strip())
        return True
    said = text.strip()
    if said.startswith("<tr"):
        cells.clear()  # a row begins
        return True
    if said != "</tr>" or not cells:
        return False
    line = "\t".join(cells)
    cells.clear()
    if "Training Loss" in line and (names := notebook_table_header(line)) is not None:
        series.lines.notebook_table = names
    elif series.lines.notebook_table is not None \
            and (row := notebook_table_row(line, series.lines.notebook_table)) is not None:
        _notebook_row(series, row, at)
    return True


def _ignite(series: Series, text: str, at: float) -> bool:
    """ignite's engines' own records (:data:`_IGNITE_START_RE`): which engine runs, the epochs of the outermost one
    (the trainer's; an evaluator's run inside it counts its own epoch 1), and its end. Where no other line says the
    run's progress, the trainer's "Epoch[N] Complete" lines are its points, in epochs (its max_epochs their total);
    beside the loop's own lines (a handler's "epoch[1] - iteration[10/1370] loss: ..."), each says that epoch is over.
    The trainer's run finished is the run's end. Whether the line was one of them."""
    engines, marks = series.lines.engines, series.lines.engine_marks
    if (start := _IGNITE_START_RE.search(text)) is not None:
        marks.append(series.points_seen)
        if start["n"] is not None:
            engines.append(int(start["n"]))
            return False  # (its epochs are read as the run's declarations are, where they are the run's)
        nested = bool(engines)
        engines.append(int(start["until"]))
        # a run resumed inside another engine's (an evaluator's after each of the trainer's epochs), or from
        # iteration 0 (its state set before its run, not loaded), is that engine's start, never the run's restart;
        # the outermost one resumed from a checkpoint's iteration is read as the program's words of a resume are
        return nested or int(start["iteration"]) == 0
    if (epoch := _IGNITE_EPOCH_RE.search(text)) is not None:
        if len(engines) > 1:
            return True  # an evaluator's epoch, inside the trainer's
        n = int(epoch["epoch"])
        if engines == [1] and n == 1 and series.samples and not series.lines.engine_points \
                and series.total is not None and series.samples[-1].step < series.total:
            # the trainer's one epoch over while the count read sits short of its total: ignite's ProgressBar (its
            # desc names no epoch where max_epochs is 1) frozen in a notebook, an epoch's iterations, not the run's
            series.epochs_instead()
            series.lines.one_epoch_trainer = True
        if series.samples and not series.lines.engine_points:
            series.epoch_over(n)
        else:
            series.lines.engine_points = True
            series.add(Point("log", n, None, float(n), form="ignite", counts_epochs=True, first_epoch=1,
                             epochs=engines[0] if engines else None), at)
        return True
    if _IGNITE_END_RE.search(text) is not None:
        ran = bool(marks) and series.points_seen > marks[-1]
        if len(engines) == 1 and (engines[0] > 1 or series.lines.one_epoch_trainer) and series.samples and ran:
            # the trainer's own run over (of one epoch: where training lines ran inside it, an evaluator's has none;
            # a run with no point read inside it is an evaluator's, the trainer's start cut off before an excerpt)
            series.end()
        if engines:
            engines.pop()
        if marks:
            marks.pop()
        return True
    return False


def _checkpoint_epoch(series: Series, epoch: int, step: int, at: float) -> None:
    """ModelCheckpoint's line at an epoch's end (epochs from 0) as the run's point. Where two in turn say consecutive
    epochs a like number of steps apart, each the epochs done times it, that is an epoch's optimizer steps
    (accumulated batches counted as the steps they make; a check every N steps within an epoch says no such)."""
    before, series.lines.checkpoint_at = series.lines.checkpoint_at, (epoch, step)
    if before is not None and epoch == before[0] + 1 and (per := step - before[1]) > 0 and step == (epoch + 1) * per:
        series.declared_per_epoch = per
    series.add(Point("log", step, None, float(epoch), form="model-checkpoint"), at)


def _prompt_back(series: Series, *, need_total: bool = False) -> None:
    """The shell's prompt again, alone, after the command the log began with: the program exited. With no error nor
    interrupt said and the run's length unknown or reached (its last step within a print's interval of its total),
    its training is over (a script that prints no word at its end: HelloDeepSpeed's train_bert_ds.py returns after
    its loop). A staged pipeline's next stage said after the training's steps reads the same, but only where the
    run's total is known and reached."""
    if not series.samples or series.stopped is not None or series.ended or series.lines.interrupted:
        return
    total, last = series.run_total, series.samples[-1].step
    interval = last - series.samples[-2].step if len(series.samples) > 1 else 0
    if (total is None and not need_total) or (total is not None and last + max(interval, 1) >= total):
        series.end()


#: a rule drawn across the line with a title in it (Rich's Console.rule: "───── Validation ─────", cut at any width;
#: a banner "===== Test =====")
_TITLED_RULE_RE = re.compile(r"\s*[─━═=*#~-]{3,} ?(?P<title>[^─━═=*#~\s][^─━═=*#~]{0,60}?) ?[─━═=*#~-]{3,}")
_RULE_FIRST = frozenset(" ─━═=*#~-")
#: the words that title an evaluation's section
_EVAL_TITLE_RE = re.compile(r"(?i)\b(?:valid\w*|val|eval\w*|test\w*|inference|predict\w*)\b")
#: the marks of a Markdown quote before a line: ">" and a space, nested ("> > ", ">> "), or a bare ">" (an empty
#: line of the quote); the rest is the line as the program printed it
_QUOTE_RE = re.compile(r"^(?:> ?)+")
#: a line number an editor or a pager shows before each line, right-aligned in a column of its own (vim's 'number'
#: "  9 ", cat -n's "     9\t", less -N's), copied with the log's text
#: Keras' header of an epoch ("Epoch 38/60") at the end of a line after two spaces or more, and its step bar ("13/13
#: [====]", Keras 3's "13/13 ━━━━") at the start of the line it is glued to (after a launcher's label too)
_GLUED_HEADER_RE = re.compile(r"\s{2,}(?=Epoch \d+/\d+\s*$)")
_BAR_BEFORE_RE = re.compile(rf"(?:{LABEL_RE.pattern})?\s*\d+/\d+ (?:\[[=>.]*\]|[━─]+)")
_GUTTER_RE = re.compile(r"( *)(\d{1,7})(?:[\t ]|$)")
#: (and a log viewer's, bracketed, "[3208] " before each line: its width grows with the number, no padding)
_BRACKET_GUTTER_RE = re.compile(r"\[(\d{1,7})\](?: |$)")
_GUTTER_FIRST = frozenset(" 0123456789[")


def _ungutter(series: Series, text: str) -> str:
    """``text`` without the line number before it, where the log was copied with an editor's line numbers: two lines
    in a row numbered n and n + 1 in a column of one width (three characters or more, padded, or before a record: a
    loop's own counter that starts its lines is not) and the second's text no number (a table's rows named by their
    epoch are not); from then on, each line numbered the next."""
    if text[:1] == "[":
        m = _BRACKET_GUTTER_RE.match(text)
        bracketed = True
    else:
        m, bracketed = _GUTTER_RE.match(text), False
    if m is None:
        if series.lines.gutter is None:
            series.lines.gutter_seen = None
        return text
    width, number, rest = (0, int(m[1]), text[m.end():]) if bracketed else (m.end(2), int(m[2]), text[m.end():])
    if series.lines.gutter is not None:
        if series.lines.gutter == (width, number):
            series.lines.gutter = (width, number + 1)
            return rest
        return text
    seen, series.lines.gutter_seen = series.lines.gutter_seen, (width, number + 1)
    if seen == (width, number) and ((bracketed and number >= 100 and rest[:1] in ("", " ", "{")) or (
            width >= 3 and (m[1] or rest[:1] == "{") and rest.lstrip()[:1] not in _NUMBER_FIRST
            and rest.lstrip()[:1] not in _CELL_SEPARATORS)):
        # (bracketed: three digits or more, as a padded number's width, not a launcher's rank label "[1] "; padded
        # after its bracket, a record or nothing after it, not a loop's own "[120] loss=0.5")
        series.lines.gutter = (width, number + 1)
        return rest
    return text


_NUMBER_FIRST = frozenset("0123456789-+.")
#: what goes on a table's row after its first cell (a CSV-like table's rows, "    3 ,0.001 ,..."): a number before it
#: is that cell, no line number
_CELL_SEPARATORS = frozenset(",;|")


#: pdsh's command line as DeepSpeed's runner logs it, its hosts after -w; and the label pdsh puts before each line
#: of a host's output ("host0: ...")
_PDSH_HOSTS_RE = re.compile(r"\bpdsh\b.*? -w (?P<hosts>[\w.-]+(?:,[\w.-]+)+)(?:\s|$)")
_PDSH_LABEL_RE = re.compile(r"(?P<host>[\w.-]+): ")
#: the escape that moves the cursor up a line, after a bar drawn below another (kept for :func:`parse_line`)
_CURSOR_UP = "\x1b[A"
#: Metaflow's last word of a flow whose end step finished, under its logger's time (cut to milliseconds)
_METAFLOW_DONE_RE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} Done!(?: See the run in the UI at \S+)?\s*$")
#: the logger's header naming the training script as the record's file: icefall's "[train.py:553] " before its message
_TRAIN_DONE_RE = re.compile(r"\[train\w*\.py:\d+\] Done!\s*$")

#: a program's word that it skips the steps done before its state was saved, to go on from there (kohya's
#: sd-scripts, train_network.py: "skipping 1600 steps / ...")
_SKIPPING_RE = re.compile(r"(?:^|\W)[Ss]kipping (?P<n>\d+) (?:steps|updates|iterations)\b")
#: the Trainer's return value as Python writes it: "TrainOutput(global_step=450, training_loss=0.97, metrics={...})"
#: Ray's log deduplicator (ray._private.ray_logging.LogDeduplicator): a line that several workers printed alike is
#: printed once as it comes, and its repeats are summed up later, when its buffer flushes, as that line again with
#: f" [repeated {count}x across cluster]" after it (and, the first time, a note on RAY_DEDUP_LOGS): a bar's redraw
#: printed again there is an earlier one's (another worker's, or a download's), no point of the run's now
_RAY_REPEATED_RE = re.compile(r" \[repeated \d+x across cluster\]")
_TRAIN_OUTPUT_RE = re.compile(r"\bTrainOutput\(global_step=\d+, training_loss=")
#: wandb's run summary at its finish (wandb_run.py's footer: "wandb: Run summary:", then each key right-aligned and its
#: last value, "wandb:          train/loss 0.1234"); its history's lines hold a sparkline, not a number
_WANDB_SUMMARY_RE = re.compile(r"wandb:\s+(?P<key>[A-Za-z_][\w./-]*) (?P<value>-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*$")


#: wandb's word of the process's exit status at its finish (wandb_run.py, _display_exit_status: "Waiting for W&B
#: process to finish... (success)." where the exit code is 0, "(failed N)" else; before 0.10, "Program ended
#: successfully.")
_WANDB_EXIT_OK_RE = re.compile(r"wandb:\s+(?:Waiting for W&B process to finish\.\.\. \(success\)"
                               r"|Program ended successfully)")


#: what a LLaMA-Factory trainer_log.jsonl record of the training's steps, its evaluations or its predictions says
#: (LogCallback.on_log keeps only the keys of a value): a record with none of them is the Trainer's summary of the run
_TRAINER_LOG_STEP_KEYS = ('"loss"', '"lr"', '_loss"', '"reward"', '"accuracy"')


def _trainer_log_end(text: str) -> bool:
    """Whether a LLaMA-Factory trainer_log.jsonl record ("current_steps", "total_steps", ..., "remaining_time") is
    the one LogCallback.on_log writes for the Trainer's last log, its summary of the run (train_runtime, train_loss,
    epoch) logged after its loop on a normal return: the record keeps only "epoch" of it, no loss, no learning rate
    (every step's record says both; an evaluation's its eval_loss, a prediction's its predict_loss)."""
    return '"current_steps"' in text and '"epoch"' in text and not any(k in text for k in _TRAINER_LOG_STEP_KEYS)


def _wandb_exit_ok(series: Series, text: str) -> bool:
    """Whether wandb says the program exited with code 0 where the run is at its total: its training is over (said
    of a run short of its total, it is no end: wandb.finish() may close one run of several in a process)."""
    if "succe" not in text or _WANDB_EXIT_OK_RE.match(text) is None or series.ended:
        return False
    step, total = series.step, series.run_total
    return step is not None and total is not None and step == total


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


#: the loop's line of its counter and its total that names an evaluation's metrics, not the training's: nanoGPT-style
#: loops' "step:2000/20000 val_loss:2.0238 val_bpb:1.1985 train_time:...", "iter 500/5000 | eval loss 2.1"
_EVALUATED_AT_RE = re.compile(r"\W{0,3}(?i:step|iter(?:ation)?)\s*[:=]?\s*(?P<n>\d+)\s*/\s*(?P<total>\d+)\s*[,|]?\s+"
                              r"(?i:val(?:id(?:ation)?)?|eval(?:uation)?|test)[_ ](?i:loss|bpb|ppl|acc\w*)\b")


def _at_last(series: Series, what: str, n: int) -> bool:
    """Whether a checkpoint saved after ``n`` epochs or iterations is the run's last: its epochs, as its
    configuration or its lines said them, or its total of iterations."""
    if what == "epochs":
        epochs = series.declared_epochs or series.epochs
        return epochs is not None and n == epochs
    return series.run_total is not None and n == series.run_total


#: how a line that goes on with the record of the line before starts: its next ``key=value`` field (fairseq's records
#: wrapped at 70 columns: "| epoch 001 | ... loss=15.528," then "nll_loss=15.491, wps=863, ...," then
#: "num_updates=21, lr=2.6e-06, ...")
_CONTINUES_RE = re.compile(r"[A-Za-z_][\w./-]*=[-+\d.]")
#: a bar's redraw (its r_bar's closing bracket, after its rate) with a dict glued after it: transformers'
#: ProgressCallback.on_log writes each log dict with the bar's tqdm.write, which clears the bar with a carriage return
#: and blanks on the bar's stream (stderr) and writes the dict on stdout; a paste of the terminal, or a log where the
#: two streams meet out of order, shows "  3%|▎  | 10/352 [02:12<1:09:47, 12.24s/it]{'loss': 2.189, ...}" (also
#: LlamaFactory's and sentence-transformers' trainers, which keep the Trainer's callback); or after what is left of
#: the bar its clearing blanked out, its "  0%|" and blanks alone (a paste where the bar's redraw and the clearing's
#: carriage returns were lost: TRL's GRPOTrainer's "  0%|<blanks>{'loss': 0.0, 'grad_norm': ...}")
_GLUED_RECORD_RE = re.compile(r"%\|(?:[^\r{}]*?\]|(?=\s))\s*(?=\{['\"][A-Za-z_][^{}]*\}\s*$)")


def _glued_record(text: str) -> int | None:
    """Where a dict glued after a bar's redraw starts (:data:`_GLUED_RECORD_RE`), or None."""
    m = _GLUED_RECORD_RE.search(text)
    return m.end() if m is not None else None


#: Python's pprint of a dict too wide for its line (pformat's width 80: a loop's log.info(f"metrics:\n{pformat(d)}")):
#: "{'epoch': 0," on the first line, then one " 'key': value," a line, the last one closing it "}"
_PPRINT_ITEM_RE = re.compile(r" '[^']{1,80}': ")
#: a record glued longer than this is not one record
_WRAPPED_MAX = 4000


#: a learning-rate scheduler's parameters opened: DeepSpeed's config dump (runtime/config.py's print():
#: "  scheduler_params ............. {'total_num_steps': 240, ...}"), its user json ("scheduler": {"type": ...,
#: "params": {"total_num_steps": 240, ...}}) whose WarmupDecayLR sizes its decay, not the loop's steps
_SCHEDULER_OPEN_RE = re.compile(r"scheduler\w*['\"]?\s*(?:[=:]|\.{3,})\s*\{")


def _outside_scheduler(text: str, braces: int) -> tuple[str, int]:
    """``text`` less what lies within a learning-rate scheduler's braces (:data:`_SCHEDULER_OPEN_RE`, ``braces`` of
    them still open from the lines before), and the braces still open after it."""
    kept, at = [], 0
    while True:
        if not braces:
            if (m := _SCHEDULER_OPEN_RE.search(text, at)) is None:
                kept.append(text[at:])
                return "".join(kept), 0
            kept.append(text[at:m.start()])
            braces, at = 1, m.end()
        while at < len(text) and braces:
            braces += {"{": 1, "}": -1}.get(text[at], 0)
            at += 1
        if braces:
            return "".join(kept), braces


def _declarations(series: Series, text: str) -> bool:
    """What a line says of the whole run, all of it (a configuration printed as one dict or one command line says
    its steps, its epochs and an epoch's steps together): whether it said any. Not a line about an evaluation
    (PaddleSeg's "Start evaluating (total_samples: 500, total_iters: 500)...": the evaluation's count); a command line
    of flags is one, each flag saying its own ("--validation-datasets x --max-epochs 120": the run's epochs), and so is
    a configuration printed whole (:data:`_CONFIG_PAIRS_MIN` pairs or more), its evaluation's settings among them."""
    if ("valuat" in text or "alidat" in text) and text.count(" --") < _FLAGS_MIN \
            and len(_PAIR_RE.findall(text)) < _CONFIG_PAIRS_MIN:
        return False  # (a configuration printed whole names its evaluation's settings among the run's: read it)
    if series.lines.scheduler_braces or ("cheduler" in text and "{" in text):
        text, series.lines.scheduler_braces = _outside_scheduler(text, series.lines.scheduler_braces)
    said = False
    if (periods := declared_periods(text)) is not None:
        series.declared_epochs, series.in_periods = periods, True
        return True
    if series.in_periods and (steps := period_steps(text)) is not None:
        # a period's steps, not the run's (the last period's may be fewer): the run's total is the periods' steps
        series.declared_per_epoch = max(steps, series.declared_per_epoch or 0)
        return True
    if (total := declared_total(text)) is not None:
        series.declare_total(total, iters=total_counts_iters(text))
        said = True
    if (epochs := declared_epochs(text)) is not None:
        series.declare_epochs(epochs)
        said = True
    if (steps := declared_steps_flag(text)) is not None:
        series.flag_total, said = steps, True
    if (per_epoch := declared_per_epoch(text)) is not None:
        series.declared_per_epoch, said = per_epoch, True
    if "FloatProgress(" in text:  # (a notebook bar's widget repr: its total of the epochs, or of an epoch's steps)
        epochs, per_epoch = widget_counts(text)
        if epochs is not None:
            series.declare_epochs(epochs)
        if per_epoch is not None:
            series.declared_per_epoch = per_epoch
        said = said or epochs is not None or per_epoch is not None
    if (examples := declared_examples(text)) is not None:
        series.examples_said, said = examples, True
    if (batch := declared_train_batch(text)) is not None and series.examples_said:
        series.epoch_updates, said = series.examples_said / batch, True
    return said


#: a line with this many " --" flags is a command line, not a message
_FLAGS_MIN = 2
#: a line with this many "key: value" or "key=value" pairs is a configuration printed whole (a dict, a Namespace,
#: Hydra's config, JSON: fairseq's "'validate_interval': 1, ..., 'max_update': 250000"), not a message
_CONFIG_PAIRS_MIN = 4
_PAIR_RE = re.compile(r"""['"]?[A-Za-z_][\w.-]*['"]?\s*[:=]\s*[\w'"\[({-]""")


_PREFIX_FIRST = frozenset("[( 0123456789")


def _message(text: str) -> str:
    """A line that is no point as the message it holds: a launcher's prefix (srun's ``0: ``, torch's ``[rank0]:``)
    and a logger's header (a time, a level, a module) taken off, so that a line a program says of its run (its end,
    its total, its start, an error) reads the same under any of them."""
    if text[:1] in _PREFIX_FIRST:  # (srun's "0: ", torch's "[rank0]:", Ray's "(pid=42)": a cheap test first)
        if text[:1] == "[" and (whole := unheader(text)) is not text:
            return whole  # a logger's header as a whole ("[date] [INFO] [module:12] [PID:7] msg"): the prefix's
            # reader would take its date and level alone, and what is left of it says no time nor level
        _, rest = parse_prefix(text)
        text = rest or text
    return unheader(text)


#: a first line printed again within this many points of its last time is a header printed before each record
_HEADER_EVERY = 1
#: a first line shorter than this says too little to know the program by when it prints it again (nor one that
#: names the epoch: a table's header, printed again at each epoch)
_FIRST_LINE_MIN = 16
#: fastprogress' master bar (fastai's fit) at its last epoch: "Total time: {format_time(elapsed)}", its time "mm:ss"
#: or "h:mm:ss", printed under the epoch table once the bar over the epochs reached its total (not where the fit broke
#: off early), so what follows it (a checkpoint reloaded, its error) comes after the training's end
_FIT_TIME_RE = re.compile(r"Total time: (?:\d+:)?\d\d:\d\d\s*$")
#: a logger's line that it prints again every so many iterations, never the program's start: mmcv's TextLoggerHook
#: and mmengine's LoggerHook log f"Exp name: {exp_name}" every ``interval_exp_name`` iterations (1000) and at each
#: epoch's end, so a log that starts at one (a run's excerpt) has it first; and ultralytics' HUB callback, whose
#: on_model_save logs f"{PREFIX}Uploading checkpoint {HUB_WEB_ROOT}/models/{id}" at an epoch's end once its upload
#: timer ran out (every few epochs), so an excerpt of a HUB run may start at one
_PERIODIC_LINES = ("Exp name: ", "Uploading checkpoint ")
#: a line a training call prints each time it is called, never the program's start: Keras 1.x's Model.fit
#: (``print('Train on %d samples, validate on %d samples' % ...)`` in _fit_loop, before its first "Epoch 1/N")
_PER_CALL_LINE_RE = re.compile(r"^Train on \d+ samples(?:, validate on \d+ samples)?$")
#: a line's leading stamp (ISO, a logger's, a log viewer's): the first line printed again has another
_LEAD_STAMP_RE = re.compile(r"^[^A-Za-z]{0,6}\d\d(?:\d\d)?[-/]\d\d[-/]\d\d[ T,]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s*")


def _body(text: str) -> str:
    """A line without its leading stamp, stripped."""
    return _LEAD_STAMP_RE.sub("", text, count=1).strip(" \t|-:")


#: a control character as syslog and the log shippers that follow it write it: "#" and its octal code (a bar's
#: carriage return "#015", a tab "#011", an escape "#033"); and as ``cat -v`` (a log pasted through it) writes it, in
#: caret notation: a carriage return "^M", an escape sequence's "^[[" (not a bare "^[": a regular expression's class)
_ESCAPED = {"#015": "\r", "#011": "\t", "#033": "\x1b", "#012": "\n", "^M": "\r", "^[[": "\x1b["}
_ESCAPED_RE = re.compile("|".join(re.escape(code) for code in _ESCAPED))


def unescape(text: str) -> str:
    """``text`` with syslog's escaped control characters and ``cat -v``'s caret notation (:data:`_ESCAPED`) as what
    they were."""
    return _ESCAPED_RE.sub(lambda m: _ESCAPED[m.group()], text)
