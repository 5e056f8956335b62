"""The jobs view: diffing, selection, back-off banner, filter, actions, finished jobs, details cache, snapshot.

FakeRunner tests answer with real squeue / scontrol / sacct captures from ``tests/data/slurm/`` (Slurm 22.05.8)
and drive refreshes with ``refresh_now()`` (the timers are set to an hour so nothing fires by itself). The
``cluster`` tests run the same screen against the dev cluster.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.queue import ENDED
from ntui.core.slurm.runner import CommandResult, SubprocessRunner
from ntui.core.slurm.squeue import parse_squeue
from ntui.ui.screens.action_dialogs import ConfirmCancelScreen, ConfirmRequeueScreen, SignalPickerScreen
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.job_details import JobDetailsPanel, details_fields
from ntui.ui.widgets.queue_table import QueueTable, id_sort_key
from tests.support.fakes import FakeRunner, capture, result
from tests.support.notes import notified
from tests.support.screenshots_jobs import QUIET, jobs_app, settle_jobs, squeue_line, wait_until

# no start/end notices in these scenes (a toast over the status line): tests/ui/test_waiting.py has them
HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600, max_backoff=3600), notify=QUIET.notify)


MIX = capture("squeue_mix_array")
MIX_LINES = MIX.stdout.splitlines(keepends=True)


def mix_without(*job_ids: str, replace: dict[str, str] | None = None, extra: str = "") -> CommandResult:
    """The captured mix with some jobs (raw JobID) removed and text replaced, plus extra lines."""
    lines = [ln for ln in MIX_LINES if ln.split("\x1f", 1)[0] not in job_ids]
    text = "".join(lines) + extra
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    return result(stdout=text)


def runner(squeue: Any = MIX, **more: Any) -> FakeRunner:
    r = FakeRunner({"squeue": squeue, ("scontrol", "show", "job"): capture("scontrol_show_job_running_2node_gpu")})
    for key, value in more.items():
        r.add(key.replace("_", " "), value)
    return r


def screen_of(app: Any) -> JobsScreen:
    screen = app.screen
    assert isinstance(screen, JobsScreen)
    return screen


def calls(r: FakeRunner, *prefix: str) -> list[tuple[str, ...]]:
    return [a for a in r.argvs() if a[: len(prefix)] == prefix]


async def refresh(pilot: Any) -> JobsScreen:
    screen = screen_of(pilot.app)
    screen.refresh_now()
    await settle_jobs(pilot)
    return screen


# ---------------------------------------------------------------- table, diff, selection


async def test_rows_columns_and_array_tasks() -> None:
    app = jobs_app(runner=runner(), settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        table = screen_of(app).table
        assert [c.label for c in table.columns] == [
            "ID", "Name", "State", "Elapsed", "Limit", "Nodes", "Nodelist (reason)", "Partition", "QOS"]
        keys = table.ordered_keys
        assert len(keys) == 10  # the arrays 36 and 41: one row each (ntui/core/jobs/arrays.py)
        assert {"36", "41", "34", "35"} <= set(keys) and not any("_" in k for k in keys)
        assert table.get_row("36")[0] == "▸ 36" and table.get_row("36")[6] == "4 tasks: 1 running, 3 pending"
        assert table.get_row("41")[2] == "PENDING" and table.get_row("41")[6] == "6 tasks: 6 pending"
        screen = screen_of(app)
        for array in ("36", "41"):  # t opens an array into one row per task, under it
            table.move_cursor(key=array)
            await pilot.press("t")
            await settle_jobs(pilot)
        keys = table.ordered_keys
        assert len(keys) == 20
        assert {"36_0", "36_1", "36_3", "41_0", "41_5", "34", "35"} <= set(keys)  # one row per array task
        assert keys[keys.index("36") + 1:keys.index("36") + 5] == ("36_0", "36_1", "36_2", "36_3")
        assert table.get_row("36")[0] == "▾ 36" and table.get_row("36_1")[0] == "  36_1"
        table.sort("name", reverse=True)  # the tasks stay under their array whatever the order
        await pilot.pause()
        keys = table.ordered_keys
        assert keys[keys.index("41") + 1:keys.index("41") + 7] == tuple(f"41_{i}" for i in range(6))
        table.move_cursor(key="36_2")
        await pilot.press("t")  # on a task: folds its array
        await settle_jobs(pilot)
        assert "36_2" not in table.ordered_keys and table.cursor_key == "36" and screen.queue_box.pane_key() == "36_0"
        table.sort(None)
        assert table.get_row("34")[:7] == ["34", "train 2n", "RUNNING", "0:12", "1:00:00", "2", "nid[001-002]"]
        assert table.get_row("38")[6] == "(Resources)"
        assert table.get_row("35")[1] == "ünï cödé: run #1"
        running = table.cell_style("34", 2, "RUNNING")
        pending = table.cell_style("38", 2, "PENDING")
        assert running is not None and pending is not None and running.color != pending.color  # states coloured
        argv = calls(app.runner, "squeue")[0]  # type: ignore[arg-type]
        assert "--me" in argv and "--array" in argv and "--local" in argv  # --local: no federation RPC


async def test_diff_updates_in_place_and_keeps_the_selection() -> None:
    second = mix_without("38", replace={"\x1fPriority\x1f": "\x1fResources\x1f", "\x1f0:12\x1f": "\x1f0:22\x1f"},
                         extra=squeue_line(JobID="45", ArrayJobID="45", ArrayTaskID="N/A", Name="new one",
                                           StateCompact="PD", State="PENDING", Reason="Priority", TimeUsed="0:00",
                                           TimeLimit="10:00", NumNodes="1", Partition="debug", UserName="root")
                         + "\n")
    r = runner([MIX, second], sacct=capture("sacct_no_accounting"))
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        table = screen.table
        table.move_cursor(key="39")
        table.sort("name")  # the selection follows the row, not the index
        await settle_jobs(pilot)
        assert table.cursor_key == "39"
        screen = await refresh(pilot)
        change = screen.last_refresh.change if screen.last_refresh else None
        assert change is not None and not change.reloaded
        assert (change.added, change.removed) == (1, 0)  # 45 added; 38 left: kept as an ended row
        assert table.cursor_key == "39"
        assert table.get_row("39")[6] == "(Resources)"
        assert table.get_row("34")[3] == "0:22"
        assert table.get_row("45")[1] == "new one"
        assert table.row_tag("38") == ENDED


async def test_many_departures_clear_and_refill_instead_of_remove_row_storms() -> None:
    def array(n: int) -> str:
        return "".join(
            squeue_line(JobID="100", ArrayJobID="100", ArrayTaskID=str(i), Name="sweep", StateCompact="PD",
                        State="PENDING", Reason="JobHeldUser", TimeUsed="0:00", TimeLimit="1:00", NumNodes="1",
                        Partition="debug", UserName="root") + "\n"
            for i in range(n)
        )

    r = runner([result(stdout=array(500)), result(stdout=array(20))],
               sacct=capture("sacct_no_accounting"), scontrol_show_job=capture("scontrol_show_job_unknown"))
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        assert screen.table.ordered_keys == ("100",)  # 500 tasks, one row
        await pilot.press("t")
        await settle_jobs(pilot)
        screen.table.move_cursor(key="100_7")
        screen = await refresh(pilot)
        assert screen.last_refresh is not None and screen.last_refresh.change.reloaded
        assert screen.table.cursor_key == "100_7"
        # 480 tasks left at once: one ended row for them, and one final-state look-up, not 480
        ended = [k for k in screen.table.ordered_keys if screen.table.row_tag(k) == ENDED]
        assert ended == ["100_[20-499]"]
        assert screen.table.get_row("100_[20-499]")[6].startswith("480 tasks · ended (state unknown")
        assert len(calls(r, "sacct")) == 1


# ---------------------------------------------------------------- polling, back-off banner


async def test_banner_on_unreachable_controller_backs_off_and_goes_after_recovery() -> None:
    settings = Settings(queue=QueueSettings(active_interval=10, idle_interval=60, max_backoff=300))
    unreachable = capture("squeue_unreachable")
    r = runner([MIX, unreachable, unreachable, MIX])
    app = jobs_app(runner=r, settings=settings, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        banner = screen.query_one("#jobs-banner")
        assert not banner.display
        screen = await refresh(pilot)
        screen._tick()
        assert banner.display
        text = str(banner.render())
        assert "controller unreachable, retry in 10 s" in text and "Unable to contact slurm controller" in text
        assert screen.table.row_count == 10  # the view is kept (its two arrays folded)
        screen = await refresh(pilot)
        screen._tick()
        assert "retry in 20 s" in str(banner.render())  # exponential back-off
        screen = await refresh(pilot)
        screen._tick()
        assert not banner.display and screen.policy.errors == 0
        assert "updated 0 s ago" in str(screen.query_one("#jobs-status").render())


async def test_refreshes_never_overlap() -> None:
    import threading

    gate = threading.Event()
    inflight: list[int] = []
    peak: list[int] = []

    def slow_squeue(argv: tuple[str, ...]) -> CommandResult:
        inflight.append(1)
        peak.append(len(inflight))
        gate.wait(60)  # released by the test (a loaded machine may take seconds for the key presses below)
        inflight.pop()
        return MIX

    r = runner(slow_squeue)
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: bool(inflight))  # the first squeue is in flight (not a fixed pause)
        screen = screen_of(app)
        for _ in range(5):
            screen.refresh_now()  # during a fetch: coalesced into one follow-up
            await pilot.press("r")
        gate.set()
        await settle_jobs(pilot)
        assert max(peak) == 1
        assert len(calls(r, "squeue")) == 2  # the first one, then exactly one follow-up


# ---------------------------------------------------------------- filter, sort, all users


async def test_filter_sort_and_all_users() -> None:
    app = jobs_app(runner=runner(), settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        table = screen.table
        await pilot.press("slash", *"held")
        await settle_jobs(pilot)
        assert table.row_count == 2  # the array 41 (its 6 tasks under one row) and 40
        assert set(table.ordered_keys) == {"40", "41"}
        await pilot.press("enter")
        assert table.has_focus and table.filter_text == "held"
        await pilot.press("escape")
        assert table.row_count == 10 and table.filter_text == ""
        await pilot.press("s")
        await settle_jobs(pilot)
        assert list(table.ordered_keys) == sorted(table.ordered_keys, key=id_sort_key)
        await pilot.press("a")
        await settle_jobs(pilot)
        argv = calls(app.runner, "squeue")[-1]  # type: ignore[arg-type]
        assert "--me" not in argv and "--array" not in argv  # everyone's pending array tasks stay folded
        assert [c.key for c in table.columns][:3] == ["id", "name", "user"]
        assert table.get_row("34")[2] == "root"


# ---------------------------------------------------------------- actions


async def test_actions_run_the_right_commands() -> None:
    r = runner(scancel=result(), scontrol_hold=result(), scontrol_release=result(),
               scontrol_requeue=[result(), result(stderr="Job is pending execution for job 38\n", returncode=1)])
    app = jobs_app(runner=r, settings=HOUR, user="root")
    notes: list[tuple[str, str]] = []
    original = app.notify

    def notify(message: str, *args: Any, **kw: Any) -> None:
        notes.append((str(message), str(kw.get("severity", "information"))))
        original(message, *args, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        table = screen.table

        async def select(key: str) -> None:
            table.move_cursor(key=key)
            await settle_jobs(pilot)

        await select("34")
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmCancelScreen)
        await pilot.press("n")  # keep it
        await settle_jobs(pilot)
        assert not calls(r, "scancel")
        await pilot.press("c", "y")
        await settle_jobs(pilot)
        assert calls(r, "scancel") == [("scancel", "34")]
        squeues = len(calls(r, "squeue"))
        assert squeues >= 2  # an immediate refresh after the action

        await pilot.press("C")
        assert isinstance(app.screen, SignalPickerScreen)
        await pilot.press("down", "down", "down", "enter")  # TERM INT HUP [USR1]
        await settle_jobs(pilot)
        assert calls(r, "scancel")[-1] == ("scancel", "--signal=USR1", "34")

        await select("40")  # held by the user: h releases
        await pilot.press("h")
        await settle_jobs(pilot)
        assert calls(r, "scontrol", "release") == [("scontrol", "release", "40")]
        await select("38")  # pending: h holds
        await pilot.press("h")
        await settle_jobs(pilot)
        assert calls(r, "scontrol", "uhold") == [("scontrol", "uhold", "38")]
        await select("34")  # running: Slurm would ignore a hold, so ntui says so and sends nothing
        await pilot.press("h")
        await settle_jobs(pilot)
        assert len(calls(r, "scontrol", "uhold")) == 1
        assert any("only keeps a pending job from starting" in m for m, _ in notes)

        await pilot.press("R")  # requeue loses the running job's work: it asks first
        assert isinstance(app.screen, ConfirmRequeueScreen)
        assert "everything since its last checkpoint is lost" in str(app.screen.query_one("#warning").visual)
        await pilot.press("n")
        await settle_jobs(pilot)
        assert not calls(r, "scontrol", "requeue")
        await pilot.press("R", "y")
        await settle_jobs(pilot)
        assert calls(r, "scontrol", "requeue") == [("scontrol", "requeue", "34")]
        await select("38")
        await pilot.press("R", "y")  # Slurm refuses: the reason shows, the view stays
        await settle_jobs(pilot)
        assert any("Job is pending execution" in m and sev == "error" for m, sev in notes)
        assert screen.table.row_count == 10 and app.screen is screen


# ---------------------------------------------------------------- finished jobs, details


async def test_finished_job_keeps_its_final_state_and_is_looked_up_once() -> None:
    completed = capture("scontrol_show_job_completed").stdout.replace("JobId=26", "JobId=34")
    r = runner([MIX, mix_without("34", "35")], sacct=capture("sacct_no_accounting"))
    r.add(("scontrol", "show", "job", "-d", "34"), result(stdout=completed))
    r.add(("scontrol", "show", "job", "-d", "35"), capture("scontrol_show_job_unknown"))
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = await refresh(pilot)
        table = screen.table
        # sacct (no accounting here) -> scontrol while the controller remembers -> "state unknown"
        assert table.get_row("34")[2] == "COMPLETED" and table.get_row("34")[6] == "exit 0:0"
        assert table.get_row("35")[2] == "ENDED"
        assert table.get_row("35")[6] == "ended (state unknown; last seen RUNNING)"
        assert table.row_tag("34") == ENDED and table.ordered_keys[-2:] == ("34", "35")
        for _ in range(3):
            await refresh(pilot)
        assert [a[2] for a in calls(r, "sacct")] == ["34", "35"]  # once per departed job, not per tick


async def test_details_fetched_once_per_state_with_gpu_indices() -> None:
    running = mix_without(replace={"36\x1f36\x1f1\x1farr-limited\x1fPD\x1fPENDING\x1fJobArrayTaskLimit":
                                   "36\x1f36\x1f1\x1farr-limited\x1fR\x1fRUNNING\x1fNone"})
    r = runner([MIX, MIX, MIX, running])
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        assert screen.table.cursor_key == "36" and screen.queue_box.pane_key() == "36_0"  # the array: its running task
        await pilot.press("t")
        screen.table.move_cursor(key="36_1")
        await settle_jobs(pilot)
        assert screen.table.cursor_key == "36_1"
        assert calls(r, "scontrol", "show", "job") == [("scontrol", "show", "job", "-d", k) for k in ("36_0", "36_1")]
        await refresh(pilot)
        await refresh(pilot)
        assert len(calls(r, "scontrol", "show", "job")) == 2  # cached while the state stays
        await refresh(pilot)  # 36_1 starts running: its details are fetched again
        assert len(calls(r, "scontrol", "show", "job")) == 3
        panel = screen.query_one(JobDetailsPanel)
        assert panel.view is not None and panel.view.details is not None
        assert panel.view.details.gres_by_node == {"nid001": (0, 1, 2, 3), "nid002": (0, 1, 2, 3)}
        fields = "\n".join(f"{k}: {v}" for k, v in details_fields(panel.view))
        assert "nid001  GPU 0-3\nnid002  GPU 0-3" in fields and "StdOut" not in fields
        assert "Stdout: /tmp/ntui-capture/train 2n-34.out" in fields and "Work dir: /tmp/ntui-capture" in fields


async def test_a_submission_refreshes_at_once_selects_the_job_and_catches_a_quick_finish() -> None:
    from ntui.core.jobs.submission import SubmittedJob

    new_job = squeue_line(JobID="46", ArrayJobID="46", ArrayTaskID="N/A", Name="just submitted", StateCompact="PD",
                          State="PENDING", Reason="Priority", TimeUsed="0:00", TimeLimit="10:00", NumNodes="1",
                          Partition="debug", UserName="root") + "\n"
    r = runner([MIX, result(stdout=MIX.stdout + new_job)], sacct=capture("sacct_no_accounting"))
    r.add(("scontrol", "show", "job", "-d", "47"), capture("scontrol_show_job_completed"))
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        assert len(calls(r, "squeue")) == 1
        app.last_submission = SubmittedJob("46", None, "/x/46.sbatch", "/x/46.out", ())
        await settle_jobs(pilot)
        assert len(calls(r, "squeue")) == 2  # refreshed at once, not at the next tick (an hour away)
        assert screen.table.cursor_key == "46"
        # a job that finished before any squeue saw it still gets its row, with its final state
        app.last_submission = SubmittedJob("47", None, "/x/47.sbatch", "/x/47.out", ())
        await settle_jobs(pilot)
        assert screen.table.get_row("47")[2] == "COMPLETED" and screen.table.row_tag("47") == ENDED
        assert len(calls(r, "squeue")) == 3


# ---------------------------------------------------------------- snapshot


def test_jobs_view_snapshot(snap_compare: Callable[..., bool]) -> None:
    r = runner([MIX, mix_without("42")], scontrol_show_job=capture("scontrol_show_job_running_2node_gpu"),
               sacct=capture("sacct_no_accounting"))
    r.add(("scontrol", "show", "job", "-d", "42"), capture("scontrol_show_job_unknown"))
    r.add("sinfo --version", capture("sinfo_version"))  # the details pane names the Slurm version
    app = jobs_app(runner=r, settings=HOUR, user="alice")

    async def run_before(pilot: Any) -> None:
        await settle_jobs(pilot)
        screen = await refresh(pilot)
        screen.table.move_cursor(key="34")
        await settle_jobs(pilot)
        screen._tick()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


# ---------------------------------------------------------------- widget


async def test_queue_table_alone_renders_only_visible_lines() -> None:
    from textual.app import App, ComposeResult

    jobs = parse_squeue(MIX.stdout)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield QueueTable(id="t")

    app = One()
    async with app.run_test(size=(100, 8)) as pilot:
        table = app.query_one(QueueTable)
        from ntui.core.jobs.queue import queue_row

        table.apply({j.job_id: queue_row(j) for j in jobs})
        await pilot.pause()
        assert table.row_count == 18
        header = table.render_line(0).text
        assert header.startswith("ID") and "Nodelist (reason)" in header
        assert table.render_line(1).text.startswith("36_1 ")
        table.move_cursor(row=17)
        await pilot.pause()
        assert table.scroll_y > 0 and table.cursor_key == "36_0"
        visible = [table.render_line(y).text for y in range(table.scrollable_content_region.height)]
        assert visible[0].startswith("ID") and visible[-1].startswith("36_0")


# ---------------------------------------------------------------- on the dev cluster


def _cluster_settings() -> Settings:
    return Settings(queue=QueueSettings(active_interval=1, idle_interval=5, max_backoff=4))


async def _wait(pilot: Any, what: str, cond: Callable[[], bool], timeout: float = 90,
                diagnose: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{diagnose()}", pytrace=False)
        await pilot.pause(0.25)


def _cluster_view(dev_cluster: Any, *job_ids: str) -> str:
    """What the cluster says when a wait times out: queue, nodes, and the jobs' records."""
    parts = []
    for argv in (("squeue", "-a", "-o", "%i %T %r %N %M"), ("sinfo", "-N", "-o", "%N %T %E"),
                 *(("scontrol", "show", "job", j) for j in job_ids)):
        res = dev_cluster.run(*argv, timeout=30)
        parts.append(f"$ {' '.join(argv)}\n{(res.stdout + res.stderr).strip()}")
    return "\n".join(parts)


