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
* **the training loops' own lines**, one row each of the forms table (:data:`ntui.core.progress.forms.FORMS`:
  fairseq's ``num_updates``, mmengine's and mmcv's ``Iter [N/T]`` and ``Epoch [e][b/B]``, Keras' ``Epoch N/M`` and
  its step bar, nanoGPT's and minGPT's ``iter N: loss``, llm.c's and torchtune's ``step N``, detectron2's events,
  Swin's and torchvision's epoch loggers, ...): each row says where the run is (its step and total, or an epoch's
  batch) and in which unit the run counts (steps, or epochs);
* a **preset's pattern** (:class:`Pattern`): a regular expression with a ``step`` group (``total`` and any metric
  group optional) for plain prints.

Lines that are not points say more (the run's total, its start, its end, an evaluation's start, a stop): those are
:mod:`ntui.core.progress.runwords`'.

Values that are not numbers (``nan``, ``inf`` are numbers) are left out of the metrics, never an error. Pure.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ntui.core.loglines import read_line
from ntui.core.progress.forms import BAR_FORMS, FORMS, NUM, LineForm
from ntui.core.timestamps import iso_stamp, local_epoch

__all__ = ["FORMATS", "LOOP_EPOCH_BAR", "LOSS_NAMES", "UP", "Format", "Pattern", "Point", "loss_parts",
           "notebook_table_header", "notebook_table_row", "parse_line", "pattern_problem", "table_bar_metrics",
           "column_starts", "table_header", "table_row",
           "epoch_phase_metrics", "evaluation_record", "rank_label", "trailing_metrics", "training_loss", "unheader",
           "unwrap_numbers"]

Format = Literal["tqdm", "hf", "megatron", "torchtitan", "deepspeed", "pattern", "log"]
FORMATS: tuple[Format, ...] = ("tqdm", "hf", "megatron", "torchtitan", "deepspeed", "pattern", "log")


@dataclass
class Point:
    """One progress report: the step (None when the line gives none: the Trainer's dict), the total when known,
    the epoch, the metrics, and the rate the program printed (steps per second; None when it printed none).
    Never changed once made (:meth:`but` makes a changed copy); not frozen, as a frozen dataclass's fields are set
    one by one through ``object.__setattr__``, four times the cost of a point made for most lines read."""

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
    first_epoch: int = 0  # how the program numbers its first epoch (Lightning 0, Keras and mmengine 1)
    form: str = ""  # which row of FORMS read it ("log" points)
    counts_epochs: bool = False  # the run counts in epochs (its step is the epoch named, its total the run's epochs)
    batch: int | None = None  # where in its epoch an epoch-counted line is (a batch, or the samples seen)
    rank: int | None = None  # the rank whose line it is, where a prefix says (srun's label, torch's "[rank3]:")
    clock: tuple[int, int, int, int, int, float] | None = None  # a stamp without its year: month, day, h, min, s
    batches: int | None = None  # an epoch-counted line's batches in its epoch, where it says (its batch's total)
    iters: int | None = None  # the line's other counter (litgpt's "iter N step M": the micro-batch iterations)
    percent: float | None = None  # a bar that says its percentage only (Rich's default columns): no step of its own
    version: int | None = None  # Lightning's bar's "v_num": the version of its Trainer's logger (each fit's its own)

    def but(self, **changes: Any) -> Point:
        """This point with ``changes`` (:func:`dataclasses.replace`, without its look-up of the fields: a point is
        copied for most lines read)."""
        return Point(**{**self.__dict__, **changes})


_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

# tqdm's r_bar: "| n/total [elapsed<remaining, rate{, postfix}]", its l_bar "desc: pct%|bar"
_TQDM_RE = re.compile(  # the r_bar; the description is what precedes the bar's "NN%|" (read apart: a lazy group
    # before it made each line's search quadratic). The rate may be missing (NeMo's bar prints none) and the bar cut
    # at the terminal's width (no "]"): its elapsed time is then its last word
    r"(?<![\w.-])(?P<n>\d+(?:\.\d+)?)(?P<nk>[kMGT]?)(?:/(?P<total>\d+(?:\.\d+)?)(?P<tk>[kMGT]?))?"
    r"(?:\s*(?P<unit0>[A-Za-z]+))?\s*\["
    r"(?P<elapsed>\d+:\d\d(?::\d\d)?)(?:<(?P<remaining>[\d:?]*))?"
    # (a unit given with its space, unit=" examples" as the datasets library does: "5000.00 examples/s")
    r"(?:,\s*(?:(?P<rate>[\d.]+) ?(?P<rk>[kMGT]?)(?P<ratetail>[A-Za-z]+/s|s/[A-Za-z]+)|\? ?[A-Za-z]+/s))?"
    r"(?:,\s*(?P<postfix>[^\]]*))?(?:\]|$)"
)
#: (Lightning 1.6's description is "Epoch 6", later ones "Epoch 6/11"; Rich draws its bar in "-" and spaces where the
#: console is not UTF-8: a log file's, a pipe's)
_RICH_RE = re.compile(
    r"\bEpoch (?P<epoch>\d+)(?:/(?P<last>\d+))?\s+(?:[━╸╺─ ]+|-[- ]*)\s*(?P<n>\d+)/(?P<total>\d+)\s+[\d:]+ • [\d:-]+"
    r"(?:\s+(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?"
)
_RICH_METRIC_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*): (?P<value>{NUM})")
_PCT_TAIL_RE = re.compile(r"\s*\d{1,3}$")
_PCT_END_RE = re.compile(r"\s*\d{1,3}%\s*$")
#: what the escape that moves the cursor up a line (ESC [ A) becomes when the others are taken off a line
UP = "\u21e1"
#: (or glued to its colon, as a loop writes its description tqdm(loader, desc=f"epoch:{epoch} loss:{loss}"))
_EPOCH_DESC_RE = re.compile(r"\bEpoch(?:\s+#?|:)(?P<epoch>\d+)", re.IGNORECASE)
#: a description's "key:value" with no space after the colon (that loop's "loss:2.3488094806671143"), its value a
#: number that ends the word
_GLUED_PAIR_RE = re.compile(rf"(?<![\w.:])(?P<key>[A-Za-z_][\w./-]*):(?P<value>{NUM})(?![\w:.])")
#: a bar whose description names its epoch of the run's ("Epoch [3/25]", pytorch-ignite's ProgressBar and the loops
#: that write "Epoch 3/25" before their batches): the bar counts that epoch's batches, the run counts epochs
_EPOCH_OF_RE = re.compile(r"\bEpoch\s*\[\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]"
                          r"|\bEpoch\s+(?P<epoch2>\d+)\s*/\s*(?P<epochs2>\d+)\b"
                          # or the two before the word (Catalyst's "3/10 * Epoch (train)", its epoch of the stage's)
                          r"|(?<![\d/])(?P<epoch3>\d+)/(?P<epochs3>\d+) \* Epoch\b", re.IGNORECASE)
#: what a bar counts when its description or its unit says it is not training: an evaluation, or the preparation
#: before it (loading a checkpoint's shards, a dataset's map, filter, tokenizing or truncating, a download, generating a
#: split)
_EVAL_DESC_RE = re.compile(r"(?i)\b(?:eval(?:uat)?\w*|valid\w*|inference|testing)\b")
_PREP_DESC_RE = re.compile(
    r"(?i)^(?:(?:train|val|test)\w*:\s*)?"  # (a split's name before it: ultralytics' "train: Scanning ...")
    r"(?:loading|map|filter|tokeniz|download|generating|fetching|extracting|processing|preprocess|resolving"
    r"|computing|converting|saving|packing|grouping|shuffling|scanning|caching|creating|building|running tokenizer"
    r"|applying|writing|uploading|sharding|finding|truncat|adding eos|concatenat|formatting|deduplicat"
    # (the datasets library's other passes: "Casting the dataset", "Flattening the indices", "Sorting", "Selecting";
    # and what a trainer does around its training: reading, indexing, encoding a dataset, sampling images from the
    # model, "DDIM Sampler", compiling, quantizing, checking, counting, calculating a score)
    r"|casting|flattening|sorting|selecting|verifying|preparing|reading|indexing|encoding|decoding|counting"
    r"|collecting|merging|quantiz|compil|unpacking|copying|checking|calculating|sampl|\w+ sampler"
    # vLLM's engine inside an online trainer (TRL's GRPO with use_vllm): LLM.generate's "Processed prompts", its
    # "Adding requests", its start's "Capturing CUDA graph shapes": generation, not the training's steps
    r"|processed prompts|adding requests|capturing)")
#: a bar's description that says the epoch and the run's step before its metrics: torchtune's "{epoch}|{step}|Loss: x"
_EPOCH_STEP_DESC_RE = re.compile(r"(?P<epoch>\d+)\|(?P<step>\d+)\|")
#: the units of a bar over the run's epochs
_EPOCH_UNITS = frozenset({"epoch", "epochs", "ep", "Epoch", "Epochs"})
_PREP_UNITS = frozenset({"examples", "ex", "B", "kB", "MB", "GB", "files", "shards", "samples", "docs", "tokens",
                         "images", "ba"})
#: a bar's postfix pair (tqdm's set_postfix: "key=value" joined by ", "), its key of several words too (NeMo's
#: "train_step_timing in s=1.02")
_POSTFIX_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*(?: [A-Za-z_][\w./-]*)*)=(?P<value>{NUM})")
_MEGATRON_RE = re.compile(r"\biteration\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\|")
_MEGATRON_METRIC_RE = re.compile(rf"(?P<key>[A-Za-z][\w -]*?(?:loss|rate|norm))\s*:\s*(?P<value>{NUM})\s*\|")
_MEGATRON_MS_RE = re.compile(r"elapsed time per iteration \(ms\):\s*(?P<ms>[\d.]+)")
#: a field of the Megatron line with its name and value apart by a space, no colon: the 2019-20 Megatron-LM's
#: pretrain scripts and the codebases built on them (GLM, CogView, Megatron-DeepSpeed's first examples), ``' learning
#: rate {:.3E} |'``, ``' lm loss {:.6E} |'``, ``' nsp loss {:.6E} |'``, ``' {key} {:.6E} |'`` and ``' loss scale
#: {:.1f} |'`` (a setting of the loss: its name does not end in one, so not read): the whole field, between pipes
_MEGATRON_SPACED_RE = re.compile(rf"\|\s*(?P<key>[A-Za-z][\w ]*?(?:loss|rate|norm))\s+(?P<value>{NUM})\s*(?=\|)")
_TITAN_RE = re.compile(r"\bstep:\s*(?P<step>\d+)\s+loss:")
_TITAN_METRIC_RE = re.compile(rf"\b(?P<key>[a-z_]+):\s+(?P<value>{NUM})")
_DS_STEP_RE = re.compile(r"\bstep=(?P<step>\d+), skipped=\d+")
_DS_GLOBAL_RE = re.compile(r"epoch=(?P<epoch>\d+)/micro_step=\d+/global_step=(?P<step>\d+)")
_HF_KEYS = ("loss", "learning_rate", "grad_norm", "epoch", "eval_loss", "train_loss", "train_runtime")
#: the names a run's step counter goes by, in order of preference (a line or a dict that says several: the optimizer's
#: step before the micro-batch iterations, a batch within its epoch last)
COUNTER_NAMES = ("global_step", "num_updates", "updates", "update", "step", "train_step", "iteration", "iter", "it",
                 "batch")
_COUNTER_RANK = {name: i for i, name in enumerate(COUNTER_NAMES)}
#: a dict's key that may be a counter ('step', "global_step", 'train/global_step'): a cheap test before reading it
_DICT_COUNTER_HINT_RE = re.compile(
    r"""['"](?:[\w]+/)?_?(?:(?:current|curr|cur|completed)_)?(?:global_step|num_updates|step|iter|iteration|update)s?"""
    r"""['"]\s*:""")
#: a counter's name with a word before it that says it is the count so far ("current_steps", LLaMA-Factory's record;
#: "completed_steps", accelerate's examples'), in the plural as such names often are ("global_steps")
_COUNTER_SO_FAR_RE = re.compile(r"(?:current|curr|cur|completed)_(?P<name>\w+?)s?|(?P<global>global_step)s")
#: a dict's keys that say the run's total steps
_DICT_TOTALS = frozenset({"max_steps", "total_steps", "max_iters", "train_iters", "max_update", "num_training_steps",
                          "total_iters", "max_iterations"})


@functools.lru_cache(maxsize=4096)
def _counter_key(name: str) -> str | None:
    """The counter a key names (``global_step``, ``train/global_step``, ``Step``), or None."""
    base = name.rsplit("/", 1)[-1].lower().replace(" ", "_").lstrip("_")  # (a logger's own "_step" too)
    if base in _COUNTER_RANK:
        return base
    so_far = _COUNTER_SO_FAR_RE.fullmatch(base)
    if so_far is None:
        return None
    counter = so_far["global"] or so_far["name"]
    return counter if counter in _COUNTER_RANK else None


def _dict_total_key(name: str) -> bool:
    return name.rsplit("/", 1)[-1].lower() in _DICT_TOTALS


def _dict_counter(data: dict[Any, Any]) -> tuple[str, int] | None:
    """The run's step a dict says: its most preferred counter key (:data:`COUNTER_NAMES`; a batch only where it
    names no epoch) with a whole number, or None."""
    best: tuple[int, str, int] | None = None
    for key, value in data.items():
        if not isinstance(key, str) or (name := _counter_key(key)) is None or isinstance(value, bool):
            continue
        if name == "batch" and "epoch" in data:
            continue
        number = _number(value) if isinstance(value, str) else value
        if not isinstance(number, (int, float)) or not math.isfinite(number) or number != int(number) or number < 0:
            continue
        rank = _COUNTER_RANK[name]
        if best is None or rank < best[0]:
            best = (rank, name, int(number))
    return (best[1], best[2]) if best is not None else None


#: a dict's value that says a step of a total, as a string: "10/100"
_STEP_OF_RE = re.compile(r"\s*(?P<n>\d+)\s*/\s*(?P<t>\d+)\s*")


def _dict_step_of_total(data: dict[Any, Any]) -> tuple[int, int] | None:
    """The step and the total a dict says under one key that names both, its value the string "N/T" (ms-swift's
    logging callback adds ``'global_step/max_steps': '10/100'`` to the Trainer's dict), or None."""
    for key, value in data.items():
        if isinstance(key, str) and key.count("/") == 1 and isinstance(value, str) and "/" in value:
            counter, total = key.split("/")
            if _counter_key(counter) is not None and _dict_total_key(total) \
                    and (m := _STEP_OF_RE.fullmatch(value)) is not None and int(m["t"]) > 0:
                return int(m["n"]), int(m["t"])
    return None


def _dict_total(data: dict[Any, Any]) -> int | None:
    """The run's total a dict says beside its step (``'max_steps': 5000``), or None."""
    for key, value in data.items():
        if isinstance(key, str) and _dict_total_key(key) and isinstance(value, int) and not isinstance(value, bool) \
                and value > 0:
            return value
    return None


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


#: the names programs give the training loss, in order of preference: Megatron's "lm loss", Lightning's logged
#: "train_loss", detectron2's "total_loss"; NeMo's "reduced_train_loss" (the step's) before the "loss" its Lightning bar
#: adds (a running mean); the total's short spelling, MiniLLM's ``stats["tot_loss"]`` (the rl and pt losses' sum)
LOSS_NAMES = ("reduced_train_loss", "loss", "train_loss", "lm_loss", "total_loss", "training_loss", "train/loss",
              "loss_total", "tot_loss")


