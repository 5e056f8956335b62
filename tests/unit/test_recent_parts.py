"""The recent list's sources between loads (ntui.core.jobs.recent.RecentParts): this machine's last list and each
cluster's own history, merged at every load; a cluster whose history could not be read keeps what it said before
and its words stay until it is read again."""

from __future__ import annotations

from ntui.core.jobs.recent import RecentParts, cluster_recent
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import RecentJobs, record_job

NOW = 1_780_000_000.0


def _entry(token: str, job_id: str, submitted: float) -> HistoryEntry:
    return HistoryEntry(token=token, job_id=job_id, cluster=None, preset="p", preset_path=None, overrides=(),
                        job_name=f"job-{job_id}", launcher="srun", nodes=1, world_size=1, log_dir="/l",
                        log_stem="s", script="#!/bin/bash\n", script_path=None, created_at=submitted,
                        submitted_at=submitted, status="submitted")


def _ids(jobs: RecentJobs | None) -> list[tuple[str, str | None]]:
    assert jobs is not None
    return [(j.job_id, j.cluster) for j in jobs.jobs]


def test_each_load_answers_the_merged_list_and_a_failed_read_keeps_the_last() -> None:
    parts = RecentParts()
    alpha = cluster_recent("alpha", [_entry("a", "9", NOW - 10)], days=7, now=NOW)
    assert _ids(parts.cluster_loaded("alpha", alpha)) == [("9", "alpha")]  # before this machine's list came
    here = RecentJobs((record_job(_entry("h", "5", NOW - 100)),), accounting=True, warnings=())
    assert _ids(parts.here_loaded(here)) == [("9", "alpha"), ("5", None)]
    assert parts.notes() == ()
    dropped = parts.cluster_loaded("alpha", None, "alpha: history not read (the connection dropped)")
    assert _ids(dropped) == [("9", "alpha"), ("5", None)]  # what alpha said before stays listed
    assert parts.notes() == ("alpha: history not read (the connection dropped)",)
    newer = cluster_recent("alpha", [_entry("b", "10", NOW - 5)], days=7, now=NOW)
    assert _ids(parts.cluster_loaded("alpha", newer)) == [("10", "alpha"), ("5", None)]
    assert parts.notes() == ()  # read again: its words are gone
    assert RecentParts().here_loaded(here) is not None and RecentParts().notes() == ()
