"""The GPU pane (``ntui/ui/widgets/gpu_pane.py``) in a small host app, without the rest of ntui.

Unit-level UI tests use a FakeRunner for the one ``scontrol show job -d`` and a FakeStream fed with
canned ``nvidia-smi`` lines; the cluster-marked tests run the real overlapping step with the SIMULATED
nvidia-smi on the dev cluster, check that it is gone when the pane hides or goes away, and count the
controller RPCs while it streams (``sdiag``).
"""

from __future__ import annotations

import getpass
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from ntui.core.config import GpuSettings
from ntui.core.records.history import History
from ntui.core.slurm.runner import CommandRunner, SubprocessRunner
from ntui.ui.widgets.gpu_pane import GpuPane
from tests.cluster.conftest import DevCluster, dev_cluster  # noqa: F401 - the fixture
from tests.support.bigjob import BigJob, _stamp, make_bigjob
from tests.support.fakes import FakeRunner, FakeStream, result
from tests.support.screenshots_gpu import (
    GpuPaneHost,
    big_gpu_host,
    big_gpu_scene,
    canned_lines,
    gpu_pane_scene,
    gpu_pane_screenshot,
)
from tests.support.screenshots_jobs import wait_until

DATA = Path(__file__).resolve().parents[1] / "data"
SHOW_RUNNING = (DATA / "slurm" / "scontrol_show_job_running_2node_gpu.stdout").read_text()
SHOW_PENDING = (DATA / "slurm" / "scontrol_show_job_pending.stdout").read_text()
CANNED = (DATA / "gpus" / "two-nodes-label.txt").read_text().splitlines()
NO_NVIDIA_SMI = (
    "slurmstepd: error: execve(): nvidia-smi: No such file or directory\n"
    "srun: error: nid001: task 0: Exited with exit code 2\n"
)


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class NoSrun(FakeStream):
    def start(self) -> None:
        raise FileNotFoundError(2, "No such file or directory", "srun")


class Host(App[None]):
    def __init__(self, pane: GpuPane) -> None:
        super().__init__()
        self.pane = pane

    def compose(self) -> ComposeResult:
        yield self.pane


@pytest.fixture(autouse=True)
def _fresh_streams() -> Iterator[None]:
    FakeStream.made = []
    yield
    FakeStream.made = []


def running_runner(stdout: str = SHOW_RUNNING) -> FakeRunner:
    return FakeRunner({"scontrol show job": result(stdout=stdout)})


def make_pane(
    runner: CommandRunner | None = None,
    *,
    clock: Clock | None = None,
    settings: GpuSettings | None = None,
    factory: Any = FakeStream,
    id: str = "gpus",  # noqa: A002
) -> GpuPane:
    return GpuPane(
        runner or running_runner(),
        settings or GpuSettings(interval=2, idle_after=60.0),
        clock=clock or Clock(),
        stream_factory=factory,
        environ={"PATH": "/usr/bin"},
        id=id,
    )


def text(pane: GpuPane, selector: str = "#gpu-body") -> str:
    content = pane.query_one(selector, Static).content
    return str(getattr(content, "plain", content))


async def start_watch(pilot: Any, pane: GpuPane, job_id: str = "34") -> None:
    await pilot.pause()
    pane.watch_job(job_id)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# ------------------------------------------------------------------------------------------ streaming


