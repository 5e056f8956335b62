"""The Stacks tab of a job on a cluster reached over ssh (issue #45), in the real app with two clusters: Slurm faked at
the runner's edge with a real job's answers (``tests/data/stacks/torchrun-stuck``: its squeue line, its details and
its stacks step's output on the dev cluster), each cluster's files saying its own interpreter and py-spy as an
agent's hello does. The step runs through the job's own cluster's runner with that cluster's tools; no ntui there
and a dropped link are said in the tab; the same id on the other cluster is another job."""

from __future__ import annotations

from typing import Any

from ntui.core.remote.files import LocalFiles
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.stacks_pane import StacksPane
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_clusters import clusters_app, job_line, link_down, show_job
from tests.support.screenshots_jobs import settle_jobs, wait_until
from tests.support.screenshots_stacks import CAPTURE, JOB

SIZE = (150, 40)
PYTHON, PY_SPY = "/cluster/venv/bin/python3", "/cluster/venv/bin/py-spy"


class _Tools(LocalFiles):
    """A cluster's files whose agent said its interpreter and py-spy (None: no agent there, ``note`` says why)."""

    def __init__(self, python: str | None, py_spy: str | None, note: str | None = None) -> None:
        self.python, self.py_spy, self.note = python, py_spy, note

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        return []  # the recent list's read: not what these tests look at

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        return None  # not ntui's job there


def _alpha(srun: Any = None) -> FakeRunner:
    """The real job's answers: squeue, scontrol show job -d, and the stacks step's output."""
    def text(name: str) -> str:
        return (CAPTURE / name).read_text()

    return FakeRunner({"squeue": result(stdout=text("squeue.stdout")),
                       ("scontrol", "show", "job"): result(stdout=text("show_job.stdout")),
                       "srun": srun if srun is not None else result(stdout=text("srun.stdout"),
                                                                     stderr=text("srun.stderr"))},
                      default=result())


def _beta() -> FakeRunner:
    """beta's job of the same id: pending (no process to sample)."""
    runner = FakeRunner({"squeue": result(stdout=job_line(JOB, "tokenize", reason="Priority") + "\n")},
                        default=result())
    runner.add(("scontrol", "show", "job", "-d", JOB), result(stdout=show_job(JOB, "tokenize")))
    return runner


def _screen(app: Any) -> JobsScreen:
    screen = next(s for s in app.screen_stack if isinstance(s, JobsScreen))
    assert isinstance(screen, JobsScreen)
    return screen


def _text(pane: StacksPane) -> str:
    return str(pane.query_one("#stacks-text").render())


def _app(alpha: FakeRunner, beta: FakeRunner, tools: dict[str, _Tools]) -> Any:
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta}, user="root")
    app.cluster_files = lambda name: tools[name]  # type: ignore[method-assign]
    return app


def _sruns(runner: FakeRunner) -> list[tuple[str, ...]]:
    return [a for a in runner.argvs() if a[0] == "srun"]


async def _open(pilot: Any, app: Any, key: str) -> StacksPane:
    await settle_jobs(pilot)
    screen = _screen(app)
    await wait_until(pilot, lambda: key in screen.table.rows)
    screen.table.move_cursor(key=key)
    await settle_jobs(pilot)
    await pilot.press("k")
    return screen.query_one(StacksPane)


async def test_the_stacks_tab_takes_a_remote_jobs_stacks_with_its_clusters_own_tools() -> None:
    alpha, beta = _alpha(), _beta()
    app = _app(alpha, beta, {"alpha": _Tools(PYTHON, PY_SPY), "beta": _Tools(PYTHON, PY_SPY)})
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot, app, f"alpha/{JOB}")
        await wait_until(pilot, lambda: f"alpha/{JOB}" in pane.taken)
        (srun,) = _sruns(alpha)
        probe = srun[srun.index("-m") - 1:]
        assert probe[:3] == (PYTHON, "-m", "ntui.core.stacks.probe")  # the cluster's, never this machine's
        assert probe[probe.index("--py-spy") + 1] == PY_SPY
        assert f"--jobid={JOB}" in srun and "--overlap" in srun
        assert pane.failure is None
        text = _text(pane)
        assert text.startswith(f"Job {JOB}: 4 ranks on 2 nodes") and "rank 3: wait_for_release" in text

        screen = _screen(app)
        await wait_until(pilot, lambda: f"beta/{JOB}" in screen.table.rows)
        screen.table.move_cursor(key=f"beta/{JOB}")  # the same id on beta: pending there, not alpha's stacks
        await settle_jobs(pilot)
        await wait_until(pilot, lambda: f"Job {JOB} on beta is PENDING" in _text(pane))
        assert not _sruns(beta) and len(_sruns(alpha)) == 1


async def test_no_ntui_on_the_cluster_is_said_in_the_stacks_tab() -> None:
    alpha = _alpha()
    note = "ntui is not installed on alpha (plain commands read its files)"
    app = _app(alpha, _beta(), {"alpha": _Tools(None, None, note), "beta": _Tools(PYTHON, PY_SPY)})
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot, app, f"alpha/{JOB}")
        await wait_until(pilot, lambda: "install ntui there" in _text(pane))
        assert f"No stacks for job {JOB}: the stacks of a job on alpha are taken by alpha's own ntui" in _text(pane)
        assert note in _text(pane) and not _sruns(alpha)


async def test_a_dropped_link_is_said_in_the_stacks_tab() -> None:
    alpha = _alpha(srun=link_down("alpha"))
    app = _app(alpha, _beta(), {"alpha": _Tools(PYTHON, PY_SPY), "beta": _Tools(PYTHON, PY_SPY)})
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot, app, f"alpha/{JOB}")
        await wait_until(pilot, lambda: pane.failure is not None)
        assert _text(pane).startswith("No stacks: ssh to alpha: the connection dropped")
        assert f"alpha/{JOB}" not in pane.taken
