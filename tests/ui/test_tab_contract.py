"""The one tab contract (issue #46): every tab's worker failure takes the base's one failure path, and no tab shows a
result computed for a job no longer selected.

Three ways a tab broke it before, each caught here: a tab that caught everything inside its worker (Stacks: the
base never heard of it), tabs with their own ``Worker.StateChanged`` handlers that notified on every failure (GPU,
Logs), and results dropped four different ways. The checks run over every tab of the registry, so a new tab gets
them free; a tab made for the test (:class:`GatedTab`) shows the base's helper itself: a worker that raises, and a
slow answer for a job the user moved away from.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker
from textual.worker_manager import WorkerManager

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobfiles.manifest import SHELL_PATH_VAR
from ntui.core.jobs.selected import SelectedJob
from ntui.core.records.history import History, HistoryEntry
from ntui.core.slurm.runner import CommandResult
from ntui.ui.widgets.job_tab import Computed, JobTab, TabDeps, TabSpec, displayed, over_ssh_note
from ntui.ui.widgets.job_tabs import JOB_TABS, JobTabs
from tests.support.fakes import FakeRunner, capture, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import FROZEN_NOW, wait_until

HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600))
SLURM_DOWN = "slurmctld is down (the test's runner)"
WORKER_RAISED = "the worker raised (the test's wrapper)"
STALE_JOB = "4242"  # the job the user moved away from: nothing of it may be shown
NEW_JOB = "4343"


def _entry(tmp_path: Path, job_id: str) -> HistoryEntry:
    """ntui's record of a running 2-node sweep (a job array of one task) with its log names."""
    state, logs = tmp_path / "state", tmp_path / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    h = History(state, cluster="alpha", warn=lambda w: None)
    try:
        h.record_intent(token=f"t{job_id}", preset="local-torchrun", preset_path=None, overrides=[],
                        job_name="train", launcher="torchrun", nodes=2, world_size=4, log_dir=str(logs),
                        log_stem="train", script=f"#!/bin/bash\n#SBATCH --nodes=2\n{SHELL_PATH_VAR}=/x/m.json\n",
                        created_at=FROZEN_NOW.timestamp() - 600)
        h.record_submitted(f"t{job_id}", job_id, "alpha", None, when=FROZEN_NOW.timestamp() - 600)
        entry = h.get(job_id)
    finally:
        h.close()
    assert entry is not None
    return entry


def _running(entry: HistoryEntry, job_id: str) -> SelectedJob:
    return SelectedJob(job_id, "queue", row_key=job_id, entry=entry, entry_known=True, details_known=True,
                       active=True, running=True)


class RaisingRunner(FakeRunner):
    """Every Slurm call fails with an error no tab expects (not a SlurmError): it must reach the failure path."""

    def run(self, argv: Sequence[str], *args: Any, **kwargs: Any) -> CommandResult:
        super().run(argv, *args, **kwargs)
        raise RuntimeError(SLURM_DOWN)


class GatedRunner(FakeRunner):
    """Calls that name :data:`STALE_JOB` wait for :attr:`release`; the others are answered at once."""

    def __init__(self) -> None:
        super().__init__({"squeue": result(stdout=""), "sacct": capture("sacct_no_accounting")},
                         default=capture("scontrol_show_job_unknown"))
        self.release = threading.Event()

    def run(self, argv: Sequence[str], *args: Any, **kwargs: Any) -> CommandResult:
        if any(STALE_JOB in a for a in argv):
            self.release.wait(10)
        return super().run(argv, *args, **kwargs)


class Host(App[None]):
    def __init__(self, runner: FakeRunner) -> None:
        super().__init__()
        self.runner = runner

    def compose(self) -> ComposeResult:
        yield JobTabs(TabDeps(self.runner, HOUR), id="jobs-tabs")


async def _settle(pilot: Any, rounds: int = 8) -> None:
    for _ in range(rounds):
        await pilot.pause(0.03)


async def _shown(app: App[Any], pilot: Any, tab_class: type[JobTab]) -> tuple[JobTabs, Any]:
    """The registry's tab of that class, shown."""
    tabs = app.query_one(JobTabs)
    tab = tabs.tab(tab_class)
    assert isinstance(tab, Widget)
    tabs.show_tab(tab_class.TAB.pane_id)
    await _settle(pilot)
    return tabs, tab


async def _select(pilot: Any, tabs: JobTabs, tab: JobTab, selected: SelectedJob, rounds: int = 8) -> None:
    """Select a job, then tell the tab it is shown (the Stacks tab takes stacks then)."""
    tabs.select_job(selected)
    await _settle(pilot, rounds)
    tab.tab_shown()
    await _settle(pilot, rounds)


def _said(app: App[Any], tab_class: type[JobTab], text: str) -> list[Any]:
    """The notices of that tab with ``text`` (a hidden tab may fail too: the Logs tab reads while hidden)."""
    return [n for n in notified(app) if text in n.message and n.message.startswith(f"{tab_class.TAB.title}:")]


