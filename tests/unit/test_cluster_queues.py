"""The queues of clusters reached over ssh (ntui.core.jobs.clusters): keys by (cluster, job id), one poll book per
cluster, a dropped link said in words with back-off, the details asked of the job's own cluster."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.clusters import ClusterQueues, cluster_key, split_key, with_cluster
from ntui.core.slurm.ssh import SshError
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line

NOW = datetime(2026, 6, 1, 9, 30)


def _line(job_id: str, name: str, state: str = "PENDING") -> str:
    compact = {"RUNNING": "R", "PENDING": "PD"}[state]
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name=name, StateCompact=compact,
                       State=state, Reason="JobHeldUser" if state == "PENDING" else "None", TimeUsed="0:00",
                       TimeLimit="10:00", StartTime="N/A", NumNodes="1", NodeList="", tres_alloc="",
                       Partition="debug", QOS="normal", WorkDir="/tmp", UserName="bob", exit_code="")


def _runner(*lines: str) -> FakeRunner:
    return FakeRunner({"squeue": result(stdout="".join(f"{ln}\n" for ln in lines))})


def _link_down() -> SshError:
    return SshError("ssh to a: the connection dropped", host="a", words="the connection dropped (ssh: broken pipe)")


@pytest.fixture
def clock() -> list[datetime]:
    return [NOW]


def _queues(clock: list[datetime]) -> ClusterQueues:
    settings = Settings(queue=QueueSettings(active_interval=2, idle_interval=10, max_backoff=60))
    return ClusterQueues(("alpha", "beta"), settings, clock=lambda: clock[0])


def test_keys_split_back_and_local_keys_stay_plain() -> None:
    assert cluster_key("alpha", "1234") == "alpha/1234"
    assert split_key("alpha/1234") == ("alpha", "1234")
    assert split_key("1234_[3-9]") == (None, "1234_[3-9]")
    assert with_cluster({"1": ("1", "x")}, lambda k: "here") == {"1": ("here", "1", "x")}


def test_same_job_id_on_two_clusters_stays_two_rows(clock: list[datetime]) -> None:
    queues = _queues(clock)
    runners = {"alpha": _runner(_line("1234", "on-alpha")), "beta": _runner(_line("1234", "on-beta"))}
    for name in queues.names():
        queue = queues[name]
        request = queue.request(False)
        assert request is not None
        changed, delay = queue.succeeded(request, queue.fetch(runners[name], request))
        assert changed and delay > 0
    rows = queues.rows()
    assert list(rows) == ["alpha/1234", "beta/1234"]
    assert rows["alpha/1234"][1] == "on-alpha" and rows["beta/1234"][1] == "on-beta"
    found = queues.row("beta/1234")
    assert found is not None and (found.cluster, found.job_id, found.job.name) == ("beta", "1234", "on-beta")
    assert queues.row("1234") is None  # a local row is not a cluster's
    assert queues.row("gamma/1234") is None
    # each cluster was asked through its own runner only
    assert [c.argv[0] for c in runners["alpha"].history] == ["squeue"]
    assert [c.argv[0] for c in runners["beta"].history] == ["squeue"]


def test_a_dropped_link_keeps_the_rows_says_so_and_backs_off(clock: list[datetime]) -> None:
    queues = _queues(clock)
    alpha = queues["alpha"]
    request = alpha.request(False)
    assert request is not None
    alpha.succeeded(request, alpha.fetch(_runner(_line("7", "kept")), request))
    delays = []
    for _ in range(3):
        request = alpha.request(False)
        assert request is not None
        delays.append(alpha.failed(_link_down()))
    assert delays == [2.0, 4.0, 8.0]  # exponential back-off from the active interval
    assert "alpha/7" in queues.rows()  # the rows stay
    banner = queues.banner()
    assert banner.startswith("⚠ alpha: link down, retry in 8 s") and "the connection dropped" in banner
    assert "beta" not in banner  # the other cluster is not affected
    assert "alpha: link down" in queues.status() and "beta: waiting for squeue…" in queues.status()
    clock[0] = NOW + timedelta(seconds=8)
    request = alpha.request(False)
    assert request is not None
    alpha.succeeded(request, alpha.fetch(_runner(_line("7", "kept")), request))
    assert queues.banner() == ""


def test_a_refused_login_is_not_a_dropped_link(clock: list[datetime]) -> None:
    alpha = _queues(clock)["alpha"]
    alpha.request(False)
    alpha.failed(SshError("ssh to a: refused", host="a", words="the login was refused; to renew it here: sshproxy"))
    assert "cannot log in" in alpha.banner() and "sshproxy" in alpha.banner()


def test_details_are_asked_of_the_jobs_cluster_with_its_job_id(clock: list[datetime]) -> None:
    queues = _queues(clock)
    beta = queues["beta"]
    request = beta.request(False)
    assert request is not None
    beta.succeeded(request, beta.fetch(_runner(_line("55", "held")), request))
    view, wanted = beta.details_step("55", visible=True)
    assert wanted is not None and wanted.query == "55"
    assert view is not None and view.note == "loading details…"
    show = "JobId=55 JobName=held\n   JobState=PENDING Reason=JobHeldUser\n   UserId=bob(1000) GroupId=bob(1000)\n"
    runner = FakeRunner({("scontrol", "show", "job"): result(stdout=show)}, default=result(stdout=""))
    got = beta.fetch_details(runner, wanted)
    assert beta.details.fetched(got)
    assert any(c.argv[:4] == ("scontrol", "show", "job", "-d") or "55" in c.argv for c in runner.history)
    again, none = beta.details_step("55", visible=True)
    assert none is None and again is not None and again.details is not None and again.details.job_id == "55"


def test_toggling_all_users_drops_the_old_answer(clock: list[datetime]) -> None:
    queues = _queues(clock)
    alpha = queues["alpha"]
    request = alpha.request(False)
    assert request is not None
    got = alpha.fetch(_runner(_line("7", "mine")), request)
    queues.toggle_all_users()
    changed, delay = alpha.succeeded(request, got)  # an answer for the old view: not applied, another at once
    assert not changed and delay == 0.0 and queues.rows() == {}
