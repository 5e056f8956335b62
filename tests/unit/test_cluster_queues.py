"""The queues of clusters reached over ssh (ntui.core.jobs.clusters): keys by (cluster, job id), one poll book per
cluster, a dropped link said in words with back-off, the details asked of the job's own cluster, a job that left a
cluster's queue kept as an ended row with its final state asked of that cluster."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from ntui.core.config import QueueSettings, Settings
from ntui.core.jobs.clusters import ClusterQueue, ClusterQueues, cluster_key, split_key, with_cluster
from ntui.core.jobs.queue import ENDED
from ntui.core.slurm.ssh import SshError
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_jobs import squeue_line

NOW = datetime(2026, 6, 1, 9, 30)


def _line(job_id: str, name: str, state: str = "PENDING", user: str = "bob") -> str:
    compact = {"RUNNING": "R", "PENDING": "PD"}[state]
    return squeue_line(JobID=job_id, ArrayJobID=job_id, ArrayTaskID="N/A", Name=name, StateCompact=compact,
                       State=state, Reason="JobHeldUser" if state == "PENDING" else "None", TimeUsed="0:00",
                       TimeLimit="10:00", StartTime="N/A", NumNodes="1", NodeList="", tres_alloc="",
                       Partition="debug", QOS="normal", WorkDir="/tmp", UserName=user, exit_code="")


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


# ---------------------------------------------------------------- jobs that left a cluster's queue

#: ``sacct -X -P -n`` of job 1234 on alpha (RECORD_FIELDS' order): it failed with exit code 2 after 9 minutes.
SACCT_1234 = ("1234|on-alpha|FAILED|2:0|NonZeroExitCode|2026-06-01T09:00:00|2026-06-01T09:01:00|"
              "2026-06-01T09:10:00|00:09:00|a01|proj|normal|debug|/tmp\n")
NO_ACCOUNTING = "Slurm accounting storage is disabled\n"


def _apply(queue: ClusterQueue, runner: FakeRunner, *, all_users: bool = False) -> bool:
    request = queue.request(all_users)
    assert request is not None
    changed, _ = queue.succeeded(request, queue.fetch(runner, request))
    return changed


def _resolve_all(queue: ClusterQueue, runner: FakeRunner | None) -> bool:
    batch = queue.finished.take()
    assert batch is not None
    return queue.resolved(queue.resolve(runner, batch))


def test_a_job_that_left_a_clusters_queue_keeps_an_ended_row_with_its_final_state_from_there(
        clock: list[datetime]) -> None:
    queues = _queues(clock)
    alpha, beta = queues["alpha"], queues["beta"]
    _apply(alpha, _runner(_line("1234", "on-alpha", "RUNNING"), _line("9", "stays")))
    _apply(beta, _runner(_line("1234", "on-beta", "RUNNING")))
    assert _apply(alpha, _runner(_line("9", "stays")))  # 1234 left alpha's queue
    rows, tags = queues.rows(), queues.tags()
    assert list(rows) == ["alpha/9", "alpha/1234", "beta/1234"]
    assert tags == {"alpha/1234": ENDED}
    assert rows["alpha/1234"][6] == "(looking up the final state…)"
    assert rows["beta/1234"][2] == "RUNNING"  # the other cluster's job 1234 is not touched
    # the final state is asked of alpha's own runner (sacct there)
    there = FakeRunner({"sacct": result(stdout=SACCT_1234)})
    assert _resolve_all(alpha, there)
    assert [c.argv[:3] for c in there.history] == [("sacct", "-j", "1234")]
    row = queues.rows()["alpha/1234"]
    assert (row[0], row[2], row[3], row[6]) == ("1234", "FAILED", "9:00", "exit 2:0")
    assert queues.row("alpha/1234") is None  # nothing to act on
    shown = queues.shown("alpha/1234")
    assert shown is not None and shown.ended is not None and shown.ended.outcome is not None
    assert (shown.cluster, shown.job_id, shown.ended.outcome.state) == ("alpha", "1234", "FAILED")
    view, wanted = alpha.details_step("1234", visible=True)  # its details are asked of alpha too
    assert wanted is not None and wanted.query == "1234"
    assert view is not None and view.outcome is not None and view.outcome.exit_code == "2:0"


def test_without_accounting_there_the_controller_there_is_asked(clock: list[datetime]) -> None:
    alpha = _queues(clock)["alpha"]
    _apply(alpha, _runner(_line("77", "short", "RUNNING")))
    _apply(alpha, _runner())
    show = ("JobId=77 JobName=short\n   UserId=bob(1000) GroupId=bob(1000)\n   JobState=COMPLETED Reason=None\n"
            "   RunTime=00:01:05 TimeLimit=00:10:00\n   ExitCode=0:0\n")
    there = FakeRunner({"sacct": result(stderr=NO_ACCOUNTING, returncode=1),
                        ("scontrol", "show", "job"): result(stdout=show)})
    assert _resolve_all(alpha, there)
    assert [c.argv[0] for c in there.history] == ["sacct", "scontrol"]
    assert alpha.keyed_rows()["alpha/77"][2] == "COMPLETED"


def test_a_look_up_over_a_dropped_link_is_asked_again_not_shown_unknown(clock: list[datetime]) -> None:
    alpha = _queues(clock)["alpha"]
    _apply(alpha, _runner(_line("5", "gone", "RUNNING")))
    _apply(alpha, _runner())
    down = FakeRunner({"sacct": _link_down(), "scontrol": _link_down()})
    assert not _resolve_all(alpha, down)  # no final state: nothing changes yet
    assert alpha.finished.take() is None  # asked again after the next refresh, not in a loop
    _apply(alpha, _runner())
    assert _resolve_all(alpha, FakeRunner({"sacct": result(stdout=SACCT_1234.replace("1234", "5"))}))
    assert alpha.keyed_rows()["alpha/5"][2] == "FAILED"
    # no runner at all (its login could not be built): the same, asked again later
    _apply(alpha, _runner(_line("6", "next", "RUNNING")))
    _apply(alpha, _runner())
    assert not _resolve_all(alpha, None)
    assert alpha.keyed_rows()["alpha/6"][6] == "(looking up the final state…)"


def test_a_requeued_job_loses_its_ended_row(clock: list[datetime]) -> None:
    alpha = _queues(clock)["alpha"]
    _apply(alpha, _runner(_line("8", "flaky", "RUNNING")))
    _apply(alpha, _runner())
    assert "alpha/8" in alpha.ended_tags()
    _apply(alpha, _runner(_line("8", "flaky")))
    assert alpha.ended_tags() == {} and alpha.keyed_rows()["alpha/8"][2] == "PENDING"


def test_in_everyones_view_only_the_logins_own_jobs_end_there(clock: list[datetime]) -> None:
    queues = _queues(clock)
    alpha = queues["alpha"]
    _apply(alpha, _runner(_line("1", "mine", "RUNNING", user="bob")))  # own jobs: the login there is bob
    queues.toggle_all_users()
    _apply(alpha, _runner(_line("1", "mine", "RUNNING"), _line("2", "theirs", "RUNNING", user="carol")),
           all_users=True)
    _apply(alpha, _runner(), all_users=True)  # both left
    assert list(alpha.ended_tags()) == ["alpha/1"]


def test_before_any_own_answer_everyones_departures_are_not_guessed(clock: list[datetime]) -> None:
    queues = _queues(clock)
    alpha = queues["alpha"]
    queues.toggle_all_users()
    _apply(alpha, _runner(_line("2", "theirs", "RUNNING", user="carol")), all_users=True)
    _apply(alpha, _runner(), all_users=True)
    assert alpha.ended_tags() == {} and alpha.user is None
