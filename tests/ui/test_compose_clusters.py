"""The compose view with clusters reached over ssh (issue #45): it says where the job goes, ``c`` chooses another
cluster (its partitions asked of it), and ``s`` submits there as ``ntui --cluster NAME submit`` does: the script on
sbatch's standard input with a tagging comment, the intent and the outcome written to that cluster's history."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import ClusterSettings, Settings
from ntui.core.remote import agent as local_agent
from ntui.ui.messages import JobSubmitted
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.confirm import ConfirmSubmitScreen
from tests.support.demo import demo_runner, settle
from tests.support.fakes import FakeRunner, result
from tests.support.notes import notified
from tests.ui.conftest import AppFactory


class RecordedFiles:
    """The cluster's files as far as a submission uses them: its history's facts, recorded here."""

    live = True
    note = None
    python = None
    py_spy = None

    def __init__(self) -> None:
        self.facts: list[tuple[str, str, dict[str, Any]]] = []
        self.sweep_parts: list[str] = []

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        self.facts.append((fact, token, fields))
        return True

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        """A sweep's files, written by the agent's own code (in this test's directory)."""
        self.sweep_parts.append(part)
        return local_agent.sweep_file({**fields, "part": part})


def _status(screen: ComposeScreen) -> str:
    return str(screen.query_one("#status").render())


def _compose(pilot: Any) -> ComposeScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, ComposeScreen))


def _apps(app_factory: AppFactory) -> tuple[Any, FakeRunner, FakeRunner, RecordedFiles]:
    local = demo_runner(job_id="111")
    alpha = demo_runner(job_id="4242")
    alpha.add("mkdir", result())
    alpha.default = result()
    settings = replace(Settings(), clusters=(ClusterSettings(name="alpha", ssh="alpha"),))
    app = app_factory(runner=local, settings=settings, cluster_runners={"alpha": alpha}, clusters=("alpha",),
                      local_slurm=True, local_name="here")
    files = RecordedFiles()
    app.cluster_files = lambda name: files  # the history there (no agent in a UI test)
    return app, local, alpha, files


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_the_compose_view_says_where_the_job_goes_and_submits_there(app_factory: AppFactory) -> None:
    app, local, alpha, files = _apps(app_factory)
    seen: list[Any] = []
    async with app.run_test(size=(120, 36), notifications=True, message_hook=seen.append) as pilot:
        await settle(pilot)
        screen = _compose(pilot)
        assert "→ submits to here (c: next of 2)" in _status(screen)
        assert not [a for a in alpha.argvs() if a[0] == "sinfo"]
        await pilot.press("c")
        await settle(pilot)
        assert "→ submits to alpha over ssh (c: next of 2)" in _status(screen)
        assert screen.destination == "alpha"
        assert [a for a in alpha.argvs() if a[0] == "sinfo"]  # its partitions asked of it

        await pilot.press("t")  # sbatch --test-only there, the script on its standard input
        await settle(pilot)
        tested = [c for c in alpha.history if c.argv[:2] == ("sbatch", "--test-only")]
        assert len(tested) == 1 and tested[0].input == screen.rendered.script  # type: ignore[union-attr]
        assert not [a for a in local.argvs() if a[:2] == ("sbatch", "--test-only")]
        assert screen.check_line is not None and "would start" in screen.check_line.plain

        await pilot.press("w")  # what would start sooner: not over ssh yet, said
        await settle(pilot)
        assert any("not asked over ssh yet" in str(n.message) for n in notified(app))

        await pilot.press("s")
        await settle(pilot)
        dialog = pilot.app.screen
        assert isinstance(dialog, ConfirmSubmitScreen) and dialog.destination == "alpha"
        await pilot.press("y")
        await settle(pilot)
        sbatch = [c for c in alpha.history if c.argv[:2] == ("sbatch", "--parsable")]
        assert len(sbatch) == 1
        assert sbatch[0].input == dialog.script  # the script on sbatch's standard input
        comment = next(a for a in sbatch[0].argv if a.startswith("--comment="))
        assert not [a for a in local.argvs() if a[0] == "sbatch"]
        assert [f for f, _, _ in files.facts] == ["intent", "submitted"]
        token = files.facts[0][1]
        assert comment.endswith(token) and files.facts[1][2]["job_id"] == "4242"
        submitted = [m for m in seen if isinstance(m, JobSubmitted)]
        assert submitted and submitted[0].job.job_id == "4242" and submitted[0].job.via == "alpha"
        assert "submitted job 4242 to alpha" in _status(screen)


SWEEP = """name: demo-sweep
description: a 2 x 2 sweep as one job array, 2 tasks at once
launcher:
  type: srun
sbatch:
  nodes: 1
  ntasks-per-node: 1
  cpus-per-task: 1
  time: "00:05:00"
script: /opt/ntui/examples/sweep_train.py
args: ["--lr", "{lr}", "--seed", "{seed}"]
sweep:
  grid:
    lr: ["3e-4", "1e-4"]
    seed: ["1", "2"]
  parallel: 2
logs:
  dir: LOGS
"""


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_a_sweep_is_submitted_to_a_cluster_with_its_manifest_and_records_there(
        app_factory: AppFactory, ui_presets: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (ui_presets / "demo-sweep.yaml").write_text(SWEEP.replace("LOGS", str(logs)))
    local = demo_runner(job_id="111")
    alpha = demo_runner(job_id="4242")
    alpha.default = result()
    settings = replace(Settings(), clusters=(ClusterSettings(name="alpha", ssh="alpha"),))
    app = app_factory(runner=local, settings=settings, cluster_runners={"alpha": alpha}, clusters=("alpha",),
                      local_slurm=True, local_name="here", preset="demo-sweep")
    files = RecordedFiles()
    app.cluster_files = lambda name: files
    seen: list[Any] = []
    async with app.run_test(size=(120, 36), notifications=True, message_hook=seen.append) as pilot:
        await settle(pilot)
        screen = _compose(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert screen.destination == "alpha"
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmSubmitScreen)
        await pilot.press("y")
        await settle(pilot)
        sbatch = [c for c in alpha.history if c.argv[:2] == ("sbatch", "--parsable")]
        assert len(sbatch) == 1, screen.submit_line
        assert sbatch[0].input and "#SBATCH --array=0-3%2" in sbatch[0].input
        assert any(a.startswith("--comment=") for a in sbatch[0].argv)
        assert not [a for a in local.argvs() if a[0] == "sbatch"]
        assert files.sweep_parts == ["manifest", "job"]  # the manifest before sbatch, the job file after
        manifests = sorted(p.name for p in logs.glob("*-sweep-*.manifest"))
        assert len(manifests) == 1 and (logs / manifests[0]).read_bytes()
        job_files = list(logs.glob("*-4242.sweep"))
        assert len(job_files) == 1 and manifests[0] in job_files[0].read_text()
        assert [f for f, _, _ in files.facts] == ["intent", "submitted"]
        assert files.facts[1][2]["job_id"] == "4242"
        submitted = [m for m in seen if isinstance(m, JobSubmitted)]
        assert submitted and submitted[0].job.via == "alpha" and submitted[0].job.tasks == (0, 1, 2, 3)
        assert "submitted job 4242 to alpha" in _status(screen)


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_without_clusters_the_compose_view_is_unchanged(app_factory: AppFactory) -> None:
    app = app_factory(runner=demo_runner(job_id="111"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = _compose(pilot)
        assert "submits to" not in _status(screen)
        assert screen.check_action("next_cluster", ()) is False  # no key shown