def training_loss(metrics: dict[str, float]) -> tuple[str, float] | None:
    """The run's training loss among ``metrics``: its name as the program prints it, and its value."""
    found = next(((name, metrics[name]) for name in LOSS_NAMES if name in metrics), None)
    if found is None:  # the same names capitalised ("Loss: 0.81", torchtune's bar description)
        lowered = {name.lower(): name for name in metrics}
        found = next(((lowered[n], metrics[lowered[n]]) for n in LOSS_NAMES if n in lowered), None)
    if found is None:  # a loss by its objective's name ("MLM-de", "nll", "xent", "cross_entropy"): the one such
        named = [n for n in metrics if _OBJECTIVE_RE.match(n) is not None and _OTHER_LOSS_RE.search(n) is None]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # a logger's path of names ("loss/train/total", "losses/train"): the one that is training's
        pathed = [n for n in metrics if "/" in n and any(p.lower() in ("loss", "losses") for p in n.split("/"))
                  and _OTHER_LOSS_RE.search(n) is None]
        if len(pathed) == 1:
            found = (pathed[0], metrics[pathed[0]])
    if found is None:  # the loss averaged, smoothed or summed: "loss_avg", "loss(avg)", "loss_ema", "Loss/mean"
        named = [n for n in metrics if _LOSS_KIND_RE.match(n) is not None]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # a loss of another name (LLaMA2-Accessory's "closs"): the one name that ends in "loss"; of
        # several, the one that says it is the step's own beside an average ("batch_loss" beside "running_loss")
        named = [n for n in metrics if n.lower().endswith("loss") and _training_phase(n)]
        if len(named) > 1:
            named = [n for n in named if _name_words(n)[0] in _OWN_LOSS_WORDS]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # a loss with its kind after it, under a training phase's name ("train/loss_ssl",
        # "train_loss_cls"): the one such name where a name says the training phase, else the one that holds "loss"
        named = [n for n in metrics if "loss" in n.lower() and _training_phase(n)
                 and not _LOSS_SETTING_WORDS.intersection(_name_words(n))]
        trained = [n for n in named if "train" in _name_words(n)]
        named = trained if trained else named
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # the loss terms' sum under the training phase's name, "loss" left out ("Train_total",
        # "train/total", "total/train": a config's name for the summed loss, as TEMOS' ProgressLogger prints it)
        named = [n for n in metrics if sorted(_name_words(n)) in (["total", "train"], ["total", "training"])]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # several losses, one of them their sum by its word ("loss/total", "Tot Loss", "loss_sum"
        # beside "loss/recon", "loss/commit": a MetricLogger's meters as a script names them): the sum is the run's
        named = [n for n in metrics if "loss" in (words := [w.lower() for w in _name_words(n)])
                 and _SUM_WORDS.intersection(words) and _training_phase(n)
                 and not _LOSS_SETTING_WORDS.intersection(words)]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # a GAN's losses, its generator's the one it trains toward (ParallelWaveGAN's, HiFi-GAN's
        # "generator_loss" beside its terms and the discriminator's): of several losses, the generator's, its terms'
        # sum
        named = [n for n in metrics if "loss" in (words := [w.lower() for w in _name_words(n)])
                 and _GENERATOR_WORDS.intersection(words) and _training_phase(n)
                 and not _LOSS_SETTING_WORDS.intersection(words)]
        if len(named) == 1:
            found = (named[0], metrics[named[0]])
    if found is None:  # an actor-critic's losses (DeepSpeed-Chat's PPO step: "act_loss: x|cri_loss: y|unsuper_loss:
        # z"): the actor's, the policy being trained, where a critic's loss is beside it
        words_of = {n: [w.lower() for w in _name_words(n)] for n in metrics}
        named = [n for n, words in words_of.items() if "loss" in words and _ACTOR_WORDS.intersection(words)
                 and _training_phase(n)]
        if len(named) == 1 and any("loss" in w and _CRITIC_WORDS.intersection(w) for w in words_of.values()):
            found = (named[0], metrics[named[0]])
    return found


#: the words that name an actor-critic's two losses: the actor's (the policy trained) and the critic's (its value)
_ACTOR_WORDS = frozenset({"act", "actor"})
_CRITIC_WORDS = frozenset({"cri", "critic"})
#: the words that name a loss as the sum of its terms
_SUM_WORDS = frozenset({"total", "tot", "sum", "overall", "all"})
#: the words that name a GAN's generator's loss
_GENERATOR_WORDS = frozenset({"generator", "gen"})


#: a name's words: split at what is not a letter or a digit, and where a capital follows a small letter
_NAME_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
#: the words that make a name with "loss" in it a setting of the loss, not its value (fp16's "loss_scale", a
#: weight "aux_loss_coef")
_LOSS_SETTING_WORDS = frozenset({"scale", "scaler", "weight", "weights", "coef", "coeff", "lambda", "factor", "alpha",
                                 "beta"})
#: the words before a loss's name that say it is the step's own, not an average (as :data:`_CURRENT_LOSS_RE` reads
#: them in words: "Batch Loss 0.3", "Current Loss 0.82")
_OWN_LOSS_WORDS = frozenset({"batch", "step", "cur", "curr", "current"})
#: the words that name an evaluation's phase in a metric's name ("val_loss", "eval/loss", "results/x--val_loss")
_EVAL_NAME_WORDS = frozenset({"val", "valid", "validation", "eval", "evaluation", "test", "dev"})


def _name_words(name: str) -> list[str]:
    return [w.lower() for w in _NAME_WORD_RE.findall(name)]


def _training_phase(name: str) -> bool:
    """Whether a metric's name is not an evaluation's: it neither starts with an evaluation's word ("valloss") nor
    holds one as a word of its own (a path's "checkpoints/model--val_loss", "eval/loss")."""
    return _OTHER_LOSS_RE.match(name) is None and not _EVAL_NAME_WORDS.intersection(_name_words(name))


#: the names a record gives its epoch among its scalars ("ep=3.0")
_RECORD_EPOCHS = frozenset({"ep", "epoch", "Epoch"})


def evaluation_record(metrics: dict[str, float]) -> bool:
    """Whether a line's scalars are an evaluation's alone: every one under an evaluation's name, but the epoch's (the
    flax examples' write_scalars(step + 1, {f"eval_{k}": v}), "[3753] eval_accuracy=0.36, eval_loss=3.76")."""
    named = [name for name in metrics if name not in _RECORD_EPOCHS]
    return bool(named) and all(not _training_phase(name) for name in named)


#: the training loss as an average, a smoothing or a sum of it
_LOSS_KIND_RE = re.compile(
    r"(?i)(?:train(?:ing)?[_/ ])?loss[_/.( -]?(?:avg|average|mean|ema|smooth(?:ed)?|running|sum|step)\)?$")
#: the names of training objectives a program prints as its loss: masked, causal, translation language modelling
#: (XLM's "MLM-de", "CLM-en"), negative log-likelihood, cross-entropy (alone or with a language or task after a dash)
#: (and alone, the cross-entropy's and CTC's short names as RETURNN's engine prints its losses: "ce 0.357", "ctc 1.2";
#: its TF engine's cost of its output layer, "cost:output 1.234")
_OBJECTIVE_RE = re.compile(r"(?i)(?:(?:mlm|clm|tlm|nll|xent|cross[_-]?entropy)(?:[-_][A-Za-z]{2,8})?|ce|ctc"
                           r"|cost:[\w/-]+)$")
#: a loss that is not the training loss: an evaluation's, or a part the loss sums ("loss_cls" ends otherwise)
_OTHER_LOSS_RE = re.compile(r"(?i)(?:val|valid|eval|test|dev)")


