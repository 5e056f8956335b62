"""Progress lines: what a training program already prints about how far it is, in each framework's form.

:func:`parse_line` reads one line (cleaned: :func:`ntui.core.textsafe.clean_line` keeps the text after a bar's last
``\\r``; a line that still holds several ``\\r`` segments is read segment by segment, the last that says something
winning) and returns a :class:`Point`, or None for a line that says nothing about progress. Forms:

* **tqdm** (any bar; Lightning's default ``TQDMProgressBar`` is one): ``Epoch 3:  42%|####2     | 21/50 [00:05<00:07,
  3.98it/s, loss=0.541, v_num=0]``: step ``21`` of ``50``, the rate (``it/s``, or ``s/it`` below one a second), the
  epoch from a description ``Epoch N``, the postfix's numbers as metrics; a bar without a total (``3it [00:00,
  49202.02it/s]``) gives the step alone. A bar's numbers may be scaled (``1.20k/100k``). Lightning's validation and
  sanity-check bars are not the run's progress.
* **the Hugging Face Trainer's log dict** (``{'loss': 0.0923, 'learning_rate': 9.65e-05, 'epoch': 0.38}``, its
  values numbers or, in recent versions, strings): metrics and the epoch, no step (the Trainer's one bar for the
  whole run gives it).
* **Megatron**: ``iteration       34/   10000 | ... | lm_loss: 1.118665E+01 |``;
* **torchtitan**: ``step: 14  loss:  3.24405  grad_norm:  0.8319  memory: ... tps: 7,282``;
* **DeepSpeed**: ``step=35, skipped=0, lr=[...]`` and ``epoch=0/micro_step=34/global_step=34, ...``;
* a **preset's pattern** (:class:`Pattern`): a regular expression with a ``step`` group (``total`` and any metric
  group optional) for plain prints.

Values that are not numbers (``nan``, ``inf`` are numbers) are left out of the metrics, never an error. Pure.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from ntui.core.loglines import read_line
from ntui.core.timestamps import iso_stamp

__all__ = ["FORMATS", "Format", "Pattern", "Point", "parse_line", "pattern_problem"]

Format = Literal["tqdm", "hf", "megatron", "torchtitan", "deepspeed", "pattern"]
FORMATS: tuple[Format, ...] = ("tqdm", "hf", "megatron", "torchtitan", "deepspeed", "pattern")


@dataclass(frozen=True)
class Point:
    """One progress report: the step (None when the line gives none: the Trainer's dict), the total when known,
    the epoch, the metrics, and the rate the program printed (steps per second; None when it printed none)."""

    format: Format
    step: int | None = None
    total: int | None = None
    epoch: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    rate: float | None = None
    phase: str = "train"  # "train", or what another bar counts ("validation", "sanity check")
    per_epoch: bool = False  # step and total count this epoch's batches (Lightning's bars), not the run's
    epochs: int | None = None  # how many epochs the run has, where the line says (Rich's "Epoch 2/9": 10)
    elapsed: float | None = None  # seconds since the bar started, as the bar says (tqdm's "[01:05<...")
    time: float | None = None  # the line's own timestamp (epoch seconds, local time), where it has one


_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"

# tqdm's r_bar: "| n/total [elapsed<remaining, rate{, postfix}]", its l_bar "desc: pct%|bar"
_TQDM_RE = re.compile(  # the r_bar; the description is what precedes the bar's "NN%|" (read apart: a lazy group
    # before it made each line's search quadratic)
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?)(?P<nk>[kMGT]?)(?:/(?P<total>\d+(?:\.\d+)?)(?P<tk>[kMGT]?))?"
    r"(?:\s*(?P<unit0>[A-Za-z]+))?\s*\["
    r"(?P<elapsed>[\d:]+)(?:<(?P<remaining>[\d:?]+))?,\s*"
    r"(?:(?P<rate>[\d.]+)(?P<rk>[kMGT]?)(?P<ratetail>[A-Za-z]+/s|s/[A-Za-z]+)|\?[A-Za-z]+/s)"
    r"(?:,\s*(?P<postfix>[^\]]*))?\]"
)
_RICH_RE = re.compile(
    r"\bEpoch (?P<epoch>\d+)/(?P<last>\d+)\s+[━╸╺─ ]+\s*(?P<n>\d+)/(?P<total>\d+)\s+[\d:]+ • [\d:-]+"
    r"(?:\s+(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?"
)
_RICH_METRIC_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*): (?P<value>{_NUM})")
_PCT_TAIL_RE = re.compile(r"\s*\d{1,3}$")
_EPOCH_DESC_RE = re.compile(r"\bEpoch\s+(?P<epoch>\d+)", re.IGNORECASE)
_POSTFIX_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*)=(?P<value>{_NUM})")
_MEGATRON_RE = re.compile(r"\biteration\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\|")
_MEGATRON_METRIC_RE = re.compile(rf"(?P<key>[A-Za-z][\w ]*?(?:loss|rate|norm))\s*:\s*(?P<value>{_NUM})\s*\|")
_MEGATRON_MS_RE = re.compile(r"elapsed time per iteration \(ms\):\s*(?P<ms>[\d.]+)")
_TITAN_RE = re.compile(r"\bstep:\s*(?P<step>\d+)\s+loss:")
_TITAN_METRIC_RE = re.compile(rf"\b(?P<key>[a-z_]+):\s+(?P<value>{_NUM})")
_DS_STEP_RE = re.compile(r"\bstep=(?P<step>\d+), skipped=\d+")
_DS_GLOBAL_RE = re.compile(r"epoch=(?P<epoch>\d+)/micro_step=\d+/global_step=(?P<step>\d+)")
_HF_KEYS = ("loss", "learning_rate", "grad_norm", "epoch", "eval_loss", "train_loss", "train_runtime")


def _clock(text: str) -> float | None:
    """``1:01:31`` / ``05:07`` -> seconds."""
    parts = text.split(":")
    if not all(p.isdigit() for p in parts) or len(parts) > 3:
        return None
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return seconds


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value


def _scaled(value: str, scale: str) -> float:
    return float(value) * _SCALE.get(scale, 1.0)


def _metrics(pairs: list[tuple[str, str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, text in pairs:
        value = _number(text)
        if value is not None:
            out[key.strip().replace(" ", "_")] = value
    return out


def _tqdm(text: str) -> Point | None:
    bars = list(_TQDM_RE.finditer(text))  # the last bar of the line (tqdm.write's redraws put several)
    if not bars:
        return None
    m = bars[-1]
    step = int(_scaled(m["n"], m["nk"]))
    total = int(_scaled(m["total"], m["tk"])) if m["total"] is not None else None
    rate: float | None = None
    if m["rate"] is not None:
        value = _scaled(m["rate"], m["rk"])
        rate = (1.0 / value if value else None) if m["ratetail"].startswith("s/") else value
    head = text[:m.start()]
    bar_at = head.rfind("%|")
    desc = _PCT_TAIL_RE.sub("", head[:bar_at]).strip().rstrip(":").strip() if bar_at >= 0 else ""
    epoch_m = _EPOCH_DESC_RE.search(desc)
    lowered = desc.lower()
    phase = "validation" if "validat" in lowered else "sanity check" if "sanity" in lowered else \
        "test" if lowered.startswith(("test", "predict")) else "train"
    metrics = _metrics([(p["key"], p["value"]) for p in _POSTFIX_RE.finditer(m["postfix"] or "")])
    metrics.pop("v_num", None)  # Lightning's run version, not a metric
    epoch = float(epoch_m["epoch"]) if epoch_m else None
    return Point("tqdm", step, total, epoch, metrics, rate, phase, per_epoch=epoch is not None,
                 elapsed=_clock(m["elapsed"]))


def _rich(text: str) -> Point | None:
    """Lightning's RichProgressBar, which on a file prints its final state: ``Epoch 2/2  ━━━ 20/20 0:00:01 • 0:00:00
    18.83it/s train_loss: 0.012``."""
    m = _RICH_RE.search(text)
    if m is None:
        return None
    value = float(m["rate"]) if m["rate"] else None
    rate = (1.0 / value if value else None) if value is not None and (m["unit"] or "").startswith("s/") else value
    pairs = [(p["key"], p["value"]) for p in _RICH_METRIC_RE.finditer(text[m.end():])]
    metrics = _metrics(pairs)
    metrics.pop("v_num", None)
    return Point("tqdm", int(m["n"]), int(m["total"]), float(m["epoch"]), metrics, rate, per_epoch=True,
                 epochs=int(m["last"]) + 1)


def _hf(text: str) -> Point | None:
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")) or not any(f"'{k}'" in body for k in _HF_KEYS):
        return None
    try:
        data = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    metrics: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(key, str) and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            number = _number(str(value))
            if number is not None:
                metrics[key] = number
    epoch = metrics.pop("epoch", None)
    return Point("hf", None, None, epoch, metrics) if metrics or epoch is not None else None


def _megatron(text: str) -> Point | None:
    m = _MEGATRON_RE.search(text)
    if m is None:
        return None
    pairs = [(p["key"], p["value"]) for p in _MEGATRON_METRIC_RE.finditer(text + " |")]
    per_ms = _MEGATRON_MS_RE.search(text)
    ms = _number(per_ms["ms"]) if per_ms is not None else None
    return Point("megatron", int(m["step"]), int(m["total"]), None, _metrics(pairs),
                 rate=1000.0 / ms if ms else None)


def _torchtitan(text: str) -> Point | None:
    m = _TITAN_RE.search(text)
    if m is None:
        return None
    pairs = [(p["key"], p["value"]) for p in _TITAN_METRIC_RE.finditer(text[m.start():]) if p["key"] != "step"]
    return Point("torchtitan", int(m["step"]), None, None, _metrics(pairs))


def _deepspeed(text: str) -> Point | None:
    m = _DS_GLOBAL_RE.search(text)
    if m is not None:
        return Point("deepspeed", int(m["step"]), None, float(m["epoch"]))
    m = _DS_STEP_RE.search(text)
    return Point("deepspeed", int(m["step"])) if m is not None else None


@dataclass(frozen=True)
class Pattern:
    """A preset's ``progress: {pattern: ...}``: a regular expression with a ``step`` group; ``total``, ``epoch``
    and any other named group (a metric) optional."""

    regex: re.Pattern[str]

    def parse(self, text: str) -> Point | None:
        m = self.regex.search(text)
        if m is None or m["step"] is None:
            return None
        step = _number(m["step"])
        if step is None or math.isnan(step):
            return None
        groups = m.groupdict()
        total = _number(groups["total"]) if groups.get("total") else None
        epoch = _number(groups["epoch"]) if groups.get("epoch") else None
        metrics = _metrics([(k, v) for k, v in groups.items() if v and k not in ("step", "total", "epoch")])
        return Point("pattern", int(step), int(total) if total else None, epoch, metrics)


def pattern_problem(text: str) -> str | None:
    """Why ``text`` cannot be a progress pattern (not a regular expression, or no ``step`` group), else None."""
    try:
        regex = re.compile(text)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    if "step" not in regex.groupindex:
        return "it names no step: add a group (?P<step>\\d+)"
    return None


_READERS = (_tqdm, _rich, _hf, _megatron, _torchtitan, _deepspeed)
#: a cheap pre-filter: a line that can be progress has one of these
_HINT_RE = re.compile(r"%\||it/s|s/it|\d\]|\biteration\s|\bstep[:=]|global_step=|^\s*\{|\bEpoch \d+/\d")


def parse_line(text: str, pattern: Pattern | None = None) -> Point | None:
    """The progress a line reports (see the module docstring), or None."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if pattern is not None:
        point = pattern.parse(text)
        if point is not None:
            return point
    if _HINT_RE.search(text) is None:
        return None
    if "\r" in text:  # an unfinished bar's redraws: the last segment that says something
        for piece in reversed(text.split("\r")):
            point = parse_line(piece)
            if point is not None:
                return point
        return None
    for msg in read_line(text):  # the line reader's messages: prefixes off (their time kept), glued ones apart
        for read in _READERS:
            point = read(msg.text)
            if point is not None:
                stamp = iso_stamp(msg.text, 80) if point.format != "tqdm" else None
                stamp = stamp if stamp is not None else msg.prefix.time
                return replace(point, time=stamp) if stamp is not None else point
    return None
