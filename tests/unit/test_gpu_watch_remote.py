"""The GPU watch of a job on a cluster reached over ssh (issue #45), Textual-free: an ntui job's sample files read
through that cluster's files (by offset, no Slurm call), else the plan asked of that cluster's runner and the watch
step streamed through its relay (the argv of ``SshRunner.stream_argv``) with this side's environment; the history
here never looked at; a dropped link said and retried with back-off."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ntui.core.config import GpuSettings
from ntui.core.gpu.watch import FilesFound, GpuWatch, PlanFailed, Planned, relay_of
from ntui.core.slurm.runner import SlurmError, TimeoutRunner
from ntui.core.slurm.ssh import SshError, SshRunner, SshTarget, classify_ssh
from tests.support.bigjob import STEM, make_bigjob
from tests.support.fakes import FakeRunner, FakeStream, result
from tests.support.remote_samples import RecordedFiles

DATA = Path(__file__).resolve().parents[1] / "data"
SHOW_RUNNING = (DATA / "slurm" / "scontrol_show_job_running_2node_gpu.stdout").read_text()
CANNED = (DATA / "gpus" / "two-nodes-label.txt").read_text().splitlines()
DROPPED = "Connection to alpha closed by remote host.\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class RelayRunner(FakeRunner):
    """A fake cluster reached over ssh: Slurm's answers canned, ``stream_argv`` wraps the step's argv the way the
    ssh runner's relay does (recorded), ``classify`` is ssh's own classifier."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.streamed: list[tuple[str, ...]] = []

    def stream_argv(self, argv: Sequence[str]) -> list[str]:
        self.streamed.append(tuple(argv))
        return ["ssh", "-S", "/sock/alpha", "alpha", "sh -c RELAY", *argv]

    def classify(self, returncode: int, stderr: str, argv: Sequence[str] = ()) -> SshError | None:
        return classify_ssh("alpha", returncode, stderr, argv=argv)


def _watch(local: FakeRunner, clock: Clock) -> GpuWatch:
    FakeStream.made = []
    return GpuWatch(local, GpuSettings(interval=2, idle_after=60.0), clock=clock, stream_factory=FakeStream,
                    environ={"PATH": "/usr/bin", "SSH_AUTH_SOCK": "/tmp/agent.1"})


def _plan(watch: GpuWatch, job_id: str, remote: FakeRunner, where_calls: list[str]) -> object:
    def where(jid: str) -> tuple[str, str] | None:
        where_calls.append(jid)
        return ("/logs", "stem")

    ended: list[tuple[int, int, str]] = []
    return watch.plan_for(watch.generation, job_id, where, lambda *a: ended.append(a),
                          cluster_runner={"alpha": remote}.__getitem__)


def test_a_remote_jobs_step_goes_through_its_clusters_relay_and_the_history_here_is_not_asked() -> None:
    local, alpha, clock = FakeRunner(), RelayRunner({"scontrol show job": result(stdout=SHOW_RUNNING)}), Clock()
    watch = _watch(local, clock)
    assert watch.restart("34", visible=True, cluster="alpha")
    looked: list[str] = []
    outcome = _plan(watch, "34", alpha, looked)
    assert isinstance(outcome, Planned) and not isinstance(outcome, FilesFound)
    assert looked == []  # the history here knows nothing of that cluster's jobs
    assert local.argvs() == []  # nothing asked of Slurm here
    assert alpha.argvs() == [("scontrol", "show", "job", "-d", "34")]
    (step,) = alpha.streamed
    assert step[:3] == ("srun", "--jobid=34", "--overlap") and "nvidia-smi" in step
    (stream,) = FakeStream.made
    assert stream.started
    assert stream.argv[:4] == ("ssh", "-S", "/sock/alpha", "alpha") and stream.argv[5:] == step
    assert stream.env == {"PATH": "/usr/bin", "SSH_AUTH_SOCK": "/tmp/agent.1"}  # ssh's, not a Slurm step's
    assert watch.take(outcome) and watch.state == "starting" and watch.relay is alpha
    stream.feed(CANNED)
    assert watch.streaming_now() and watch.board is not None
    assert sum(len(g) for g in watch.board.latest().values()) == 8
    watch.stop()
    assert watch.wait_stopped() and stream.stopped  # the local ssh ended: the relay ends the step there


def test_a_dropped_link_is_said_and_retried_with_a_growing_wait_reset_by_lines() -> None:
    alpha, clock = RelayRunner({"scontrol show job": result(stdout=SHOW_RUNNING)}), Clock()
    watch = _watch(FakeRunner(), clock)
    waits = []
    for _ in range(3):
        watch.restart("34", visible=True, cluster="alpha")
        outcome = _plan(watch, "34", alpha, [])
        assert watch.take(outcome)  # type: ignore[arg-type]
        assert watch.step_ended(watch.generation, 255, DROPPED)
        assert watch.state == "failed" and "alpha: link down (the connection dropped" in watch.reason
        assert watch.retry_at is not None and not watch.retry_due()
        waits.append(watch.retry_at - clock.now)
        clock.now = watch.retry_at
        assert watch.retry_due()
    assert waits == [2.0, 4.0, 8.0]
    watch.restart("34", visible=True, cluster="alpha")
    assert watch.retry_at is None and not watch.retry_due()
    assert watch.take(_plan(watch, "34", alpha, []))  # type: ignore[arg-type]
    FakeStream.made[-1].feed(CANNED)
    assert watch.streaming_now()  # lines again: the next drop waits the first wait
    assert watch.step_ended(watch.generation, 255, DROPPED)
    assert watch.retry_at == clock.now + 2.0