def _metrics(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """The pairs' numbers by name; not a source file's line (Rich's RichHandler prints the caller, "train.py:88",
    after each record's message; a logger's "%(filename)s:%(lineno)d"): a place, not a metric."""
    out: dict[str, float] = {}
    for key, text in pairs:
        value = _number(text)
        if value is not None and not key.endswith(".py"):
            out[key.strip().replace(" ", "_")] = value
    return out


#: a bar whose counts come before its percentage: pytorch-ignite's ProgressBar ("{desc}[{n}/{total}] {pct}%|{bar}
#: {postfix} [{elapsed}<{remaining}]"): "Epoch [2/8]: [94/469]  20%|██        , loss=3.12e-01 [00:02<00:09]"
_COUNTS_FIRST_RE = re.compile(r"\[(?P<n>\d+)/(?P<total>\d+)\]\s+\d{1,3}%\|[^\[]*?(?:,\s*(?P<postfix>[^\[]*?))?\s*"
                              r"\[(?P<elapsed>\d+:\d\d(?::\d\d)?)<[\d:?]*\]")


def _counts_first(text: str, pct: int) -> Point | None:
    """A bar of :data:`_COUNTS_FIRST_RE` (``pct``: where its ``%|`` is)."""
    m = _COUNTS_FIRST_RE.search(text, max(0, text.rfind("[", 0, pct)))
    if m is None:
        return None
    step, total = int(m["n"]), int(m["total"])
    head = text[:m.start()]
    desc, epoch, _, phase, epoch_of = _describe(head, True)
    metrics = _metrics([(p["key"], p["value"]) for p in _POSTFIX_RE.finditer(m["postfix"] or "")])
    if phase == "train" and epoch_of is not None and epoch_of[1] > 1:  # (one epoch: the run's bar, as below)
        named, epochs = epoch_of
        return Point("log", named, epochs, float(named), metrics, form="epoch-bar", counts_epochs=True, batch=step,
                     batches=total, first_epoch=1)
    return Point("tqdm", step, total, epoch, metrics, None, phase, per_epoch=epoch is not None,
                 elapsed=_clock(m["elapsed"]))


#: the counters a bar's postfix may say that count the optimizer's updates done, as the bar's batches do not (under
#: gradient accumulation, and past the first epoch): not a logger's "global_step", which Lightning's bar shows one
#: behind its own count of the run's steps
_UPDATE_COUNTERS = frozenset({"num_updates", "updates", "update"})


def _postfix_step(metrics: dict[str, float]) -> int | None:
    """The run's step a bar's postfix says (:data:`_UPDATE_COUNTERS`: ``num_updates=83``), taken out of its
    metrics, or None."""
    for key in metrics:
        if _counter_key(key) in _UPDATE_COUNTERS:
            value = metrics.pop(key)
            return int(value) if value >= 0 and value == int(value) else None
    return None


def _tqdm(text: str) -> Point | None:
    if "[" not in text:  # every default bar's times are in brackets; a bar_format may leave them out
        return _bare_bar(text) if "%|" in text else None
    pct = text.find("%|")
    if pct > 0 and text.find("] ", max(0, pct - 7), pct) >= 0 and (first := _counts_first(text, pct)) is not None:
        return first  # the counts before the percentage
    bars = list(_TQDM_RE.finditer(text))  # the last bar of the line (tqdm.write's redraws put several)
    if not bars:
        return _bare_bar(text) if "%|" in text else None
    m = bars[-1]
    if (tail := text[m.end():]) and _FORM_HINT_RE.search(tail) is not None \
            and ((own := _log_form(tail)) is not None or (own := _counters(unheader(tail.lstrip()))) is not None) \
            and own.step is not None and (own.metrics or own.total is not None):
        # the loop's own line glued after the bar's redraw (torchtune's "...3.20s/it]Step 25 | loss:0.87", a
        # logger's "...6.73it/s]DLL <date> - Training Epoch: 1 Training Iteration: 3374 step_loss : 0.29"): the
        # loop's line counts the run, the bar one epoch's batches. Not a counter alone, with no metric nor total
        # (a UI's own count printed after each redraw, "...35.1s/it]Step: 159 ", its micro-batches): the bar's
        return own
    step = int(_scaled(m["n"], m["nk"]))
    total = int(_scaled(m["total"], m["tk"])) if m["total"] is not None else None
    rate: float | None = None
    if m["rate"] is not None:
        value = _scaled(m["rate"], m["rk"])
        rate = (1.0 / value if value else None) if m["ratetail"].startswith("s/") else value
    head = text[:m.start()]
    bar_at = head.rfind("%|")
    if bar_at < 0 and "||" not in head and _ROW_OVER_BAR_RE.search(head) is not None:
        return None  # a table's row printed over the bar's start: what the bar counted is not known
    point = _bar(text, m.end(), step, total, rate, head[:bar_at] if bar_at >= 0 else head, bar_at >= 0, m["postfix"],
                 m["ratetail"] or m["unit0"] or "", _bar_unit(m), _clock(m["elapsed"]))
    if point is not None and m["postfix"] and "v_num=" in m["postfix"] \
            and (version := _V_NUM_RE.search(m["postfix"])) is not None:
        point = point.but(version=int(version[1]))
    if tail and tail[:1].isdigit() and point is not None and (write := _STEP_LOSS_WRITE_RE.match(tail)) is not None \
            and int(write["i"]) == step - 1:
        point = point.but(metrics={**point.metrics, "loss": float(write["loss"])})
    return point


#: Lightning's bar's postfix "v_num=3" (its logger's version; 1.x: TensorBoardLogger's int, a "version_3" dir)
_V_NUM_RE = re.compile(r"(?:^|[ ,])v_num=(\d+)\b")
#: a table's row (cells between "|", Lightning's ModelSummary "| Name | Type | Params") printed over the start of a
#: bar's last redraw, tqdm's "{desc}: {percentage}%" gone, its glyphs and counts left ("| Name | Params|████| 310/310")
_ROW_OVER_BAR_RE = re.compile(r"\|[^|]+\|[^|]+\|[█▏▎▍▌▋▊▉]+\|\s*$")


#: unsloth_zoo's unsloth_train: ``progress_bar.write(f"{step}, {round(accumulated_loss.cpu().item(), 4)}")`` every
#: logging_steps steps, before its bar's update: the step's index from 0 and its loss, which a notebook's output shows
#: glued after the bar's last redraw ("...10.79s/it]40, 2.6929" on the bar at 41/398): that step's loss (only where the
#: index is the bar's count less one, so that no other number pair glued there is taken)
_STEP_LOSS_WRITE_RE = re.compile(r"(?P<i>\d+), (?P<loss>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan)\s*$")


#: tqdm-loggable's bar as a log record (tqdm_loggable/tqdm_logging.py, logging_tqdm.display: "Progress on:%s %s/%s
#: rate:%s remaining:%s elapsed:%s postfix:%s", the counts by tqdm's format_sizeof with their unit, "1.20kit/10.0kit";
#: its first releases' "%f/%f" and no remaining): levanter's, openpi's bars where the output is no terminal
_LOGGABLE_RE = re.compile(r"\bProgress on:\s?(?P<desc>.*?) (?P<n>\d+(?:\.\d+)?)(?P<nk>[kMGT]?)[A-Za-z]*/"
                          r"(?:(?P<total>\d+(?:\.\d+)?)(?P<tk>[kMGT]?)[A-Za-z]*|-|None) "
                          r"rate:(?:(?P<rate>[\d,]+(?:\.\d+)?)(?P<rtail>\S*)|\S+)(?: it/s)? (?:remaining:\S+ )?"
                          r"elapsed:(?P<elapsed>[\d:.]+) postfix:(?P<postfix>.*)$")


def _loggable(text: str) -> Point | None:
    """A bar of :data:`_LOGGABLE_RE`: read as the bar it logs."""
    m = _LOGGABLE_RE.search(text) if "Progress on:" in text else None
    if m is None:
        return None
    total = int(_scaled(m["total"], m["tk"])) if m["total"] is not None else None
    rate: float | None = None
    if m["rate"] is not None and (value := float(m["rate"].replace(",", ""))) > 0:
        rate = 1.0 / value if m["rtail"].startswith("s/") else value
    elapsed = float(m["elapsed"]) if ":" not in m["elapsed"] else _clock(m["elapsed"])
    postfix = m["postfix"] if m["postfix"] not in ("-", "None") else None
    return _bar(text, m.end(), int(_scaled(m["n"], m["nk"])), total, rate, m["desc"], True, postfix,
                (m["rtail"] or "").lstrip("0123456789.,"), "it", elapsed)


#: a bar whose bar_format leaves out the bracketed times (tqdm's format_meter offers "{l_bar}{bar}| {n_fmt}/
#: {total_fmt}", its postfix after it as ", key=value"): the counts after the bar's closing "|", at the line's end
_BARE_BAR_RE = re.compile(r"(?P<pct>\d{1,3})%\|[^|\[\]]{1,200}\|\s?(?P<n>\d+(?:\.\d+)?)(?P<nk>[kMGT]?)/"
                          r"(?P<total>\d+(?:\.\d+)?)(?P<tk>[kMGT]?)(?:,\s*(?P<postfix>[^\]|]*?))?\s*$")


def _bare_bar(text: str) -> Point | None:
    """A bar of :data:`_BARE_BAR_RE`: read as any bar, its percentage agreeing with its counts (else it is some
    other table's "|")."""
    m = _BARE_BAR_RE.search(text)
    if m is None:
        return None
    step, total = int(_scaled(m["n"], m["nk"])), int(_scaled(m["total"], m["tk"]))
    if total <= 0 or abs(100 * step / total - int(m["pct"])) > 2:
        return None
    return _bar(text, m.end(), step, total, None, text[:m.start() + len(m["pct"])], True, m["postfix"], "", "it",
                None)


#: a bar's description that is the word for the epochs alone, no epoch's number ("Epoch", "Epochs", "Training epochs")
_EPOCHS_DESC_RE = re.compile(r"(?:[Tt]rain(?:ing)? )?(?:[Ee]pochs?|EPOCHS?)")


def _bar(text: str, end: int, step: int, total: int | None, rate: float | None, head: str, glyphs: bool,
         postfix: str | None, tail: str, unit: str, elapsed: float | None) -> Point:
    """What a bar counts (``head``: what precedes its counts, up to its ``NN%|`` where it draws ``glyphs``; ``end``:
    where its counts end; ``tail``: its rate's unit as printed, ``unit`` what it counts)."""
    desc, epoch, desc_metrics, phase, epoch_of = _describe(head, glyphs)
    metrics = _metrics([(p["key"], p["value"]) for p in _POSTFIX_RE.finditer(postfix or "")])
    if desc_metrics:  # a description that says its numbers ("1|40|Loss: 0.812"): the postfix's first
        metrics = {**desc_metrics, **metrics}
    metrics.pop("v_num", None)  # Lightning's run version, not a metric
    if phase == "train" and tail != "it/s" and unit in _PREP_UNITS:
        phase = "preparation"
    if phase == "train" and total is not None and (("p" in tail and unit in _EPOCH_UNITS)
                                                   or (desc[-1:] in "hsHS" and _EPOCHS_DESC_RE.fullmatch(desc))):
        # a bar over the run's epochs (tqdm's unit="epoch": "Training: 100%|##| 6/6 [31:58<00:00, 319.78s/epoch]"; a
        # bar whose description is the word alone, the loop over the epochs of transformers 3's Trainer, trange(...,
        # desc="Epoch"), and of many scripts, desc="Epochs"): its count is the epochs done, its total the run's; the
        # bars of each epoch's batches are not the run's
        return Point("log", step, total, None, metrics, form="epochs-bar", counts_epochs=True, first_epoch=1)
    # a bar that moves the cursor up after itself is an inner bar (tqdm's position 1 and below: the evaluation
    # inside the run's bar), never the run's; marked as such (INNER_BAR): under a bar over the epochs, it is the
    # epoch's training after all (:meth:`Series.add`)
    inner = phase == "train" and UP in text and text[end:end + 4].lstrip().startswith(UP)
    if inner:
        phase = "evaluation"
    if phase == "train" and epoch_of is not None and epoch_of[1] > 1 and total \
            and _LOOP_EPOCH_OF_RE.search(head[-40:]) is not None:
        # a hand-written loop's bar over an epoch's batches whose description it writes as "Epoch e/E" (tqdm(loader,
        # desc=f"Epoch {e}/{E} [train]")), no framework's: the line says the epoch of the run's and the batch of the
        # epoch's, so the run counts its global steps (the epochs before times the bar's total, plus its count), of
        # the epochs times it (the series makes it an epoch's bar of the run's epochs: :meth:`Series.add`)
        return Point("log", epoch_of[0], epoch_of[1], float(epoch_of[0]), metrics, rate, form=LOOP_EPOCH_BAR,
                     counts_epochs=True, batch=step, batches=total, elapsed=elapsed, first_epoch=1)
    if phase == "train" and epoch_of is not None and epoch_of[1] > 1:
        # an epoch's bar that says the run's epochs in a framework's form (pytorch-ignite's ProgressBar "Epoch
        # [3/25]", Catalyst's "3/10 * Epoch"): the run counts epochs (its rate per batch is not the run's); a
        # run of one epoch ("Train epoch [1/1]") counts that epoch's batches, its bar the run's
        named, epochs = epoch_of
        return Point("log", named, epochs, float(named), metrics, form="epoch-bar", counts_epochs=True, batch=step,
                     batches=total, first_epoch=1)
    if phase == "train" and ("v_nb" in metrics or "batch_nb" in metrics) \
            and (loop := metrics.get("epoch")) is not None and loop == int(loop) >= 0 \
            and (epoch is None or epoch == loop + 1):
        # Lightning 0.x's bar of each epoch (its trainer's tqdm, postfix "batch_nb=, epoch=, v_nb=" its test-tube era
        # names, the epoch the loop's own from 0; desc "Epoch {epoch + 1}" from 0.5; its total the epoch's training
        # and validation batches): the run counts epochs, from 1 as its description names them, a batch no step
        metrics.pop("epoch")
        return Point("log", int(loop) + 1, None, loop + 1, metrics, form="epoch-bar", counts_epochs=True, batch=step,
                     batches=total, first_epoch=1)
    if phase == "train" and postfix and (run_step := _postfix_step(metrics)) is not None:
        # a bar over one epoch's batches whose postfix counts the run's updates (fairseq's "num_updates=83"): the
        # run's step is the updates', an epoch's batches the bar's total (its rate counts batches: not the run's)
        return Point("log", run_step, None, epoch, metrics, batches=total, elapsed=elapsed, first_epoch=1,
                     form="bar-counter")
    if phase == "train" and desc[:1].isdigit() and (counters := _EPOCH_STEP_DESC_RE.match(desc)) is not None:
        # a bar over one epoch's steps whose description says the run's step (torchtune's "2|27|Loss: 0.78"):
        # the run's step is the description's, an epoch's steps the bar's total
        return Point("log", int(counters["step"]), None, float(counters["epoch"]), metrics, rate, batches=total,
                     elapsed=elapsed, first_epoch=1, form="epoch-step-bar")
    # an epoch's number padded with zeros ("epoch 001": fairseq's progress_bar prefix "epoch {:03d}") is a count
    # formatted for people, from 1 (a program that pads from 0 names "000" first: the series then counts from 0)
    first = 1 if epoch is not None and _PADDED_EPOCH_RE.search(desc) is not None else 0
    return Point("tqdm", step, total, epoch, metrics, rate, phase, per_epoch=epoch is not None, elapsed=elapsed,
                 first_epoch=first, form=INNER_BAR if inner else "")


#: the form of a training bar drawn below another (it moves the cursor up after itself: tqdm's position 1), read as an
#: evaluation's (:func:`_bar`) unless the bar above it counts the run's epochs
INNER_BAR = "inner-bar"
#: the form of a loop's bar over an epoch's batches described "Epoch e/E" (:func:`_bar`)
LOOP_EPOCH_BAR = "loop-epoch-bar"
#: a loop's own "Epoch e/E" in a bar's description, the two numbers bare (not pytorch-ignite's "Epoch [e/E]")
_LOOP_EPOCH_OF_RE = re.compile(r"\bEpoch\s+\d+\s*/\s*\d+\b", re.IGNORECASE)
#: an epoch's number padded with zeros to a width in a bar's description ("epoch 001", "Epoch 07")
_PADDED_EPOCH_RE = re.compile(r"\b[Ee]poch\s+0\d")


@functools.lru_cache(maxsize=1024)
def _describe(head: str, glyphs: bool) -> tuple[str, float | None, dict[str, float], str, tuple[int, int] | None]:
    """A bar's description from what precedes its numbers (``head``: up to its ``NN%|`` where it draws ``glyphs``,
    else up to its ``NN%``, after an earlier redraw on the line): the description, the epoch it names, the metrics
    it says, the phase it names (:func:`_bar_phase`), and the epoch and the run's epochs where it names both
    (:data:`_EPOCH_OF_RE`). Cached: a bar's descriptions repeat."""
    of = _EPOCH_OF_RE.search(head[-40:]) if "poch" in head and "/" in head else None
    epoch_of = (int(of["epoch"] or of["epoch2"] or of["epoch3"]), int(of["epochs"] or of["epochs2"] or of["epochs3"])) \
        if of is not None else None
    desc = head if glyphs else _PCT_END_RE.sub("", head)
    desc = _PCT_TAIL_RE.sub("", desc[max(desc.rfind("]"), desc.rfind(UP)) + 1:]).strip().rstrip(":").strip()
    if not desc and (whole := _BRACKETED_DESC_RE.search(head)) is not None:
        desc = whole["desc"].strip()  # a description in brackets (ColossalAI's "[Epoch 3 / Train]"): its words
    epoch_m = _EPOCH_DESC_RE.search(desc)
    metrics = _metrics([(p["key"], p["value"]) for p in _RICH_METRIC_RE.finditer(desc)]) if ":" in desc else {}
    if not metrics and ":" in desc and (glued := _GLUED_PAIR_RE.findall(desc)):
        metrics = _metrics([(key, value) for key, value in glued if key.lower() != "epoch"])  # (the epoch: above)
    phase = _bar_phase(desc)
    if of is not None and phase == "train":  # "Validation Epoch [1/25]": its words before the epoch's brackets
        phase = _bar_phase(head[-40:][:of.start()].strip())
    if phase == "train" and "]" in head and (tag := _TAG_BEFORE_DESC_RE.search(head[-80:])) is not None:
        phase = _bar_phase(tag["tag"])  # "[Eval] Best Model at Epoch 3": its tag in brackets names its phase
    return desc, float(epoch_m["epoch"]) if epoch_m else None, metrics, phase, epoch_of


#: a bracketed tag of words before a bar's description, the tag the description cut off as it cuts an earlier
#: redraw's bracketed times (a loop's tqdm(loader, desc=f"[Eval] Best Model at Epoch {e}"), its phase's word in
#: brackets before the rest): words only, never a time, a count or an epoch's number
_TAG_BEFORE_DESC_RE = re.compile(r"\[(?P<tag>[A-Za-z][A-Za-z _-]{0,30})\][^\[\]]*$")


#: a bar's description in brackets, all of what precedes its percentage (ColossalAI's legacy Trainer and its examples:
#: tqdm(..., desc=f"[Epoch {epoch} / Train]"), its evaluation's "[Epoch {epoch} / Test]", "[Train]"): not an earlier
#: redraw's times and rate ("[00:46<00:00, 2.05it/s]", "[00:00, ?it/s]"), whose brackets hold a time or a "<"
_BRACKETED_DESC_RE = re.compile(r"\[(?![^\]]*\d:\d\d)(?P<desc>[^\[\]<]*[A-Za-z][^\[\]<]*)\]\s*:?\s*(?:\d{1,3}%?)?\s*$")


def _bar_unit(m: re.Match[str]) -> str:
    """The unit a bar counts in (``examples`` of ``5440.81 examples/s``, ``epoch`` of ``319.78s/epoch``, ``it`` by
    default)."""
    if m["ratetail"] and m["ratetail"].endswith("/s"):
        return m["ratetail"][:-2]
    if m["ratetail"] and m["ratetail"].startswith("s/"):
        return m["ratetail"][2:]
    return m["unit0"] or "it"


#: a description's part after a separator that names a test or a prediction ("[Epoch 3 / Test]", "epoch 3 | test")
_PHASE_PART_RE = re.compile(r"[/|]\s*(?:test|predict)")


def _bar_phase(desc: str) -> str:
    """What a bar counts, as its description says: the run's training ("train"), or another phase."""
    if not desc:
        return "train"
    lowered = desc.lower()
    if "sanity" in lowered:
        return "sanity check"
    if "validat" in lowered or lowered == "val" or lowered.startswith("val ") or "[val]" in lowered \
            or lowered.endswith(" val"):
        # (a loop's own short word: tqdm(loader, desc="val"), desc=f"Epoch {e}/{E} [val]", whose brackets are all
        # of the description, desc=f"Epoch {e}/{E} val" after the epoch, the word its training bar has as "train")
        return "validation"
    if lowered.startswith(("test", "predict")) or _PHASE_PART_RE.search(lowered) is not None:
        return "test"
    if _EVAL_DESC_RE.search(desc) is not None:
        return "evaluation"
    if _PREP_DESC_RE.search(desc) is not None:
        return "preparation"
    return "train"


def _rich(text: str) -> Point | None:
    """Lightning's RichProgressBar, which on a file prints its final state: ``Epoch 2/2  ━━━ 20/20 0:00:01 • 0:00:00
    18.83it/s train_loss: 0.012``."""
    m = _RICH_RE.search(text) if "poch" in text else None
    if m is None:
        return _rich_any(text) if "━" in text or ("---" in text and ":" in text) else None
    value = float(m["rate"]) if m["rate"] else None
    rate = (1.0 / value if value else None) if value is not None and (m["unit"] or "").startswith("s/") else value
    pairs = [(p["key"], p["value"]) for p in _RICH_METRIC_RE.finditer(text[m.end():])]
    metrics = _metrics(pairs)
    metrics.pop("v_num", None)
    return Point("tqdm", int(m["n"]), int(m["total"]), float(m["epoch"]), metrics, rate, per_epoch=True,
                 epochs=int(m["last"]) + 1 if m["last"] else None, form="rich")


#: any Rich progress bar with its counts (rich.progress's MofNCompleteColumn; a trainer's own Rich columns): its
#: description, the bar, a percentage perhaps, then "450/1000"
#: (tqdm.rich's FractionColumn writes its counts with thousands' commas: "1,261,568/3,000,000")
_RICH_ANY_RE = re.compile(r"[━╸╺]{3,}[━╸╺─ ]*\s+(?:\d{1,3}%\s+)?(?P<n>\d[\d,]*)/(?P<total>\d[\d,]*)\b"
                          # the same drawn in "-" where the console is not UTF-8, its elapsed time after the counts
                          # (H:MM:SS, Rich's TimeElapsedColumn): not any rule of dashes before a fraction
                          r"|(?<![-\w])-{3,}[- ]*\s+(?:\d{1,3}%\s+)?(?P<an>\d+)/(?P<atotal>\d+)\s+(?=\d+:\d\d:\d\d\b)")


def _rich_any(text: str) -> Point | None:
    """A Rich bar of :data:`_RICH_ANY_RE` (not Lightning's, :data:`_RICH_RE`): what its description says it counts
    (an evaluation's, a preparation's, else the run's), the ``key: value`` / ``key=value`` pairs after it."""
    m = _RICH_ANY_RE.search(text)
    if m is None:
        return _rich_percent(text)
    desc, epoch, _, phase, _ = _describe(text[:m.start()].rstrip("━╸╺─- "), True)
    tail = text[m.end():]
    metrics = _metrics(_form_pairs(tail))
    metrics.pop("v_num", None)
    n, total = (m["n"].replace(",", ""), m["total"].replace(",", "")) if m["n"] is not None else (m["an"], m["atotal"])
    if phase == "train" and desc[-1:] in "hsHS" and _EPOCHS_DESC_RE.fullmatch(desc) is not None:
        # a Rich task over the run's epochs (progress.add_task("Epochs", total=E), its batches' task below it): its
        # count is the epochs done, as tqdm's bar of the word alone (_bar)
        return Point("log", int(n), int(total), None, metrics, form="epochs-bar", counts_epochs=True, first_epoch=1)
    return Point("tqdm", int(n), int(total), epoch, metrics, None, phase, per_epoch=epoch is not None, form="rich")


#: a Rich bar of its default columns (rich.progress, Progress.get_default_columns: the description, the bar,
#: TaskProgressColumn's "NN%", TimeRemainingColumn's "0:01:02" or "-:--:--"): a percentage, no count
_RICH_PCT_RE = re.compile(r"[━╸╺]{3,}[━╸╺─ ]*\s+(?P<pct>\d{1,3})%\s+(?:-:--:--|\d+:\d\d:\d\d)\s*$")


def _rich_percent(text: str) -> Point | None:
    """A Rich bar of :data:`_RICH_PCT_RE` whose description names no epoch nor another phase: the run's training at
    its percentage (a step only where the run's total is said elsewhere: :meth:`ntui.core.progress.series.Series.add`),
    else None."""
    m = _RICH_PCT_RE.search(text) if "%" in text else None
    if m is None or int(m["pct"]) > 100:
        return None
    _, epoch, _, phase, _ = _describe(text[:m.start()].rstrip("━╸╺─ "), True)
    if phase != "train" or epoch is not None:
        return None
    return Point("tqdm", None, None, None, {}, form="rich-percent", percent=float(m["pct"]))


#: a dict's value that Python writes for a float that is no number (``nan``, ``inf``, ``-inf``): not a literal
_BARE_NAN_RE = re.compile(r"([:,\[(]\s*)(-?(?:nan|inf))(?=\s*[,}\])])")


def _hf(text: str) -> Point | None:
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")) or (
            not any(f"'{k}'" in body or f'"{k}"' in body for k in _HF_KEYS)
            and _DICT_COUNTER_HINT_RE.search(body) is None):  # a dict, or JSON
        return None
    try:
        data = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        data = None
        if _BARE_NAN_RE.search(body) is not None:  # Python's repr of a float that is no number: {'grad_norm': nan}
            try:
                data = ast.literal_eval(_BARE_NAN_RE.sub(r"\1'\2'", body))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                data = None
        if data is None:
            try:  # JSON that Python's literals do not read (its true, false, null)
                data = json.loads(body) if '"' in body else None
            except (ValueError, RecursionError):
                return None
    if not isinstance(data, dict):
        return None
    data = _record(data)
    if _other_mode(data):
        return Point("log", None, None, None, {}, phase="evaluation", form="dict")
    metrics: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(key, str) and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            number = _number(str(value))
            if number is not None:
                metrics[key] = number
    epoch = metrics.pop("epoch", None)
    if (both := _dict_step_of_total(data)) is not None:  # ms-swift's 'global_step/max_steps': '10/100'
        return Point("log", both[0], both[1], epoch, metrics, form="dict")
    counter = _dict_counter(data)
    if counter is not None:  # a dict that says the run's step (a loop's JSON record, a logger's dict of a step)
        step = counter[1]
        for name in list(metrics):
            if _counter_key(name) is not None or _dict_total_key(name):
                metrics.pop(name)
        return Point("log", step, _dict_total(data), epoch, metrics, form="dict")
    if type(data.get("epoch")) is int and "step" not in data and training_loss(metrics) is not None:
        # a record of one epoch (DeiT's and the MetricLogger scripts' log.txt: {"train_lr": ..., "train_loss": ...,
        # "epoch": 171}): its epoch a whole number (the Trainer's is a fraction, 0.38 or 3.0): the run counts epochs
        named = int(data["epoch"])
        return Point("log", named, None, float(named), metrics, form="epoch-record", counts_epochs=True)
    return Point("hf", None, None, epoch, metrics) if metrics or epoch is not None else None


