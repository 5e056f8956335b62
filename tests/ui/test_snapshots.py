"""Snapshot tests (pytest-textual-snapshot): plain ``def`` tests, fixed sizes, fixture presets, FakeRunner,
frozen clock, no user/host/version, no cursor blink. Update with ``pytest tests/ui --snapshot-update``
and review the SVGs in ``tests/ui/__snapshots__/``."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.demo import settle, type_into
from tests.ui.conftest import AppFactory


async def _settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    # The picker scrolls its highlighted preset into view after a refresh; at 80x24 only two rows
    # show, so wait for that scroll or the snapshot races it.
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


class TestCompose:
    def test_compose_wide(self, snap_compare: Any, app_factory: AppFactory) -> None:
        assert snap_compare(app_factory(), terminal_size=(120, 36), run_before=_settled)

    def test_compose_narrow(self, snap_compare: Any, app_factory: AppFactory) -> None:
        assert snap_compare(app_factory(), terminal_size=(80, 24), run_before=_settled)

    def test_compose_with_errors(self, snap_compare: Any, app_factory: AppFactory) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await type_into(pilot, "sbatch.nodes", "1")
            await type_into(pilot, "sbatch.ntasks-per-node", "4")
            await type_into(pilot, "sbatch.time", "90 min")
            await pilot.press("escape")
            await settle(pilot)

        assert snap_compare(app_factory(), terminal_size=(120, 36), run_before=run_before)


class TestDialogs:
    @pytest.mark.usefixtures("fixture_scripts_exist")
    def test_confirm_submit(self, snap_compare: Any, app_factory: AppFactory) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await type_into(pilot, "sbatch.nodes", "1")
            await pilot.press("escape", "s")
            await settle(pilot)

        assert snap_compare(app_factory(), terminal_size=(120, 36), run_before=run_before)

    def test_preset_editor(self, snap_compare: Any, app_factory: AppFactory) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("e")
            await settle(pilot)

        assert snap_compare(app_factory(preset="my-experiment"), terminal_size=(120, 36), run_before=run_before)

    def test_preset_editor_refuses_invalid_yaml(self, snap_compare: Any, app_factory: AppFactory) -> None:
        async def run_before(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("e")
            await settle(pilot)
            editor = pilot.app.screen.query_one("#preset-editor")
            editor.load_text(editor.text.replace("  nodes: 4\n", "  nodes: [4\n"))  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await settle(pilot)

        assert snap_compare(app_factory(preset="my-experiment"), terminal_size=(120, 36), run_before=run_before)


class TestSweep:
    """A sweep in the jobs view (tests/support/screenshots_sweep.py): its row, the row opened, the Sweep tab."""

    @pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
    @pytest.mark.parametrize("what", ["folded", "open", "tab"])
    def test_sweep(self, snap_compare: Any, what: str, size: tuple[int, int]) -> None:
        from tests.support.screenshots_sweep import sweep_app, sweep_scene

        assert snap_compare(sweep_app(), terminal_size=size, run_before=sweep_scene(what))


class TestRun:
    """A long run in the jobs view (tests/support/screenshots_runs.py): its row in the recent list, which allocation
    it is in, and the details listing its allocations and what ended each."""

    @pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
    def test_run(self, snap_compare: Any, size: tuple[int, int], tmp_path: Any) -> None:
        from tests.support.screenshots_runs import run_app, run_scene

        assert snap_compare(run_app(tmp_path), terminal_size=size, run_before=run_scene)

    @pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
    def test_run_in_the_queue(self, snap_compare: Any, size: tuple[int, int], tmp_path: Any) -> None:
        from tests.support.screenshots_runs import queue_app, queue_scene

        assert snap_compare(queue_app(tmp_path), terminal_size=size, run_before=queue_scene)


class TestProgress:
    """A running job that its time limit will cut (tests/support/screenshots_progress.py): the row's words, the
    notice, and the Progress tab with the estimate and the loss."""

    @pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
    def test_progress(self, snap_compare: Any, size: tuple[int, int], tmp_path: Any) -> None:
        from tests.support.screenshots_progress import progress_app, progress_scene

        assert snap_compare(progress_app(tmp_path / "logs"), terminal_size=size, run_before=progress_scene)

    @pytest.mark.parametrize("size", [(100, 32), (70, 24)], ids=["100x32", "70x24"])
    def test_chart(self, snap_compare: Any, size: tuple[int, int]) -> None:
        """The chart of a long run: its loss on a log axis, its evaluations beside it, its restart marked."""
        from tests.support.screenshots_progress import ChartHost, chart_scene

        assert snap_compare(ChartHost(), terminal_size=size, run_before=chart_scene)


class TestStacks:
    """A running job gone quiet (tests/support/screenshots_stacks.py, the dev cluster's real job): the row's words,
    the notice, and the Stacks tab with the stuck rank apart from the three that wait for it."""

    @pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
    def test_stacks(self, snap_compare: Any, size: tuple[int, int], tmp_path: Any) -> None:
        from tests.support.screenshots_stacks import stacks_app, stacks_scene

        assert snap_compare(stacks_app(tmp_path / "logs"), terminal_size=size, run_before=stacks_scene)


class TestAmd:
    """An ended job on AMD GPUs: its Report tab from the sampler's rocm-smi ticks reads like an NVIDIA job's, the
    tool named (tests/support/screenshots_jobs.py, ``vendor="amd"``)."""

    def test_report(self, snap_compare: Any, tmp_path: Any) -> None:
        from tests.support.screenshots_jobs import jobs_app, report_history, report_runner, report_scene

        app = jobs_app(runner=report_runner(), history_factory=report_history(tmp_path, vendor="amd"))
        assert snap_compare(app, terminal_size=(120, 36), run_before=report_scene)


class TestClusters:
    """Three clusters in one queue (issue #45): the Cluster column, a remote job's details, a link down."""

    def test_clusters(self, snap_compare: Any) -> None:
        from tests.support.screenshots_clusters import clusters_scene, demo_clusters_app

        assert snap_compare(demo_clusters_app(), terminal_size=(120, 36), run_before=clusters_scene)
