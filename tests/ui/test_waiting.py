"""Issue 24 ([waiting]) in the app: why the selected pending job waits (in the details, fetched once per job and
reason), its elapsed time ticking with the queue row, what would start sooner (``w`` in the compose and jobs
views), a word when a job starts or ends (the bytes written to the terminal), and the shell key on a job that is
not running / a terminal that cannot suspend. Snapshots of the why and the what-if dialog at 120x36 and 80x24."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ntui.core.config import NotifySettings, QueueSettings, Settings
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.screens.whatif import WhatIfScreen
from ntui.ui.terminal import CAPTURE
from ntui.ui.widgets.job_details import JobDetailsPanel, details_fields
from tests.support.demo import settle, type_into
from tests.support.fakes import FakeRunner, capture, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import jobs_app, settle_jobs, squeue_line, wait_until
from tests.support.screenshots_waiting import WAITING_JOB, waiting_app, waiting_runner, whatif_scene, why_scene
from tests.ui.conftest import AppFactory

HOUR = QueueSettings(active_interval=3600, idle_interval=3600, max_backoff=3600)


def jobs_screen(app: Any) -> JobsScreen:
    screen = next(s for s in app.screen_stack if isinstance(s, JobsScreen))
    assert isinstance(screen, JobsScreen)
    return screen


def why_text(screen: JobsScreen) -> str:
    box = screen.query_one(JobDetailsPanel).query_one("#details-why")
    return str(box.render()) if box.display else ""


# ---------------------------------------------------------------- why it waits


async def test_the_why_of_the_selected_pending_job_is_fetched_once() -> None:
    runner = waiting_runner()
    app = waiting_app(runner, Settings(queue=HOUR))
    async with app.run_test(size=(120, 36)) as pilot:
        await why_scene(pilot)
        screen = jobs_screen(app)
        text = why_text(screen)
        assert text.startswith("Waiting in line: jobs with a higher priority are ahead of it")
        assert "estimated start 11:02 (in 1 h 32 min) on nid[200300-200307]" in text
        assert "Priority 69417 (age 1180, fair-share 52020, job size 217, partition 16000)" in text
        assert [a[0] for a in runner.argvs()].count("sprio") == 1
        for _ in range(3):  # refreshes and ticks: the words follow, the extras are not asked again
            screen.refresh_now()
            await settle_jobs(pilot)
            screen._tick()
        assert [a[0] for a in runner.argvs()].count("sprio") == 1
        screen.table.move_cursor(key="48213777")  # a running job: no why
        await settle_jobs(pilot)
        assert why_text(screen) == ""
        screen.table.move_cursor(key=WAITING_JOB)  # back: from the cache
        await settle_jobs(pilot)
        assert "Waiting in line" in why_text(screen)
        assert [a[0] for a in runner.argvs()].count("sprio") == 1


async def test_the_details_elapsed_ticks_with_the_queue_row() -> None:
    """Before: "Time 00:00:12 of 01:00:00" stayed while the row beside it counted on."""
    now = [datetime(2026, 11, 30, 4, 27, 0)]
    runner = FakeRunner({"squeue": capture("squeue_mix_array"),
                         ("scontrol", "show", "job"): capture("scontrol_show_job_running_2node_gpu"),
                         "sacct": capture("sacct_no_accounting")})
    app = jobs_app(runner=runner, settings=Settings(queue=HOUR), clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        screen.table.move_cursor(key="34")
        await settle_jobs(pilot)
        screen._tick()
        panel = screen.query_one(JobDetailsPanel)

        def time_row() -> str:
            assert panel.view is not None
            return str(dict(details_fields(panel.view, panel.elapsed))["Time"])

        assert time_row() == "0:12 of 1:00:00"  # squeue's spelling, as the queue row beside it
        now[0] += timedelta(seconds=30)
        screen._tick()
        await pilot.pause()
        assert time_row() == "0:42 of 1:00:00"
        assert screen.table.get_cell("34", "elapsed") == "0:42"  # the row it follows, spelled alike


# ---------------------------------------------------------------- what would start sooner


async def test_what_if_in_the_jobs_view_asks_each_shape_once_and_offers_the_resubmission() -> None:
    runner = waiting_runner()
    app = waiting_app(runner, Settings(queue=HOUR))
    async with app.run_test(size=(120, 36)) as pilot:
        await whatif_scene(pilot)
        dialog = app.screen
        assert isinstance(dialog, WhatIfScreen)
        tests = [a for a in runner.argvs() if a[:2] == ("sbatch", "--test-only")]
        assert [a[2] if len(a) > 3 else None for a in tests] == [None, "--nodes=4", "--time=03:00:00",
                                                                  "--qos=gpu_regular"]
        summary = str(dialog.query_one("#whatif-summary").render())
        assert summary == "QOS gpu_regular instead of gpu_premium starts now: 1 h 32 min sooner than as it is"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WhatIfScreen)
        assert len([a for a in runner.argvs() if a[:2] == ("sbatch", "--test-only")]) == 4  # never on a timer


async def test_what_if_needs_a_pending_job() -> None:
    runner = waiting_runner()
    app = waiting_app(runner, Settings(queue=HOUR))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        screen.table.move_cursor(key="48213777")
        await settle_jobs(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert not isinstance(app.screen, WhatIfScreen)
        assert not any(a[0] == "sbatch" for a in runner.argvs())


async def test_what_if_in_the_compose_view_applies_the_chosen_shape_to_the_form(app_factory: AppFactory) -> None:
    answers = {None: "2026-06-01T10:30:00", "1": "2026-06-01T09:30:10"}

    def test_only(argv: tuple[str, ...]) -> Any:
        script = open(argv[-1]).read()  # noqa: SIM115 - the rendered script with the shape's change
        nodes = "1" if "#SBATCH --nodes=1\n" in script else None
        return result(stderr=f"sbatch: Job 1 to start at {answers[nodes]} using 4 processors on nodes nid001 "
                             "in partition regular\n")

    sinfo = "regular*\x1fup\x1f2-00:00:00\x1f1536\x1fmixed\x1fnid[001-1536]\x1fgpu:4\n"
    runner = FakeRunner({"sinfo": result(stdout=sinfo), "sacctmgr": result(stdout="m4242_g|regular\n"),
                         "sbatch --test-only": test_only})
    app = app_factory(runner=runner, preset="demo-torchrun")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_into(pilot, "sbatch.nodes", "2")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, WhatIfScreen) and app.screen.done)
        dialog = app.screen
        assert isinstance(dialog, WhatIfScreen)
        labels = [s.label for s in dialog.shapes]
        assert labels[:2] == ["as it is", "1 node instead of 2"]
        table = dialog.query_one("#whatif-table")
        table.move_cursor(row=1)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        compose = app.screen
        assert compose.form.control("sbatch.nodes").value == "1"  # type: ignore[attr-defined]


# ---------------------------------------------------------------- a word when it starts or ends


async def test_a_job_that_ends_rings_and_notifies_through_the_terminal() -> None:
    running = squeue_line(JobID="77", ArrayJobID="77", ArrayTaskID="N/A", Name="train", StateCompact="R",
                          State="RUNNING", Reason="None", TimeUsed="0:10", TimeLimit="10:00", NumNodes="1",
                          NodeList="nid001", Partition="debug", UserName="alice") + "\n"
    pending = running.replace("\x1fR\x1fRUNNING\x1f", "\x1fPD\x1fPENDING\x1f").replace("nid001", "")
    sacct = "77|train|FAILED|3:0|None|2026-06-01T09:00:00|2026-06-01T09:01:00|2026-06-01T09:29:00|00:28:00|nid001|" \
            "m|normal|debug|/tmp\n"
    runner = FakeRunner({"squeue": [result(stdout=pending), result(stdout=running), result(stdout="")],
                         ("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
                         "sacct": result(stdout=sacct)})
    settings = Settings(queue=HOUR, notify=NotifySettings(bell=True, desktop=True, states=("RUNNING", "ENDED")))
    app = jobs_app(runner=runner, settings=settings, user="alice")
    written: list[str] = []
    setattr(app, CAPTURE, written)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        assert written == []  # the first answer is a baseline
        screen.refresh_now()
        await settle_jobs(pilot)
        assert written == ["\x07\x1b]9;ntui: job 77 started: train on nid001\x07"
                           "\x1b]777;notify;ntui: job 77 started;train on nid001\x07"]
        screen.refresh_now()  # it left the queue: told once its final state is known
        await settle_jobs(pilot)
        await wait_until(pilot, lambda: len(written) == 2)
        assert written[1] == ("\x07\x1b]9;ntui: job 77 FAILED (exit 3:0): train\x07"
                              "\x1b]777;notify;ntui: job 77 FAILED (exit 3:0);train\x07")


async def test_chosen_states_stay_quiet() -> None:
    running = squeue_line(JobID="77", ArrayJobID="77", ArrayTaskID="N/A", Name="train", StateCompact="R",
                          State="RUNNING", Reason="None", TimeUsed="0:10", TimeLimit="10:00", NumNodes="1",
                          NodeList="nid001", Partition="debug", UserName="alice") + "\n"
    pending = running.replace("\x1fR\x1fRUNNING\x1f", "\x1fPD\x1fPENDING\x1f")
    runner = FakeRunner({"squeue": [result(stdout=pending), result(stdout=running)],
                         ("scontrol", "show", "job"): capture("scontrol_show_job_unknown")})
    settings = Settings(queue=HOUR, notify=NotifySettings(states=("FAILED",)))
    app = jobs_app(runner=runner, settings=settings, user="alice")
    written: list[str] = []
    setattr(app, CAPTURE, written)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        jobs_screen(app).refresh_now()
        await settle_jobs(pilot)
        assert written == []


# ---------------------------------------------------------------- a shell inside a running job


async def test_the_shell_key_needs_a_running_job_and_a_terminal() -> None:
    runner = waiting_runner()
    app = waiting_app(runner, Settings(queue=HOUR))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        screen.table.move_cursor(key=WAITING_JOB)
        await settle_jobs(pilot)
        await pilot.press("x")
        await pilot.pause()
        assert any("a shell needs a running job" in n.message for n in notified(app))
        screen.table.move_cursor(key="48213777")
        await settle_jobs(pilot)
        await pilot.press("x")  # headless: Textual cannot suspend; the way out is said, nothing runs
        await pilot.pause()
        assert any("ntui attach 48213777" in n.message for n in notified(app))
        assert not any(a[0] == "srun" for a in runner.argvs())


# ---------------------------------------------------------------- snapshots


def _why(snap_compare: Callable[..., bool], size: tuple[int, int]) -> bool:
    return snap_compare(waiting_app(), terminal_size=size, run_before=why_scene)


def test_why_snapshot_wide(snap_compare: Callable[..., bool]) -> None:
    assert _why(snap_compare, (120, 36))


def test_why_snapshot_narrow(snap_compare: Callable[..., bool]) -> None:
    assert _why(snap_compare, (80, 24))


def test_whatif_snapshot_wide(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(waiting_app(), terminal_size=(120, 36), run_before=whatif_scene)


def test_whatif_snapshot_narrow(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(waiting_app(), terminal_size=(80, 24), run_before=whatif_scene)
