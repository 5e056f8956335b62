"""The Sweep tab of a sweep on a cluster reached over ssh (issue #45), in the real app with two clusters: Slurm faked
at the runner's edge, each cluster's history answered by the real agent over a pipe of protocol lines from that
cluster's own state directory, its files read as the agent reads them. The table is read there (copies of the
sweep's files, its tasks' states asked of that cluster), its paths said as the cluster's; the same id on the other
cluster is another job; a dropped link is said in the tab."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ntui.core.records.history import History
from ntui.core.remote.files import LocalFiles
from ntui.core.remote.protocol import MAX_CHUNK
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.sweep_pane import SweepPane
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_clusters import agent_answer, clusters_app, job_line, link_down, show_job
from tests.support.screenshots_jobs import settle_jobs, squeue_line, wait_until
from tests.support.screenshots_sweep import SACCT_TASKS, SWEEP_ID, SWEEP_LOG_DIR, sweep_entry, write_sweep_files

SIZE = (150, 40)
TASK_ROW = f"{SWEEP_ID}_0"


class _ClusterFiles(LocalFiles):
    """A cluster's files: its files read as the agent reads them (every listing and read recorded), its history
    entries answered by the real agent (``agent.serve``) over a pipe, from that cluster's own state directory."""

    def __init__(self, name: str, state: Path) -> None:
        self.name, self.state, self.down = name, state, False
        self.asked: list[tuple[str, str]] = []

    def _ask(self, what: str, path: str) -> None:
        if self.down:
            raise link_down(self.name)
        self.asked.append((what, path))

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        self._ask("job", job_id)
        answer = agent_answer(self.state, {"op": "job", "job_id": job_id, "cluster": cluster})
        found = answer.get("job")
        return found if isinstance(found, dict) else None

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        return []  # the recent list's read: not what these tests look at

    def listdir(self, path: str) -> Any:
        self._ask("listdir", path)
        return super().listdir(path)

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Any:
        self._ask("read", path)
        return super().read(path, offset, limit, from_end=from_end)


def _record_sweep(state: Path, log_dir: Path) -> None:
    """The sweep in the cluster's history: its script names a manifest path no reader here may fall back on."""
    e = sweep_entry()
    history = History(state)
    try:
        history.record_intent(token="tsweep", preset=e.preset, preset_path=None, overrides=e.overrides,
                              job_name=e.job_name, launcher=e.launcher, nodes=1, world_size=1,
                              log_dir=str(log_dir), log_stem=e.log_stem,
                              script=e.script.replace(SWEEP_LOG_DIR, "/nonexistent/logs"))
        history.record_submitted("tsweep", SWEEP_ID, "alpha", None)
    finally:
        history.close()


def _task_line(task: int, state: str = "RUNNING") -> str:
    return squeue_line(JobID=str(48213803 + task), ArrayJobID=SWEEP_ID, ArrayTaskID=str(task), Name="lr-sweep",
                       StateCompact="R" if state == "RUNNING" else "PD", State=state, Reason="None",
                       TimeUsed="41:09", TimeLimit="1:00:00", StartTime="N/A", NumNodes="1",
                       NodeList=f"alpha-g0{task}", tres_alloc="cpu=8,node=1", Partition="gpu", QOS="normal",
                       WorkDir="/home/alice/train", UserName="alice", exit_code="")


def _alpha() -> FakeRunner:
    lines = "".join(_task_line(t) + "\n" for t in (0, 1))
    runner = FakeRunner({"squeue": result(stdout=lines), "sacct": result(stdout=SACCT_TASKS)}, default=result())
    text = show_job(TASK_ROW, "lr-sweep", "RUNNING", nodes="alpha-g00", partition="gpu")
    runner.add(("scontrol", "show", "job", "-d", TASK_ROW), result(stdout=text))
    runner.add(("scontrol", "show", "job", TASK_ROW), result(stdout=text))
    return runner


def _beta() -> FakeRunner:
    """beta's job of the sweep's id: a plain job ntui did not submit there."""
    runner = FakeRunner({"squeue": result(stdout=job_line(SWEEP_ID, "tokenize", "RUNNING", reason="None",
                                                          nodelist="beta-c1") + "\n")}, default=result())
    text = show_job(SWEEP_ID, "tokenize", "RUNNING", nodes="beta-c1")
    runner.add(("scontrol", "show", "job", "-d", SWEEP_ID), result(stdout=text))
    runner.add(("scontrol", "show", "job", SWEEP_ID), result(stdout=text))
    return runner


def _screen(app: Any) -> JobsScreen:
    screen = next(s for s in app.screen_stack if isinstance(s, JobsScreen))
    assert isinstance(screen, JobsScreen)
    return screen


