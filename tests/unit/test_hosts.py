"""Hostlist expansion/compression (no ``scontrol show hostnames``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.hosts import compress_nodelist, expand_nodelist

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("nid[001-002]", ("nid001", "nid002")),
        ("nid001", ("nid001",)),
        ("nid001,nid003", ("nid001", "nid003")),
        ("nid[001-003,007],gpu7", ("nid001", "nid002", "nid003", "nid007", "gpu7")),
        ("a[1-2]b[1-2]", ("a1b1", "a1b2", "a2b1", "a2b2")),
        ("node[08-10]", ("node08", "node09", "node10")),
        ("", ()),
        ("(null)", ()),
        ("None assigned", ()),
        ("N/A", ()),
        ("  nid[1-2] ", ("nid1", "nid2")),
    ],
)
def test_expand(expr: str, expected: tuple[str, ...]) -> None:
    assert expand_nodelist(expr) == expected


def test_expand_none() -> None:
    assert expand_nodelist(None) == ()


def test_expand_matches_scontrol_show_hostnames_capture() -> None:
    """Same answer as the real ``scontrol show hostnames 'nid[001-002]'``."""
    expected = tuple((DATA / "scontrol_show_hostnames.stdout").read_text().split())
    assert expected == ("nid001", "nid002")
    assert expand_nodelist("nid[001-002]") == expected


def test_bad_expression_strict_and_lenient() -> None:
    with pytest.raises(ValueError, match="bad Slurm hostlist"):
        expand_nodelist("nid[001-")
    assert expand_nodelist("nid[001-", strict=False) == ("nid[001-",)


def test_compress() -> None:
    assert compress_nodelist(["nid002", "nid001", "nid001"]) == "nid[001-002]"
    assert compress_nodelist(["nid001", "nid003", "gpu7"]) == "gpu7,nid[001,003]"
    assert compress_nodelist([]) == ""
    assert compress_nodelist(["", "x1"]) == "x1"


@given(st.sets(st.integers(min_value=0, max_value=999), min_size=1, max_size=40))
def test_roundtrip(numbers: set[int]) -> None:
    names = sorted(f"nid{n:03d}" for n in numbers)
    assert sorted(expand_nodelist(compress_nodelist(names))) == names


def test_format_index_ranges() -> None:
    from ntui.core.hosts import format_index_ranges

    assert format_index_ranges((3, 0, 1, 2, 6, 8, 9)) == "0-3,6,8-9"
    assert format_index_ranges(()) == ""
    assert format_index_ranges([5]) == "5"