#: a record's mode that is no training's: mmcv 1.x's TextLoggerHook writes each *.log.json record with
#: mode=self.get_mode(runner), "train" or "val" (the validation's metrics, its "iter" the validation's batches)
_OTHER_MODES = frozenset(("val", "valid", "validation", "eval", "evaluation", "test", "predict"))


def _other_mode(data: dict[Any, Any]) -> bool:
    """Whether a record says in its ``mode`` (or ``phase``) that it is another phase's than the training's."""
    return any(isinstance(v := data.get(k), str) and v.lower() in _OTHER_MODES for k in ("mode", "phase"))


#: the keys a metric record names its metric by, its number under "value" (caikit's training_logs.jsonl: {"name":
#: "loss", "data": {"step": 3, "value": 3.72, ...}}; a tracker's {"key": "loss", "value": 0.5, "step": 10})
_RECORD_NAMES = ("name", "key", "metric")


def _record(data: dict[Any, Any]) -> dict[Any, Any]:
    """A dict as one level of keys: the dicts it holds merged in (its own keys first), and a record that names its
    metric (:data:`_RECORD_NAMES`) and gives its ``value`` as that metric."""
    if any(isinstance(value, dict) for value in data.values()):
        flat = {k: v for k, v in data.items() if not isinstance(v, dict)}
        for inner in (v for v in data.values() if isinstance(v, dict)):
            for key, value in inner.items():
                flat.setdefault(key, value)
        data = flat
    value = data.get("value")
    if value is not None and not isinstance(value, (bool, dict, list)):
        named = next((data[k] for k in _RECORD_NAMES if isinstance(data.get(k), str)), None)
        if named is not None and named not in data:
            data = {k: v for k, v in data.items() if k != "value"}
            data[named] = value
    return data


#: NeMo 2's ProgressPrinter (nemo/lightning/pytorch/callbacks/progress_printer.py, on_train_batch_end): "Training
#: epoch 0, iteration 99/9999 | lr: 0.0003 | global_step: 99 | reduced_train_loss: 3.41" (shown as printed, as the
#: Megatron form below reads it), and its first release's "Training epoch 0, iteration 100/10000: | lr: ..." (a colon
#: after the counts, f"iteration {n}/{self.total}:"), which the Megatron form does not match. Its validation's
#: "Validation: iteration 5/10" is not the training's
_NEMO_RE = re.compile(r"\bTraining epoch \d+, iteration (?P<n>\d+)/(?P<t>\d+):(?= \||\s*$)")


def _megatron(text: str) -> Point | None:
    m = _MEGATRON_RE.search(text)
    if m is None:
        m = _NEMO_RE.search(text) if "Training epoch" in text else None
        if m is None:
            return None
        pairs = [(p["key"], p["value"]) for p in _MEGATRON_METRIC_RE.finditer(text + " |")]
        return Point("megatron", int(m["n"]), int(m["t"]), None, _metrics(pairs))
    pairs = [(p["key"], p["value"]) for p in _MEGATRON_METRIC_RE.finditer(text + " |")]
    if " loss " in text:  # (fields without a colon: the early form, :data:`_MEGATRON_SPACED_RE`)
        pairs += [(p["key"], p["value"]) for p in _MEGATRON_SPACED_RE.finditer(text + " |")]
    per_ms = _MEGATRON_MS_RE.search(text)
    ms = _number(per_ms["ms"]) if per_ms is not None else None
    return Point("megatron", int(m["step"]), int(m["total"]), None, _metrics(pairs),
                 rate=1000.0 / ms if ms else None)


def _torchtitan(text: str) -> Point | None:
    m = _TITAN_RE.search(text)
    if m is None or (m.start() and _EVAL_WORDS_RE.search(text, 0, m.start()) is not None):
        return None  # (its validator's "validate step: 100  loss:  3.2000" is not a training step)
    pairs = [(p["key"], p["value"]) for p in _TITAN_METRIC_RE.finditer(text[m.start():]) if p["key"] != "step"]
    metrics = _metrics(pairs)
    if metrics.get("loss") == -1.0:  # a pipeline stage without the last one prints -1 in the loss's place: no loss
        del metrics["loss"]
    return Point("torchtitan", int(m["step"]), None, None, metrics)


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


#: the words that say a line is an evaluation's, not training's
_EVAL_WORDS_RE = re.compile(
    r"(?i)\b(?:val|valid|validate|validation|validating|eval|evaluation|evaluating|test|testing)\b")
#: the dev set's name right before a loss: an evaluation's (the SQuAD baselines' "Epoch %i, Iter %i, dev loss: %f");
#: not the word anywhere before it (a host's "dev-node3")
_DEV_LOSS_RE = re.compile(r"(?i)\bdev[ _]?$")


#: what a form's own counters are called: not metrics
_COUNTERS = frozenset({"iter", "Iter", "iteration", "Iteration", "step", "Step", "epoch", "Epoch", "num_updates",
                       "update", "global_step", "batch", "Batch", "eta", "i"})
_FORM_HINT_RE = re.compile(r"num_updates| updates \||progress: \d"
                            r"|Epoch|Iter|iter|Train: \[|Train:\s+\d|\bi = |[Ss]tep\s*[:=]?\s*\d|\[ep: "
                            r"|\d+/\d+ [\[━─]|\d+/\d+ - \d|epoch:? {1,3}\d|\d ?epoch\b|global step \d|^steps: \d"
                            r"|^epoch=\d|\bEp\. \d|\d/Unknown |Steps:\d|^epoch \d+: \{|^\[(?:token|sample)="
                            r"|\] (?:collection=\S+ )?[A-Za-z][\w/@.:-]* ?= ?[-+\d.na]"
                            r"|total_timesteps|^\d+/\d+, train_loss: |[=*#~-] Step \d|^Batch \d+/\d+: |Episode"
                            r"|^\[\d+\]\t")
#: a line's "key: value" / "key=value" pairs, quoted too (fairseq's JSON lines, a dict of strings)
#: (a loss of several words is one name: "Mono Loss: 0.05", "train loss: 3.2", "val loss: 1.1", not "Loss")
#: (a value with a unit's letter after it, nanotron's human_format "consumed_tokens: 1.2M", is no number: not its "1")
_FORM_METRIC_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*)['\"]?\s*[:=]\s*['\"]?(?P<value>{NUM})(?![\w:/]|\.\d)")
#: the words before a loss that name it with it ("Mono " of "Mono Loss: 0.05"), right before it
_LOSS_WORDS_RE = re.compile(r"(?:[A-Za-z_][\w.-]* ){1,2}$")


#: a field "key value" of a line whose fields are apart by ", " or " | ", no ":" nor "=" (RETURNN's "ce 0.357",
#: "num_seqs 29"): one word, then a number alone
_SPACED_FIELD_RE = re.compile(rf"(?P<key>[A-Za-z_][\w./-]*(?::[\w./-]+)*) (?P<value>{NUM})")
_FIELD_SEP_RE = re.compile(r",\s+|\s+\|\s+")


def _spaced_metrics(text: str, metrics: dict[str, float]) -> dict[str, float]:
    """The metrics of a line's fields of the form ``key value`` where ", " or " | " part its fields
    (:data:`_SPACED_FIELD_RE`), each field that and nothing else: RETURNN's "ep 3 train, step 40, ce 0.36, fer 0.10";
    where the line holds such fields and ``metrics`` (what its other fields said) no training loss. Its counters and
    the names ``metrics`` has already are left out."""
    if (", " not in text and " | " not in text) or training_loss(metrics) is not None:
        return {}
    out: list[tuple[str, str]] = []
    for part in _FIELD_SEP_RE.split(text):  # (the first field after the line's own "Step 500: ")
        if (m := _SPACED_FIELD_RE.fullmatch(part.rsplit(": ", 1)[-1].strip())) is not None \
                and m["key"] not in _COUNTERS and _counter_key(m["key"]) is None and m["key"] not in metrics:
            out.append((m["key"], m["value"]))
    return _metrics(out)


def _form_pairs(text: str) -> list[tuple[str, str]]:
    """A line's ``key: value`` / ``key=value`` pairs (:data:`_FORM_METRIC_RE`), a loss of several words one name
    (looked back for only where a bare "loss" follows a space: the words before it are its name)."""
    if " loss" not in text and " Loss" not in text:  # (most lines: no loss after a word, a comprehension's pace)
        return [(p["key"], p["value"]) for p in _FORM_METRIC_RE.finditer(text)]
    out: list[tuple[str, str]] = []
    for p in _FORM_METRIC_RE.finditer(text):
        key, start = p["key"], p.start()
        if len(key) == 4 and key[1:] == "oss" and start > 1 and text[start - 1] == " " \
                and (words := _LOSS_WORDS_RE.search(text, max(0, start - 40), start)) is not None:
            key = words.group() + key
        out.append((key, p["value"]))
    return out
#: the loss of the step itself where a line says it beside an average ("Average Loss 0.803 | Current Loss 0.819749"):
#: the newest value, as "Loss: 3.456 (3.51)" prints it first
_CURRENT_LOSS_RE = re.compile(rf"\b(?:[Cc]urr(?:ent)?|[Cc]ur|[Ss]tep|[Bb]atch) [Ll]oss[ :=]+(?P<value>{NUM})")
#: (not a loss under another name's path: big_vision's "val/loss = 4.1", an evaluator's "eval-loss"); also said in
#: words, "loss is x" (MindSpore's LossMonitor: "epoch: 1 step: 100, loss is 0.52"; BigDL's DistriOptimizer: "...
#: Throughput is 1148.4 records/second. Loss is 2.2156.")
_TRAIN_LOSS_RE = re.compile(rf"(?<![\w/.-])(?:train(?:ing)?[ _]?)?[Ll]oss(?: train)?(?: \(curr\))?(?: is)?[ :=]+"
                            rf"(?P<value>{NUM})")
#: a loss of its own name with its value after a space ("|| Mask_Loss 1.3689")
_NAMED_LOSS_RE = re.compile(rf"\b(?P<key>[A-Za-z][A-Za-z0-9]*_[Ll]oss)[ :=]+(?P<value>{NUM})")


