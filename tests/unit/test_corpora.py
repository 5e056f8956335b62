"""The study corpora (``tests/data/corpus/``) are whole: every entry names a public source, a fixture that is
there, the fields its benchmark scores, and the held-out split that no change is tuned on (every fifth entry)."""

from __future__ import annotations

from collections import Counter

import pytest

from ntui.core.logs.finding import KINDS
from tests.support.corpus import CORPORA, FIELDS, entries, problems

PRESENT = sorted(c for c in FIELDS if (CORPORA / c).is_dir())


@pytest.mark.parametrize("corpus", PRESENT)
def test_every_entry_has_its_source_fixture_fields_and_split(corpus: str) -> None:
    said: list[str] = []
    position: Counter[str] = Counter()
    for entry in entries(corpus):
        position[entry.index.name] += 1
        said += problems(entry, position[entry.index.name])
    assert not said, "\n".join(said)
    ids = [e.id for e in entries(corpus)]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]


@pytest.mark.parametrize("corpus", PRESENT)
def test_every_fixture_is_in_an_index(corpus: str) -> None:
    indexed = {e.path.name for e in entries(corpus)}
    on_disk = {p.name for p in (CORPORA / corpus).iterdir() if not p.name.startswith(("index", "README"))}
    assert on_disk <= indexed, sorted(on_disk - indexed)


def test_the_failure_corpus_is_large_enough_and_names_causes_triage_knows() -> None:
    got = list(entries("failure-logs"))
    assert len(got) >= 80 and sum(e.split == "heldout" for e in got) >= 16, len(got)
    kinds = {str(e.fields["cause_kind"]) for e in got}
    assert kinds <= {*KINDS, "none_visible"}, kinds - {*KINDS, "none_visible"}
    for e in got:
        expect = e.fields["expect_any"]
        assert isinstance(expect, list) and expect and all(s == s.lower() for s in expect), (e.id, expect)
        assert e.fields["first_rank"] is None or isinstance(e.fields["first_rank"], int), e.id


def test_the_index_checks_can_fail(tmp_path: object) -> None:
    from pathlib import Path

    from tests.support.corpus import Entry

    index = Path(str(tmp_path)) / "index.yaml"
    bad = Entry("failure-logs", index, {"id": "x-005", "source": "github issue", "split": "study"},
                Path(str(tmp_path)) / "x-005.log")
    said = problems(bad, 5)
    assert any("not an address" in s for s in said) and any("every fifth" in s for s in said)
    assert any("no fixture" in s for s in said) and any("no cause_kind" in s for s in said)


def test_a_spent_entry_keeps_its_place_and_must_say_how_it_was_spent(tmp_path: object) -> None:
    from pathlib import Path

    from tests.support.corpus import Entry

    base = {"id": "x-010", "source": "https://example.org/t/1", "project": "p", "launcher": "torchrun", "form": "f",
            "cause_kind": "oom", "cause": "c", "expect_any": ["x"], "first_rank": 0, "cut": False}
    fixture = Path(str(tmp_path)) / "x-010.log"
    fixture.write_text("a line\n")
    index = Path(str(tmp_path)) / "index.yaml"
    spent = Entry("failure-logs", index, {**base, "split": "spent", "spent": "its NCCL prefix chose a change"},
                  fixture)
    assert problems(spent, 10) == []
    unexplained = Entry("failure-logs", index, {**base, "split": "spent"}, fixture)
    assert any("without a spent field" in s for s in problems(unexplained, 10))
    # a study entry cannot be called spent: only a held-out place can be
    assert any("every fifth" in s for s in problems(Entry("failure-logs", index, {**base, "split": "spent",
                                                                                   "spent": "x"}, fixture), 9))


def test_a_measuring_index_holds_only_held_out_entries(tmp_path: object) -> None:
    from pathlib import Path

    from tests.support.corpus import Entry

    base = {"id": "x-402", "source": "https://example.org/t/2", "framework": "keras", "form": "f", "unit": "epoch",
            "expect": {"step": 1, "total": 2, "finished": False, "restarts": 0, "loss": None}}
    fixture = Path(str(tmp_path)) / "x-402.log"
    fixture.write_text("Epoch 1/2\n")
    measuring = Path(str(tmp_path)) / "index-d-heldout.yaml"
    assert problems(Entry("progress-logs", measuring, {**base, "split": "heldout"}, fixture), 2) == []
    assert any("every fifth" in s for s in problems(Entry("progress-logs", measuring, {**base, "split": "study"},
                                                           fixture), 2))
    # in an ordinary index the same place is a study one
    ordinary = Path(str(tmp_path)) / "index-d.yaml"
    assert any("every fifth" in s for s in problems(Entry("progress-logs", ordinary, {**base, "split": "heldout"},
                                                          fixture), 2))
