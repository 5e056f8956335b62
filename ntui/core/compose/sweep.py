"""The ``sweep:`` section: many runs of one preset as one Slurm job array.

A preset with ``sweep:`` renders one script with ``#SBATCH --array=0-(N-1)[%P]``; array task ``i`` runs with the
values of task ``i``::

    sweep:
      grid:                 # every combination (the first parameter varies slowest); or
        lr: ["3e-4", "1e-4"]  #   zip: equal-length lists, element by element; or
        seed: ["1", "2", "3"] #   list: [{lr: "3e-4", seed: "1"}, ...] explicit items
      parallel: 2           # at most 2 tasks at once (--array=...%2)
      metric: 'loss=([0-9.]+)'  # what `ntui sweep` shows: group 1 (or the match) of the last matching line
    args: ["--lr", "{lr}", "--seed", "{seed}"]

**Placeholders** ``{name}`` name a parameter; they are read in ``args`` and in ``env`` values (the program's
words and its environment: everything else is the same for every array task, rule W6). ``{{`` and ``}}`` are a
literal brace (as in Python's ``str.format``); any other brace in those keys is refused (W4), so a typo never
reaches a run. Without a ``sweep:`` section braces are plain text, as before.

**How a value reaches the program** (W10): the submission writes the manifest next to the script
(:mod:`ntui.core.jobfiles.manifest`: task index -> the values as written, NUL-delimited); the task's batch shell
loads its own values into the bash array ``NTUI_SWEEP`` with ``mapfile -d ''`` and each templated word is
rendered as single-quoted literal text joined to ``"${NTUI_SWEEP[j]}"`` (:meth:`Sweep.shell_word`): a double-
quoted parameter expansion is replaced by the value once and never split, globbed or evaluated, so spaces,
quotes, ``$()``, backquotes and newlines arrive verbatim. Values never enter the script's text, so the script is
the same for every task, and a resubmission of some tasks reads the same manifest.

This module is below the rule table: it knows the section's shape (:class:`SweepDraft`, what the rules judge) and
the typed result (:class:`Sweep`, what the renderer uses), nothing of YAML files.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ntui.core.jobfiles.manifest import SHELL_ARRAY, Manifest, encode_manifest, manifest_path
from ntui.core.textsafe import ellipsize

__all__ = [
    "KINDS",
    "NAME_RE",
    "SLURM_MAX_ARRAY_SIZE",
    "SWEEP_KEYS",
    "Ref",
    "Sweep",
    "SweepDraft",
    "draft_of",
    "expand",
    "parse_template",
    "placeholder_refs",
    "task_count",
]

KINDS = ("grid", "zip", "list")
SWEEP_KEYS = (*KINDS, "parallel", "metric")
#: A parameter name: what ``{name}`` may hold.
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: Slurm's own bound on MaxArraySize (slurm.conf(5)): no site allows more tasks; the site's own value is checked
#: before sbatch (:mod:`ntui.core.compose.sitecheck`). Counted before expanding, so a typo cannot hang a render.
SLURM_MAX_ARRAY_SIZE = 4_000_001


@dataclass(frozen=True)
class Ref:
    """A ``{name}`` placeholder in a template."""

    name: str


def parse_template(text: str) -> tuple[tuple[str | Ref, ...], tuple[str, ...]]:
    """``"--lr={lr}"`` -> ``(("--lr=", Ref("lr")), ())``; the second item lists what is wrong (a brace that
    opens no placeholder, a lone ``}``), each message saying where and how to write a literal brace."""
    parts: list[str | Ref] = []
    errors: list[str] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            if text.startswith("{{", i):
                buf.append("{")
                i += 2
                continue
            m = NAME_RE.match(text, i + 1)
            if m is not None and text.startswith("}", m.end()):
                if buf:
                    parts.append("".join(buf))
                    buf = []
                parts.append(Ref(m.group(0)))
                i = m.end() + 1
                continue
            close = text.find("}", i + 1)
            shown = text[i:close + 1] if 0 < close - i <= 30 else ellipsize(text[i:], 13)
            errors.append(f"{shown!r} at character {i + 1} is not a placeholder ({{name}}, a sweep parameter); "
                          "write {{ and }} for literal braces")
            buf.append(ch)
            i += 1
            continue
        if ch == "}":
            if text.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            errors.append(f"a lone '}}' at character {i + 1}; write }}}} for a literal brace")
        buf.append(ch)
        i += 1
    if buf:
        parts.append("".join(buf))
    return tuple(parts), tuple(errors)


def placeholder_refs(text: str, names: Sequence[str]) -> tuple[str, ...]:
    """The parameters of ``names`` that ``text`` names as ``{name}`` where no placeholder may be (W6): a looser
    look than :func:`parse_template`, since those keys may hold braces of their own (shell code: ``${lr}`` is a
    shell expansion, not a placeholder)."""
    if not names or "{" not in text:
        return ()
    pattern = re.compile(r"(?<![{$])\{(" + "|".join(re.escape(n) for n in names) + r")\}(?!\})")
    return tuple(dict.fromkeys(m.group(1) for m in pattern.finditer(text)))


def task_count(kind: str, lengths: Sequence[int]) -> int:
    """Tasks of a grid (product) or zip (the common length; the shortest if they differ, W3) or list."""
    if not lengths:
        return 0
    if kind == "grid":
        return math.prod(lengths)
    return min(lengths)


def expand(kind: str, params: Sequence[tuple[str, Sequence[str]]],
           items: Sequence[Mapping[str, str]] = ()) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(names, task values) of a grid, zip or list (already checked by the rules)."""
    if kind == "list":
        names = tuple(items[0]) if items else ()
        return names, tuple(tuple(item[n] for n in names) for item in items)
    names = tuple(n for n, _ in params)
    columns = [tuple(values) for _, values in params]
    if kind == "grid":
        return names, tuple(itertools.product(*columns))
    return names, tuple(zip(*columns, strict=False))