def _bar_form(text: str) -> Point | None:
    """A form whose line also holds another counter's tqdm bar (:data:`BAR_FORMS`)."""
    if "%|" not in text and "━" not in text and "% " not in text:  # (a bar without glyphs: "  2% 3/162 [..]")
        return None
    point = _log_form(text, BAR_FORMS)
    if point is not None and (bars := list(_TQDM_RE.finditer(text))):  # the bar counts the epoch's batches
        bar = bars[-1]
        if bar["total"] is not None:
            point = point.but(batch=int(_scaled(bar["n"], bar["nk"])), batches=int(_scaled(bar["total"], bar["tk"])))
    return point


#: where a line that sums the epoch's splits one after the other opens an evaluation's part (ESPnet's "... [train]
#: loss=43.5, ..., [valid] loss=38.1"): its metrics are not training's
_EVAL_SECTION_RE = re.compile(r"\[(?:valid|validation|eval|evaluation|dev|test)\w*\]")


#: an epoch of the run's epochs named on a line ("Epoch[3/120]", "epoch: 3 / 120", "Epoch (3/120)")
_EPOCH_OF_RE_BEFORE = re.compile(r"\b[Ee]poch\s*:?\s*[\[(]?\s*\d+\s*/\s*\d+")


def _log_form(text: str, forms: tuple[LineForm, ...] = FORMS) -> Point | None:
    """A training loop's own progress line (:data:`FORMS`)."""
    if forms is FORMS and _FORM_HINT_RE.search(text) is None \
            and not (text[:1].isdigit() and _COUNTERS_FIRST_RE.match(text)):
        return None
    for form in forms:
        m = form.regex.search(text)
        if m is None or (form.generic and _EVAL_WORDS_RE.search(text, 0, m.end()) is not None):
            continue
        if form.run_counter and "poch" in text[:m.start()] and _EPOCH_OF_RE_BEFORE.search(text, 0, m.start()):
            continue  # the epoch's iterations after its epoch of the run's: a form that reads both says the run's
        if (collection := m.groupdict().get("collection")) is not None \
                and _EVAL_NAME_WORDS.intersection(_name_words(collection)):
            return None  # an evaluation's scalars under its collection's name (clu's LoggingWriter)
        groups = {k: int(v.replace(",", "")) for k, v in m.groupdict().items() if v and k not in ("loss", "collection")}
        rest = text[m.start():]
        if "[" in rest and (section := _EVAL_SECTION_RE.search(rest)) is not None:
            rest = rest[:section.start()]  # the evaluation's own metrics after the training's ("[valid] loss=...")
        metrics = _metrics([(k, v) for k, v in _form_pairs(rest) if k not in _COUNTERS])
        if (named_loss := m.groupdict().get("loss")) is not None and (value := _number(named_loss)) is not None:
            metrics["loss"] = value  # the row names its loss (Marian's "Cost 5.678")
        if training_loss(metrics) is None and ((loss := _CURRENT_LOSS_RE.search(text)) is not None
                                               or (loss := _TRAIN_LOSS_RE.search(text)) is not None):
            value = _number(loss["value"])
            if value is not None:
                metrics["loss"] = value
        if training_loss(metrics) is None and "oss " in text and (named := _NAMED_LOSS_RE.search(text)) is not None:
            value = _number(named["value"])
            if value is not None:
                metrics[named["key"]] = value
        metrics.update(_spaced_metrics(rest, metrics))  # RETURNN's "ce 0.36, fer 0.10"
        if form.name == "epoch-fields":  # its fields "name value", three spaces apart
            metrics.update(_metrics([(f["key"], f["value"]) for part in re.split(r"\s{3,}", rest[rest.find(": ") + 2:])
                                     if (f := _SPACED_FIELD_RE.fullmatch(part.strip())) is not None]))
        epoch = float(groups["epoch"]) if "epoch" in groups else None
        if epoch is None and (form.generic or form.name == "step-loss") and ("poch" in text or "POCH" in text) \
                and (named := _LINE_EPOCH_RE.search(text)) is not None:
            epoch = float(named["e"])  # a hand-written loop's epoch, said anywhere on its line ("Epoch=2 Step=40")
            if named["es"] and "epochs" not in groups:
                groups["epochs"] = int(named["es"])  # and the run's epochs after it ("epoch 2/3")
        if form.unit == "epoch":  # the run counts epochs: the epoch named is the step, a batch line says metrics
            return Point("log", groups.get("epoch"), groups.get("epochs"), epoch, metrics, form=form.name,
                         counts_epochs=True, batch=groups.get("batch"), batches=groups.get("batches"),
                         first_epoch=form.first_epoch)
        if "batch" in groups and "step" not in groups:
            return Point("log", groups["batch"], groups.get("batches"), epoch, metrics, per_epoch=True,
                         epochs=groups.get("epochs"), first_epoch=form.first_epoch, form=form.name)
        step = groups.get("step")
        if form.generic and step is not None and "total" not in groups and ("lobal" in text or "LOBAL" in text) \
                and (run_step := _global_step(text, metrics)) is not None and run_step >= step:
            step = run_step  # the run's step beside an epoch's ("Step: 130, Global_Step: 380")
        return Point("log", step, groups.get("total"), epoch, metrics, epochs=groups.get("epochs"),
                     first_epoch=form.first_epoch, form=form.name, iters=groups.get("iters"),
                     batches=groups.get("batches"))  # (an epoch's length beside the run's step: fairseq's "b / N")
    return None


#: the run's global step named on a line: "Global_Step: 380", "global step: 380", "globalstep=380"
_GLOBAL_STEP_RE = re.compile(r"(?i)(?<![\w/.-])global[_ ]?step['\"]?\s*[:=]?\s*(?P<n>\d+)(?![\d.])")


def _global_step(text: str, metrics: dict[str, float]) -> int | None:
    """The run's global step a line names beside its own counter ("Global_Step: 380", "global step: 380"), taken
    out of its metrics, or None."""
    m = _GLOBAL_STEP_RE.search(text)
    if m is None:
        return None
    for key in [k for k in metrics if _counter_key(k) == "global_step"]:
        del metrics[key]
    return int(m["n"])


# ---------------------------------------------------------------------------------------------------------
# the generic reader: a line that names a step counter and a training loss, in whatever words and layout

#: a counter of the run and its number, with its total where it says one: ``step 450``, ``global_step=450``,
#: ``iteration: 450 / 10000``, ``'iter': 450``, ``update 450 of 10000``, ``[Step 450/10000]``, ``it 450/10000``; a
#: whole number printed as a float, its fraction zero (``step=450.0000``: a logger that formats every value "%.4f")
_COUNTER_RE = re.compile(
    r"(?<![\w/.-])(?P<key>global[_ ]step|global[_ ]iter(?:ation)?"
    r"|num_updates|updates|update|train_step|steps|step|iterations|iteration|iters"
    r"|iter|it|batch)"
    r"""['"]?(?:\s*[:=#]\s*|\s+#?)['"]?\[?\s*(?P<n>\d[\d,]*)(?:\.0+)?(?![\d.]|\w)(?:\s*(?:/|\bof\b)\s*(?P<t>\d[\d,]*)\b)?""",
    re.IGNORECASE)
#: a count whose unit follows it: the PyTorch examples' "|   200/ 2983 batches |", "1200/5000 steps"
_UNIT_AFTER_RE = re.compile(
    r"(?<![\d/.])(?P<n>\d+)\s*/\s*(?P<t>\d+)\s+(?P<key>batches|steps|iters|iterations|updates)\b")
_UNIT_KEYS = {"batches": "batch", "steps": "step", "iters": "iter", "iterations": "iteration", "updates": "update"}
#: a bare counter that leads the line: "[450/10000] loss: 3.2", "(450/10000) loss 3.2"
_LEAD_COUNT_RE = re.compile(r"^[\[(]\s*(?P<n>\d+)\s*/\s*(?P<t>\d+)\s*[\])]")
#: a number alone that leads the message, a field of its own (a logger's "   3860 -   56.10 sent/s - MLM-de: 6.84")
_BARE_COUNT_RE = re.compile(r"^\s*(?P<n>\d+)(?P<t>)\s+[-|]\s")
#: the epoch the line names (and the run's epochs, where it says): ``epoch 3``, ``Epoch: 3/10``, ``'epoch': 3``,
#: ``epoch[3]`` (pytorch-ignite's examples' "Epoch[{}] Iteration[{}/{}] Loss: {:.2f}")
_LINE_EPOCH_RE = re.compile(
    r"""(?<![\w/.-])epoch['"]?(?:\s*[:=#]\s*|\s+|(?=\[))['"]?\[?\s*(?P<e>\d+)(?![\d.]|\w)(?:\s*(?:/|\bof\b)\s*(?P<es>\d+)\b)?""",
    re.IGNORECASE)
#: counters that count the batches of one epoch where the line names its epoch and their total
_INNER_COUNTERS = frozenset({"batch", "iter", "iteration", "it"})
#: a step counter that counts its epoch's steps where the line names that epoch before it, with the step's total
#: ("Epoch: 3, Step: 40/612"): the total an epoch's, not the run's
_EPOCH_STEP_COUNTERS = frozenset({"step"})
_GENERIC_HINT_RE = re.compile(r"(?i)loss|mlm|clm|tlm|nll|xent|entropy|:[\d.]+ - \w|[,|] (?:ce|ctc) [\d.]"
                              r"|^\s*\[?\s*\w+\s*[=:]?\s*\d+(?:/\d+)?\s*\]?:?\s*$"
                              r"|^\s*\[epoch\s*[=:]\s*\d+\]\s*\[\w+\s*[=:]\s*\d+(?:/\d+)?\]:?\s*$"
                              r"|^\s*\[\w+\s*[=:]\s*\d+(?:/\d+|/\?+)?\s*,\s*epoch\s*[=:]\s*\d+(?:,\s*\w+=[^\],=]*)*\s*\]"
                              r":?\s*$")
#: what may stand around a counter alone on its line: brackets, a colon
_HEADER_ONLY_RE = re.compile(r"[\s\[\]():|]*")
#: what may follow a counter alone on its line: the epoch it is in, in the same bracket (OLMo's console record's
#: first line, "[step=10/20000,epoch=0]", its metrics on the indented lines after it)
#: (and OLMo-core's ConsoleLoggerCallback's "[step=10/20000,epoch=1,eta=13h12m]", its total "???" where it has none:
#: the fields after the epoch in the same bracket)
_HEADER_EPOCH_AFTER_RE = re.compile(r"(?:/\?+)?[\s,]*epoch\s*[=:]\s*(?P<e>\d+)(?:,\s*\w+=[^\],=]*)*[\s\]():|]*",
                                    re.IGNORECASE)
#: the same with the epoch the counter counts in before it: "[epoch=2][batch=30/40]:"
_HEADER_EPOCH_RE = re.compile(r"[\s\[(|]*epoch\s*[=:]\s*(?P<e>\d+)[\s\[\]():|]*", re.IGNORECASE)
#: a counter's name in the plural: alone on its line with a number, a configuration's count ("iters: 1000"), not a
#: position
_PLURAL_COUNTS = frozenset({"steps", "iterations", "iters"})
#: how many metrics a step's line names, with no training loss among them, to be a progress line (an RL driver's
#: "step:41 - actor/pg_loss:0.01 - critic/score:0.4 - timing_s/step:66.5 - ...")
_MANY_METRICS = 6
#: the counters that count the run's steps in such a line (not a batch, nor an iteration of something else)
_RUN_COUNTERS = frozenset({"global_step", "step", "train_step", "num_updates", "update", "updates"})


def _counters(text: str) -> Point | None:
    """A line that no form read but that names a step counter of the run (:data:`_COUNTER_RE`, the most preferred
    of :data:`COUNTER_NAMES` where it names several) and a training loss, in any words and layout: the counter is
    the run's step, its total the run's (``N/T``, ``N of T``); where the line also names its epoch, a batch counter
    (or an iteration counter with a total) counts that epoch's batches. Not where an evaluation's words lead the
    counter."""
    if _GENERIC_HINT_RE.search(text) is None:
        return None
    best: tuple[int, re.Match[str]] | None = None
    for m in _COUNTER_RE.finditer(text):
        name = m["key"].lower().replace(" ", "_")
        if name.startswith("global_"):  # the run's count beside an inner loop's (MiniLLM's "global iter: g/T")
            name = "global_step"
        rank = _COUNTER_RANK.get(_UNIT_KEYS.get(name, name), len(COUNTER_NAMES))
        if best is None or rank < best[0]:
            best = (rank, m)
    if best is None and (after := _UNIT_AFTER_RE.search(text)) is not None:  # "200/ 2983 batches"
        best = (0, after)
    found = best[1] if best is not None else (_LEAD_COUNT_RE.match(text) or _BARE_COUNT_RE.match(text))
    if found is None:
        return None
    m = found
    if _EVAL_WORDS_RE.search(text, 0, m.start()) is not None:
        return None
    if best is not None and m["key"].lower() not in _PLURAL_COUNTS \
            and ((tail := _HEADER_ONLY_RE.fullmatch(text, m.end())) is not None
                             or (tail := _HEADER_EPOCH_AFTER_RE.fullmatch(text, m.end())) is not None) \
            and ((head := _HEADER_ONLY_RE.fullmatch(text, 0, m.start())) is not None
                 or (head := _HEADER_EPOCH_RE.fullmatch(text, 0, m.start())) is not None):
        # a counter alone on its line, the header of the block of metrics that follows (Composer's "[batch=3/12]:"),
        # or after the epoch it counts in ("[epoch=2][batch=30/40]:": a batch of the epoch's, from 1)
        n, total = int(m["n"].replace(",", "")), int(m["t"].replace(",", "")) if m["t"] else None
        if head.groupdict().get("e") is not None and best[1]["key"].lower() in _INNER_COUNTERS:
            if total is None:  # a batch of its epoch, the epoch's length unknown ("[epoch=2][batch=30]:", Composer's
                # where its dataloader has no len): the run counts epochs, the next epoch's batch 1 no restart
                return Point("log", int(head["e"]), None, float(head["e"]), form="counters", counts_epochs=True,
                             batch=n)
            return Point("log", n, total, float(head["e"]), per_epoch=True, first_epoch=1, form="counters")
        named = tail.groupdict().get("e")  # (OLMo's "[step=10/20000,epoch=0]")
        return Point("log", n, total, float(named) if named is not None else None, form="counters")
    metrics = _metrics([(k, v) for k, v in _form_pairs(text) if k not in _COUNTERS and _counter_key(k) is None])
    if training_loss(metrics) is None and ((loss := _CURRENT_LOSS_RE.search(text)) is not None
                                           or (loss := _TRAIN_LOSS_RE.search(text)) is not None) \
            and _EVAL_WORDS_RE.search(text, max(0, loss.start() - 12), loss.start()) is None \
            and _DEV_LOSS_RE.search(text, max(0, loss.start() - 12), loss.start()) is None \
            and (value := _number(loss["value"])) is not None:  # (not an evaluation's "val loss 1.28")
        metrics["loss"] = value
    metrics.update(_spaced_metrics(text, metrics))  # "step 40, ce 0.36, fer 0.10"
    if training_loss(metrics) is None \
            and not _training_phase(next((n for n in metrics if "loss" in n.lower()), "loss")):
        # the line's first loss an evaluation's, the training's none: the evaluation's record, its terms after it
        # (a TransUNet-style trainer's "epoch : 4, iteration : 2, val loss : 0.73, val loss_ce: 0.61", its own
        # counter)
        return None
    if training_loss(metrics) is None and (len(metrics) < _MANY_METRICS or best is None
                                           or _counter_key(m["key"]) not in _RUN_COUNTERS) \
            and (best is None or loss_parts(metrics) is None):
        # a counter alone, or with a few numbers, is no progress line; with many (an RL driver's) it is, and with its
        # loss in parts (a GAN's "(step=12000) Loss_G: 0.4, Loss_D: 0.2")
        return None
    n = int(m["n"].replace(",", ""))
    total = int(m["t"].replace(",", "")) if m["t"] else None
    key = _UNIT_KEYS.get(best[1]["key"].lower(), best[1]["key"].lower()) if best is not None \
        else "batch" if m["t"] else "step"
    ep = _LINE_EPOCH_RE.search(text) if "poch" in text or "POCH" in text else None
    epoch = int(ep["e"]) if ep is not None else None
    epochs = int(ep["es"]) if ep is not None and ep["es"] else None
    if epoch is not None and key in _INNER_COUNTERS and (total is not None or key == "batch"):
        if total is None:  # a batch within its epoch, no epoch's length: the run counts epochs
            return Point("log", epoch, epochs, float(epoch), metrics, form="counters", counts_epochs=True, batch=n)
        return Point("log", n, total, float(epoch), metrics, per_epoch=True, epochs=epochs, first_epoch=1,
                     form="counters")
    if epoch is not None and key in _EPOCH_STEP_COUNTERS and total is not None and epochs is None \
            and ep is not None and ep.start() < m.start():
        # a step of its total after the epoch the line names, no epochs' count said (pytorch-ssd's train_ssd.py,
        # "Epoch: {epoch}, Step: {i}/{len(loader)}, Avg Loss: ..."): the steps are that epoch's, their total an
        # epoch's, not the run's; the run counts its epochs
        return Point("log", epoch, None, float(epoch), metrics, form="counters", counts_epochs=True, batch=n,
                     batches=total)
    if key == "batch" and total is not None:  # a batch of its total: an epoch's, whose epoch a line before named
        return Point("log", n, total, None, metrics, per_epoch=True, first_epoch=1, form="counters")
    return Point("log", n, total, float(epoch) if epoch is not None else None, metrics, epochs=epochs,
                 form="counters")