def test_the_remote_commands_own_failure_is_not_a_link_and_not_retried() -> None:
    alpha, clock = RelayRunner({"scontrol show job": result(stdout=SHOW_RUNNING)}), Clock()
    watch = _watch(FakeRunner(), clock)
    watch.restart("34", visible=True, cluster="alpha")
    assert watch.take(_plan(watch, "34", alpha, []))  # type: ignore[arg-type]
    stderr = "slurmstepd: error: execve(): nvidia-smi: No such file or directory\n"
    assert watch.step_ended(watch.generation, 2, stderr)
    assert watch.state == "failed" and "nvidia-smi was not found" in watch.reason
    assert watch.retry_at is None and not watch.retry_due()


def test_a_plan_whose_link_is_down_is_retried_and_another_error_is_said() -> None:
    down = SshError("ssh to alpha: the connection dropped", host="alpha", words="the connection dropped (ssh: x)")
    alpha = RelayRunner({"scontrol show job": [down, SlurmError("scontrol: error: Invalid job id specified")]})
    watch = _watch(FakeRunner(), Clock())
    watch.restart("34", visible=True, cluster="alpha")
    outcome = _plan(watch, "34", alpha, [])
    assert isinstance(outcome, PlanFailed) and outcome.link_down
    assert watch.take(outcome) and "alpha: link down (the connection dropped" in watch.reason
    assert watch.retry_at is not None
    watch.restart("34", visible=True, cluster="alpha")
    outcome = _plan(watch, "34", alpha, [])
    assert isinstance(outcome, PlanFailed) and not outcome.link_down
    assert watch.take(outcome) and "Invalid job id" in watch.reason and watch.retry_at is None
    assert alpha.streamed == [] and FakeStream.made == []


def test_a_cluster_runner_that_cannot_stream_is_said_not_run_here() -> None:
    plain = FakeRunner({"scontrol show job": result(stdout=SHOW_RUNNING)})
    watch = _watch(FakeRunner(), Clock())
    watch.restart("34", visible=True, cluster="alpha")
    outcome = _plan(watch, "34", plain, [])
    assert isinstance(outcome, PlanFailed) and "cannot stream" in outcome.reason
    assert plain.argvs() == [] and FakeStream.made == []


def test_the_relay_is_found_under_the_timeout_runner_of_an_ssh_cluster() -> None:
    ssh = SshRunner(SshTarget(host="alpha", control_dir=Path("/tmp/ntui-test-none")), name="alpha")
    assert relay_of(TimeoutRunner(ssh, query=5, submit=5)) is ssh
    assert relay_of(FakeRunner()) is None


def test_an_ntui_jobs_sample_files_are_read_on_its_cluster_by_offset_with_no_step(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=12, idle_gpus=(), lagging_node=None, fail_rank=None)
    files = RecordedFiles({job.job_id: {"log_dir": str(tmp_path / "logs"), "log_stem": STEM}})
    alpha, clock = RelayRunner({"scontrol show job": result(stdout=SHOW_RUNNING)}), Clock()
    watch = _watch(FakeRunner(), clock)
    watch.restart(job.job_id, visible=True, cluster="alpha")
    looked: list[str] = []

    def where(jid: str) -> tuple[str, str] | None:
        looked.append(jid)
        return None

    outcome = watch.plan_for(watch.generation, job.job_id, where, lambda *a: None,
                             cluster_runner={"alpha": alpha}.__getitem__, cluster_files={"alpha": files}.__getitem__)
    assert isinstance(outcome, FilesFound)
    assert watch.take(outcome) and watch.state == "streaming" and watch.files is outcome.board
    assert looked == [] and alpha.argvs() == [] and alpha.streamed == [] and FakeStream.made == []
    assert sorted(outcome.board.files) == sorted(job.sample_files)
    assert sum(len(g) for g in outcome.board.latest().values()) == 8
    path = str(job.sample_files["nid000001"])
    size = Path(path).stat().st_size
    assert (path, 0) in files.reads
    with open(path, "a") as fh:
        fh.write("".join(f"2026/11/30 10:00:00.000, {g}, GPU-0000{g}-big, 3, 31000, 40960, 100.00, 40\n"
                         for g in range(4)))
    clock.now += 10
    assert watch.poll_files(watch.generation) is not None
    watch.poll_files(watch.generation)  # two files, spread over the interval
    assert (path, size) in files.reads  # only the new bytes were asked
    assert outcome.board.latest()["nid000001"][0].util_gpu == 3


def test_a_job_without_sample_files_there_gets_the_step_over_ssh(tmp_path: Path) -> None:
    files = RecordedFiles({})
    alpha, clock = RelayRunner({"scontrol show job": result(stdout=SHOW_RUNNING)}), Clock()
    watch = _watch(FakeRunner(), clock)
    watch.restart("34", visible=True, cluster="alpha")
    outcome = watch.plan_for(watch.generation, "34", None, lambda *a: None,
                             cluster_runner={"alpha": alpha}.__getitem__, cluster_files={"alpha": files}.__getitem__)
    assert isinstance(outcome, Planned) and len(alpha.streamed) == 1 and files.reads == []