@dataclass(frozen=True)
class SweepDraft:
    """The ``sweep:`` section after parsing, with what the W rules need to judge it."""

    kinds: tuple[str, ...] = ()
    """Which of grid / zip / list it has."""
    names: tuple[str, ...] = ()
    lengths: tuple[tuple[str, int], ...] = ()
    """(parameter, how many values) of a grid or zip."""
    count: int = 0
    shape_errors: tuple[tuple[str, str], ...] = ()
    """(dotted key, message) for what is not a parameter list (W1)."""
    unsweepable: tuple[tuple[str, str], ...] = ()
    """(dotted key, parameter) for a parameter named after a key every task shares (W6)."""
    parallel: int | None = None
    parallel_text: str | None = None
    metric: str | None = None
    uses: tuple[tuple[str, str], ...] = ()
    """(dotted key, text) of the keys placeholders are read in: args, env values."""
    elsewhere: tuple[tuple[str, str], ...] = ()
    """(dotted key, text) of every other text of the preset (sbatch, launcher, script, logs, setup)."""
    array_set: bool = False
    """sbatch.array is in the preset."""
    kind: str = ""
    params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(parameter, its values as written) of a grid or zip."""
    items: tuple[tuple[tuple[str, str], ...], ...] = ()
    """The items of a list, each (parameter, value) pairs."""

    def build(self) -> Sweep:
        """The typed sweep (call once the rules found no error); its tasks are expanded when first used."""
        if self.kind == "list":
            names = tuple(n for n, _ in self.items[0]) if self.items else ()
            columns = tuple(tuple(v for _, v in item) for item in self.items)
        else:
            names = tuple(n for n, _ in self.params)
            columns = tuple(values for _, values in self.params)
        return Sweep(self.kind, names, columns, self.parallel, self.metric or "")


@dataclass(frozen=True)
class Sweep:
    """A checked sweep: the parameters, every task's values (as written), the concurrency cap, the metric.

    ``columns`` is what the preset wrote: each parameter's values (grid, zip) or each item's values (list);
    :attr:`tasks` (task index -> values in :attr:`names` order) is expanded on first use, so checking a
    large grid costs nothing."""

    kind: str
    names: tuple[str, ...]
    columns: tuple[tuple[str, ...], ...]
    parallel: int | None = None
    metric: str = ""

    @functools.cached_property
    def tasks(self) -> tuple[tuple[str, ...], ...]:
        if self.kind == "list":
            return self.columns
        return expand(self.kind, tuple(zip(self.names, self.columns, strict=True)))[1]

    @property
    def size(self) -> int:
        if self.kind == "list":
            return len(self.columns)
        return task_count(self.kind, [len(c) for c in self.columns])

    @property
    def array(self) -> str:
        """The ``--array`` value: ``0-5%2``."""
        last = self.size - 1
        return (f"0-{last}" if last > 0 else "0") + (f"%{self.parallel}" if self.parallel else "")

    @property
    def manifest(self) -> Manifest:
        return Manifest(self.names, self.tasks, self.metric)

    def manifest_bytes(self) -> bytes:
        return encode_manifest(self.manifest)

    def manifest_path(self, log_dir: str, stem: str) -> str:
        return manifest_path(log_dir, stem, self.manifest_bytes())

    def substitute(self, text: str, index: int) -> str:
        """``text`` with task ``index``'s values in place of its placeholders (what the program receives)."""
        values = dict(zip(self.names, self.tasks[index], strict=True))
        parts, _ = parse_template(text)
        return "".join(values[p.name] if isinstance(p, Ref) else p for p in parts)

    def shell_word(self, text: str) -> str:
        """One shell word for a template: literal text single-quoted, each placeholder ``"${NTUI_SWEEP[j]}"``
        (expanded once by the batch shell, never re-parsed). A template without placeholders is its plain
        ``shlex.quote`` (``{{`` -> ``{``)."""
        parts, _ = parse_template(text)
        words: list[str] = []
        for p in parts:
            if isinstance(p, Ref):
                words.append(f'"${{{SHELL_ARRAY}[{self.names.index(p.name)}]}}"')
            elif p:
                words.append(shlex.quote(p))
        return "".join(words) or "''"


