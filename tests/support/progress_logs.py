"""A training log written for a test and read as ``ntui progress FILE`` reads it: the progress reader's tests share
these two helpers instead of each file keeping its own copy."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.read import read_progress
from ntui.core.progress.series import Series, estimate


def read_text(tmp_path: Path, text: str) -> Series:
    """``text`` written to ``run.log`` under ``tmp_path``, read back as a series."""
    log = tmp_path / "run.log"
    log.write_text(text)
    return read_progress(log)


def read_series(tmp_path: Path, lines: list[str]) -> Series:
    """``lines`` written as a log, one per line, read back as a series."""
    return read_text(tmp_path, "\n".join(lines) + "\n")


def read_lines(tmp_path: Path, lines: list[str]) -> tuple[Series, str]:
    """``lines`` written as a log (one per line), read back: the series and its estimate's words (no time limit, the
    clock at 0)."""
    series = read_series(tmp_path, lines)
    return series, estimate(series, now=0.0, time_left_s=None).words