async def test_canned_lines_show_two_nodes_of_four_gpus_with_values_and_sparklines() -> None:
    runner, clock = running_runner(), Clock()
    pane = make_pane(runner, clock=clock)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        assert pane.state == "starting"
        assert runner.argvs() == [("scontrol", "show", "job", "-d", "34")]
        (stream,) = FakeStream.made
        assert stream.started
        assert stream.argv[:3] == ("srun", "--jobid=34", "--overlap")
        assert "--job-name=ntui-gpu-watch" in stream.argv and stream.argv[-2:] == ("-l", "2")
        assert "Starting the GPU watch step on nid[001-002]" in text(pane)
        for _ in range(5):
            clock.now += 2
            stream.feed(CANNED)
        pane.redraw()
        await pilot.pause()
        assert pane.state == "streaming"
        body = text(pane)
        summary = text(pane, "#gpu-summary")
        assert "job 34" in summary and "8 GPUs on 2 nodes" in summary and "SIMULATED" not in summary
        assert "util 75%" in summary and "power 2263 W" in summary
        assert body.count("allocated 4: IDX 0-3") == 2
        rows = [line for line in body.splitlines() if re.match(r"^\s+\d[ !] ", line)]
        assert len(rows) == 8
        assert re.search(r"^\s+1  .* 98%  .* 37\.1/40\.0 GiB\s+67°C\s+398 W  █████$", body, re.M)
        assert re.search(r"^\s+0  .* 37%  .* 10\.0/40\.0 GiB\s+45°C\s+250 W  ▄▄▄▄▄$", body, re.M)
        # nid002 GPU 2 printed [N/A]: no numbers, no history bars
        assert re.search(r"^\s+2 \s+n/a\s+.*36\.9/40\.0 GiB\s+n/a\s+n/a\s+$", body, re.M)
        # still one RPC: nothing per line, nothing per tick
        assert runner.calls == 1


async def test_lines_are_coalesced_into_at_most_one_redraw_per_tick() -> None:
    clock = Clock()
    pane = make_pane(clock=clock, settings=GpuSettings(interval=3600, idle_after=60.0))
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        (stream,) = FakeStream.made
        before = pane.redraws
        for _ in range(50):
            stream.feed(CANNED)
        await pilot.pause(0.2)
        assert pane.redraws == before  # lines only feed the board; the tick redraws
        assert "Starting the GPU watch step" in text(pane)
        pane._tick()
        assert pane.redraws == before + 1 and pane.state == "streaming"


async def test_simulated_data_is_labelled() -> None:
    clock = Clock()
    pane = make_pane(clock=clock)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        FakeStream.made[0].feed([line.replace("NVIDIA A100-SXM4-40GB", "SIMULATED GPU (ntui dev)") for line in CANNED])
        pane.redraw()
        await pilot.pause()
        assert "SIMULATED nvidia-smi" in text(pane, "#gpu-summary")


async def test_idle_gpu_is_flagged_after_idle_after_seconds_of_zero() -> None:
    clock = Clock()
    pane = make_pane(clock=clock)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        stream = FakeStream.made[0]
        for _ in range(30):  # 58 s of 0 % on nid002 GPU 0
            stream.feed(CANNED)
            clock.now += 2
        clock.now -= 2
        pane.redraw()
        await pilot.pause()
        assert "0% for" not in text(pane, "#gpu-issues")
        clock.now += 3
        stream.feed(CANNED)
        pane.redraw()
        await pilot.pause()
        assert text(pane, "#gpu-issues") == "⚠ nid002 GPU 0: 0% for 61 s"
        assert re.search(r"^\s+0! .*0%", text(pane).split("nid002")[1], re.M)


async def test_stale_node_and_fewer_gpus_are_shown() -> None:
    clock = Clock()
    pane = make_pane(clock=clock)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        stream = FakeStream.made[0]
        stream.feed(CANNED)
        clock.now += 10  # nid002 stops reporting; nid001 reports 3 of its 4 GPUs
        stream.feed([line for line in CANNED if line.startswith("0: ") and not line.startswith("0: 3,")])
        pane.redraw()
        await pilot.pause()
        issues = text(pane, "#gpu-issues")
        assert "nid002: no GPU data for 10 s" in issues
        assert "nid001: 3 of 4 allocated GPUs reporting" in issues
        assert "1 GPUs on 1 node" not in text(pane, "#gpu-summary")
        assert "3 GPUs on 1 node" in text(pane, "#gpu-summary")


#: the same job without GPUs (``-C gpu`` nodes, no ``--gpus``): one node, an empty GRES on its ``-d`` line
SHOW_CPU_JOB = (
    SHOW_RUNNING.replace("NodeList=nid[001-002]", "NodeList=nid001")
    .replace("JOB_GRES=gpu:8", "JOB_GRES=(null)")
    .replace("Nodes=nid[001-002] CPU_IDs=1 Mem=0 GRES=gpu:4(IDX:0-3)", "Nodes=nid001 CPU_IDs=1 Mem=0 GRES=")
    .replace("TresPerNode=gres:gpu:4", "TresPerNode=")
)


