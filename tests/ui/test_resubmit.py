"""Resubmit from the jobs view (``ctrl+r``): the compose view opens with the job's preset and recorded overrides;
a changed preset first shows the script diff (the one ``ntui resubmit`` prints); the new job records
``resubmit_of``."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.jobs.resubmit import plan_resubmit, script_diff
from ntui.core.records.history import History
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.screens.resubmit import ResubmitDiffScreen
from ntui.ui.widgets.recent_jobs import RecentJobsTable
from tests.support.demo import demo_runner
from tests.support.fakes import FakeRunner, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import jobs_app, settle_jobs, wait_until

PRESET = "my-experiment"
OVERRIDES = ("sbatch.time=0:30:00", "sbatch.nodes=2")


def _script(overrides: tuple[str, ...] = OVERRIDES) -> str:
    spec, _ = validate(load_preset(PRESET, overrides))
    assert spec is not None
    return render(spec)


def _history(path: Path, scripts: dict[str, str]) -> Callable[[], History]:
    history = History(path)
    for job_id, script in scripts.items():
        token = uuid.uuid4().hex
        history.record_intent(token=token, preset=PRESET, preset_path=None, overrides=OVERRIDES, job_name="exp",
                              launcher="torchrun", nodes=2, world_size=8, log_dir=str(path.parent / "logs"),
                              log_stem="exp", script=script)
        history.record_submitted(token, job_id, None, None)
    history.close()
    return lambda: History(path)


def _runner() -> FakeRunner:
    runner = demo_runner(job_id="600")
    runner.add("squeue", result(stdout=""))
    runner.add("sacct", result(stdout=""))
    return runner


def _compose(app: Any) -> ComposeScreen | None:
    screen = app.screen
    return screen if isinstance(screen, ComposeScreen) else None


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_ctrl_r_opens_the_preset_with_its_overrides_and_the_new_job_links_to_the_old(tmp_path: Path) -> None:
    opener = _history(tmp_path / "h.sqlite3", {"500": _script()})
    runner = _runner()
    app = jobs_app(runner=runner, history_factory=opener)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        recent = jobs.query_one("#jobs-recent", RecentJobsTable)
        recent.focus()
        await settle_jobs(pilot)
        assert jobs._recent_job is not None and jobs._recent_job.job_id == "500"
        await pilot.press("ctrl+r")

        def ready() -> bool:
            c = _compose(app)
            return (c is not None and c.preset_name == PRESET and c.up_to_date and c.cluster is not None
                    and set(OVERRIDES) <= set(c.form.overrides))

        await wait_until(pilot, ready)
        compose = _compose(app)
        assert compose is not None and compose.resubmit_of == "500"
        assert compose.rendered is not None and compose.rendered.script == _script()  # the same script
        await pilot.press("escape")  # leave the form field, if one has focus
        await pilot.press("s")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmSubmitScreen")
        await pilot.press("y")
        await wait_until(pilot, lambda: compose.submit_line is not None and "600" in str(compose.submit_line))
    history = opener()
    try:
        new = history.get("600")
        assert new is not None and new.resubmit_of == "500" and set(new.overrides) == set(OVERRIDES)
    finally:
        history.close()


async def test_a_changed_preset_shows_the_script_diff_first(tmp_path: Path) -> None:
    old = _script().replace("#SBATCH --nodes=2", "#SBATCH --nodes=3")
    opener = _history(tmp_path / "h.sqlite3", {"501": old})
    entry = opener().get("501")
    assert entry is not None
    plan = plan_resubmit(entry)
    assert plan.diff == script_diff(old, _script(), "job 501", "now") and "-#SBATCH --nodes=3" in plan.diff
    app = jobs_app(runner=_runner(), history_factory=opener)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        jobs.actions.resubmit("501")
        await wait_until(pilot, lambda: isinstance(app.screen, ResubmitDiffScreen))
        dialog = app.screen
        assert isinstance(dialog, ResubmitDiffScreen) and dialog.plan.diff == plan.diff
        await pilot.press("escape")  # cancel: stay in the jobs view
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen))
        jobs.actions.resubmit("501")
        await wait_until(pilot, lambda: isinstance(app.screen, ResubmitDiffScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: (c := _compose(app)) is not None and c.resubmit_of == "501"
                     and set(OVERRIDES) <= set(c.form.overrides))


async def test_a_job_ntui_did_not_submit_cannot_be_resubmitted(tmp_path: Path) -> None:
    app = jobs_app(runner=_runner(), history_factory=_history(tmp_path / "h.sqlite3", {}))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle_jobs(pilot)
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        jobs.actions.resubmit("777")
        await wait_until(pilot, lambda: any("not submitted by ntui" in n.message for n in notified(app)))
        assert isinstance(app.screen, JobsScreen)