def _text(widget: Widget) -> str:
    return "\n".join(str(s.render()) for s in widget.query(Static))


_IDS = [t.TAB.title for t in JOB_TABS]


@pytest.mark.parametrize("tab_class", JOB_TABS, ids=_IDS)
def test_no_tab_handles_a_worker_state_itself(tab_class: type[JobTab]) -> None:
    """The base (:class:`JobTab`) is the one handler of its tabs' worker states (Textual's ``StateChanged`` does not
    bubble: a tab's own handler is where a failure was said its own way)."""
    for klass in tab_class.__mro__:
        if klass is JobTab or not klass.__module__.startswith("ntui."):
            continue
        assert "on_worker_state_changed" not in vars(klass), klass
        assert Worker.StateChanged not in vars(klass).get("_decorated_handlers", {}), klass


@pytest.mark.parametrize("tab_class", JOB_TABS, ids=_IDS)
async def test_a_raising_worker_of_any_tab_is_said_by_the_base_once(tab_class: type[JobTab], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker a tab starts raises: the tab says so through the base (its failure, one notice), whatever it is.
    Before: GPU and Logs handled their workers' states themselves (no ``failure``, a notice per failure)."""
    new_worker = WorkerManager._new_worker
    started: list[tuple[object, str]] = []  # (the node, the group) of every tab worker started

    def raising(self: WorkerManager, work: Any, node: Any, **kwargs: Any) -> Worker[Any]:
        if isinstance(node, JobTab) and kwargs.get("thread"):
            started.append((node, kwargs.get("group", "default")))

            def work(*_: object) -> None:
                raise RuntimeError(WORKER_RAISED)
        return new_worker(self, work, node, **kwargs)

    monkeypatch.setattr(WorkerManager, "_new_worker", raising)
    app = Host(FakeRunner({"squeue": result(stdout="")}, default=capture("scontrol_show_job_unknown")))
    async with app.run_test(size=(120, 36)) as pilot:
        tabs, tab = await _shown(app, pilot, tab_class)
        for job in ("51", "52"):  # two jobs: the failure is said once however often it recurs
            await _select(pilot, tabs, tab, _running(_entry(tmp_path / job, job), job))
        groups = [g for node, g in started if node is tab]
        if tab_class.TAB.groups:  # a tab with workers started one here: the check is not vacuous
            assert groups, tab_class.TAB.title
        if groups:
            await wait_until(pilot, lambda: tab.failure is not None)  # said when a worker's thread has raised
            assert tab.failure is not None and WORKER_RAISED in tab.failure, (tab_class.TAB.title, tab.failure)
            said = _said(app, tab_class, WORKER_RAISED)
            assert len(said) == 1 and said[0].severity == "error", said
            assert set(groups) <= set(tab_class.TAB.groups), groups
        assert app.is_running


@pytest.mark.parametrize("tab_class", JOB_TABS, ids=_IDS)
async def test_no_tab_swallows_a_failure_inside_its_worker(tab_class: type[JobTab], tmp_path: Path) -> None:
    """Slurm fails in a way no tab expects: a tab that called it says so through the base. Before: Stacks caught
    every exception in its worker and drew it itself, so the base never heard (no ``failure``, no notice)."""
    runner = RaisingRunner(default=capture("scontrol_show_job_unknown"))
    app = Host(runner)
    async with app.run_test(size=(120, 36)) as pilot:
        tabs, tab = await _shown(app, pilot, tab_class)
        await _select(pilot, tabs, tab, _running(_entry(tmp_path, "61"), "61"), rounds=12)
        if runner.calls:
            await wait_until(pilot, lambda: tab.failure is not None)  # the call raised in a worker's thread
            assert tab.failure is not None and SLURM_DOWN in tab.failure, (tab_class.TAB.title, tab.failure)
            assert [n.severity for n in _said(app, tab_class, SLURM_DOWN)] == ["error"]
            assert SLURM_DOWN in _text(tab) or tab_class.TAB.title == "GPUs" and "No GPU usage" in _text(tab)


@pytest.mark.parametrize("tab_class", JOB_TABS, ids=_IDS)
async def test_no_tab_shows_what_it_computed_for_a_job_no_longer_selected(tab_class: type[JobTab],
                                                                          tmp_path: Path) -> None:
    """The user moves from a job whose answer is slow to another: when the slow answer comes, nothing of it shows."""
    runner = GatedRunner()
    app = Host(runner)
    async with app.run_test(size=(120, 36)) as pilot:
        tabs, tab = await _shown(app, pilot, tab_class)
        await _select(pilot, tabs, tab, _running(_entry(tmp_path / "old", STALE_JOB), STALE_JOB), rounds=3)
        tabs.select_job(_running(_entry(tmp_path / "new", NEW_JOB), NEW_JOB))
        await _settle(pilot)
        tab.tab_shown()
        runner.release.set()
        await _settle(pilot, 15)
        assert tab.selected.job_id == NEW_JOB
        assert STALE_JOB not in _text(tab), (tab_class.TAB.title, _text(tab))


# ------------------------------------------------------------------------------------------ the base's helper itself


class GatedTab(JobTab, Static):
    """A tab made for the test: its answer for a job waits for that job's gate; a job named ``boom`` raises."""

    TAB = TabSpec("Gated", "tab-gated", "jobs-gated", "9", "ntui.test.gated", "a test tab", groups=("test-gated",))

    def __init__(self) -> None:
        super().__init__("", id=self.TAB.widget_id)
        self.gates: dict[str, threading.Event] = {}
        self.shown: list[tuple[str, str | None]] = []  # (the answer's job, the job selected when it was shown)
        self.failures: list[str] = []

    @classmethod
    def build(cls, deps: TabDeps) -> GatedTab:
        return cls()

    def show_selected(self, selected: SelectedJob) -> None:
        job_id = selected.job_id
        if job_id is None or self.result(job_id) is not None:
            return
        gate = self.gates.setdefault(job_id, threading.Event())

        def answer() -> str:
            gate.wait(10)
            if job_id.startswith("boom"):
                raise RuntimeError(f"no answer for {job_id}")
            return f"answer for {job_id}"

        self.compute(job_id, answer, what="a test answer")

    def show_result(self, computed: Computed) -> None:
        self.shown.append((computed.job_id, self.selected.job_id))
        self.update(str(computed.value))

    def show_failure(self, text: str) -> None:
        self.failures.append(text)
        self.update(text)


class GatedHost(App[None]):
    def compose(self) -> ComposeResult:
        yield GatedTab()


def _pick(tab: GatedTab, job_id: str) -> None:
    tab.select_job(SelectedJob(job_id, "queue", row_key=job_id))


async def test_the_base_drops_a_late_answer_and_keeps_it_for_when_the_job_comes_back() -> None:
    app = GatedHost()
    async with app.run_test(size=(80, 10)) as pilot:
        tab = app.query_one(GatedTab)
        assert displayed(tab)
        _pick(tab, "a")
        await _settle(pilot, 2)
        assert tab.computing == "a"
        _pick(tab, "b")
        tab.gates["b"].set()
        await wait_until(pilot, lambda: tab.shown != [])  # the answers come from worker threads: their states
        tab.gates["a"].set()  # a's answer comes after b's
        await wait_until(pilot, lambda: tab.result("a") is not None)
        await _settle(pilot)
        assert tab.shown == [("b", "b")] and str(tab.render()) == "answer for b"
        kept = tab.result("a")
        assert kept is not None and kept.value == "answer for a"  # kept, not shown
        _pick(tab, "a")  # back to a: its kept answer, no new worker
        assert tab.computing is None


async def test_the_base_says_a_raising_worker_once_and_drops_a_stale_failure() -> None:
    app = GatedHost()
    async with app.run_test(size=(80, 10)) as pilot:
        tab = app.query_one(GatedTab)
        _pick(tab, "boom-1")
        tab.gates["boom-1"].set()
        await wait_until(pilot, lambda: tab.failure is not None)  # the worker's thread raised
        assert tab.failure is not None and "no answer for boom-1" in tab.failure and tab.failures
        _pick(tab, "boom-2")  # a failure of a job no longer selected is not said
        _pick(tab, "c")
        tab.gates["c"].set()
        await wait_until(pilot, lambda: str(tab.render()) == "answer for c")
        tab.gates["boom-2"].set()
        await app.workers.wait_for_complete()  # every gate is open: boom-2's worker has raised by then
        await _settle(pilot)
        assert tab.failure is None and str(tab.render()) == "answer for c"
        assert [n.severity for n in notified(app) if "no answer" in n.message] == ["error"]


class LocalOnlyTab(GatedTab):
    """A tab made for the test that cannot show a job of a cluster reached over ssh (every registered tab can)."""

    OVER_SSH = False


class LocalOnlyHost(App[None]):
    def compose(self) -> ComposeResult:
        yield LocalOnlyTab()


async def test_a_tab_that_cannot_show_a_remote_job_says_so_in_one_line_and_runs_nothing() -> None:
    app = LocalOnlyHost()
    async with app.run_test(size=(120, 10)) as pilot:
        tab = app.query_one(LocalOnlyTab)
        remote = SelectedJob("77", "queue", row_key="alpha/77", cluster="alpha")
        tab.select_job(remote)
        await _settle(pilot)
        assert tab.failures == [over_ssh_note("Gated", remote)]
        assert "job 77 is on alpha" in str(tab.render())
        assert tab.computing is None and not tab.gates  # no worker started for it
        assert not [n for n in notified(app) if "alpha" in n.message]  # not a failure of the tab: no notice
        _pick(tab, "a")  # a job here is computed as before
        tab.gates["a"].set()
        await wait_until(pilot, lambda: str(tab.render()) == "answer for a")  # from a worker's thread
        assert tab.computing is None and tab.failures == [over_ssh_note("Gated", remote)]
