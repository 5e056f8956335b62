"""The Report tab: an ended ntui job's GPU usage from its sampler files (computed in a worker, only while the
tab is shown), findings first; ``f`` opens the compose view with the job's preset, overrides and the suggested
fix. Snapshot at 120x36."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.screens.resubmit import ResubmitDiffScreen
from ntui.ui.widgets.recent_jobs import RecentJobsTable
from ntui.ui.widgets.report_pane import ReportPane
from tests.support.demo import demo_runner
from tests.support.screenshots_jobs import (
    REPORT_JOB,
    jobs_app,
    recent_scene,
    report_history,
    report_runner,
    report_scene,
    settle_jobs,
    wait_until,
)


async def test_report_tab_is_computed_when_shown_and_f_opens_compose_with_the_fix(tmp_path: Path) -> None:
    runner = report_runner()
    for key in ("sinfo", "sacctmgr"):  # the compose view's cluster choices
        runner.add(key, demo_runner()._responses[(key,)][0])  # type: ignore[arg-type]
    app = jobs_app(runner=runner, history_factory=report_history(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await recent_scene(pilot, REPORT_JOB)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        pane = screen.query_one("#jobs-report", ReportPane)
        # hidden: the selection waits in the tab (stale), nothing read
        assert pane.selected.job_id == REPORT_JOB and pane.job_id is None and pane.computing is None
        assert not [a for a in runner.argvs() if REPORT_JOB in a]  # no Slurm call for it yet
        screen.query_one("#jobs-recent", RecentJobsTable).focus()
        await pilot.press("u")
        await wait_until(pilot, lambda: pane.usage is not None)
        assert pane.has_focus and screen.query_one("#jobs-tabs").active == "tab-report"  # type: ignore[attr-defined]
        report = pane.usage.report  # type: ignore[union-attr]
        assert [n.node for n in report.nodes] == ["nid001", "nid002"] and report.gpus == 4
        kinds = [f.kind for f in report.findings]
        assert kinds.count("idle-gpu") == 2 and "short-run" in kinds and "straggler" in kinds
        assert pane.fixes == ["sbatch.time=00:15:00"]
        shown = str(pane.query_one("#report-findings").render()) + str(pane.query_one("#report-text").render())
        assert shown.index("Findings:") < shown.index("utilisation over time")  # the findings first
        assert "GPU 0 on nid002 idle 100 % of the time" in shown and "▁" in shown
        await pilot.press("f")  # the recorded script differs from the preset's: the diff first
        await wait_until(pilot, lambda: isinstance(app.screen, ResubmitDiffScreen))
        await pilot.press("enter")

        def opened() -> bool:
            c = app.screen
            return (isinstance(c, ComposeScreen) and c.preset_name == "my-experiment"
                    and {"sbatch.nodes=2", "sbatch.time=00:15:00"} <= set(c.form.overrides))

        await wait_until(pilot, opened)
        compose = app.screen
        assert isinstance(compose, ComposeScreen) and compose.resubmit_of == REPORT_JOB


async def test_a_job_ntui_did_not_submit_has_no_report(tmp_path: Path) -> None:
    app = jobs_app(runner=report_runner(), history_factory=report_history(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = app.screen
        assert isinstance(screen, JobsScreen)
        screen.action_show_tab("tab-report")
        await settle_jobs(pilot)
        pane = screen.query_one("#jobs-report", ReportPane)
        assert pane.job_id == "48213777" and pane.usage is None  # the queue's running job: not in this history
        assert "ntui did not submit it" in str(pane.query_one("#report-text").render())


def test_report_tab_snapshot(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    app = jobs_app(runner=report_runner(), history_factory=report_history(tmp_path))
    assert snap_compare(app, terminal_size=(120, 36), run_before=report_scene)


def test_report_tab_snapshot_narrow(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    app = jobs_app(runner=report_runner(), history_factory=report_history(tmp_path))
    assert snap_compare(app, terminal_size=(80, 24), run_before=report_scene)
