"""Polling policy, row diffs and departed jobs (pure queue model)."""

from __future__ import annotations

from pathlib import Path

from ntui.core.config import QueueSettings, load_settings
from ntui.core.jobs.queue import PollPolicy, departed, diff_rows
from ntui.core.slurm.squeue import QueueJob


def job(jid: str, state: str = "RUNNING", user: str = "alice") -> QueueJob:
    return QueueJob(job_id=jid, raw_job_id=jid, name="x", state=state, user=user)


def test_interval_adapts_to_activity() -> None:
    p = PollPolicy(QueueSettings(active_interval=10, idle_interval=60))
    assert p.on_success([job("1", "PENDING")], user="alice") == 10
    assert p.on_success([job("1", "RUNNING", user="bob")], user="alice") == 60
    assert p.on_success([], user="alice") == 60


def test_backoff_is_exponential_and_capped_then_recovers() -> None:
    p = PollPolicy(QueueSettings(active_interval=10, idle_interval=60, max_backoff=75))
    assert [p.on_error() for _ in range(5)] == [10, 20, 40, 75, 75]
    assert p.on_success([job("1")]) == 10
    assert p.errors == 0


def test_diff_rows() -> None:
    old = {"1": ("1", "a", "PENDING"), "2": ("2", "b", "RUNNING")}
    new = {"1": ("1", "a", "RUNNING"), "3": ("3", "c", "PENDING")}
    d = diff_rows(old, new)
    assert d.added == ("3",) and d.removed == ("2",) and dict(d.changed) == {"1": (2,)}
    assert diff_rows(new, new).empty


def test_departed_only_own_jobs() -> None:
    prev = {"1": job("1"), "2": job("2", user="bob"), "3": job("3")}
    gone = departed(prev, [job("3")], user="alice")
    assert [j.job_id for j in gone] == ["1"]


def test_settings_file(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("queue:\n  active-interval: 5\n  idle-interval: -1\n  bogus: 1\nslurm:\n  timeout: 3\n")
    settings, problems = load_settings(cfg)
    assert settings.queue.active_interval == 5.0
    assert settings.queue.idle_interval == 60.0  # bad value -> default, reported
    assert settings.slurm.timeout == 3.0
    msgs = sorted(p.field for p in problems)
    assert msgs == ["queue.bogus", "queue.idle-interval"]
    assert load_settings(tmp_path / "missing.yaml") == (load_settings(tmp_path / "missing.yaml")[0], [])
