"""The report's layout (:mod:`ntui.core.jobs.report`): the per-GPU table and sparklines fit the width asked for."""

from __future__ import annotations

from pathlib import Path

from ntui.core.jobs.report import JobUsage, format_report, job_usage
from ntui.core.records.history import HistoryEntry
from tests.support.screenshots_jobs import REPORT_JOB, report_history, report_runner


def _usage(tmp_path: Path) -> tuple[JobUsage, HistoryEntry]:
    history = report_history(tmp_path)()
    try:
        entry = history.get(REPORT_JOB)
    finally:
        history.close()
    assert entry is not None
    return job_usage(report_runner(), REPORT_JOB, entry), entry


def _gpu_section(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("node "))
    end = next(i for i, line in enumerate(lines) if line.startswith("CPU"))
    return lines[start:end]


def test_wide_sparklines_sit_beside_the_numbers_and_narrow_ones_below_within_the_width(tmp_path: Path) -> None:
    usage, entry = _usage(tmp_path)
    wide = _gpu_section(format_report(usage.report, entry, usage.cpu, 120))
    assert "utilisation over time" in wide[0] and all(len(line) <= 120 for line in wide)
    assert sum("▁" in line for line in wide) == 2  # the two idle GPUs, beside their numbers
    narrow = _gpu_section(format_report(usage.report, entry, usage.cpu, 80))
    assert "utilisation over time" not in narrow[0] and "utilisation over time" in narrow
    assert all(len(line) <= 80 for line in narrow)
    spark_lines = narrow[narrow.index("utilisation over time") + 1:]
    assert [line.split()[:2] for line in spark_lines if line.strip()] == [
        ["nid001", "0"], ["nid001", "1"], ["nid002", "0"], ["nid002", "1"]]
    assert all(len(line) == 80 for line in spark_lines if line.strip())  # as wide as fits
