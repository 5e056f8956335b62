"""The study corpora of what users bring (``tests/data/corpus/``): their indexes, read and checked in one place.

Each corpus is a folder of fixtures written by us in the *form* of a public source (its prefixes, cuts,
interleaving, layout), never its text, and one or more ``index*.yaml`` files: a list of entries, each naming its
fixture by ``id``, the public ``source`` it reproduces, what a right reading is (``expect...``) and its ``split``:
every fifth entry of an index is ``heldout`` (chosen when the entry was written, before any tuning), the others
``study``. An index named ``index-*-heldout.yaml`` is a measuring set written apart by someone who tunes nothing: all
its entries are ``heldout``. A change may be tuned on the study part only; the benchmarks score both parts apart.
A held-out entry whose form was once used to choose what to change is ``spent`` (its ``spent`` field says how): it
keeps its place in its index, is scored in a row of its own, and no longer counts as held out.

* ``failure-logs/``: failure logs (``ntui triage``): ``cause_kind``, ``expect_any``, ``first_rank``, ``cut``;
* ``progress-logs/``: training logs (``ntui progress``): ``expect: {step, total, finished, restarts, loss}``;
* ``sbatch-scripts/``: sbatch scripts (``ntui import`` / ``ntui check``): ``expect`` (the import) and ``traps``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CORPORA = Path(__file__).resolve().parents[1] / "data" / "corpus"
SPLITS = ("study", "heldout", "spent")
#: The fixture's file name endings each corpus uses (a folder of rank files is allowed for failure logs).
SUFFIXES = {"failure-logs": (".log", ""), "progress-logs": (".log",), "sbatch-scripts": (".sh",)}
#: The fields every entry of each corpus has (beyond id, source, split).
FIELDS = {
    "failure-logs": ("project", "launcher", "form", "cause_kind", "cause", "expect_any", "first_rank", "cut"),
    "progress-logs": ("framework", "form", "unit", "expect"),
    "sbatch-scripts": ("origin", "form", "expect", "traps"),
}


@dataclass(frozen=True)
class Entry:
    """One fixture of a corpus: its index entry and where its file (or folder of files) is."""

    corpus: str
    index: Path
    fields: Mapping[str, Any]
    path: Path

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    @property
    def split(self) -> str:
        return str(self.fields["split"])

    @property
    def files(self) -> list[Path]:
        """The fixture's files: the one file, or every file of its folder (``rank-N.out``, ``batch.out``)."""
        return sorted(self.path.iterdir()) if self.path.is_dir() else [self.path]


def _fixture(corpus: str, directory: Path, ident: str) -> Path:
    for suffix in SUFFIXES[corpus]:
        path = directory / f"{ident}{suffix}"
        if path.exists():
            return path
    return directory / f"{ident}{SUFFIXES[corpus][0]}"


def entries(corpus: str) -> Iterator[Entry]:
    """Every entry of ``corpus``, index by index, in the order written."""
    directory = CORPORA / corpus
    for index in sorted(directory.glob("index*.yaml")):
        for fields in yaml.safe_load(index.read_text()) or []:
            yield Entry(corpus, index, fields, _fixture(corpus, directory, str(fields.get("id"))))


def problems(entry: Entry, position: int) -> list[str]:
    """What is wrong with one entry (``position``: its 1-based place in its index): missing fields, a source that
    is not an address, a split that is not every fifth entry's, a fixture that is not there."""
    where = f"{entry.index.name} entry {position} ({entry.fields.get('id')})"
    said = [f"{where}: no {name}" for name in ("id", "source", "split", *FIELDS[entry.corpus])
            if name not in entry.fields]
    source = str(entry.fields.get("source", ""))
    if not source.startswith("https://"):
        said.append(f"{where}: source {source!r} is not an address")
    want = "heldout" if position % 5 == 0 or entry.index.name.endswith("-heldout.yaml") else "study"
    split = entry.fields.get("split")
    if split == "spent" and want == "heldout":
        if not str(entry.fields.get("spent", "")).strip():
            said.append(f"{where}: split 'spent' without a spent field saying how its form was used")
    elif split != want:
        said.append(f"{where}: split {split!r}, every fifth entry is heldout ({want} here)")
    if not entry.path.exists():
        said.append(f"{where}: no fixture {entry.path.name}")
    elif not entry.files or not all(f.is_file() and f.stat().st_size > 0 for f in entry.files):
        said.append(f"{where}: fixture {entry.path.name} is empty")
    return said


def score_table(splits: Sequence[str], grades: Sequence[str], kinds: Sequence[str], what: str = "entries",
                extra_header: str = "", extra: Callable[[list[int]], str] = lambda part: "") -> list[str]:
    """The benchmarks' table: for the study part, the held-out part and all, how many entries got each of ``kinds``
    and the share right. ``splits``/``grades``: each graded entry's split and grade, in one order; ``extra``: more
    columns for the entries of a part (their indices), under ``extra_header``."""
    lines = [f"{'split':8} {what:>7} " + " ".join(f"{k:>7}" for k in kinds) + "   right %" + extra_header]
    for split in (*SPLITS, "all"):
        part = [i for i, s in enumerate(splits) if split == "all" or s == split]
        if part:
            n = Counter(grades[i] for i in part)
            lines.append(f"{split:8} {len(part):7} " + " ".join(f"{n[k]:7}" for k in kinds)
                         + f"   {100 * n['right'] / len(part):6.1f}" + extra(part))
    return lines
