"""ntui.core.slurm.durations: the one reading of Slurm's time forms and the spelling of each place."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.slurm.durations import (
    format_elapsed,
    format_span,
    format_time_limit,
    parse_cpu_time,
    parse_duration,
    parse_time_limit,
    time_limit_from_script,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0:00"), (95, "1:35"), (307, "5:07"), (3600, "1:00:00"), (3723, "1:02:03"), (90061, "1-01:01:01"),
     (None, "-"), (-5, "0:00"), (306.6, "5:07")],
)
def test_elapsed_is_spelt_as_squeue_prints_it(seconds: float | None, text: str) -> None:
    assert format_elapsed(seconds) == text


@given(st.integers(0, 400 * 86400))
def test_what_the_queue_cell_spells_reads_back(seconds: int) -> None:
    assert parse_duration(format_elapsed(seconds)) == seconds


@given(st.integers(1, 400 * 86400))
def test_a_time_value_reads_back_rounded_up_to_the_minute(seconds: int) -> None:
    assert parse_time_limit(format_time_limit(seconds)) == -(-seconds // 60) * 60


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (50, "50 s"), (2400, "40 min"), (7800, "2 h 10 min"), (7200, "2 h"), (97200, "1 d 3 h"),
     (86400, "1 d")],
)
def test_a_span_in_a_sentence(seconds: float, text: str) -> None:
    assert format_span(seconds) == text


@pytest.mark.parametrize("word", ["UNLIMITED", "INFINITE", "INVALID", "N/A", "Partition_Limit", "NOT_SET", ""])
def test_slurms_words_are_no_duration_but_a_user_may_write_no_limit(word: str) -> None:
    assert parse_duration(word) is None
    if word.upper() in ("UNLIMITED", "INFINITE"):
        assert parse_time_limit(word) == 0
    else:
        with pytest.raises(ValueError):
            parse_time_limit(word)


def test_the_printed_and_the_typed_forms_agree() -> None:
    for text in ("30", "30:00", "1:30:00", "2-0", "1-2:3", "1-2:3:4"):
        assert parse_duration(text) == parse_time_limit(text)
    assert parse_duration("1:75:00") is None  # minutes below 60 in both readings
    with pytest.raises(ValueError, match="below 60"):
        parse_time_limit("1:75:00")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("00:00.056", 0.056), ("12:34.5", 754.5), ("1-00:00:01", 86401.0), ("30", None), ("1:2.x", None)],
)
def test_cpu_time_keeps_its_fraction(text: str, seconds: float | None) -> None:
    got = parse_cpu_time(text)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_the_time_of_a_submitted_script() -> None:
    assert time_limit_from_script("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --time=1:30:00\n") == 5400
    assert time_limit_from_script("#SBATCH -t 45\n") == 2700
    assert time_limit_from_script("#SBATCH --time=UNLIMITED\n") is None
    assert time_limit_from_script("echo --time=1:00:00\n") is None
