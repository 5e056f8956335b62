"""The jobs view fed duplicate, missing and contradictory records (tests/support/broken_records.py): the recent
list shows every submission once (two clusters' job 4 apart), and each row's details, logs and report open with
what can be known, without an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.records.history import History
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.recent_jobs import RecentJobsTable
from tests.support.broken_records import JOB_IDS, broken_state
from tests.support.fakes import FakeRunner, capture, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import FROZEN_NOW, jobs_app, settle_jobs

HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))


async def test_every_broken_record_is_listed_once_and_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = broken_state(tmp_path, start=FROZEN_NOW.timestamp() - 2 * 3600)
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=alpha\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    runner = FakeRunner({"squeue": result(stdout=""), "sacct": capture("sacct_no_accounting"),
                         "scontrol show job": capture("scontrol_show_job_unknown")},
                        default=capture("scontrol_show_job_unknown"))
    app = jobs_app(runner=runner, settings=HOUR, history_factory=lambda: History(state, cluster="alpha"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        recent = screen.query_one("#jobs-recent", RecentJobsTable)
        shown = sorted(str(recent.get_row(k)[0]) for k in recent.jobs)
        assert shown == sorted(["4@alpha", "4@beta", *JOB_IDS[1:]])
        await pilot.press("tab")
        assert recent.has_focus
        for row in range(recent.row_count):
            recent.move_cursor(row=row)
            await settle_jobs(pilot)
            key = list(recent.jobs)[row]
            view = screen.query_one(JobDetailsPanel).view
            assert view is not None and view.job_id == recent.jobs[key].job_id, key
        for key in ("l", "r"):  # the Logs and Report tabs on the last row, then back
            await pilot.press(key)
            await settle_jobs(pilot)
        errors = [n for n in notified(app) if n.severity == "error"]
        assert errors == [], [n.message for n in errors]