#: a table's column name (fastai's "train_loss", "error_rate", "time")
_COLUMN_RE = re.compile(r"[A-Za-z_][\w./()%-]*")


#: spaCy's training table's header (spacy/training/loggers.py, console_logger: "E", "#", a "LOSS <PIPE>" column for
#: each component, its scores, "SCORE", upper-cased): its rows are its evaluations, "#" the run's step
_SPACY_HEADER_RE = re.compile(r"^\s*E\s+#\s+LOSS \S+(?:\s+\S+)*\s*$")
_SPACY_LOSS_RE = re.compile(r"\bLOSS (\S+)")


def table_header(text: str) -> tuple[str, ...] | None:
    """A table's header as a line of its own whose first column is the epoch and which names a loss (fastai's
    console table, "epoch     train_loss  valid_loss  accuracy  time"), or the step (:func:`_step_table_header`),
    or the YOLO family's epoch table's, its losses in parts by their names alone ("Epoch gpu_mem box obj cls total
    labels img_size"), or spaCy's ("E  #  LOSS TOK2VEC  LOSS NER  ENTS_F  SCORE", its loss columns named
    "loss_tok2vec", "loss_ner"): its column names, else None."""
    if text[:1] in " E" and "LOSS " in text and _SPACY_HEADER_RE.match(text) is not None:
        return tuple(_SPACY_LOSS_RE.sub(lambda m: f"loss_{m[1].lower()}", text).split())
    if text[:1] in _STEP_COLUMN_FIRST and ("loss" in text or "Loss" in text):
        return _step_table_header(text)
    if "poch" not in text or ("loss" not in text and "Loss" not in text and "mem" not in text):
        return None
    names = tuple(_cells(text))
    if len(names) < 3 or names[0].lower() != "epoch" or not all(_COLUMN_RE.fullmatch(n) for n in names) \
            or not (names[1].lower() == "gpu_mem" or any("loss" in n.lower() for n in names[1:])):
        return None
    return names


#: the names a table's first column counts the run's steps by (a metrics file's "step", "iter", "global_step")
_STEP_COLUMNS = frozenset({"step", "steps", "iter", "iters", "iteration", "global_step", "update", "updates"})
_STEP_COLUMN_FIRST = frozenset("sSiIgGuU")


def _step_table_header(text: str) -> tuple[str, ...] | None:
    """A step's table header: a metrics file's first line as loops write it beside their checkpoints and print it
    (a TSV's "step<tab>loss", a CSV's "iter,loss,lr", a padded "step  train_loss  lr"): its first column the step,
    a loss among the others; two columns only where a tab or a comma sets them apart (two words with a space are a
    sentence's as well). Its column names, else None."""
    names = tuple(_cells(text))
    if not names or names[0].lower() not in _STEP_COLUMNS or not all(_COLUMN_RE.fullmatch(n) for n in names) \
            or not any("loss" in n.lower() for n in names[1:]):
        return None
    return names if len(names) >= 3 or "\t" in text or "," in text else None


#: the YOLO family's names of its loss's parts in its epoch table (YOLOv5's "box_loss", its first releases' "box"),
#: and of the sum its first releases print beside them ("total")
_YOLO_PARTS = frozenset({"box", "obj", "cls", "dfl", "seg", "pose", "kobj", "box_loss", "obj_loss", "cls_loss",
                         "dfl_loss", "seg_loss", "pose_loss", "kobj_loss", "sem_loss"})


def table_bar_metrics(text: str, names: tuple[str, ...]) -> dict[str, float]:
    """The numbers of an epoch table's row drawn as its bar's description (YOLO's "  3/299  4.2G  0.0512  0.0301
    0.0123  64  640: 100%|..."), under the header's names (``names``, from :func:`table_header`): its losses' parts
    by their names; the sum the program printed among them ("total", YOLOv5's first releases, YOLOv7) as the loss,
    none made where it printed none. Empty where the row's columns are not the header's."""
    row = text.rsplit("\r", 1)[-1]
    fields = row.split(":", 1)[0].split()
    if len(fields) != len(names):
        return {}
    out: dict[str, float] = {}
    parts = [name for name in names if name.lower() in _YOLO_PARTS]
    for name, cell in zip(names[1:], fields[1:], strict=True):
        value = _number(cell)
        if value is None:
            continue
        if name.lower() == "total" and parts:
            out["loss_total"] = value
        elif name.lower() in _YOLO_PARTS:
            out[name if name.lower().endswith("_loss") else f"{name}_loss"] = value
    return out


def loss_parts(metrics: dict[str, float]) -> dict[str, float] | None:
    """Where a program prints its training loss in parts only (YOLO's "box_loss obj_loss cls_loss", a detector's
    "loss_cls loss_bbox" without their "loss"), those parts by name, for the reader to say as they are: no sum is made
    of them. None where the metrics hold the training loss itself (:func:`training_loss`) or fewer than two parts."""
    if training_loss(metrics) is not None:
        return None
    named = {n: v for n, v in metrics.items() if "loss" in n.lower() and _training_phase(n)
             and not _LOSS_SETTING_WORDS.intersection(_name_words(n))}
    return named if len(named) >= 2 else None


#: the Trainer's notebook table's columns (NotebookProgressCallback): its first the step or the epoch it logged at
#: ("Step", or "Epoch" where it evaluates each epoch), its training loss ("No log" where none was logged yet), its
#: validation loss and its other evaluation metrics by their names capitalized ("Accuracy", "F1")
_NOTEBOOK_TABLE_FIRST = frozenset({"Step", "Epoch"})
_CELLS_RE = re.compile(r"\t|\s{2,}")


def notebook_table_header(text: str) -> tuple[str, ...] | None:
    """The header of the Trainer's notebook table as its text shows (cells apart by tabs or by two spaces or more:
    "Step\tTraining Loss\tValidation Loss\tAccuracy"): its column names, else None."""
    if "Training Loss" not in text:
        return None
    names = tuple(_CELLS_RE.split(text.strip()))
    if len(names) < 2 or names[0] not in _NOTEBOOK_TABLE_FIRST or names[1] != "Training Loss":
        return None
    return names


def notebook_table_row(text: str, names: tuple[str, ...]) -> Point | None:
    """A row of the Trainer's notebook table (:func:`notebook_table_header`): the step it was logged at (a "Step"
    table; None in an "Epoch" table, its epoch then) and its training loss as "loss", the validation's as
    "eval_loss" and the other columns as evaluation metrics ("eval_accuracy"); None for a line of another layout."""
    cells = _CELLS_RE.split(text.strip())
    if len(cells) != len(names) or not cells[0].isdigit():
        return None
    metrics: dict[str, float] = {}
    for name, cell in zip(names[1:], cells[1:], strict=True):
        value = _number(cell)
        if value is None:
            if cell != "No log":
                return None
            continue
        key = {"Training Loss": "loss", "Validation Loss": "eval_loss"}.get(name)
        metrics[key if key is not None else "eval_" + "_".join(name.lower().split())] = value
    first = int(cells[0])
    if names[0] == "Step":
        return Point("log", first, None, None, metrics, form="notebook-table")
    return Point("log", None, None, float(first), metrics, form="notebook-table")


def _cells(text: str) -> list[str]:
    """A table's line split into its cells: apart by commas where it has any (a CSV-like table, its cells padded,
    "Epoch ,LR ,Loss ,Mode"; a comma that ends the line ends the last cell), else by spaces."""
    if "," not in text:
        return text.split()
    cells = [cell.strip() for cell in text.split(",")]
    return cells[:-1] if cells and not cells[-1] else cells


def column_starts(text: str) -> tuple[int, ...] | None:
    """Where each column of a table's header starts, its names apart by two spaces or more (chainer's PrintReport
    pads each name to its column's width, then two spaces), else None."""
    if "," in text or "\t" in text:
        return None
    return tuple(m.start() for m in _COLUMN_START_RE.finditer(text))


#: a column's name at the line's start or after two spaces or more
_COLUMN_START_RE = re.compile(r"(?:(?<=\s\s)|^)\S")


def table_row(text: str, names: tuple[str, ...], starts: tuple[int, ...] | None = None) -> Point | None:
    """A row of the table :func:`table_header` read (its epoch first, a number or a time in each column): the epoch
    named (the run counts epochs) and the row's numbers under their columns' names (a step's table: the step named,
    the run counting steps); None for a line of another
    layout, or without a training loss. A row with fewer cells than the header's columns, where ``starts`` says
    where each column begins, is cut at those (chainer's PrintReport writes a value not reported yet, a validation
    column before the first evaluation, as blanks of its width). A table whose second column is the iteration
    (chainer's "epoch  iteration  main/loss ...", the iteration of the whole run) counts in iterations: the row's
    step is its iteration. A row drawn after a bar's cursor moves (chainer's ProgressBar's "\x1b[4A\x1b[J" before
    it) is read without them."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    fields = _cells(text)
    if starts is not None and len(starts) == len(names) and 2 < len(fields) < len(names):
        fields = [text[a:b].strip() for a, b in zip(starts, (*starts[1:], None), strict=True)]
    if len(fields) != len(names) or not fields[0].isdigit():
        return None
    if names[0].lower() in _STEP_COLUMNS:  # a step's table: the run's step, its numbers under their names
        metrics = {name: value for name, field in zip(names[1:], fields[1:], strict=True)
                   if (value := _number(field)) is not None}
        if training_loss(metrics) is None:
            return None
        return Point("log", int(fields[0]), None, None, metrics, form="table")
    epoch = int(fields[0])
    if names[1].lower() == "iteration" and fields[1].isdigit():
        metrics = {name: value for name, field in zip(names[2:], fields[2:], strict=True)
                   if (value := _number(field)) is not None}
        if training_loss(metrics) is None:
            return None
        return Point("log", int(fields[1]), None, float(epoch), metrics, form="table")
    if names[:2] == ("E", "#"):  # spaCy's: its epoch, the run's step, each component's loss
        if not fields[1].isdigit():
            return None
        metrics = {name: value for name, field in zip(names[2:], fields[2:], strict=True)
                   if (value := _number(field)) is not None}
        return Point("log", int(fields[1]), None, float(epoch), metrics, form="spacy")
    metrics = {name: value for name, field in zip(names[1:], fields[1:], strict=True)
               if (value := _number(field)) is not None}
    if training_loss(metrics) is None:
        return None
    return Point("log", epoch, None, float(epoch), metrics, form="table", counts_epochs=True)


#: how the rest of a wrapped line starts: with a metric (or the end of one: "s: 0.0823", "209 - accuracy") or a
#: separator, not with words of its own ("Train Error: Avg loss: 0.21" is an epoch's summary)
_CONTINUED_RE = re.compile(rf"\s*(?:-\s|\|\s|:\s*[\d.]|[\w./-]*:\s*{NUM}(?![\w:/])|\d[\d.]*\s+-\s)"
                           # or Keras 1.x's epoch line at verbose=2 (Progbar.update: '%ds' % (now - start), then ' -
                           # %s: %.4f' of each metric: "2170s - loss: 0.0189 - acc: 0.9940")
                           r"|\d+s - [\w.]+: "
                           # or a block's indented line of one metric under its header ("\t Train loss/train: 9.2")
                           rf"|\s+(?:• )?(?:[A-Za-z]+ )?[\w./-]+:\s*{NUM}\s*$|\s+(?:[\w./-]+ )?[\w./-]+={NUM}\s*$"
                           # or a hand-written loop's summary of its epoch's training under its "Epoch e of E"
                           # header, the training loss named in words first (print(f"Train Loss: {loss:.4f}, Train
                           # Acc: {acc:.2f}"), print(f"Train Loss: {loss:.4f}"))
                           rf"|(?:[Tt]rain(?:ing)?|TRAIN) [Ll]oss:\s*{NUM}(?:,\s|\s*$"
                           # (or the phase's summary of the PyTorch fine-tuning tutorials' train_model(), its
                           # print(f"{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}"), the next metric after a
                           # space: "train Loss: 0.41 Acc: 0.87", "train Loss: 0.41 Top-1 Acc: 87.1 Top-5 Acc: 98.2")
                           rf"|\s(?=(?:[\w-]+ )?[\w-]+:\s*{NUM}))"
                           # or one metric, its name padded to a column ('%-15s: %.4f': "train/loss     : 6.40")
                           rf"|[\w./-]+ +:\s*{NUM}\s*$"
                           # or a record's rest hard-wrapped at a width, its "key=value" fields apart (Rich's log
                           # handler's indented continuation lines)
                           rf"|\s*(?:[\w./-]+={NUM}\s+)+[\w./-]+={NUM}\s*$"
                           # or a loss and its value as the whole message (nnU-Net's "train_loss -0.2722", its
                           # v1's "train loss : -0.2722")
                           rf"|train(?:ing)?_loss\s+{NUM}\s*$|train(?:ing)? loss ?: {NUM}\s*$"
                           # (or the sum of the losses so, a loop's print('total loss:', loss.item()) as the
                           # first of its epoch's block of metrics under its header)
                           rf"|[Tt]otal loss ?: {NUM}\s*$"
                           # or a script's own print of one metric as an assignment, the whole line ("loss = 3.96")
                           rf"|(?:(?i:train|training|mean|avg|average|total|running|batch|step|current|curr) )?"
                           rf"[\w./-]+ ?= ?{NUM}\s*$"
                           # or a loss said in words as the message's start, what follows it the script's own
                           # ("Total loss is  6.13 ETA is  8:29:52", a loop's print after "Epoch 1/60, Batch 63/180")
                           rf"|(?:(?i:train|training|mean|avg|average|total|running|batch|step|current|curr) )?"
                           rf"[Ll]oss is\s+{NUM}(?![\w.])")


#: a row of a table of two columns, a key and its value, between "|" (Stable-Baselines3's HumanOutputFormat.write:
#: "|    value_loss           | 49.3        |", the key indented under its tag's row)
_KEY_VALUE_ROW_RE = re.compile(rf"^\|\s+(?P<key>[A-Za-z_][\w./-]*)\s+\|\s+(?P<value>{NUM})\s*\|\s*$")


def key_value_row(text: str) -> tuple[str, float] | None:
    """The key and the value of a two-column table's row (:data:`_KEY_VALUE_ROW_RE`), or None."""
    m = _KEY_VALUE_ROW_RE.match(text) if text[:1] == "|" else None
    if m is None or (value := _number(m["value"])) is None:
        return None
    return m["key"], value