@pytest.mark.cluster
async def test_cluster_two_jobs_update_without_keys_and_c_cancels(dev_cluster: Any, tmp_path: Path) -> None:
    """As a new user would: two jobs; the long one is cancelled with c + confirm; the short one goes
    PENDING (both nodes busy) -> RUNNING -> COMPLETED on screen without a key press; final states stay listed."""
    from tests.cluster.test_e2e import ntui

    def submit(sleep_s: int) -> str:
        sub = ntui(dev_cluster, "submit", "local-srun", "--set", f"env.NTUI_CHECK_SLEEP={sleep_s}",
                   "--set", f"logs.dir={tmp_path}", timeout=60)
        assert sub.returncode == 0, sub.stderr
        return sub.stdout.strip().splitlines()[0]

    r = _EnvRunner(dict(dev_cluster.env))
    app = jobs_app(runner=r, settings=_cluster_settings(), user=None, clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot, timeout=30)
        screen = screen_of(app)
        table = screen.table
        long_job, short_job = submit(120), submit(2)
        seen: list[str] = []

        def short_state() -> str:
            state = table.get_row(short_job)[2] if short_job in table else ""
            if state and (not seen or seen[-1] != state):
                seen.append(state)
            return state

        await _wait(pilot, "both jobs in the table", lambda: long_job in table and bool(short_state()))
        table.move_cursor(key=long_job)
        await settle_jobs(pilot, timeout=30)
        assert table.cursor_key == long_job
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmCancelScreen)
        await pilot.press("y")
        await _wait(pilot, "the cancelled job's final state", lambda: long_job in table
                    and table.row_tag(long_job) == ENDED and table.get_row(long_job)[2] == "CANCELLED"
                    and bool(short_state()))
        assert ("scancel", long_job) in r.seen
        await _wait(pilot, "the short job to complete", lambda: short_state() == "COMPLETED", timeout=180,
                    diagnose=lambda: f"states seen: {seen}\n{_cluster_view(dev_cluster, long_job, short_job)}")
        assert "RUNNING" in seen and seen[-1] == "COMPLETED", seen
        assert table.row_tag(short_job) == ENDED and table.get_row(short_job)[6] == "exit 0:0"
        assert table.row_tag(long_job) == ENDED  # both stay listed


