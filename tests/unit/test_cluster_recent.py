"""The recent list with the clusters reached over ssh (ntui.core.jobs.recent): each cluster's own history marked
with its name, merged newest first with this machine's, a record both hold listed once, and the live queue's
check by each job's own row key (``CLUSTER/JOBID``)."""

from __future__ import annotations

from dataclasses import replace

from ntui.core.jobs.recent import cluster_recent, live_key, merged_recent, shown_jobs
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import RecentJobs, record_job

NOW = 1_780_000_000.0
DAY = 86400.0


def _entry(token: str, job_id: str | None, submitted: float, cluster: str | None = None) -> HistoryEntry:
    return HistoryEntry(token=token, job_id=job_id, cluster=cluster, preset="p", preset_path=None, overrides=(),
                        job_name=f"job-{job_id}", launcher="srun", nodes=1, world_size=1, log_dir="/l",
                        log_stem="s", script="#!/bin/bash\n", script_path=None, created_at=submitted,
                        submitted_at=submitted, status="submitted")


def test_a_clusters_history_is_its_recent_jobs_marked_with_its_name() -> None:
    entries = [_entry("a", "10", NOW - 60, cluster="slurm-name-there"), _entry("b", None, NOW - 30),
               _entry("c", "11", NOW - 9 * DAY)]
    got = cluster_recent("alpha", entries, days=7, now=NOW)
    assert [(j.job_id, j.cluster, j.from_ntui) for j in got] == [("10", "alpha", True)]  # no id, too old: out


def test_merged_newest_first_and_a_record_both_hold_once() -> None:
    here = RecentJobs((record_job(_entry("h1", "5", NOW - 100)), record_job(_entry("shared", "7", NOW - 50))),
                      accounting=False, warnings=("w",))
    there = cluster_recent("alpha", [_entry("shared", "7", NOW - 50), _entry("t1", "5", NOW - 10)], days=7, now=NOW)
    merged = merged_recent(here, {"alpha": there})
    assert merged is not None and merged.accounting is False and merged.warnings == ("w",)
    assert [(j.job_id, j.cluster, j.entry.token if j.entry else "") for j in merged.jobs] == [
        ("5", "alpha", "t1"), ("7", None, "shared"), ("5", None, "h1")]
    assert merged_recent(None, {}) is None
    alone = merged_recent(None, {"alpha": there})
    assert alone is not None and [j.job_id for j in alone.jobs] == ["5", "7"]


def test_a_clusters_job_is_hidden_by_its_own_live_row_only() -> None:
    local = record_job(_entry("h", "5", NOW))
    remote = replace(record_job(_entry("t", "5", NOW)), cluster="alpha")
    assert live_key(local, {"alpha"}) == "5" and live_key(remote, {"alpha"}) == "alpha/5"
    assert shown_jobs([local, remote], {"5"}, remote={"alpha"}) == (remote,)
    assert shown_jobs([local, remote], {"alpha/5"}, remote={"alpha"}) == (local,)
