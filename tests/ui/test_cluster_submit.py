"""On the real dev cluster: the app submits local-torchrun (nodes set to 1 in the form) with the real
SubprocessRunner, shows the job id, and the job exists in Slurm; the test then cancels it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ntui.core.records.history import History
from ntui.core.slurm.runner import SubprocessRunner
from ntui.ui.app import make_app
from ntui.ui.messages import JobSubmitted
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.confirm import ConfirmSubmitScreen
from tests.support.demo import settle, type_into

pytestmark = pytest.mark.cluster


async def test_submit_on_the_dev_cluster(dev_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", str(dev_cluster.slurm_conf))
    history_path = tmp_path / "history.sqlite3"
    app = make_app(runner=SubprocessRunner(), preset="local-torchrun", identity="", cursor_blink=False,
                   history_factory=lambda: History(history_path))
    seen: list[Any] = []
    job_id = None
    try:
        async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
            await settle(pilot, rounds=200)
            screen = pilot.app.screen
            assert isinstance(screen, ComposeScreen)
            assert screen.cluster is not None and "debug" in screen.cluster.partitions
            await type_into(pilot, "sbatch.nodes", "1")
            screen.form.set_text("logs.dir", str(tmp_path / "logs"))
            await pilot.press("escape")
            await settle(pilot, rounds=200)
            assert "#SBATCH --nodes=1\n" in screen.preview.script
            await pilot.press("t")
            await settle(pilot, rounds=400)
            assert screen.check_line is not None and "would start" in screen.check_line.plain, screen.check_line
            await pilot.press("s")
            await settle(pilot, rounds=200)
            assert isinstance(pilot.app.screen, ConfirmSubmitScreen)
            await pilot.press("y")
            await settle(pilot, rounds=400)
            submitted = [m for m in seen if isinstance(m, JobSubmitted)]
            assert submitted, screen.submit_line
            job_id = submitted[0].job.job_id
            assert job_id.isdigit()
            assert screen.submit_line is not None and job_id in screen.submit_line.plain
        show = dev_cluster.run("scontrol", "show", "job", job_id)
        assert show.returncode == 0 and f"JobId={job_id}" in show.stdout, show.stderr
        assert "NumNodes=1" in show.stdout
        entry = History(history_path).get(job_id)
        assert entry is not None and entry.preset == "local-torchrun"
    finally:
        if job_id:
            dev_cluster.run("scancel", job_id)
