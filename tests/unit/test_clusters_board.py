"""The jobs view's clusters beside their queues (ntui.core.jobs.clusters.ClusterBoard), without Textual: which row is
selected where, a row's cluster, and the view's words (banner, status line, empty queue) over the local model and
every cluster reached over ssh."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.clusters import ClusterBoard, ClusterQueues
from ntui.core.jobs.model import JobModel
from ntui.core.records.record import RecentJob
from ntui.core.slurm.ssh import SshError
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line

NOW = datetime(2026, 6, 1, 9, 30)
SETTINGS = Settings(queue=QueueSettings(active_interval=2, idle_interval=10, max_backoff=60))


def _line(job_id: str, state: str = "RUNNING", used: str = "1:00") -> str:
    compact = {"RUNNING": "R", "PENDING": "PD"}[state]
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name=f"job-{job_id}", StateCompact=compact,
                       State=state, Reason="None", TimeUsed=used, TimeLimit="10:00", StartTime="N/A", NumNodes="1",
                       NodeList="", tres_alloc="", Partition="debug", QOS="normal", WorkDir="/tmp", UserName="bob",
                       exit_code="")


def _board(*, local: bool, names: tuple[str, ...] = ("alpha", "beta"), clock: list[datetime] | None = None
           ) -> tuple[ClusterBoard, JobModel]:
    now = clock or [NOW]
    queues = ClusterQueues(names, SETTINGS, clock=lambda: now[0])
    model = JobModel(SETTINGS, "bob", clock=lambda: now[0])
    return ClusterBoard(queues, local=local, local_name="here" if local and names else ""), model


def _answer(board: ClusterBoard, name: str, *lines: str) -> None:
    queue = board.queues[name]
    request = queue.request(False)
    assert request is not None
    queue.succeeded(request, queue.fetch(FakeRunner({"squeue": result(stdout="".join(f"{x}\n" for x in lines))}),
                                         request))


def _fail(board: ClusterBoard, name: str) -> None:
    queue = board.queues[name]
    request = queue.request(False)
    assert request is not None
    queue.failed(SshError(f"ssh to {name}: dropped", host=name, words="the connection dropped"))


def test_a_rows_cluster_and_the_cluster_column() -> None:
    board, _ = _board(local=True)
    assert board.several and board.column() is not None
    assert board.cluster_of("alpha/12") == "alpha" and board.cluster_of("12") == "here"
    alone, _ = _board(local=False, names=("alpha",))
    assert not alone.several and alone.column() is None  # one cluster shown: no Cluster column
    assert _board(local=True, names=())[0].column() is None  # no clusters: the single-cluster view


def test_a_clusters_row_is_selected_on_the_board_and_a_local_one_by_the_model() -> None:
    board, model = _board(local=True)
    assert board.select("alpha/12", model)
    assert board.selected == "alpha/12" and model.details.selected is None
    assert not board.select("alpha/12", model)  # the same row again: nothing to look up
    assert board.select("12", model)  # a local row: the model's
    assert board.selected is None and model.details.selected == "12"
    assert not board.select("12", model)
    assert board.select("gamma/12", model)  # not a cluster of the view: the model's, as any local key
    assert board.selected is None


def test_where_a_submitted_job_and_a_record_are() -> None:
    board, _ = _board(local=True)
    assert board.submission_key("77", "alpha") == "alpha/77" and board.submission_key("77", None) == "77"
    record = RecentJob(job_id="5", name="x", state="COMPLETED", exit_code="0:0", elapsed_s=1, verdict="",
                       submitted_at=1.0, end_time=None, source="sacct", from_ntui=True)
    assert board.record_cluster(record) is None
    assert board.record_cluster(replace(record, cluster="alpha")) == "alpha"
    assert board.record_cluster(replace(record, cluster="elsewhere")) is None  # not a cluster of the view


def test_the_status_line_names_each_cluster_and_the_oldest_answer() -> None:
    clock = [NOW]
    board, model = _board(local=False, clock=clock)
    assert board.status_line(model, filter_text="", shown=0, slurm_calls=None) == (
        "bob's jobs  │  alpha: waiting for squeue…  │  beta: waiting for squeue…")
    _answer(board, "alpha", _line("1"), _line("2", "PENDING"))
    clock[0] = NOW + timedelta(seconds=7)
    _fail(board, "beta")
    line = board.status_line(model, filter_text="x", shown=1, slurm_calls=3)
    assert line == "bob's jobs  │  alpha: 1 running · 1 pending  │  beta: link down  │  filter 'x': 1 shown  │  " \
                   "updated 7 s ago"
    local, local_model = _board(local=True, names=())
    assert local.status_line(local_model, filter_text="", shown=0, slurm_calls=3) == \
        local_model.status_line(filter_text="", shown=0, slurm_calls=3)  # no clusters: the model's own line


def test_the_empty_queue_and_the_banner_over_every_cluster() -> None:
    board, model = _board(local=False)
    assert board.empty_text(model) == "waiting for squeue…"
    _fail(board, "alpha")
    _fail(board, "beta")
    assert board.empty_text(model) == "no data: every cluster's link is down"
    assert board.banner(model).splitlines()[0].startswith("⚠ alpha: link down")
    assert len(board.banner(model).splitlines()) == 2
    _answer(board, "beta")
    assert board.empty_text(model) == "no jobs in the queue"
    local, local_model = _board(local=True)
    assert local.empty_text(local_model) == local_model.empty_text()
    assert local.banner(local_model) == ""


def test_elapsed_ticks_of_the_local_model_and_every_cluster() -> None:
    clock = [NOW]
    board, model = _board(local=True, clock=clock)
    _answer(board, "alpha", _line("1", used="1:00"))
    clock[0] = NOW + timedelta(seconds=5)
    assert board.ticked_elapsed(model) == {"alpha/1": "1:05"}


def test_the_logins_user_is_asked_once_in_everyones_view_until_said() -> None:
    from ntui.core.jobs.clusters import login_user

    board, _ = _board(local=False)
    alpha = board.queues["alpha"]
    assert not alpha.user_request(False)  # own jobs: their answers name the user
    assert alpha.user_request(True) and not alpha.user_request(True)  # one ask at a time
    assert board.queues.busy()
    alpha.user_answered(None)  # not said: asked again after the next answer
    assert not board.queues.busy() and alpha.user is None and alpha.user_request(True)
    alpha.user_answered("alice-there")
    assert alpha.user == "alice-there" and not alpha.user_request(True)
    said = FakeRunner({"id -un": result(stdout="alice-there\n")})
    assert login_user(said, 5.0) == "alice-there" and said.argvs() == [("id", "-un")]
    assert login_user(FakeRunner({"id": result(stdout="", returncode=1)}), 5.0) is None
    assert login_user(FakeRunner({"id": SshError("ssh to a: dropped", host="a", words="the connection dropped")}),
                      5.0) is None
