"""The jobs view's panes when things break (scenarios F6, F8, F9, B3, S4 of docs/reliability.md).

* F6: the followed job's log directory vanishes, is replaced by a regular file, or is unreadable (run as
  ``nobody``: root reads anything): the log pane says why, keeps the lines it had, and picks the files up again
  when they come back. No cluster (a FakeRunner queue, the log files in a temporary directory).
* B3 / S4: hostile log lines and a hostile job name reach the screen inert (no ESC, BEL, C0/C1 control).
* F9 + F8 (dev cluster): the GPU watch step's ``srun`` is killed with SIGKILL: the GPU pane says so and shows the
  allocation; then the job is cancelled with ``c`` + ``y`` while the log pane follows a rank: the row ends
  CANCELLED, the pane keeps the lines and stops calling the ranks running.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ntui.core.config import LogSettings, QueueSettings, Settings
from ntui.core.jobs.queue import ENDED
from ntui.core.records.history import History, HistoryEntry
from ntui.core.slurm.runner import SubprocessRunner
from ntui.ui.screens.action_dialogs import ConfirmCancelScreen
from ntui.ui.screens.jobs import JobsScreen
from ntui.ui.widgets.gpu_pane import GpuPane
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.log_pane import LogPane
from tests.reliability.conftest import (
    REPO,
    DevCluster,
    dev_cluster,  # noqa: F401 - the fixture
    ntui_env,
    wait_for,
    write_settings,
)
from tests.reliability.test_app_cluster_faults import heartbeats, submit_heartbeat
from tests.reliability.test_hostile_logs import BIG, HOSTILE_LINES
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import DemoHistory, jobs_app, squeue_line

JOB = "4343"
STEM = "run"
DATA = REPO / "tests" / "data" / "slurm"
SHOW = (DATA / "scontrol_show_job_running_2node_gpu.stdout").read_text().replace("JobId=34 ", f"JobId={JOB} ")
SETTINGS = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600, max_backoff=3600),
                    logs=LogSettings(poll_interval=0.05))
_FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _entry(log_dir: Path) -> HistoryEntry:
    return HistoryEntry(token="f6", job_id=JOB, cluster=None, preset="local-srun", preset_path=None,  # noqa: S106
                        overrides=(), job_name=STEM, launcher="srun", nodes=2, world_size=2, log_dir=str(log_dir),
                        log_stem=STEM, script="", script_path=None, created_at=0.0, submitted_at=0.0,
                        status="submitted")


def _runner(name: str = "f6-run") -> FakeRunner:
    line = squeue_line(JobID=JOB, ArrayJobID=JOB, ArrayTaskID="N/A", Name=name, StateCompact="R", State="RUNNING",
                       Reason="None", TimeUsed="1:00", TimeLimit="10:00", NumNodes="2", NodeList="nid[001-002]",
                       Partition="debug", UserName="alice")
    return FakeRunner({"squeue": result(stdout=line + "\n"), ("scontrol", "show", "job"): result(stdout=SHOW)},
                      default=result(returncode=1, stderr="not in this test\n"))


def _write_logs(log_dir: Path, *extra: bytes) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / f"{STEM}-{JOB}.out").write_text(f"ntui: job {JOB}\n")
    for rank, node in ((0, "nid001"), (1, "nid002")):
        with open(log_dir / f"{STEM}-{JOB}-rank-{rank}.out", "ab") as fh:
            fh.write(f"ntui: rank {rank} on {node}\nrank {rank} step 1\n".encode())
            for raw in extra:
                fh.write(raw + b"\n")


async def _open_logs(pilot: Any) -> tuple[JobsScreen, LogPane]:
    screen = pilot.app.screen
    assert isinstance(screen, JobsScreen)
    await wait_for(pilot, "the job's row", lambda: JOB in screen.table)
    await pilot.press("l")
    pane = screen.query_one("#jobs-logs", LogPane)
    await wait_for(pilot, "the log pane on the job", lambda: pane.job_id == JOB and len(pane.log_lines) >= 2)
    return screen, pane


def _triage(pane: LogPane) -> str:
    return str(pane.query_one("#lp-triage").render())


async def test_log_directory_vanishes_is_a_file_and_comes_back(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    _write_logs(log_dir)
    app = jobs_app(runner=_runner(), settings=SETTINGS, history_factory=lambda: DemoHistory({JOB: _entry(log_dir)}))
    async with app.run_test(size=(120, 36)) as pilot:
        screen, pane = await _open_logs(pilot)
        kept = list(pane.log_lines)
        assert "rank 0 step 1" in kept
        shutil.rmtree(log_dir)
        gone = f"log directory {log_dir} does not exist (moved or deleted?)"
        await wait_for(pilot, "the reason in the log pane", lambda: pane.triage_line.problem and
                       pane.triage_line.text == gone)
        assert _triage(pane) == f"✗ {gone}" and pane.query_one("#lp-triage").has_class("-failed")
        assert list(pane.log_lines) == kept  # what was read stays on screen
        log_dir.write_text("a file now\n")  # the directory replaced by a regular file
        await wait_for(pilot, "the 'not a directory' reason", lambda: pane.triage_line.text ==
                       f"log directory {log_dir} is not a directory")
        await pilot.press("d")  # the rest of the view goes on
        details = screen.query_one(JobDetailsPanel)
        assert details.view is not None and details.view.job_id == JOB
        await pilot.press("l")
        log_dir.unlink()
        _write_logs(log_dir, b"rank 0 is back")  # restored (a backup, a remount): followed again
        await wait_for(pilot, "the files picked up again", lambda: not pane.triage_line.problem
                       and "rank 0 is back" in pane.log_lines)
        assert app.is_running


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory ``nobody`` can traverse (pytest's tmp dirs are private to root)."""
    d = Path(tempfile.mkdtemp(prefix="ntui-rel-app-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


AS_NOBODY = """
import asyncio, json, sys
from ntui.core.config import LogSettings
from ntui.core.compose.render import LogPaths
from tests.support.screenshots_logs import LogPaneHost
from tests.support.waits import WAIT_BOUND_S

async def main() -> None:
    app = LogPaneHost(settings=LogSettings(poll_interval=0.05))
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.pane
        await pilot.pause()
        pane.show_job(sys.argv[2], paths=LogPaths(sys.argv[1], "run"), world_size=2, job_active=True)
        deadline = asyncio.get_running_loop().time() + WAIT_BOUND_S
        while not pane.triage_line.problem and asyncio.get_running_loop().time() < deadline:
            await pilot.pause(0.05)
        print(json.dumps({"triage": pane.triage_line.text, "problem": pane.triage_line.problem,
                          "lines": list(pane.log_lines), "running": app.is_running}))

asyncio.run(main())
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
@pytest.mark.parametrize("what", ["directory", "file"])
def test_unreadable_log_in_the_log_pane_as_another_user(world_dir: Path, what: str) -> None:
    import json

    log_dir = world_dir / "logs"
    _write_logs(log_dir, b"secret")
    batch = log_dir / f"{STEM}-{JOB}.out"
    home = world_dir / "home"
    home.mkdir()
    script = world_dir / "as_nobody.py"
    script.write_text(AS_NOBODY)
    subprocess.run(["chown", "-R", "65534:65534", str(home)], check=True)
    (batch if what == "file" else log_dir).chmod(0o000)
    env = ntui_env(home, HOME=str(home), TERM="xterm-256color")
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                          str(script), str(log_dir), JOB], env=env, capture_output=True, timeout=120, cwd=world_dir)
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    got = json.loads(res.stdout.decode().strip().splitlines()[-1])
    where = batch if what == "file" else log_dir
    assert got["problem"] and got["triage"] == f"log {what} {where} is not readable (permission denied)", got
    if what == "directory":
        assert got["lines"] == [f"── {got['triage']}; waiting for it ──"] and got["running"], got
    else:  # only the batch log is unreadable: the readable rank logs are still followed
        assert "secret" in got["lines"] and got["running"], got


async def test_hostile_log_lines_and_job_names_are_inert_in_the_app(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    _write_logs(log_dir, *HOSTILE_LINES.values(), b"big " + b"x" * BIG)
    name = "evil\x1b]0;pwned\x07 \x1b[2Jname\x9b2J"
    app = jobs_app(runner=_runner(name), settings=SETTINGS,
                   history_factory=lambda: DemoHistory({JOB: _entry(log_dir)}))
    async with app.run_test(size=(120, 36)) as pilot:
        screen, pane = await _open_logs(pilot)
        await wait_for(pilot, "the hostile lines read", lambda: any(x.startswith("big x") for x in pane.log_lines))
        for line in pane.log_lines:
            assert _FORBIDDEN.search(line) is None, repr(line[:200])
            assert len(line.encode()) <= 64 * 1024 + 64
        assert all(_FORBIDDEN.search(r.last_line) is None for r in pane.rows.values())
        assert screen.table.get_row(JOB)[1] == "evil name"  # S4: the job name in the queue
        shown = pane.query_one("#lp-log")
        for y in range(shown.size.height):  # what is drawn
            text = "".join(seg.text for seg in shown.render_line(y))
            assert _FORBIDDEN.search(text) is None, repr(text)
        fields = str(screen.query_one(JobDetailsPanel).query_one("#details-fields").render())
        assert "\x1b" not in fields


def test_a_killed_watch_step_is_named_as_such() -> None:
    from ntui.core.gpu.watch import describe_step_end

    assert describe_step_end(-9, "")[0] == (
        "the GPU watch step's srun was killed by SIGKILL; showing the allocation instead")
    assert describe_step_end(1, "srun: error: boom")[0] == "the GPU watch step ended (exit 1)"


# ---------------------------------------------------------------- on the dev cluster


@pytest.mark.cluster
async def test_gpu_step_killed_then_cancel_while_the_log_pane_follows(dev_cluster: DevCluster,  # noqa: F811
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ntui.ui.app import make_app

    sim = dev_cluster.env.get("NTUI_DEV_SIM_PATH") or str(dev_cluster.state_dir / "simbin")
    monkeypatch.setenv("PATH", f"{sim}:{os.environ['PATH']}")  # the simulated nvidia-smi for the watch step
    write_settings(queue={"active-interval": 1, "idle-interval": 5, "max-backoff": 4}, gpu={"interval": 1})
    history = tmp_path / "history.sqlite3"
    job = submit_heartbeat(tmp_path, history, "sbatch.gpus-per-node=2", "monitor.gpu=false")  # the step path
    figures: dict[str, Any] = {}
    try:
        app = make_app(runner=SubprocessRunner(), identity="", cursor_blink=False,
                       history_factory=lambda: History(history))
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("2")
            screen = app.screen
            assert isinstance(screen, JobsScreen)
            table = screen.table
            await wait_for(pilot, "the job running", lambda: job in table and table.get_row(job)[2] == "RUNNING",
                           timeout=60)
            table.move_cursor(key=job)
            await pilot.press("g")
            gpu = screen.query_one("#jobs-gpu", GpuPane)
            await wait_for(pilot, "GPU data", lambda: gpu.job_id == job and gpu.board is not None
                           and bool(gpu.board.latest()), timeout=60)
            stream = gpu.gpu_watch.stream
            pid = getattr(stream, "pid", None)
            assert pid, "no watch step process"
            t_kill = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            await wait_for(pilot, "the GPU pane to say the step died", lambda: gpu.state == "failed")
            figures["gpu_failed_after_s"] = round(time.monotonic() - t_kill, 2)
            body = str(gpu.query_one("#gpu-body").render())
            assert "killed by SIGKILL" in gpu.reason, gpu.reason
            assert re.search(r"nid001\s+2 GPUs\s+IDX 0-1", body) and re.search(r"nid002\s+2 GPUs\s+IDX 0-1", body), body

            await pilot.press("l")
            logs = screen.query_one("#jobs-logs", LogPane)
            await wait_for(pilot, "rank 0 followed", lambda: logs.job_id == job and heartbeats(logs) > 3, timeout=30)
            await pilot.press("c")
            assert isinstance(app.screen, ConfirmCancelScreen)
            await pilot.press("y")
            t_cancel = time.monotonic()
            await wait_for(pilot, "the job CANCELLED in the queue view", lambda: table.row_tag(job) == ENDED
                           and table.get_row(job)[2] == "CANCELLED", timeout=60)
            figures["cancelled_shown_after_s"] = round(time.monotonic() - t_cancel, 2)
            await wait_for(pilot, "the log pane to stop calling the ranks running", lambda: all(
                r.status != "running" for k, r in logs.rows.items() if k != "batch"))
            beats = heartbeats(logs)
            assert logs.job_id == job and beats > 3  # the lines stay
            figures["rank_status_after_cancel"] = sorted({r.status for r in logs.rows.values()})
            figures["triage"] = logs.triage_line.text
            assert app.is_running
        # A cancelled job's steps get SIGTERM, then SIGKILL after KillWait: until then squeue still lists
        # them (CANCELLED+COMPLETING). Left behind means still there once Slurm's own limit has passed.
        config = dev_cluster.run("scontrol", "show", "config").stdout
        kill_wait = int(m.group(1)) if (m := re.search(r"^KillWait\s*=\s*(\d+)", config, re.M)) else 30
        deadline = time.monotonic() + kill_wait + 30
        while steps := dev_cluster.run("squeue", "-h", "-s", "-j", job, "-o", "%i").stdout.split():
            assert time.monotonic() < deadline, f"steps left behind {kill_wait + 30} s after the cancel: {steps}"
            time.sleep(1)
        figures["steps_gone_after_s"] = round(time.monotonic() - t_cancel, 2)
        print(f"\nF8/F9 figures: {figures}")
    finally:
        dev_cluster.run("scancel", job)