_SECTION_PREFIXES = ("sbatch.", "launcher.", "container.", "logs.", "monitor.", "nccl.")
_Path = tuple[str, ...]


def _value(path: _Path, value: object, raw: Mapping[_Path, str], errors: list[tuple[str, str]]) -> str | None:
    key = ".".join(path)
    if isinstance(value, (dict, list)) or value is None:
        what = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else "nothing"
        errors.append((key, f"a parameter value is one string or number, kept as written; got {what}"))
        return None
    text = raw.get(path)
    if text is None:
        text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if "\x00" in text:
        errors.append((key, "contains a NUL byte, which no program argument can carry"))
        return None
    return text


def _name_ok(path: _Path, name: object, errors: list[tuple[str, str]], unsweepable: list[tuple[str, str]]) -> bool:
    text = str(name)
    if text.startswith(_SECTION_PREFIXES) or text in ("script", "setup", "logs.dir"):
        unsweepable.append((".".join(path), text))
        return False
    if not NAME_RE.fullmatch(text):
        errors.append((".".join(path), f"parameter name {text!r}: letters, digits, _ and - (not first), as {{name}} "
                       "writes it"))
        return False
    return True


def draft_of(section: object, raw: Mapping[_Path, str], *, uses: Sequence[tuple[str, str]] = (),
             elsewhere: Sequence[tuple[str, str]] = (), array_set: bool = False) -> SweepDraft:
    """Parse the ``sweep:`` mapping (``raw``: each scalar's text as written, by key path) into what the rules
    judge. Shape problems are collected (W1), not raised."""
    errors: list[tuple[str, str]] = []
    unsweepable: list[tuple[str, str]] = []
    if not isinstance(section, dict):
        errors.append(("sweep", "expected a mapping with one of grid, zip or list (and parallel, metric)"))
        return SweepDraft(shape_errors=tuple(errors), uses=tuple(uses), elsewhere=tuple(elsewhere),
                          array_set=array_set)
    section = {k: v for k, v in section.items() if v is not None and v is not False}  # null/false: drop it
    for key in section:
        if key not in SWEEP_KEYS:
            errors.append((f"sweep.{key}", f"unknown key; a sweep has {', '.join(SWEEP_KEYS)}"))
    kinds = tuple(k for k in KINDS if k in section)
    kind = kinds[0] if kinds else ""  # two given: W1 refuses; the first is read so the other rules still judge it
    params: list[tuple[str, tuple[str, ...]]] = []
    items: list[tuple[tuple[str, str], ...]] = []
    names: tuple[str, ...] = ()
    lengths: list[tuple[str, int]] = []
    if kind in ("grid", "zip"):
        body = section[kind]
        if not isinstance(body, dict):
            errors.append((f"sweep.{kind}", f"expected a mapping: parameter -> list of values, e.g. {kind}: "
                           '{lr: ["3e-4", "1e-4"]}'))
        else:
            for name, values in body.items():
                path = ("sweep", kind, str(name))
                if not _name_ok(path, name, errors, unsweepable):
                    continue
                if not isinstance(values, list):
                    errors.append((".".join(path), f"expected a list of values, e.g. [{_one(values, raw, path)}]"))
                    continue
                texts = [_value((*path, str(i)), v, raw, errors) for i, v in enumerate(values)]
                params.append((str(name), tuple(t for t in texts if t is not None)))
                lengths.append((str(name), len(values)))
            names = tuple(n for n, _ in params)
    elif kind == "list":
        body = section["list"]
        if not isinstance(body, list):
            errors.append(("sweep.list", "expected a list of items, each a mapping parameter -> value"))
        else:
            first: tuple[str, ...] | None = None
            for i, item in enumerate(body):
                path = ("sweep", "list", str(i))
                if not isinstance(item, dict) or not item:
                    errors.append((".".join(path), "each item is a mapping parameter -> value, e.g. "
                                   '{lr: "3e-4", seed: "1"}'))
                    continue
                pairs: list[tuple[str, str]] = []
                for name, value in item.items():
                    if not _name_ok((*path, str(name)), name, errors, unsweepable):
                        continue
                    text = _value((*path, str(name)), value, raw, errors)
                    if text is not None:
                        pairs.append((str(name), text))
                keys = tuple(n for n, _ in pairs)
                if first is None:
                    first = keys
                elif set(keys) != set(first):
                    missing = sorted(set(first) - set(keys))
                    extra = sorted(set(keys) - set(first))
                    said = "; ".join(x for x in (f"lacks {', '.join(missing)}" if missing else "",
                                                 f"adds {', '.join(extra)}" if extra else "") if x)
                    errors.append((".".join(path), f"every item names the same parameters as item 0 "
                                   f"({', '.join(first)}): this one {said}"))
                    continue
                items.append(tuple(sorted(pairs, key=lambda p: first.index(p[0]) if first else 0)))
            names = first or ()
    count = len(items) if kind == "list" else task_count(kind, [n for _, n in lengths])
    parallel_raw = section.get("parallel")
    parallel: int | None = None
    parallel_text: str | None = None
    if parallel_raw is not None:
        parallel_text = raw.get(("sweep", "parallel"), str(parallel_raw)).strip()
        if (isinstance(parallel_raw, int) and not isinstance(parallel_raw, bool)
                and re.fullmatch(r"[1-9][0-9]*", parallel_text)):
            parallel = parallel_raw
    metric = section.get("metric")
    metric_text = None if metric is None else raw.get(("sweep", "metric"), str(metric))
    return SweepDraft(kinds=kinds, names=names, lengths=tuple(lengths), count=count, shape_errors=tuple(errors),
                      unsweepable=tuple(unsweepable), parallel=parallel, parallel_text=parallel_text,
                      metric=metric_text, uses=tuple(uses), elsewhere=tuple(elsewhere), array_set=array_set,
                      kind=kind, params=tuple(params), items=tuple(items))


def _one(values: object, raw: Mapping[_Path, str], path: _Path) -> str:
    text = raw.get(path, str(values))
    return f'"{text}"' if len(text) < 30 else '"..."'
