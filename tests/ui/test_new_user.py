"""What a new user met in the jobs view (issue #46), each fixed with a test that failed before."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from ntui.core.jobfiles.manifest import SHELL_PATH_VAR
from ntui.core.jobs.selected import SelectedJob
from ntui.core.jobs.sweep import SweepTable
from ntui.core.records.history import HistoryEntry
from ntui.ui.widgets.job_tab import Computed
from ntui.ui.widgets.sweep_pane import SweepPane, metric_name
from tests.support.fakes import FakeRunner


def test_a_metric_is_named_as_its_regex_names_it() -> None:
    assert metric_name("loss=([0-9.]+)") == "loss"
    assert metric_name(r"val_loss:\s*(?P<value>[0-9.]+)") == "val_loss"
    assert metric_name(r"(?P<top1>\d+(?:\.\d+)?)%") == "top1"
    assert metric_name(r"^.*eval/acc\s*=\s*([0-9.]+)") == "eval/acc"
    assert metric_name(r"(?:train )?loss (\d+\.\d+)") == "loss"
    assert metric_name("([0-9.]+)") == "([0-9.]+)"  # nothing names it: the regex says what it is
    assert metric_name("loss=([0-9.]+") == "loss=([0-9.]+"  # not a regex: as written


class SweepHost(App[None]):
    def compose(self) -> ComposeResult:
        yield SweepPane(FakeRunner({}), id="jobs-sweep")


async def test_the_sweep_tab_names_its_metric_instead_of_showing_the_regex() -> None:
    """Before: the head line read ``metric loss=([0-9.]+)``."""
    app = SweepHost()
    async with app.run_test(size=(120, 20)) as pilot:
        pane = app.query_one(SweepPane)
        entry = HistoryEntry(token="t1", job_id="700", cluster=None, preset="p", preset_path=None, overrides=(),
                             job_name="lr-sweep", launcher="torchrun", nodes=1, world_size=1, log_dir="/x",
                             log_stem="lr-sweep", script=f"#!/bin/bash\n{SHELL_PATH_VAR}=/x/m.json\n",
                             script_path=None, created_at=0.0, submitted_at=0.0, status="submitted")
        pane.select_job(SelectedJob("700_1", "queue", row_key="700", array_id="700", entry=entry, entry_known=True))
        pane.drop_computing()  # the test gives the table itself
        pane.show_result(Computed("700", SweepTable("700", ("lr",), (), metric="loss=([0-9.]+)", counts="2 tasks"), 0))
        await pilot.pause()
        head = str(pane.query_one("#sweep-head", Static).render())
        assert "metric loss ·" in head and "[0-9.]" not in head, head