def _head(pane: SweepPane) -> str:
    return str(pane.query_one("#sweep-head").render())


def _two_clusters(tmp_path: Path) -> tuple[Any, dict[str, _ClusterFiles], FakeRunner, FakeRunner, Path]:
    log_dir = tmp_path / "alpha-logs"
    write_sweep_files(str(log_dir))
    _record_sweep(tmp_path / "alpha-home", log_dir)
    files = {"alpha": _ClusterFiles("alpha", tmp_path / "alpha-home"),
             "beta": _ClusterFiles("beta", tmp_path / "beta-home")}
    alpha, beta = _alpha(), _beta()
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    app.cluster_files = lambda name: files[name]  # type: ignore[method-assign]
    return app, files, alpha, beta, log_dir


async def test_the_sweep_tab_reads_a_remote_sweep_on_its_own_cluster(tmp_path: Path) -> None:
    app, files, alpha, beta, log_dir = _two_clusters(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle_jobs(pilot)
        screen = _screen(app)
        await wait_until(pilot, lambda: {f"alpha/{TASK_ROW}", f"beta/{SWEEP_ID}"} <= set(screen.table.rows))
        screen.table.move_cursor(key=f"alpha/{TASK_ROW}")
        await settle_jobs(pilot)
        await pilot.press("v")
        pane = screen.query_one(SweepPane)
        await wait_until(pilot, lambda: pane.table is not None)
        table = pane.table
        assert table is not None and pane.failure is None
        rows = {r.index: r for r in table.rows}
        assert dict(rows[0].values) == {"lr": "3e-4", "seed": "1"} and rows[0].metric == "1.7410"
        assert rows[2].state == "FAILED" and rows[2].metric == "2.3012" and rows[3].metric is None
        assert table.groups and "out of memory" in table.groups[0][0].lower()
        assert "ntui-remote-" not in repr(table)  # the copies' paths never shown
        assert _head(pane).startswith(f"sweep {SWEEP_ID} on alpha")
        assert ("job", SWEEP_ID) in files["alpha"].asked  # its record: the cluster's, asked there
        assert ("listdir", str(log_dir)) in files["alpha"].asked
        assert any(a[0] == "sacct" for a in alpha.argvs()) and not any(a[0] == "sacct" for a in beta.argvs())
        assert files["beta"].asked == []

        screen.table.move_cursor(key=f"beta/{SWEEP_ID}")  # the same id on beta: not a sweep ntui submitted there
        await settle_jobs(pilot)
        await wait_until(pilot, lambda: "is not a sweep" in _head(pane))
        assert _head(pane).startswith(f"Job {SWEEP_ID} on beta is not a sweep")
        assert pane.table is None and ("job", SWEEP_ID) in files["beta"].asked


async def test_a_dropped_link_is_said_in_the_sweep_tab(tmp_path: Path) -> None:
    app, files, alpha, _, _ = _two_clusters(tmp_path)
    files["alpha"].down = True
    async with app.run_test(size=SIZE) as pilot:
        await settle_jobs(pilot)
        screen = _screen(app)
        await wait_until(pilot, lambda: f"alpha/{TASK_ROW}" in screen.table.rows)
        screen.table.move_cursor(key=f"alpha/{TASK_ROW}")
        await settle_jobs(pilot)
        await pilot.press("v")
        pane = screen.query_one(SweepPane)
        await wait_until(pilot, lambda: pane.failure is not None)
        assert "ssh to alpha: the connection dropped" in _head(pane)
        assert pane.table is None and not any(a[0] == "sacct" for a in alpha.argvs())


def test_the_copies_paths_are_said_as_the_clusters() -> None:
    """The table's words (warnings, the manifest's problem, the verdicts) name the cluster's paths, not the
    copies'."""
    from ntui.core.jobs.sweep import SweepRow, SweepTable
    from ntui.core.remotesweep import said_as_cluster

    copy = "/tmp/ntui-remote-x1"
    table = SweepTable("5", ("lr",), (SweepRow(0, "5_0", {"lr": "1"}, "FAILED", verdict=f"{copy}/a.out: OOM"),),
                       groups=((f"{copy}/a.out: OOM", (0,)),), problem=f"{copy}/m.json: bad",
                       warnings=(f"progress of task 0: {copy}/b.out",))
    said = said_as_cluster(table, lambda t: t.replace(copy, "/home/a/logs"))
    assert said.rows[0].verdict == "/home/a/logs/a.out: OOM" and said.groups[0][0] == "/home/a/logs/a.out: OOM"
    assert said.problem == "/home/a/logs/m.json: bad" and said.warnings == ("progress of task 0: /home/a/logs/b.out",)
    assert replace(said, rows=table.rows, groups=table.groups, problem=table.problem,
                   warnings=table.warnings) == table  # nothing else changed
