"""One job's GPU watch without an app (ntui/core/gpu/watch.py): its states, stale answers dropped, its step stopped."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ntui.core.config import GpuSettings
from ntui.core.gpu.smi import GpuBoard
from ntui.core.gpu.stream import GpuWatchPlan
from ntui.core.gpu.watch import GpuWatch, PlanFailed, Planned, describe_step_end
from tests.support.fakes import FakeRunner, capture


class Stream:
    def __init__(self) -> None:
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped = True


def _watch(streams: list[Stream], runner: FakeRunner | None = None) -> GpuWatch:
    def factory(argv: Sequence[str], *, env: Mapping[str, str] | None, on_line: Callable[[str], None],
                on_exit: Callable[[int, str], None]) -> Stream:
        streams.append(Stream())
        return streams[-1]

    return GpuWatch(runner or FakeRunner(), GpuSettings(interval=2), clock=lambda: 0.0, stream_factory=factory)


PLAN = GpuWatchPlan("7", ("nid001",), ("nid001",), {"nid001": (0, 1)}, 30, ("srun", "nvidia-smi"), {})


def _started(watch: GpuWatch, streams: list[Stream]) -> Planned:
    """A plan worker's answer, as if scontrol had said PLAN: the step started and waiting to be taken."""
    board = GpuBoard(PLAN.task_nodes, expected=PLAN.expected)
    watch._unclaimed[watch.generation] = streams[-1] if streams else Stream()
    return Planned(watch.generation, PLAN, board)


def test_a_job_is_planned_only_while_shown() -> None:
    watch = _watch([])
    assert not watch.restart("7", visible=False) and watch.state == "paused"
    assert watch.resume() == "restart"
    assert watch.restart("7", visible=True) and watch.state == "planning"
    assert not watch.restart(None, visible=True) and watch.state == "idle"


def test_a_stale_answer_is_dropped_and_its_step_stopped() -> None:
    streams = [Stream()]
    watch = _watch(streams)
    watch.restart("7", visible=True)
    late = _started(watch, streams)
    watch.restart("8", visible=True)  # the user moved on while srun started
    assert not watch.take(late) and watch.state == "planning" and watch.board is None
    assert watch.wait_stopped(5) and streams[0].stopped


def test_an_answer_starts_the_watch_and_the_step_end_says_why() -> None:
    streams = [Stream()]
    watch = _watch(streams)
    watch.restart("7", visible=True)
    assert watch.take(_started(watch, streams)) and watch.state == "starting" and watch.stream is streams[0]
    assert watch.expected == {"nid001": (0, 1)}
    assert not watch.step_ended(watch.generation - 1, 1, "")  # an older step's end changes nothing
    assert watch.step_ended(watch.generation, 0, "") and watch.state == "failed"
    assert "probably finished" in watch.reason and watch.stream is None


def test_hidden_the_step_stops_and_a_failed_plan_shows_the_allocation() -> None:
    streams = [Stream()]
    watch = _watch(streams)
    watch.restart("7", visible=True)
    watch.take(_started(watch, streams))
    assert watch.pause() and watch.state == "paused" and watch.stream is None
    assert watch.wait_stopped(5) and streams[0].stopped
    watch.restart("7", visible=True)
    assert watch.take(PlanFailed(watch.generation, "job 7 is not running", {"nid001": ()}, "gres/gpu:0"))
    assert watch.state == "failed" and watch.reason == "job 7 is not running" and watch.requested == "gres/gpu:0"


def test_the_plan_worker_asks_scontrol_once_and_says_a_job_that_does_not_run() -> None:
    runner = FakeRunner(default=capture("scontrol_show_job_unknown"))
    watch = _watch([], runner)
    watch.restart("4242", visible=True)
    outcome = watch.plan_for(watch.generation, "4242", lambda job: None, lambda gen, rc, err: None)
    assert isinstance(outcome, PlanFailed) and outcome.expected is None and outcome.reason
    assert [a[:2] for a in runner.argvs()] == [("scontrol", "show")]


def test_a_step_end_is_said_in_words() -> None:
    assert "not found" in describe_step_end(127, "execve(): nvidia-smi: No such file or directory")[0]
    assert "SIGKILL" in describe_step_end(-9, "")[0]
    assert describe_step_end(3, "a\nb\n\nc\nd\ne\n") == ("the GPU watch step ended (exit 3)", ["b", "c", "d", "e"])
