"""A cluster's squeue keeps the local queue's pace (PollBook.paced, the one rule): in everyone's view only the
login's own active jobs keep the poll at the active interval, as the local model counts only its user's."""

from __future__ import annotations

from datetime import datetime

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.clusters import ClusterQueue
from ntui.core.jobs.polling import PollBook
from ntui.core.slurm.squeue import parse_squeue
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line

NOW = datetime(2026, 3, 1, 12, 0, 0)
SETTINGS = Settings(queue=QueueSettings(active_interval=2, idle_interval=10, max_backoff=60))


def _line(job_id: str, state: str, user: str) -> str:
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name=f"job{job_id}", StateCompact=state,
                       Reason="None", TimeUsed="0:05", TimeLimit="1:00:00", NumNodes="1", NodeList="n1",
                       Partition="debug", QOS="normal", WorkDir="/tmp", UserName=user, exit_code="")


def _delay(queue: ClusterQueue, *lines: str, all_users: bool) -> float:
    request = queue.request(all_users)
    assert request is not None
    runner = FakeRunner({"squeue": result(stdout="".join(f"{ln}\n" for ln in lines))})
    _, delay = queue.succeeded(request, queue.fetch(runner, request))
    return delay


def test_in_everyones_view_another_users_running_job_does_not_speed_a_clusters_poll() -> None:
    queue = ClusterQueue("alpha", SETTINGS, clock=lambda: NOW)
    assert _delay(queue, _line("1", "R", "bob"), all_users=False) == 2  # own job running: the active pace
    assert queue.user == "bob"
    queue.toggle_all_users()
    assert _delay(queue, _line("1", "CD", "bob"), _line("2", "R", "carol"), all_users=True) == 10
    assert _delay(queue, _line("1", "R", "bob"), _line("2", "R", "carol"), all_users=True) == 2


def test_the_cluster_and_the_local_book_pace_the_same_answers_alike() -> None:
    jobs = parse_squeue("".join(f"{ln}\n" for ln in (_line("7", "R", "carol"), _line("8", "PD", "bob"))))
    for user, expected in ((None, 2.0), ("bob", 2.0), ("dave", 10.0)):
        book = PollBook(SETTINGS.queue, lambda: NOW)
        assert book.paced(jobs, unchanged=False, user=user) == expected
        assert book.paced(jobs, unchanged=True, user=user) == expected  # the same answer keeps its activity