#: a loop's line of its epoch and phase and the phase's metrics, no step of its own ("Epoch 6 train Loc Loss: 1.92
#: Cls Loss: 1.97 Tot Loss: 1.94 Accu :0.56", a hand-written loop's print('Epoch {} {} ...'.format(epoch, phase, ...))
#: every few steps, its steps said by another line of its)
_EPOCH_PHASE_RE = re.compile(r"\s*[Ee]poch:?\s+\d+\s*[,:]?\s+(?:[Tt]rain|[Tt]raining|TRAIN)\b[:,]?\s+(?P<rest>\S.*)$")


def epoch_phase_metrics(text: str) -> dict[str, float] | None:
    """The training metrics of a line that names its epoch and the training phase, then metrics that hold a
    training loss, no counter of steps (:data:`_EPOCH_PHASE_RE`); else None."""
    if "oss" not in text or (m := _EPOCH_PHASE_RE.match(text)) is None or _COUNTER_RE.search(m["rest"]) is not None:
        return None
    metrics = _metrics(_form_pairs(m["rest"]))
    return metrics if training_loss(metrics) is not None else None


#: a loop's summary of an epoch that is over, as the message's whole: the epoch first ("Epoch: 4/4 --- time: 812.5,
#: lr: 0.0005, avg_loss: 0.12", PccAI's train pipeline's 'Epoch: %d/%d --- time: %f, lr: %f, ' then 'avg_%s: %f, '
#: of each loss), then the epoch's averages
_EPOCH_OVER_RE = re.compile(r"\s*[Ee]poch:?\s*\[?(?P<e>\d+)(?:\s*/\s*\d+)?\]?\s*(?:-{2,}|[,|:])\s+(?P<rest>\S.*)$")
#: the name of an epoch's average of a metric: "avg_loss", "avg loss", "mean_loss", "average_loss"
_AVERAGE_NAME_RE = re.compile(r"(?i)^(?:avg|mean|average)[ _]")


def epoch_over(text: str) -> int | None:
    """The epoch a loop's summary line says is over (:data:`_EPOCH_OVER_RE`): the message names the epoch first, then
    the epoch's averages, a training loss's among them ("avg_loss"), and no counter of steps; else None."""
    if "oss" not in text or (m := _EPOCH_OVER_RE.match(text)) is None or _COUNTER_RE.search(m["rest"]) is not None:
        return None
    metrics = _metrics(_form_pairs(m["rest"]))
    averages = {k: v for k, v in metrics.items() if _AVERAGE_NAME_RE.match(k) is not None}
    if not averages or len(averages) < len([k for k in metrics if "oss" in k]) \
            or training_loss({_AVERAGE_NAME_RE.sub("", k): v for k, v in averages.items()}) is None:
        return None
    return int(m["e"])


#: a loop's line that names an epoch's evaluation as it begins, the epoch first ("Epoch 2 evaluation <evaluator>": a
#: SentenceTransformer subclass's fit() logs it after each epoch's batches, its epochs from 0)
#: (the message first, after a logger's header where one is left: "- INFO - lib.trainer : Epoch 2 ...")
_EPOCH_EVALUATED_RE = re.compile(r"(?:^|.*? [:-] )\s*[Ee]poch:?\s*(?P<e>\d+)\s*[,:-]?\s*"
                                 r"(?:evaluation|evaluating|validation|validating)\b")


def epoch_evaluated(text: str) -> int | None:
    """The epoch a loop's line says it evaluates (:data:`_EPOCH_EVALUATED_RE`), or None."""
    m = _EPOCH_EVALUATED_RE.match(text)
    return int(m["e"]) if m is not None else None


def trailing_metrics(text: str) -> dict[str, float] | None:
    """The metrics of a line that names no counter but a training loss (``- ETA: 1s - loss: 0.0776 - accuracy:
    0.955``: the rest of a progress line a console wrapped, or a bar's metrics printed apart), the last value of
    each; None where it names a counter, no training loss, or an evaluation's words."""
    if "tensor(" in text or "float" in text:
        text = unwrap_numbers(text)
    if "oss" not in text or _CONTINUED_RE.match(text) is None or _EVAL_WORDS_RE.search(text) is not None \
            or _COUNTER_RE.search(text) is not None or ("poch" in text and _LINE_EPOCH_RE.search(text) is not None):
        return None
    metrics = _metrics(_form_pairs(text))
    if training_loss(metrics) is None and (loss := _TRAIN_LOSS_RE.search(text)) is not None \
            and (value := _number(loss["value"])) is not None:  # "| Loss   7.0626 (  7.3829) |": the last, then
        metrics["loss"] = value  # its average
    return metrics if training_loss(metrics) is not None else None


#: the Trainer's notebook progress bar as its text shows (a notebook's output exported or copied as text): its label
#: "[value/total elapsed < remaining, rate it/s, comment]" (the value padded to the total's width; ": < :" before
#: any time; no remaining once at its total); the training bar's comment says its epoch ("Epoch 0.33/3"), the
#: evaluation's bar (under the training's, or alone) has none
_NOTEBOOK_BAR_RE = re.compile(
    r"\[\s*(?P<n>\d+)/(?P<total>\d+) (?::\s*<\s*:|(?P<elapsed>\d+(?::\d\d)+)(?: < [\d:]+)?)"
    r"(?:, (?:(?P<rate>[\d.]+)|\+inf) it/s)?"
    r"(?:, Epoch (?P<epoch>\d+(?:\.\d+)?)/(?P<epochs>\d+)|, (?P<other>[^\]]*))?\]\s*$")


def _notebook_bar(text: str) -> Point | None:
    """The Trainer's notebook progress bar as text (:data:`_NOTEBOOK_BAR_RE`): the training bar's step of the run's
    steps, its epoch and rate; an evaluation's bar (no epoch in its comment) as an evaluation's point."""
    body = text.lstrip()
    if body[:1] != "[" or " " not in body or not body[1:2].isdigit() and body[1:2] != " ":
        return None
    m = _NOTEBOOK_BAR_RE.fullmatch(body.rstrip())
    if m is None or m["other"] is not None:  # (another program's use of the bar, its comment its own)
        return None
    elapsed = _clock(m["elapsed"]) if m["elapsed"] else None
    rate = float(m["rate"]) if m["rate"] else None
    if m["epoch"] is None:
        return Point("tqdm", int(m["n"]), int(m["total"]), None, {}, rate, "evaluation", elapsed=elapsed,
                     form="notebook")
    epochs = int(m["epochs"])
    return Point("tqdm", int(m["n"]), int(m["total"]), float(m["epoch"]), {}, rate, epochs=epochs, elapsed=elapsed,
                 form="notebook")


_READERS = (_bar_form, _tqdm, _rich, _hf, _megatron, _torchtitan, _deepspeed, _log_form, _counters,
            _notebook_bar, _loggable)
#: a cheap pre-filter: a line that can be progress has one of these
_HINT_RE = re.compile(r"%\|| updates \||progress: \d"
                      r"|it/s|s/it|\d\]|\b[Ii]ter(?:ation)?[\s:\[=]|\b[Ss]tep[:=]|global[_ ]step|^\s*\{|\b[Ee]poch"
                      r"|num_updates|[Ss]tep\s+\d|\bi = |\d/\d+ [\[━─]|^steps: \d|Train:\s+\d")
#: the generic reader's counters that the filter above misses, searched only where it found nothing (the lines
#: that are progress mostly match the first)
_HINT2_RE = re.compile(r"\b(?:[Uu]pdates?|it|[Bb]atch|[Ss]teps?|[Ii]ter\w*)['\"]?[\s:=#]+\d|^[\[(]\s*\d"
                       r"|\s[-|]\s+\d+\s+[-|]\s|[━╸]{3}|\d\s+(?:batches|steps|iters|iterations|updates)\b"
                       r"|\d ?epoch\b|^\s*\d+/\d+ - \d|\d/Unknown |total_timesteps|^\d+/\d+, train_loss: "
                       # (a count that leads its message before a pipe: llama2.c's train.py, f"{iter_num} |
                       # loss {lossf:.4f} | lr {lr:e} | {dt*1000:.2f}ms", behind a stamp where ts(1) or a logger adds
                       # one)
                       r"|Progress on:|(?:^|\s)\d+ \| [A-Za-z]"
                       # (a reinforcement-learning loop's "Episode 12/500 | Reward: ...": the forms' "episode")
                       r"|\bEpisode\s*:?\s*\d+\s*/\s*\d")
#: a line that starts with two counters and a date (the foundation-model-stack's report), apart: the filters above are
#: searched at every position of every line, this one is anchored
_COUNTERS_FIRST_RE = re.compile(r"\d+ \d+ \d{4}-\d\d-\d\d ")
#: a launcher's label of the task a line is from, which it writes once at the line's start: srun -l's "3: ", torch
#: elastic's "[rank3]:" and "[default3]:" (the redraws of a bar after the line's carriage returns are the same
#: task's; srun pads its labels to one width)
LABEL_RE = re.compile(r"(?: {0,4}(?P<task>\d{1,5}): |\[(?:rank|default)(?P<worker>\d+)\]: ?)")
LABEL_FIRST = frozenset("[ 0123456789")


def _may_be_progress(text: str) -> bool:
    """Whether a line may report progress (the cheap pre-filter of :func:`parse_line`), also where a launcher's label
    stands before the message the filters' anchored forms read from its start (srun -l's "0: 3/16, train_loss: ")."""
    if _HINT_RE.search(text) is not None or (text[:1].isdigit() and _COUNTERS_FIRST_RE.match(text)) \
            or _HINT2_RE.search(text) is not None:
        return True
    label = LABEL_RE.match(text) if text[:1] in LABEL_FIRST else None
    return label is not None and label.end() < len(text) and _may_be_progress(text[label.end():])


#: the stamps loggers print at a line's start that the ISO reader leaves: without a year, mmengine's and
#: detectron2's "08/09 14:02:41", the DARTS family's "01/03 02:18:25 PM", glog's and absl's "I0611 03:10:01.123456";
#: with one, OpenCLIP's "2024-02-02,11:20:05" and PaddlePaddle's "[2024/11/02 14:30:11]"
_SHORT_STAMP_RE = re.compile(
    r"\[?(?:(?P<mo>\d\d)/(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?: (?P<ap>[AP]M))?"
    r"|[IWEF](?P<gmo>\d\d)(?P<gd>\d\d) (?P<gh>\d\d):(?P<gmi>\d\d):(?P<gs>\d\d)\.(?P<gf>\d+)"
    r"|(?P<y>(?:19|20)\d\d)(?:-(?P<ymo>\d\d)-(?P<yd>\d\d),|/(?P<smo>\d\d)/(?P<sd>\d\d)[ ,])"
    r"(?P<yh>\d\d):(?P<ymi>\d\d):(?P<ys>\d\d)"
    # and the US date of Python's logging ("%m/%d/%Y %H:%M:%S", "%x %X"): "06/22/2025 09:14:05", "02/17/20 09:30:12"
    r"|(?P<umo>\d\d)/(?P<ud>\d\d)/(?P<uy>\d\d(?:\d\d)?)[ ,](?P<uh>\d\d):(?P<umi>\d\d):(?P<us>\d\d)"
    # and syslog's (moreutils' ts, journalctl), without a year, and date(1)'s, with one after the time and its zone
    # (a year only where the weekday or the zone says it is date(1)'s: ts(1)'s stamp before a count, "Feb 18
    # 01:54:05 1230 | loss 3.84", is no year 1230)
    r"|(?P<bw>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?(?P<bmo>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"(?P<bd>[ \d]\d) (?P<bh>\d\d):(?P<bmi>\d\d):(?P<bs>\d\d)(?P<bf>[.,]\d+)?"
    r"(?:(?P<bz> [A-Z]{1,5}| [+-]\d\d(?::?\d\d)?)? (?P<by>\d{4}))?)\b")
_MONTH_NUMBERS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                              "Nov", "Dec"), 1)}


_STAMP_FIRST = frozenset("[0123456789IWEF")


def _short_stamp(text: str, within: int = 0) -> tuple[float | None, tuple[int, int, int, int, int, float] | None]:
    """A line's leading stamp of :data:`_SHORT_STAMP_RE` (or the first in its first ``within`` characters, a logger's
    header): its epoch seconds when it says its year, else its month, day and time (the reader of the series gives
    it the year: :meth:`ntui.core.progress.series.Series.add`)."""
    m = _SHORT_STAMP_RE.search(text, 0, within) if within else _SHORT_STAMP_RE.match(text)
    if m is None:
        return None, None
    if m["uy"]:
        year = int(m["uy"]) + (2000 if len(m["uy"]) == 2 else 0)
        return local_epoch(year, int(m["umo"]), int(m["ud"]), int(m["uh"]), int(m["umi"]), int(m["us"]), None), None
    if m["y"]:
        return local_epoch(int(m["y"]), int(m["ymo"] or m["smo"]), int(m["yd"] or m["sd"]), int(m["yh"]),
                           int(m["ymi"]), int(m["ys"]), None), None
    if m["gmo"]:
        return None, (int(m["gmo"]), int(m["gd"]), int(m["gh"]), int(m["gmi"]), int(m["gs"]),
                      float("0." + m["gf"][:9]))
    if m["bmo"]:
        month, day = _MONTH_NUMBERS[m["bmo"]], int(m["bd"])
        if m["by"] and (m["bw"] or m["bz"]):
            return local_epoch(int(m["by"]), month, day, int(m["bh"]), int(m["bmi"]), int(m["bs"]), None), None
        return None, (month, day, int(m["bh"]), int(m["bmi"]), int(m["bs"]), float("0." + m["bf"][1:10]) if m["bf"]
                      else 0.0)
    hour = int(m["h"])
    if m["ap"]:
        hour = hour % 12 + (12 if m["ap"] == "PM" else 0)
    return None, (int(m["mo"]), int(m["d"]), hour, int(m["mi"]), int(m["s"]), 0.0)