async def test_a_job_without_gpus_says_so_and_what_nvidia_smi_shows() -> None:
    clock = Clock()
    pane = make_pane(running_runner(SHOW_CPU_JOB), clock=clock)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        assert pane.state == "starting"
        assert "no GPUs allocated on nid001: the job has no GPUs" in text(pane)
        clock.now += 2
        FakeStream.made[0].feed([line for line in CANNED if line.startswith("0: ")])
        pane.redraw()
        await pilot.pause()
        summary, body = text(pane, "#gpu-summary"), text(pane)
        assert "the job has no GPUs" in summary and "nvidia-smi on its nodes shows 4 GPUs, not the job's" in summary
        assert "0 GPUs on 0 nodes" not in summary and "util n/a" not in summary
        assert "nid001  no GPUs allocated; nvidia-smi shows 4, not the job's" in body
        assert "allocated 0" not in body and "IDX  " not in body
        assert "no GPUs allocated; nvidia-smi shows 4" in text(pane, "#gpu-issues")


# ------------------------------------------------------------------------------------------ failures


async def test_step_death_shows_the_reason_and_the_allocation() -> None:
    pane = make_pane()
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        FakeStream.made[0].on_exit(2, NO_NVIDIA_SMI)
        await pilot.pause()
        assert pane.state == "failed" and not pane.streaming
        assert "nvidia-smi was not found on the job's nodes" in pane.reason
        body = text(pane)
        assert "No GPU usage: nvidia-smi was not found" in body
        assert "execve(): nvidia-smi: No such file or directory" in body
        assert re.search(r"nid001\s+4 GPUs\s+IDX 0-3", body) and re.search(r"nid002\s+4 GPUs\s+IDX 0-3", body)
        assert "8 GPUs on 2 node(s)" in body


