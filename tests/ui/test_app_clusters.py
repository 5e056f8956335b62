"""The jobs view with several clusters (issue #45): each cluster of the settings polled through its own runner, rows
keyed by (cluster, job id) with a Cluster column, actions and details sent to the selected job's own cluster, a
dropped link said on that cluster's banner line only, a job that left a cluster's queue kept as an ended row with its
final state asked of that cluster."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ntui.core.jobs.clusters import ClusterQueue
from ntui.core.jobs.queue import ENDED
from ntui.ui.screens.action_dialogs import ConfirmCancelScreen
from ntui.ui.widgets.job_details import JobDetailsPanel
from ntui.ui.widgets.log_pane import LogPane
from tests.support.clusters_view import clusters_view, select_row, status_text
from tests.support.fakes import FakeRunner, result
from tests.support.screenshots_clusters import (
    agent_answer,
    cluster_runner,
    clusters_app,
    clusters_settings,
    job_line,
    link_down,
    show_job,
)
from tests.support.screenshots_jobs import settle_jobs, wait_until

SIZE = (150, 36)


def _calls(runner: FakeRunner, *prefix: str) -> list[tuple[str, ...]]:
    return [a for a in runner.argvs() if a[: len(prefix)] == prefix]


def _three() -> tuple[FakeRunner, FakeRunner, FakeRunner]:
    local = cluster_runner(job_line("1234", "here-job"), shows={"1234": show_job("1234", "here-job")})
    alpha = cluster_runner(job_line("1234", "alpha-job"), job_line("77", "alpha-other", "RUNNING", reason="None"),
                           shows={"1234": show_job("1234", "alpha-job")})
    beta = cluster_runner(job_line("1234", "beta-job"), shows={"1234": show_job("1234", "beta-job")})
    return local, alpha, beta


async def test_every_cluster_in_one_queue_with_its_cluster() -> None:
    local, alpha, beta = _three()
    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    async with clusters_view(app, "1234", "alpha/1234", "alpha/77", "beta/1234", size=SIZE) as (_, screen):
        table = screen.table
        assert [c.key for c in table.columns][:3] == ["cluster", "id", "name"]
        assert set(table.rows) == {"1234", "alpha/1234", "alpha/77", "beta/1234"}
        assert table.get_row("1234")[:3] == ["perlmutter", "1234", "here-job"]
        assert table.get_row("alpha/1234")[:3] == ["alpha", "1234", "alpha-job"]
        assert table.get_row("beta/1234")[:3] == ["beta", "1234", "beta-job"]
        # each cluster's squeue went through its own runner
        assert _calls(alpha, "squeue") and _calls(beta, "squeue") and _calls(local, "squeue")
        assert "alpha: 1 pending · 1 running" in status_text(screen)
        assert "beta: 1 pending" in status_text(screen)


async def test_details_and_cancel_go_to_the_selected_jobs_cluster_only() -> None:
    local, alpha, beta = _three()
    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    async with clusters_view(app, "beta/1234", size=SIZE) as (pilot, screen):
        local_shows = len(_calls(local, "scontrol", "show", "job"))  # the first row's, selected at start
        await select_row(pilot, screen, "beta/1234")
        details = screen.query_one(JobDetailsPanel)
        await wait_until(pilot, lambda: details.selected.details_known)
        selected = details.selected
        assert (selected.cluster, selected.job_id, selected.row_key) == ("beta", "1234", "beta/1234")
        assert selected.batch_log == "/home/alice/logs/beta-job-1234.out"
        assert _calls(beta, "scontrol", "show", "job") and not _calls(alpha, "scontrol", "show", "job")
        assert len(_calls(local, "scontrol", "show", "job")) == local_shows

        await select_row(pilot, screen, "alpha/1234")
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmCancelScreen)
        await pilot.press("y")
        await settle_jobs(pilot)
        assert _calls(alpha, "scancel") == [("scancel", "1234")]
        assert not _calls(beta, "scancel") and not _calls(local, "scancel")

        await select_row(pilot, screen, "beta/1234")  # held: h releases it, on beta
        await pilot.press("h")
        await settle_jobs(pilot)
        assert _calls(beta, "scontrol", "release") == [("scontrol", "release", "1234")]
        assert not _calls(alpha, "scontrol", "release") and not _calls(local, "scontrol", "release")


async def test_a_dropped_link_is_that_clusters_alone_and_comes_back() -> None:
    local, alpha, _ = _three()
    ok = result(stdout=job_line("5", "beta-job") + "\n")
    beta = FakeRunner({"squeue": [link_down("beta"), link_down("beta"), ok]}, default=result())
    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    async with clusters_view(app, "alpha/1234", size=SIZE) as (pilot, screen):
        banner = str(screen.query_one("#jobs-banner").render())
        assert "beta: link down" in banner and "alpha" not in banner
        assert screen.query_one("#jobs-banner").has_class("-shown")
        assert "beta: link down" in status_text(screen)
        queue: ClusterQueue = screen.clusters["beta"]
        assert queue.polls.policy.errors == 1  # backing off, not asking in a loop
        assert len(_calls(beta, "squeue")) == 1
        await pilot.press("r")  # retry now (twice: the second answer is the link back)
        await settle_jobs(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: "beta/5" in screen.table.rows)
        await settle_jobs(pilot)
        assert "beta" not in str(screen.query_one("#jobs-banner").render())
        assert "1234" in screen.table.rows and "alpha/1234" in screen.table.rows  # the others untouched


async def test_without_slurm_here_only_the_clusters_are_asked() -> None:
    _, alpha, beta = _three()
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta})
    async with clusters_view(app, "alpha/1234", "alpha/77", "beta/1234", size=SIZE) as (_, screen):
        assert set(screen.table.rows) == {"alpha/1234", "alpha/77", "beta/1234"}
        assert isinstance(screen.runner, FakeRunner) and not screen.runner.argvs()
        assert "perlmutter" not in status_text(screen)


async def test_one_cluster_over_ssh_alone_has_no_cluster_column() -> None:
    _, alpha, _ = _three()
    app = clusters_app(local=None, clusters={"alpha": alpha})
    async with clusters_view(app, "alpha/1234", "alpha/77", size=SIZE) as (_, screen):
        assert [c.key for c in screen.table.columns][0] == "id"
        assert screen.table.get_row("alpha/1234")[:2] == ["1234", "alpha-job"]


async def test_the_logs_of_a_remote_job_are_read_through_its_clusters_files(tmp_path: Path) -> None:
    log = tmp_path / "beta-job-1234.out"
    log.write_text("".join(f"step {i}\n" for i in range(5)))
    local, alpha, _ = _three()
    beta = cluster_runner(job_line("1234", "beta-job", "RUNNING", reason="None"),
                          shows={"1234": show_job("1234", "beta-job", "RUNNING", out=str(log))})
    opened: list[str] = []  # the clusters whose files were asked for more than their history (the recent list's)

    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    real = app.cluster_files

    class Tracked:
        def __init__(self, name: str) -> None:
            self.name, self.files = name, real(name)

        def __getattr__(self, attr: str) -> Any:
            if attr not in ("history", "close"):
                opened.append(self.name)
            return getattr(self.files, attr)

    def files(name: str) -> Any:
        return Tracked(name)

    app.cluster_files = files  # type: ignore[method-assign]
    async with clusters_view(app, "beta/1234", size=SIZE, select="beta/1234") as (pilot, screen):
        await pilot.press("l")
        pane = screen.query_one(LogPane)
        await wait_until(pilot, lambda: list(pane.log_lines) == [f"step {i}" for i in range(5)])
        with log.open("a") as f:
            f.write("step 5\nstep 6\n")
        await wait_until(pilot, lambda: len(pane.log_lines) == 7)
        assert list(pane.log_lines) == [f"step {i}" for i in range(7)]  # every line once, in order
        assert set(opened) == {"beta"}  # the job's own cluster's files, and no other
        assert "on beta" in pane.triage_line.text and str(log) in pane.triage_line.text


async def test_a_remote_jobs_time_is_its_own_even_with_the_local_jobs_id() -> None:
    local = cluster_runner(job_line("1234", "here-job", "RUNNING", reason="None", used="1:02:13"),
                           shows={"1234": show_job("1234", "here-job", "RUNNING")})
    alpha = cluster_runner(job_line("1234", "alpha-job", "RUNNING", reason="None", used="5:07"),
                           shows={"1234": show_job("1234", "alpha-job", "RUNNING")})
    app = clusters_app(local=local, clusters={"alpha": alpha})
    async with clusters_view(app, size=SIZE) as (pilot, screen):
        details = screen.query_one(JobDetailsPanel)
        await wait_until(pilot, lambda: details.elapsed == "1:02:13")  # the local 1234, selected first
        await wait_until(pilot, lambda: "alpha/1234" in screen.table.rows)
        await select_row(pilot, screen, "alpha/1234")
        await wait_until(pilot, lambda: details.elapsed == "5:07")
        assert details.view is not None and details.view.cluster == "alpha"
        assert details.selected.cluster == "alpha" and details.selected.job is not None
        assert details.selected.job.name == "alpha-job"


async def test_the_recent_list_says_each_records_cluster(tmp_path: Path) -> None:
    from ntui.core.records.history import History
    from ntui.ui.widgets.recent_jobs import RecentJobsTable

    state = tmp_path / "state"
    writer = History(state)
    for token, job_id, cluster in (("a" * 32, "555", "perlmutter"), ("b" * 32, "556", None)):
        writer.record_intent(token=token, preset="p", preset_path=None, overrides=[], job_name=f"old-{job_id}",
                             launcher="srun", nodes=1, world_size=1, log_dir=str(tmp_path), log_stem=f"old-{job_id}",
                             script="#!/bin/bash\n")
        writer.record_submitted(token, job_id, cluster, None)
    writer.close()
    local, alpha, _ = _three()
    app = clusters_app(local=local, clusters={"alpha": alpha}, clock=None, local_name="here",
                       history_factory=lambda: History(state))
    async with clusters_view(app, size=SIZE) as (pilot, screen):
        recent = screen.query_one(RecentJobsTable)
        await wait_until(pilot, lambda: recent.row_count == 2)
        assert [str(c.label) for c in recent.columns.values()][:2] == ["Cluster", "Job"]
        rows = {str(recent.get_row_at(i)[1]): str(recent.get_row_at(i)[0]) for i in range(2)}
        assert rows == {"555": "perlmutter", "556": "here"}  # a record without its cluster: the local one's


async def test_without_slurm_here_the_start_asks_nothing_of_this_machine(tmp_path: Path) -> None:
    from ntui.core.records.history import History

    _, alpha, _ = _three()
    app = clusters_app(local=None, clusters={"alpha": alpha}, history_factory=lambda: History(tmp_path / "state"))
    app.reconcile_on_start = True  # as run_app sets it: the history's lost submissions looked for in squeue
    async with clusters_view(app, "alpha/1234", size=SIZE) as (pilot, screen):
        await wait_until(pilot, lambda: not any(w.group == "reconcile" and not w.is_finished for w in app.workers))
        await settle_jobs(pilot)
        assert isinstance(screen.runner, FakeRunner) and not screen.runner.argvs()


#: ``sacct -X -P -n`` of alpha's job 1234 (RECORD_FIELDS' order): it failed with exit code 3.
ALPHA_SACCT = ("1234|alpha-job|FAILED|3:0|NonZeroExitCode|2026-06-01T09:00:00|2026-06-01T09:01:00|"
               "2026-06-01T09:13:20|00:12:20|a01|proj|normal|debug|/home/alice/train\n")


async def test_a_remote_job_that_left_its_queue_keeps_an_ended_row_with_its_final_state() -> None:
    local, _, beta = _three()
    before = result(stdout=job_line("1234", "alpha-job", "RUNNING", reason="None") + "\n"
                    + job_line("77", "alpha-other") + "\n")
    after = result(stdout=job_line("77", "alpha-other") + "\n")
    alpha = FakeRunner({"squeue": [before, after], "sacct": result(stdout=ALPHA_SACCT)}, default=result())
    app = clusters_app(local=local, clusters={"alpha": alpha, "beta": beta})
    async with clusters_view(app, "alpha/1234", "1234", size=SIZE) as (pilot, screen):
        table = screen.table
        await pilot.press("r")  # the next answer: 1234 left alpha's queue
        await wait_until(pilot, lambda: table.row_tag("alpha/1234") == ENDED)
        await wait_until(pilot, lambda: table.get_row("alpha/1234")[3] == "FAILED")
        row = table.get_row("alpha/1234")
        assert (row[0], row[1], row[2], row[7]) == ("alpha", "1234", "alpha-job", "exit 3:0")
        # asked of alpha alone; the local job 1234 and beta's stay as they were
        assert [a[:3] for a in _calls(alpha, "sacct")] == [("sacct", "-j", "1234")]
        assert not _calls(local, "sacct") and not _calls(beta, "sacct")
        assert table.row_tag("1234") != ENDED and table.get_row("1234")[:3] == ["perlmutter", "1234", "here-job"]
        assert table.row_tag("beta/1234") != ENDED
        # its row selected: the tabs show alpha's job, ended, not the local 1234
        await select_row(pilot, screen, "alpha/1234")
        details = screen.query_one(JobDetailsPanel)
        await wait_until(pilot, lambda: details.selected.row_key == "alpha/1234")
        selected = details.selected
        assert (selected.cluster, selected.job_id, selected.active) == ("alpha", "1234", False)
        assert selected.job is not None and selected.job.name == "alpha-job"
        await pilot.press("c")  # nothing to cancel: it has left the queue
        await settle_jobs(pilot)
        assert not any(isinstance(s, ConfirmCancelScreen) for s in app.screen_stack)
        assert not _calls(alpha, "scancel") and not _calls(local, "scancel")


class _AgentOverPipe:
    """A cluster's files whose history the real agent answers (``agent.serve`` over a pipe of protocol lines),
    from that cluster's own state directory; ``down``: the link dropped (ssh's failure, as the agent client raises
    it)."""

    def __init__(self, name: str, state: Path) -> None:
        self.name, self.state, self.down, self.asked = name, state, False, 0

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        self.asked += 1
        if self.down:
            raise link_down(self.name)
        answer = agent_answer(self.state, {"op": "history", "limit": limit})
        return list(answer["entries"])

    def close(self) -> None:
        pass


def _write_history(state: Path, *jobs: tuple[str, str, str | None]) -> None:
    from ntui.core.records.history import History

    writer = History(state)
    for token, job_id, cluster in jobs:
        writer.record_intent(token=token, preset="p", preset_path=None, overrides=[], job_name=f"job-{job_id}",
                             launcher="srun", nodes=1, world_size=1, log_dir=str(state), log_stem=f"job-{job_id}",
                             script="#!/bin/bash\n")
        writer.record_submitted(token, job_id, cluster, None)
    writer.close()


async def test_the_recent_list_holds_each_clusters_own_history_and_a_dropped_link_says_so(tmp_path: Path) -> None:
    from ntui.core.records.history import History
    from ntui.ui.widgets.recent_jobs import RecentJobsTable

    here, there = tmp_path / "here", tmp_path / "alpha-home"
    _write_history(here, ("a" * 32, "555", None))
    # alpha's own history: 556, 1234 (still in alpha's queue: shown there), and 555 (alpha's, not the local 555)
    _write_history(there, ("b" * 32, "556", "alpha-slurm"), ("c" * 32, "1234", None), ("d" * 32, "555", None))
    local, alpha, _ = _three()
    app = clusters_app(local=local, clusters={"alpha": alpha}, clock=None, local_name="here",
                       history_factory=lambda: History(here))
    pipe = _AgentOverPipe("alpha", there)
    opened: list[str] = []

    def files(name: str) -> Any:
        opened.append(name)
        return pipe

    app.cluster_files = files  # type: ignore[method-assign]
    async with clusters_view(app, "alpha/1234", size=SIZE) as (pilot, screen):
        recent = screen.query_one(RecentJobsTable)
        await wait_until(pilot, lambda: recent.row_count == 3)
        rows = sorted((str(recent.get_row_at(i)[0]), str(recent.get_row_at(i)[1])) for i in range(3))
        assert rows == [("alpha", "555"), ("alpha", "556"), ("here", "555")]
        assert set(opened) == {"alpha"} and pipe.asked == 1
        # alpha's record selected: the tabs show it as alpha's job (its logs are read there), the local 555 not
        recent.focus()
        row = next(i for i in range(3) if [str(c) for c in recent.get_row_at(i)[:2]] == ["alpha", "556"])
        recent.move_cursor(row=row)
        await settle_jobs(pilot)
        details = screen.query_one(JobDetailsPanel)
        await wait_until(pilot, lambda: details.selected.source == "record" and details.selected.job_id == "556")
        assert details.selected.cluster == "alpha"
        row = next(i for i in range(3) if [str(c) for c in recent.get_row_at(i)[:2]] == ["here", "555"])
        recent.move_cursor(row=row)
        await wait_until(pilot, lambda: details.selected.job_id == "555")
        assert details.selected.cluster is None
        screen.table.focus()
        # a job of alpha's that leaves its queue: alpha's history is read again (once for r, once for the job),
        # over a link now down
        pipe.down = True
        alpha.add("squeue", result(stdout=job_line("77", "alpha-other", "RUNNING", reason="None") + "\n"))
        await pilot.press("r")
        await wait_until(pilot, lambda: pipe.asked == 3 and "alpha: history not read" in str(recent.border_title))
        assert "the connection dropped" in str(recent.border_title)
        assert recent.row_count == 4  # what alpha's history said stays listed; alpha's 1234 has left its queue
        assert "1234" in screen.table.rows  # the local queue went on meanwhile


async def test_r_reads_every_clusters_history_again(tmp_path: Path) -> None:
    """``r`` reads each cluster's own history again, not only at start and when one of its jobs leaves its queue: a
    record written there since (a job submitted on that cluster from another machine) is listed, though no job
    left any queue."""
    from ntui.core.records.history import History
    from ntui.ui.widgets.recent_jobs import RecentJobsTable

    here, there = tmp_path / "here", tmp_path / "alpha-home"
    _write_history(here, ("a" * 32, "555", None))
    _write_history(there, ("b" * 32, "556", None))
    local, alpha, _ = _three()
    app = clusters_app(local=local, clusters={"alpha": alpha}, clock=None, local_name="here",
                       history_factory=lambda: History(here))
    pipe = _AgentOverPipe("alpha", there)
    app.cluster_files = lambda name: pipe  # type: ignore[method-assign]
    async with clusters_view(app, "1234", "alpha/1234", "alpha/77", size=SIZE) as (pilot, screen):
        recent = screen.query_one(RecentJobsTable)
        await wait_until(pilot, lambda: recent.row_count == 2)
        assert pipe.asked == 1
        _write_history(there, ("c" * 32, "557", None))
        await pilot.press("r")
        await wait_until(pilot, lambda: recent.row_count == 3)
        rows = sorted((str(recent.get_row_at(i)[0]), str(recent.get_row_at(i)[1])) for i in range(3))
        assert rows == [("alpha", "556"), ("alpha", "557"), ("here", "555")]
        assert pipe.asked == 2
        assert set(screen.table.rows) == {"1234", "alpha/1234", "alpha/77"}  # no job left a queue meanwhile


async def test_everyones_view_keeps_a_clusters_ended_rows_without_an_own_jobs_answer() -> None:
    """Started on everyone's jobs (queue.all-users), a cluster's own job that leaves its queue keeps its ended row
    with its final state: which user is the login's is asked of the cluster's shell once (``id -un``, no Slurm
    call), not waited for from an own-jobs answer this view never asks for; another user's job that leaves is
    not the login's to end. The login's name there is not this machine's user's."""
    base = clusters_settings(("alpha",))
    settings = replace(base, queue=replace(base.queue, all_users=True))
    both = (job_line("1234", "alpha-job", "RUNNING", reason="None", user="alice-there") + "\n"
            + job_line("88", "bobs-job", "RUNNING", reason="None", user="bob") + "\n")
    alpha = FakeRunner({"squeue": [result(stdout=both), result(stdout="")], "sacct": result(stdout=ALPHA_SACCT),
                        "id -un": result(stdout="alice-there\n")}, default=result())
    app = clusters_app(local=None, clusters={"alpha": alpha}, settings=settings)
    async with clusters_view(app, "alpha/1234", "alpha/88", size=SIZE) as (pilot, screen):
        assert screen.all_users and "everyone's jobs" in status_text(screen)
        await pilot.press("r")  # the next answer: both jobs left alpha's queue
        table = screen.table
        await wait_until(pilot, lambda: "alpha/88" not in table.rows)
        await wait_until(pilot, lambda: "alpha/1234" in table.rows and "FAILED" in table.get_row("alpha/1234"))
        assert table.row_tag("alpha/1234") == ENDED
        assert [a[:3] for a in _calls(alpha, "sacct")] == [("sacct", "-j", "1234")]  # bob's job not looked up
        assert _calls(alpha, "id") == [("id", "-un")]  # asked once