class _EnvRunner(SubprocessRunner):
    """A SubprocessRunner whose Slurm environment the test switches (dead controller <-> live one)."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__()
        self.env = env
        self.seen: list[tuple[str, ...]] = []

    def run(self, argv: Any, *, timeout: float, env: Any = None, input: str | None = None) -> CommandResult:  # noqa: A002
        self.seen.append(tuple(argv))
        return super().run(argv, timeout=timeout, env=self.env, input=input)


@pytest.mark.cluster
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a private controller copy")
async def test_cluster_backoff_banner_appears_and_goes_on_recovery(dev_cluster: Any, tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    text = dev_cluster.slurm_conf.read_text()
    conf.write_text("\n".join("SlurmctldPort=1" if ln.startswith("SlurmctldPort=") else ln
                              for ln in text.splitlines()) + "\nMessageTimeout=2\n")
    dead = dict(dev_cluster.env, SLURM_CONF=str(conf))
    r = _EnvRunner(dead)
    app = jobs_app(runner=r, settings=_cluster_settings(), user=None, clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = screen_of(app)
        banner = screen.query_one("#jobs-banner")
        await _wait(pilot, "the banner", lambda: banner.display, timeout=60)
        assert "controller unreachable, retry in" in str(banner.render())
        assert screen.policy.errors >= 1
        r.env = dict(dev_cluster.env)  # the controller is reachable again: no restart, no key press
        await _wait(pilot, "recovery", lambda: not banner.display and screen.last_update is not None, timeout=60)
        assert screen.policy.errors == 0


async def test_history_entry_survives_a_state_change() -> None:
    """Regression: the details refresh for a new state skipped the history lookup and then stored
    None over the entry found before, so a job ntui submitted lost its preset row and its log paths
    as soon as it started running (seen for real: "per-rank logs unknown" on ntui's own job)."""
    from dataclasses import replace as dc_replace

    from tests.support.screenshots_jobs import DemoHistory, demo_history

    entry = dc_replace(demo_history().entries["48213777"], job_id="36")
    running = mix_without(replace={"36\x1f36\x1f1\x1farr-limited\x1fPD\x1fPENDING\x1fJobArrayTaskLimit":
                                   "36\x1f36\x1f1\x1farr-limited\x1fR\x1fRUNNING\x1fNone"})
    r = runner([MIX, running])
    app = jobs_app(runner=r, settings=HOUR, user="root", history_factory=lambda: DemoHistory({"36": entry}))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        await pilot.press("t")
        screen.table.move_cursor(key="36_1")
        await settle_jobs(pilot)
        assert screen.table.cursor_key == "36_1"
        await refresh(pilot)  # 36_1 starts running: details fetched again
        assert [c[-1] for c in calls(r, "scontrol", "show", "job")] == ["36_0", "36_1", "36_1"]
        fields = "\n".join(f"{k}: {v}" for k, v in details_fields(screen.query_one(JobDetailsPanel).view))
        assert "alice-ddp --set sbatch.nodes=4" in fields


async def test_E_from_the_queue_opens_the_failing_rank(tmp_path: Path) -> None:
    """`E` works from anywhere in the jobs view, not only with focus in the log pane (seen for real:
    pressed on the queue table, it did nothing)."""
    from dataclasses import replace as dc_replace

    from ntui.ui.widgets.log_pane import LogPane
    from tests.support.screenshots_jobs import DemoHistory, demo_history, demo_jobs_runner
    from tests.support.screenshots_logs import FAILING_RANK, JOB_ID, write_demo_logs

    paths = write_demo_logs(tmp_path)
    entry = dc_replace(demo_history().entries[JOB_ID], log_dir=paths.log_dir, log_stem=paths.stem, world_size=4)
    app = jobs_app(runner=demo_jobs_runner(), settings=HOUR, history_factory=lambda: DemoHistory({JOB_ID: entry}))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        assert screen.table.cursor_key == JOB_ID
        screen.table.focus()
        pane = screen.query_one(LogPane)
        for _ in range(100):  # the watcher thread reads the files and triages them
            await pilot.pause(0.05)
            if pane.triage_line.rank == FAILING_RANK:
                break
        await pilot.press("E")
        for _ in range(40):
            await pilot.pause(0.05)
            if pane.view_keys == (FAILING_RANK,):
                break
        assert pane.view_mode == "rank" and pane.view_keys == (FAILING_RANK,)


async def test_logs_of_an_ntui_job_show_while_scontrol_hangs(tmp_path: Path) -> None:
    """The history look-up that gives the log paths does not wait for the controller: with ``scontrol show
    job`` hanging, the log pane already follows the job's rank files (it used to wait for the scontrol
    round trip, i.e. the whole Slurm timeout on a hung controller)."""
    import threading
    from dataclasses import replace as dc_replace

    from ntui.ui.widgets.log_pane import LogPane
    from tests.support.screenshots_jobs import DemoHistory, demo_history, demo_jobs_runner
    from tests.support.screenshots_logs import JOB_ID, write_demo_logs

    paths = write_demo_logs(tmp_path)
    entry = dc_replace(demo_history().entries[JOB_ID], log_dir=paths.log_dir, log_stem=paths.stem, world_size=4)
    gate = threading.Event()
    asked: list[tuple[str, ...]] = []

    def hung_scontrol(argv: tuple[str, ...]) -> CommandResult:
        asked.append(argv)
        gate.wait(30)
        return capture("scontrol_show_job_unknown")

    r = demo_jobs_runner()
    r.add(("scontrol", "show", "job", "-d", JOB_ID), hung_scontrol)
    app = jobs_app(runner=r, settings=HOUR, history_factory=lambda: DemoHistory({JOB_ID: entry}))
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = screen_of(app)
            pane = screen.query_one(LogPane)
            for _ in range(200):
                await pilot.pause(0.05)
                if pane.job_id == JOB_ID and pane.log_lines:
                    break
            assert pane.job_id == JOB_ID and pane.log_lines, "the log pane waited for scontrol"
            assert asked and not gate.is_set() and screen.busy  # scontrol is still hanging
            panel = screen.query_one(JobDetailsPanel).view
            assert panel is not None and panel.note == "loading details…"
            gate.set()
            await settle_jobs(pilot)
            assert pane.job_id == JOB_ID
    finally:
        gate.set()


async def test_settings_are_read_once_off_the_loop_and_their_problems_shown(app_factory: Any) -> None:
    """The app reads the settings file itself (in a worker, after the first frame; the jobs view gets them from
    the app) and says what it ignored, naming the file and the field; it used to drop the problems."""
    from ntui.core.config import config_path
    from tests.ui.conftest import settle

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("queue:\n  active-interval: 7\n  idle-interval: -1\nbogus: 1\n")
    app = app_factory()
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        for _ in range(100):
            await pilot.pause(0.05)
            if notified(app):
                break
        (note,) = notified(app)
        assert note.title == "Settings ignored" and note.severity == "warning"
        assert f"{path}:3: queue.idle-interval: expected a positive number, got -1" in note.message
        assert f"{path}:4: bogus: unknown section" in note.message
        await pilot.press("2")
        await settle_jobs(pilot)
        screen = screen_of(app)
        assert screen.model.settings.active_interval == 7 and screen.model.settings.idle_interval == 60
        assert [n.title for n in notified(app)].count("Settings ignored") == 1  # reported once


async def test_cancel_of_a_chain_link_asks_about_its_waiting_successor() -> None:
    """A long run's link whose successor waits (continue: chain, T10): ``a`` cancels both, ``y`` only the link."""
    from ntui.core.jobfiles.journal import JournalState

    r = runner(scancel=result())
    app = jobs_app(runner=r, settings=HOUR, user="root")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = screen_of(app)
        live = [k for k in screen.table.ordered_keys if k in screen.model.live]
        link, successor = live[0], live[1]
        screen.model.journals[link] = JournalState(link, allocations=1, run_id=link, continued="chain",
                                                   run_next=successor)
        screen.table.move_cursor(key=link)
        await settle_jobs(pilot)
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmCancelScreen) and app.screen.successor == successor
        await pilot.press("a")
        await settle_jobs(pilot)
        assert calls(r, "scancel") == [("scancel", link), ("scancel", successor)]
        await pilot.press("c", "y")
        await settle_jobs(pilot)
        assert calls(r, "scancel")[-1] == ("scancel", link)


async def test_the_journal_history_is_never_closed_under_a_running_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's exit closes the history the journal ticks keep open; a tick still reading it must finish first
    (an index connection closed under a running query crashed the interpreter once: SQLite's use after free)."""
    import threading

    from ntui.core.jobs.journals import JournalBook

    order: list[str] = []
    kept: list[Any] = []
    entered, release = threading.Event(), threading.Event()
    real = JournalBook.fetch

    def slow(open_history: Any, board: Any, request: Any, *, close: bool = True) -> Any:
        kept.append(open_history())  # the history the ticks keep open, as after an earlier tick
        entered.set()
        release.wait(10)
        order.append("tick done")
        return real(open_history, board, request, close=close)

    class Store:
        def since(self, when: float) -> list[Any]:
            return []

        def get(self, job_id: str) -> None:
            return None

        def close(self) -> None:
            if kept and self is kept[0]:  # (other views open and close their own)
                order.append("closed")

    monkeypatch.setattr(JournalBook, "fetch", staticmethod(slow))
    app = jobs_app(runner=runner(), settings=HOUR, user="root", history_factory=Store)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, entered.is_set)  # a journal tick is reading the history
        threading.Timer(0.5, release.set).start()
    assert order == ["tick done", "closed"]