async def test_job_not_running_shows_why_without_a_second_rpc() -> None:
    runner = running_runner(SHOW_PENDING)
    pane = make_pane(runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        job_id = re.search(r"JobId=(\d+)", SHOW_PENDING).group(1)  # type: ignore[union-attr]
        await start_watch(pilot, pane, job_id)
        assert pane.state == "failed" and FakeStream.made == []
        assert "PENDING, not running" in pane.reason
        assert "Allocation (scontrol show job -d)" in text(pane)
        assert runner.calls == 1


async def test_scontrol_error_and_missing_srun_are_reported() -> None:
    runner = FakeRunner(
        {"scontrol show job": result(stderr="slurm_load_jobs error: Invalid job id specified\n", returncode=1)}
    )
    pane = make_pane(runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, "999")
        assert pane.state == "failed" and "Invalid job id" in pane.reason
        assert "unknown: no job record" in text(pane)
    pane = make_pane(factory=NoSrun)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        assert pane.state == "failed" and "srun not found" in pane.reason
        assert re.search(r"nid001\s+4 GPUs\s+IDX 0-3", text(pane))


async def test_watching_the_failed_job_again_retries() -> None:
    runner = running_runner()
    pane = make_pane(runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        FakeStream.made[0].on_exit(1, "srun: error: boom")
        await pilot.pause()
        assert pane.state == "failed" and pane.reason == "the GPU watch step ended (exit 1)"
        await start_watch(pilot, pane)
        assert pane.state == "starting" and len(FakeStream.made) == 2 and runner.calls == 2
        await start_watch(pilot, pane)  # already watching: no-op
        assert len(FakeStream.made) == 2 and runner.calls == 2


# ------------------------------------------------------------------------------------------ life cycle


async def test_switching_jobs_and_none_stop_the_previous_step() -> None:
    pane = make_pane()
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        first = FakeStream.made[0]
        await start_watch(pilot, pane, "35")
        assert pane.wait_stopped(5) and first.stopped
        second = FakeStream.made[1]
        assert not second.stopped and pane.job_id == "35"
        first.on_exit(0, "")  # a late exit of the old step is ignored
        await pilot.pause()
        assert pane.state == "starting"
        pane.watch_job(None)
        await pilot.pause()
        assert pane.wait_stopped(5) and second.stopped
        assert pane.state == "idle" and "Select a running job" in text(pane)


async def test_hidden_pane_stops_the_step_and_resumes_when_shown() -> None:
    runner = running_runner()
    pane = make_pane(runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        first = FakeStream.made[0]
        pane.display = False
        await pilot.pause()
        assert pane.state == "paused" and pane.wait_stopped(5) and first.stopped
        pane.display = True
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.state == "starting" and len(FakeStream.made) == 2 and runner.calls == 2
        assert pane.job_id == "34" and not FakeStream.made[1].stopped


async def test_watch_while_hidden_waits_for_show() -> None:
    runner = running_runner()
    pane = make_pane(runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        pane.display = False
        await pilot.pause()
        pane.watch_job("34")
        await pilot.pause()
        assert pane.state == "paused" and runner.calls == 0
        pane.display = True  # Show, or at the latest the next tick (Textual can miss the Show here)
        assert await _until(pilot, lambda: pane.state == "starting", 5), pane.state
        assert runner.calls == 1


async def test_switching_view_away_stops_the_step() -> None:
    pane = make_pane()

    class PaneScreen(Screen[None]):
        def compose(self) -> ComposeResult:
            yield pane

    class TwoViews(App[None]):
        MODES = {"gpus": PaneScreen, "other": Screen}
        DEFAULT_MODE = "gpus"

    async with TwoViews().run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        first = FakeStream.made[0]
        await pilot.app.switch_mode("other")
        await pilot.pause()
        assert pane.state == "paused" and pane.wait_stopped(5) and first.stopped
        await pilot.app.switch_mode("gpus")
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.state == "starting" and len(FakeStream.made) == 2


async def test_unmount_stops_the_step() -> None:
    pane = make_pane()
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        await pane.remove()
        await pilot.pause()
        assert pane.wait_stopped(5) and FakeStream.made[0].stopped


# ------------------------------------------------------------------------------------------ pictures


def test_snapshot_of_the_pane(snap_compare: Any) -> None:
    host = GpuPaneHost()

    async def run_before(pilot: Any) -> None:
        await gpu_pane_scene(pilot, host.pane, host.clock)

    assert snap_compare(host, terminal_size=(120, 30), run_before=run_before)


def test_snapshot_of_the_simulated_label_and_a_failure(snap_compare: Any) -> None:
    clock = Clock()

    class Live(FakeStream):
        pass

    class Dying(FakeStream):
        pass

    live = make_pane(clock=clock, factory=Live, id="live")
    dying = make_pane(clock=clock, factory=Dying, id="dying")

    class Both(App[None]):
        def compose(self) -> ComposeResult:
            yield live
            yield dying

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        live.watch_job("34")
        dying.watch_job("34")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        (live_stream,) = [s for s in FakeStream.made if isinstance(s, Live)]
        (dying_stream,) = [s for s in FakeStream.made if isinstance(s, Dying)]
        for step in range(12):
            clock.now += 2
            live_stream.feed(canned_lines(step, name="SIMULATED GPU (ntui dev)"))
        live.redraw()
        dying_stream.on_exit(2, NO_NVIDIA_SMI)
        await pilot.pause()

    assert snap_compare(Both(), terminal_size=(120, 40), run_before=run_before)


def test_screenshot_is_deterministic(tmp_path: Path) -> None:
    one = gpu_pane_screenshot(tmp_path / "a" / "gpu-pane.svg").read_text()
    two = gpu_pane_screenshot(tmp_path / "b" / "gpu-pane.svg").read_text()
    assert one == two
    assert "nid001141&#160;GPU&#160;2:&#160;0%&#160;for&#160;78&#160;s" in one


# ------------------------------------------------------------------------------------------ the real cluster


def _steps(cluster: DevCluster, job_id: str) -> list[str]:
    out = cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i %j")
    return [line for line in out.stdout.splitlines() if line.strip()]


def _no_watch_step(cluster: DevCluster, job_id: str, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any("ntui-gpu-watch" in s for s in _steps(cluster, job_id)):
            return True
        time.sleep(0.5)
    return False


def _rpc_counts(cluster: DevCluster) -> tuple[int, dict[str, int]]:
    """``sdiag``: this user's RPC count, and the count per message type."""
    out = cluster.run("sdiag").stdout
    user = getpass.getuser()
    by_user = re.search(rf"^\s*{re.escape(user)}\s*\(\s*\d+\)\s*count:(\d+)", out, re.M)
    by_type = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\w+)\s*\(\s*\d+\)\s*count:(\d+)", out, re.M)
               if m.group(1).isupper() or m.group(1).startswith(("REQUEST_", "MESSAGE_"))}
    assert by_user, out
    return int(by_user.group(1)), by_type


def _delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


#: what the pane's start costs (measured on 22.05.8: one of each): scontrol show job -d, then srun
STEP_START = frozenset({
    "REQUEST_JOB_INFO_SINGLE", "REQUEST_FED_INFO", "REQUEST_NODE_INFO", "REQUEST_HET_JOB_ALLOC_INFO",
    "REQUEST_JOB_ALLOCATION_INFO", "REQUEST_JOB_STEP_CREATE", "REQUEST_JOB_READY", "REQUEST_BUILD_INFO",
})


def _attributable(delta: Mapping[str, int]) -> int:
    """Every RPC but sdiag's own."""
    return sum(n for k, n in delta.items() if k != "REQUEST_STATS_INFO")


@pytest.fixture(scope="module")
def gpu_job(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # noqa: F811
    from tests.cluster.test_e2e import _state, ntui

    logs = tmp_path_factory.mktemp("gpupane-logs")
    res = ntui(dev_cluster, "submit", "local-torchrun", "--set", f"logs.dir={logs}",
               "--set", "sbatch.gpus-per-node=4", "--set", "launcher.nproc-per-node=4",
               "--set", "env.NTUI_CHECK_SLEEP=240",
               "--set", "monitor.gpu=false", timeout=60)  # no in-job sampler: these tests watch the overlap step
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    deadline = time.monotonic() + 120
    while _state(dev_cluster, job_id) != "RUNNING":
        assert time.monotonic() < deadline, "the GPU job never started"
        time.sleep(1)
    yield job_id
    ntui(dev_cluster, "cancel", job_id, timeout=60)


async def _until(pilot: Any, cond: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        await pilot.pause(0.25)
    return cond()


def _eight_gpus(pane: GpuPane) -> bool:
    board = pane.board
    if board is None:
        return False
    latest = board.latest()
    return sorted(latest) == ["nid001", "nid002"] and all(len(g) == 4 for g in latest.values())


@pytest.mark.cluster
async def test_pane_streams_8_gpus_from_one_step_and_leaves_none(
    dev_cluster: DevCluster, gpu_job: str  # noqa: F811
) -> None:
    sim = dev_cluster.env.get("NTUI_DEV_SIM_PATH") or str(dev_cluster.state_dir / "simbin")
    environ = dict(dev_cluster.env, PATH=f"{sim}:{dev_cluster.env['PATH']}")
    window = float(os.environ.get("NTUI_GPU_RPC_WINDOW_S", "10"))
    runner = SubprocessRunner()
    pane = GpuPane(runner, GpuSettings(interval=1), environ=environ, id="gpus")
    rpc0, types0 = _rpc_counts(dev_cluster)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pane.watch_job(gpu_job)
        assert await _until(pilot, lambda: _eight_gpus(pane), 60), (pane.state, pane.reason)
        assert runner.calls == 1  # the one scontrol show job -d
        rpc1, types1 = _rpc_counts(dev_cluster)
        start = _delta(types0, types1)
        # Streaming: the ticks redraw, nothing asks the controller. The dev cluster is shared (other
        # sessions submit and poll), so take the quietest of up to 3 windows: a per-tick design would
        # show at least window/interval RPCs in every one of them.
        windows: list[tuple[int, dict[str, int]]] = []
        for _ in range(3):
            before_total, before = _rpc_counts(dev_cluster)
            await pilot.pause(window)
            after_total, after = _rpc_counts(dev_cluster)
            windows.append((after_total - before_total, _delta(before, after)))
            if _attributable(windows[-1][1]) == 0:
                break
        quietest = min(windows, key=lambda w: _attributable(w[1]))
        print(f"\nGPU pane RPCs by {getpass.getuser()}: start {rpc1 - rpc0} {start}; "
              f"{window:g} s of streaming, quietest of {len(windows)}: {quietest[0]} {quietest[1]}")
        pane.redraw()
        summary = text(pane, "#gpu-summary")
        assert "8 GPUs on 2 nodes" in summary and "SIMULATED nvidia-smi" in summary
        assert any("ntui-gpu-watch" in s for s in _steps(dev_cluster, gpu_job))
        assert start.get("REQUEST_JOB_INFO_SINGLE", 0) >= 1 and start.get("REQUEST_JOB_STEP_CREATE", 0) >= 1
        assert sum(start.get(k, 0) for k in STEP_START) <= 10, start
        assert _attributable(quietest[1]) <= 1, windows
        assert runner.calls == 1

        pane.display = False  # hidden: the step goes
        await pilot.pause()
        assert pane.state == "paused" and pane.wait_stopped(15)
        assert _no_watch_step(dev_cluster, gpu_job), _steps(dev_cluster, gpu_job)
        pane.display = True  # shown again: a new step for the same job
        assert await _until(pilot, lambda: _eight_gpus(pane), 60), (pane.state, pane.reason)
        await pane.remove()  # removed: the step goes
        await pilot.pause()
        assert pane.wait_stopped(15)
        assert _no_watch_step(dev_cluster, gpu_job), _steps(dev_cluster, gpu_job)


@pytest.mark.cluster
async def test_pane_without_nvidia_smi_shows_why_and_the_allocation(
    dev_cluster: DevCluster, gpu_job: str  # noqa: F811
) -> None:
    path = ":".join(p for p in dev_cluster.env["PATH"].split(":") if not p.rstrip("/").endswith("simbin"))
    pane = GpuPane(SubprocessRunner(), GpuSettings(interval=1), environ=dict(dev_cluster.env, PATH=path), id="gpus")
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pane.watch_job(gpu_job)
        assert await _until(pilot, lambda: pane.state == "failed", 60), pane.state
        body = text(pane)
        print(f"\n{pane.reason}\n{body}")
        assert "nvidia-smi" in pane.reason
        assert re.search(r"nid001\s+4 GPUs\s+IDX 0-3", body) and re.search(r"nid002\s+4 GPUs\s+IDX 0-3", body)
    assert _no_watch_step(dev_cluster, gpu_job)


async def test_the_watch_step_starts_off_the_ui_thread() -> None:
    """Starting ``srun`` (fork + exec) is blocking I/O: it runs in the plan worker, not in a message handler."""
    import threading

    threads: list[threading.Thread] = []

    class Recording(FakeStream):
        def start(self) -> None:
            threads.append(threading.current_thread())
            super().start()

    pane = make_pane(factory=Recording)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane)
        assert pane.state == "starting" and len(threads) == 1
        assert threads[0] is not threading.main_thread()


# ------------------------------------------------------------------------------------------ a big job: the heatmap


@pytest.fixture(scope="module")
def bigjob(tmp_path_factory: pytest.TempPathFactory) -> BigJob:
    return make_bigjob(tmp_path_factory.mktemp("bigjob"), samples=False)


def test_snapshot_of_the_heatmap_wide(snap_compare: Any, bigjob: BigJob) -> None:
    host = big_gpu_host(bigjob)

    async def run_before(pilot: Any) -> None:
        await big_gpu_scene(pilot, host.pane, host.clock, bigjob)

    assert snap_compare(host, terminal_size=(120, 36), run_before=run_before)


def test_snapshot_of_the_heatmap_narrow(snap_compare: Any, bigjob: BigJob) -> None:
    host = big_gpu_host(bigjob)

    async def run_before(pilot: Any) -> None:
        await big_gpu_scene(pilot, host.pane, host.clock, bigjob)

    assert snap_compare(host, terminal_size=(80, 24), run_before=run_before)


async def test_many_gpus_draw_a_heatmap_and_name_the_outliers(bigjob: BigJob, tmp_path: Path) -> None:
    host = big_gpu_host(bigjob)
    async with host.run_test(size=(120, 36)) as pilot:
        await big_gpu_scene(pilot, host.pane, host.clock, bigjob)
        body = str(host.pane.query_one("#gpu-body", Static).render())
        assert "utilisation" in body and "20 nodes per line" in body
        assert "2 idle GPUs (<5%): nid000004 GPU 1, nid000131 GPU 2" in body
        assert "1 node lags the median node: nid000078" in body
        assert sum(line.startswith("nid") for line in body.splitlines()) == 13
        assert "util history" not in body  # no bar rows
    small = make_bigjob(tmp_path, nodes=4, samples=False)  # 16 GPUs: the bar view stays
    host = big_gpu_host(small)
    async with host.run_test(size=(120, 36)) as pilot:
        await big_gpu_scene(pilot, host.pane, host.clock, small)
        body = str(host.pane.query_one("#gpu-body", Static).render())
        assert "util history" in body and "nodes per line" not in body


# ------------------------------------------------------------------------------------------ the job's own samples


def _history_with(tmp_path: Path, job: BigJob) -> Callable[[], History]:
    path = tmp_path / "history.db"
    h = History(path)
    job.record_history(h)
    h.close()
    return lambda: History(path)


def files_pane(history: Callable[[], History], clock: Clock, runner: FakeRunner) -> GpuPane:
    return GpuPane(runner, GpuSettings(interval=2, idle_after=60.0), clock=clock, stream_factory=FakeStream,
                   environ={"PATH": "/usr/bin"}, history_factory=history, id="gpus")


async def test_a_job_with_sample_files_shows_them_with_no_step_and_no_rpc(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=12, idle_gpus=((1, 2),), lagging_node=None, fail_rank=None)
    runner, clock = FakeRunner(), Clock()
    pane = files_pane(_history_with(tmp_path, job), clock, runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, job.job_id)
        assert pane.state == "streaming" and pane.source == "samples"
        summary = text(pane, "#gpu-summary")
        assert f"job {job.job_id}" in summary and "8 GPUs on 2 nodes" in summary
        assert "from the job's own samples, every 10 s" in summary and "watch step" not in summary
        body = text(pane)
        rows = [line for line in body.splitlines() if re.match(r"^\s+\d[ !] ", line)]
        assert len(rows) == 8
        u = job.reading(0, 0, job.steps - 1)[0]
        first = rows[0]
        assert f"{u:.0f}%" in first and "30.3/40.0 GiB" in first
        assert len(first.rstrip().split("  ")[-1]) == job.steps  # the sparkline: every sample since the first
        assert "nid000002 GPU 2: idle (< 5 %) 100 % of the run" in text(pane, "#gpu-issues")
        # appended samples arrive on the tick, at most once per sampling interval, with no RPC
        t = job.now
        with open(job.sample_files["nid000001"], "a") as fh:
            fh.write("".join(f"{_stamp(t)}, {g}, GPU-0000{g}-big, 3, 31000, 40960, 100.00, 40\n" for g in range(4)))
        clock.now += 10
        for _ in range(2):  # two files, spread over the interval: one per tick
            pane._tick()
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            clock.now += 2
        assert re.search(r"^\s+0  .*  3% ", text(pane), re.M)
        assert runner.calls == 0 and FakeStream.made == []


async def test_a_job_without_sample_files_uses_the_watch_step_as_before(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=12, fail_rank=None, samples=False)
    runner = running_runner()
    pane = files_pane(_history_with(tmp_path, job), Clock(), runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, job.job_id)
        assert runner.argvs() == [("scontrol", "show", "job", "-d", job.job_id)]
        (stream,) = FakeStream.made
        stream.feed(CANNED)
        pane.redraw()
        await pilot.pause()
        assert pane.source == "step" and "live from a watch step, every 2 s" in text(pane, "#gpu-summary")


async def test_a_job_not_in_the_history_uses_the_watch_step(tmp_path: Path) -> None:
    other = make_bigjob(tmp_path, nodes=2, steps=3, fail_rank=None)
    runner = running_runner()
    pane = files_pane(_history_with(tmp_path, other), Clock(), runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, "34")
        assert runner.calls == 1 and len(FakeStream.made) == 1 and pane.sample_board is None


async def test_an_ended_job_shows_its_whole_run_from_the_files(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=40, idle_gpus=(), lagging_node=None, fail_rank=None)
    for path in job.sample_files.values():
        with open(path, "a") as fh:
            fh.write("# ntui-gpu-samples end\n")
    runner, clock = FakeRunner(), Clock()
    pane = files_pane(_history_with(tmp_path, job), clock, runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, job.job_id)
        assert "the whole run (sampling ended)" in text(pane, "#gpu-summary")
        rows = [line for line in text(pane).splitlines() if re.match(r"^\s+\d[ !] ", line)]
        assert len(rows) == 8 and len(rows[0].rstrip().split("  ")[-1]) == 40
        board = pane.sample_board
        assert board is not None and board.done
        read = board.tail.bytes_read()
        clock.now += 60
        pane._tick()
        await pilot.app.workers.wait_for_complete()
        assert board.tail.bytes_read() == read  # nothing more to come: no polling
        assert runner.calls == 0 and FakeStream.made == []


async def test_hidden_the_files_are_not_read_and_no_descriptor_is_held(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=6, fail_rank=None)
    runner, clock = FakeRunner(), Clock()
    pane = files_pane(_history_with(tmp_path, job), clock, runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, job.job_id)
        board = pane.sample_board
        assert board is not None and pane.budget.held == 2  # one per node's file, within the budget
        pane.display = False
        await pilot.pause()
        pane._tick()
        assert pane.state == "paused"
        await wait_until(pilot, lambda: pane.budget.held == 0)  # given back as the paused reads end
        read = board.tail.bytes_read()
        clock.now += 60
        pane._tick()
        await pilot.app.workers.wait_for_complete()
        assert board.tail.bytes_read() == read
        pane.display = True
        await pilot.pause()
        pane._tick()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.state == "streaming" and pane.sample_board is board  # read on, not read again
        assert runner.calls == 0


# ------------------------------------------------------------------------------------------ AMD GPUs


def _amd_job(tmp_path: Path) -> BigJob:
    return make_bigjob(tmp_path, nodes=2, steps=12, idle_gpus=((1, 2),), lagging_node=None, fail_rank=None,
                       vendor="amd")


async def test_an_amd_job_reads_like_an_nvidia_one_from_its_rocm_smi_samples(tmp_path: Path) -> None:
    """The sampler's rocm-smi ticks (tests/support/bigjob.py writes them in the documented JSON form) give the same
    pane as nvidia-smi's lines: every GPU, its utilisation, memory, the idle GPU named, and no RPC."""
    job = _amd_job(tmp_path)
    runner, clock = FakeRunner(), Clock()
    pane = files_pane(_history_with(tmp_path, job), clock, runner)
    async with Host(pane).run_test(size=(120, 40)) as pilot:
        await start_watch(pilot, pane, job.job_id)
        assert pane.state == "streaming" and pane.source == "samples"
        assert "8 GPUs on 2 nodes" in text(pane, "#gpu-summary")
        rows = [line for line in text(pane).splitlines() if re.match(r"^\s+\d[ !] ", line)]
        assert len(rows) == 8
        u = job.reading(0, 0, job.steps - 1)[0]
        assert f"{u:.0f}%" in rows[0] and "30.3/64.0 GiB" in rows[0]
        assert "nid000002 GPU 2: idle (< 5 %) 100 % of the run" in text(pane, "#gpu-issues")
        assert runner.calls == 0 and FakeStream.made == []


def test_snapshot_of_an_amd_job(snap_compare: Any, tmp_path: Path) -> None:
    job = _amd_job(tmp_path)
    pane = files_pane(_history_with(tmp_path, job), Clock(job.now), FakeRunner())
    host = Host(pane)

    async def run_before(pilot: Any) -> None:
        await start_watch(pilot, pane, job.job_id)

    assert snap_compare(host, terminal_size=(120, 30), run_before=run_before)