_LEVEL = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|NOTICE|TRACE)"
#: one item of a logger's header, as Python's logging, loguru, glog/absl, hydra and the frameworks' own loggers
#: print it before the message: a date and time (ISO, with a comma, with slashes, US), a time alone, glog's
#: ``I1205 12:00:00.123456 4242 train.py:12]``, a level (bare, bracketed, or Python's ``INFO:name:``), a bracketed
#: logger name or ``file.py:12``, a bracket that starts with a level (``[INFO|DP=0|TP=0]``), a logger's name before
#: `` - ``
_HEAD_ITEM = (
    r"\[?\d{4}[-/]\d\d[-/]\d\d[ T,_]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"|\[?\d\d/\d\d(?:/\d{2,4})?[ ,]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: [AP]M)?\]?"
    r"|\[?\d+:\d\d:\d\d(?:[.,]\d+)?\]?"  # (a time, or the time elapsed: "0:41:03", "101:20:00")
    # syslog's time (moreutils' ts default "%b %d %H:%M:%S", journalctl's short form, logger's), with the host and
    # the program's tag journald and syslog write after it: "Dec 05 10:11:12 node01 python3[4121]: "
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"(?: [A-Za-z][\w.-]* [\w./-]+\[\d+\]:)?"
    # date(1)'s default (and awk's strftime() with no format, a wrapper's "$(date) $line"): "Sat Dec  5 10:11:12 UTC
    # 2026"
    r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d"
    r"(?: [A-Z]{1,5}| [+-]\d\d(?::?\d\d)?)? \d{4}"
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./-]+:\d+\]"
    rf"|{_LEVEL}:[\w.<>-]+:"
    rf"|\[{_LEVEL}(?:\|[^\]]*)?\]|\(?{_LEVEL}\)?(?=[\s:|\]-])|\|\s*{_LEVEL}\s*\|"
    r"|\[[A-Za-z_<][\w.<>-]*(?::\d+(?::[\w<>.-]+)?)?\]"  # (DeepSpeed's "[%(filename)s:%(lineno)d:%(funcName)s]")
    # (OLMo's rich handler's location, the logger's name and line with the local rank: "[olmo.train:816, rank=0]")
    r"|\[[A-Za-z_][\w.]*:\d+, rank=\d+\]"
    # ESPnet's and the speech toolkits' logging format, "%(asctime)s (%(module)s:%(lineno)d) %(levelname)s:"
    r"|\([A-Za-z_][\w.]*:\d+\)"
    r"|[A-Za-z_<][\w.<>-]*(?::[\w<>]+)*(?::\d+)?(?= - )"
    rf"|[A-Za-z_][\w.]*(?= {_LEVEL}\b)"  # (a logger's name before its level: PaddlePaddle's "ppocr INFO: ")
    r"|[A-Za-z_<][\w.<>-]*(?::[\w<>]+)*:\d+(?=\t)"  # (a tab-separated header's "host:0", "module:979": OLMo's)
    # (the same with its tabs turned into spaces, as a terminal pastes them: "host:0  olmo.train:943  INFO    ", an
    # item before the next "name:N" item or the level only, not a message's "epoch:3  loss")
    rf"|[A-Za-z_<][\w.<>-]*(?::[\w<>]+)*:\d+(?=\s+(?:[A-Za-z_][\w.-]*:\d+\s|{_LEVEL}\s))"
    # the process's rank of the world's after the bracketed "[file.py:N]", icefall's and k2's setup_logger:
    # "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] ({rank}/{world_size}) %(message)s" (not a count of the
    # message's; after another bracket, a time's, "(3/100)" is the loop's own count)
    r"|(?:(?<=\.py:\d\] )|(?<=\.py:\d\d\] )|(?<=\.py:\d{3}\] )|(?<=\.py:\d{4}\] ))\(\d{1,5}/\d{1,5}\)(?= )"
)
_HEADER_RE = re.compile(rf"(?:(?:{_HEAD_ITEM})(?:\s*[-|:]\s+|:|\s+|(?=\[)|(?<=[:\]|])))+")
#: what a header must hold to be one: a time or a level (not a line that starts with a bracketed word)
_HEADER_SAYS_RE = re.compile(rf"\d\d:\d\d:\d\d|{_LEVEL}")
_HEADER_FIRST = frozenset("[(|0123456789DIWEFCNTJMASO")  # (a level's, a month's, a day's first letter)
_STAMP_THIRD = frozenset("0123456789-/:")
_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "FATAL", "NOTICE", "TRACE")
_MONTHS_DAYS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Mon", "Tue", "Wed",
                "Thu", "Fri", "Sat", "Sun")


#: a header that leads with its level and the time in brackets and ends in " >> " before the message (LLaMA-Factory's
#: logging formatter, "[%(levelname)s|%(asctime)s] %(name)s:%(lineno)s >> ", its older "[INFO|trainer.py:2134] <date>
#: >> "): all of it up to the arrows
_ARROW_HEADER_RE = re.compile(rf"\[{_LEVEL}\|")
_ARROW_HEADER_MAX = 160
#: a log exporter's entry header: its severity's first letter and its RFC 3339 UTC time, to the nanosecond (Cloud
#: Logging's entries as exported, "E 2020-11-20T07:54:00.424000021Z " before each line a container wrote to stderr)
_SEVERITY_LETTERS = frozenset("DIWENCAF")
_LETTER_STAMP_RE = re.compile(r"[DIWENCAF] \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d) ")


def unheader(text: str) -> str:
    """``text`` without a logger's header before its message (:data:`_HEAD_ITEM`, one or several), as it was where
    it has none, or where nothing follows it."""
    first = text[:1]
    if text[1:2] == " " and first in _SEVERITY_LETTERS and (lettered := _LETTER_STAMP_RE.match(text)) is not None \
            and lettered.end() < len(text):
        return text[lettered.end():]
    if first not in _HEADER_FIRST or (first.isdigit() and text[2:3] not in _STAMP_THIRD) \
            or (first.isalpha() and not text[1:2].isdigit() and not text.startswith(_LEVELS)
                and (text[3:4] != " " or not text.startswith(_MONTHS_DAYS))):
        return text  # (a date or a time has a digit, a "-", "/" or ":" third: not a bar's "45%|"; a word a level)
    if first == "[" and (cut := text.find(" >> ", 0, _ARROW_HEADER_MAX)) > 0 and _ARROW_HEADER_RE.match(text):
        return text[cut + 4:].lstrip() or text  # (the message after a level-led header's " >> ")
    m = _HEADER_RE.match(text)
    if m is None or m.end() >= len(text) or _HEADER_SAYS_RE.search(text, 0, m.end()) is None:
        return text
    if "]" in text[:m.end()] and (tag := _PHASE_TAG_RE.search(text, 0, m.end())) is not None:
        return text[tag.start():]  # (a bracketed evaluation's tag is the message's first word, no logger's name)
    return text[m.end():]


#: a message's leading tag of an evaluation's phase, in brackets as a logger's name would be (PaddleClas's
#: "[Eval][Epoch {}][Iter: {}/{}]" beside its "[Train][Epoch {}/{}][Iter: {}/{}]"): the message's, not its header's
_PHASE_TAG_RE = re.compile(r"\[(?i:val|valid|validation|validate|eval|evaluation|evaluate|test|testing)\]")


def _ansi(m: re.Match[str]) -> str:
    return UP if m.group() == "\x1b[A" else ""


#: a number printed inside its type's repr: a torch tensor's ("tensor(2.3100, device='cuda:0',
#: grad_fn=<NllLossBackward0>)", a loop's print of its loss tensor) and NumPy 2's scalars' ("np.float64(0.123)")
_WRAPPED_NUM_RE = re.compile(
    rf"\b(?:tensor|(?:np|numpy)\.(?:float|int|uint)(?:16|32|64))\((?P<v>{NUM})(?:,[^()]*)?\)")


def unwrap_numbers(text: str) -> str:
    """``text`` with each number printed inside its type's repr (:data:`_WRAPPED_NUM_RE`) as the number alone."""
    return _WRAPPED_NUM_RE.sub(r"\g<v>", text)


def parse_line(text: str, pattern: Pattern | None = None) -> Point | None:
    """The progress a line reports (see the module docstring), or None."""
    up = "\x1b" in text
    if up:
        text = _ANSI_RE.sub(_ansi, text)
        up = UP in text
    if "tensor(" in text or "float" in text:
        text = unwrap_numbers(text)
    if pattern is not None:
        point = pattern.parse(text)
        if point is not None:
            return point
    if not _may_be_progress(text):
        return None
    if "\r" in text:  # an unfinished bar's redraws: the last segment that says something
        for piece in reversed(text.split("\r")):
            point = parse_line(piece)
            if point is not None:
                return point
        return None
    for msg in read_line(text):  # the line reader's messages: prefixes off (their time kept), glued ones apart
        # a logger's header off (its time is read from the message below); a bar is found anywhere on its line
        body = msg.text
        if body[:1] in _HEADER_FIRST and "%|" not in body:
            body = unheader(body)
        plain = body.replace(UP, "") if up else body
        for read in _READERS:
            point = read(body if read is _tqdm else plain)  # only a bar says it is an inner one
            if point is not None:
                break
        else:
            continue
        stamp = iso_stamp(msg.text, 80) if point.format != "tqdm" else None
        stamp = stamp if stamp is not None else msg.prefix.time
        clock = None
        if stamp is None and point.format != "tqdm" and msg.text[:1] in _STAMP_FIRST:
            stamp, clock = _short_stamp(msg.text)
        if stamp is None and clock is None and body is not msg.text and point.format != "tqdm":
            stamp, clock = _short_stamp(msg.text, len(msg.text) - len(body))  # in the header taken off
        rank = msg.prefix.rank
        if rank is None:  # torch elastic's --tee/--redirects label of the worker alone ("[default1]:", "[host:1]:"):
            rank = msg.prefix.local_rank  # its local rank tells its lines from the other workers' it interleaves with
        if rank is None and point.format != "tqdm" and "[Rank " in msg.text:
            rank = _deepspeed_rank(msg.text[:len(msg.text) - len(body) + 12])
        if rank is None and point.format == "log" and ("Rank" in point.metrics or "rank" in point.metrics
                                                        or "rank_id" in point.metrics):
            # a loop that prints its rank among its fields, each rank its own line (DeepSpeed-Chat's "Epoch: 0,
            # Step: 10, Rank: 3, loss = ...", PaddleNLP's examples' "..., rank_id: 3, loss: ..."): the line's rank,
            # not a metric
            metrics = dict(point.metrics)
            said = metrics.pop("Rank", None)
            said = metrics.pop("rank", None) if said is None else said
            said = metrics.pop("rank_id", None) if said is None else said
            if said is not None and said >= 0 and said == int(said):
                rank, point = int(said), point.but(metrics=metrics)
        if rank is None and point.format == "tqdm" and (said_bar := _bar_rank(msg.text)) is not None:
            # a bar whose description names its rank or device, every rank drawing its own on the same stream
            # (tqdm(desc=f"Training (GPU={rank})"), "[rank 3] train", "Rank 1 epoch 2"): the bar's rank
            rank = said_bar
        if rank is None and point.format == "log" and "Device=xla:" in body \
                and (ordinal := _XLA_ORDINAL_RE.search(body)) is not None:
            rank = int(ordinal["ordinal"])  # (the process's ordinal after its device: :data:`_XLA_ORDINAL_RE`)
        if rank is None and point.format == "log" and ("ank" in body[:7] or "[GPU" in body[:5]) \
                and (said_rank := _LEADING_RANK_RE.match(body)) is not None:
            # a loop that starts its line with its rank, each rank its own line ("rank 3 | epoch 0 | step 52 | loss
            # 0.25", "[RANK 3] Epoch 4 | ...", "Rank 1: step 10, loss ...", PyTorch's DDP examples' "[GPU3] Epoch 4
            # | ...", the process's rank after the word GPU): the line's rank
            rank = int(said_rank["rank"] or said_rank["gpu"])
        if stamp is None and clock is None and rank is None:
            return point
        return point.but(time=stamp, rank=rank, clock=clock)
    return None


#: torch_xla's test_utils.print_training_update()/print_test_update(): "| Training Device={} Epoch={} Step={} Loss=..."
#: with the device as _get_device_spec(device) gives it, "{device}/{ordinal}" where the process has an ordinal
#: ("xla:1/0", "xla:0/5"): every process prints its own line, the ordinal its rank
_XLA_ORDINAL_RE = re.compile(r"\bDevice=xla:\d+/(?P<ordinal>\d+)\b")
#: a rank or device a bar's description names: "(GPU=2)", "[rank 3]", "Rank 1", "gpu:0", "cuda:1", "device 2"
_BAR_RANK_RE = re.compile(r"(?<![A-Za-z])(?:rank|gpu|cuda|device)[ :=#]?\s?(?P<rank>\d{1,4})(?![\d.%/])", re.I)


def _bar_rank(text: str) -> int | None:
    """The rank the description of the line's last bar names, or None: the last named before its "%|", after the
    previous redraw's bar."""
    pct = text.rfind("%|")
    if pct < 0:
        return None
    said = None
    for m in _BAR_RANK_RE.finditer(text, text.rfind("%|", 0, pct) + 1, pct):
        said = int(m["rank"])
    return said


#: a rank that starts a line, as a script prints its own: "rank 3 | ", "[RANK 3] ", "Rank 1: ", "[rank 0]:", "[GPU3] "
_LEADING_RANK_RE = re.compile(r"\s*(?:\[?(?:rank|Rank|RANK)[ :=#]?\s*(?P<rank>\d+)\]?|\[GPU(?P<gpu>\d+)\])"
                              r"(?: ?[|:,\]-] ?| )")


#: DeepSpeed's log_dist labels each message with the rank that logs it ("[Rank 3] step=40, skipped=0, ...";
#: "[Rank -1]" before torch.distributed is set up): where several ranks log, one rank's lines are the run's
_DS_RANK_RE = re.compile(r"\[Rank (?P<rank>-?\d+)\] ")


def _deepspeed_rank(text: str) -> int | None:
    """The rank DeepSpeed's label names in the header of a message, or None (no label, or rank -1)."""
    m = _DS_RANK_RE.search(text)
    return int(m["rank"]) if m is not None and not m["rank"].startswith("-") else None


#: DeepSpeed's log_dist label before a message ("[Rank 0] Loss: 8.68"; "[Rank -1]" before torch.distributed is set
#: up): the whole label, at the message's start
_DS_LABEL_RE = re.compile(r"\[Rank (?P<rank>-?\d+)\] ")


def rank_label(text: str) -> tuple[int | None, str]:
    """A message's leading rank label and the message without it: DeepSpeed's log_dist "[Rank 0] " (HelloDeepSpeed's
    ``log_dist(f"Loss: {loss:.4f}", ranks=[0])``), a script's own "rank 3 | ", "[RANK 3] " (:data:`_LEADING_RANK_RE`);
    ``(None, text)`` where it starts with none (or DeepSpeed's rank -1: no rank yet)."""
    if "ank" not in text[:8] and "ANK" not in text[:8]:
        return None, text
    if (m := _DS_LABEL_RE.match(text)) is not None or (m := _LEADING_RANK_RE.match(text)) is not None:
        rank = int(m["rank"])
        return (rank if rank >= 0 else None), text[m.end():]
    return None, text
