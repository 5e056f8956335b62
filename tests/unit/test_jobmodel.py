"""The jobs view's model without an app (memray's poller tests): a fake clock, canned squeue answers (real
captures from ``tests/data/slurm/``, Slurm 22.05.8), fake resolvers and runners. No Pilot, no timers."""

from __future__ import annotations

import gc
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from ntui.core.config import QueueSettings, Settings, SlurmSettings
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.arrays import Folded
from ntui.core.jobs.details import DetailsResult, EntryBook
from ntui.core.jobs.finals import MAX_LOOKUP_RETRIES, MAX_LOOKUPS_PER_REFRESH
from ntui.core.jobs.journals import JournalBook
from ntui.core.jobs.model import Applied, JobModel, LogTarget
from ntui.core.jobs.polling import PollRequest
from ntui.core.jobs.queue import ENDED, Fetched, FinishedJob, QueueFetcher, queue_row
from ntui.core.jobs.selected import log_target, selected_in_queue
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import UNKNOWN, Outcome
from ntui.core.slurm.runner import CommandResult, CommandRunner, ControllerUnreachable
from ntui.core.slurm.scontrol import parse_scontrol_jobs
from ntui.core.slurm.sinfo import NodeState
from ntui.core.slurm.squeue import SQUEUE_FIELDS, SQUEUE_SEPARATOR

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
MIX = (DATA / "squeue_mix_array.stdout").read_text()
SHOW_RUNNING = (DATA / "scontrol_show_job_running_2node_gpu.stdout").read_text()  # JobId=34
SETTINGS = Settings(queue=QueueSettings(active_interval=10, idle_interval=60, max_backoff=300),
                    slurm=SlurmSettings(timeout=5))
T0 = datetime(2026, 6, 1, 9, 30, 0)


class Clock:
    def __init__(self) -> None:
        self.now = T0
        self.mono = 1000.0

    def __call__(self) -> datetime:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        self.mono += seconds


def line(**values: str) -> str:
    keys = {f.lower(): f for f in SQUEUE_FIELDS}
    cells = dict.fromkeys(SQUEUE_FIELDS, "")
    for k, v in values.items():
        cells[keys[k.lower()]] = v
    return "".join(cells[f] + SQUEUE_SEPARATOR for f in SQUEUE_FIELDS) + "\n"


def job_line(job_id: str, state: str = "RUNNING", name: str = "train", *, task: str = "N/A",
             user: str = "root", array: str | None = None) -> str:
    compact = {"RUNNING": "R", "PENDING": "PD", "COMPLETING": "CG"}[state]
    return line(JobID=job_id, ArrayJobID=array or job_id, ArrayTaskID=task, Name=name, StateCompact=compact,
                State=state, Reason="None" if state == "RUNNING" else "Priority", TimeUsed="0:10",
                TimeLimit="10:00", NumNodes="1", Partition="debug", UserName=user)


def without(text: str, *raw_ids: str) -> str:
    return "".join(ln for ln in text.splitlines(keepends=True) if ln.split(SQUEUE_SEPARATOR, 1)[0] not in raw_ids)


def model(clock: Clock | None = None, **kw: object) -> tuple[JobModel, Clock]:
    clock = clock or Clock()
    return JobModel(SETTINGS, "root", clock=clock, monotonic=clock.monotonic, **kw), clock  # type: ignore[arg-type]


def refresh(m: JobModel, stdout: str, *, background: bool = False) -> tuple[Applied, float]:
    """One whole refresh as the view runs it: request, fetch (canned), apply."""
    request = m.request_poll()
    assert request is not None
    applied, delay = m.poll_succeeded(request, m.fetcher.parse(stdout, request.all_users), background=background)
    assert applied is not None
    return applied, delay


class Runner:
    """A CommandRunner answering by argv[0] (and recording every call)."""

    def __init__(self, answers: Mapping[str, CommandResult | BaseException], gate: threading.Event | None = None):
        self.answers = answers
        self.gate = gate
        self.seen: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
            input: str | None = None) -> CommandResult:  # noqa: A002
        self.seen.append(tuple(argv))
        if self.gate is not None:
            self.gate.wait(5)
        answer = self.answers[argv[0]]
        if isinstance(answer, BaseException):
            raise answer
        return CommandResult(tuple(argv), 0, answer.stdout, answer.stderr, 0.0)


def ok(stdout: str) -> CommandResult:
    return CommandResult((), 0, stdout, "", 0.0)


def entry(job_id: str, log_dir: str = "/scratch/logs", stem: str = "run", world_size: int = 4) -> HistoryEntry:
    return HistoryEntry(token="t", job_id=job_id, cluster=None, preset="p", preset_path=None,  # noqa: S106
                        overrides=(), job_name=stem, launcher="torchrun", nodes=1, world_size=world_size,
                        log_dir=log_dir, log_stem=stem, script="#!/bin/bash\n", script_path=None, created_at=0.0,
                        submitted_at=0.0, status="submitted")


# ---------------------------------------------------------------- polling


def test_refreshes_never_overlap_a_request_during_one_is_one_follow_up() -> None:
    m, _ = model()
    first = m.request_poll()
    assert first == PollRequest(0, False, 1) and m.polling
    assert m.request_poll() is None and m.request_poll() is None  # coalesced
    _, delay = m.poll_succeeded(first, m.fetcher.parse(MIX, False))
    assert delay == 0 and not m.polling  # exactly one follow-up, at once
    second = m.request_poll()
    assert second is not None and second.seq == 2
    _, delay = m.poll_succeeded(second, m.fetcher.parse(MIX, False))
    assert delay == 10  # own jobs are active: the short interval


def test_interval_adapts_backs_off_behind_a_banner_and_recovers() -> None:
    m, clock = model()
    _, delay = refresh(m, "")
    assert delay == 60  # no own job active: the long interval
    _, delay = refresh(m, job_line("8"))
    assert delay == 10
    _, delay = refresh(m, job_line("8"), background=True)
    assert delay == 60  # the view is in the background
    assert m.polls.banner() == ""
    for expected in (10, 20, 40):
        request = m.request_poll()
        assert request is not None
        assert m.polls.banner() == "" if expected == 10 else m.polls.banner().startswith(
            "⚠ controller unreachable, retrying now…")
        assert m.poll_failed(ControllerUnreachable("Unable to contact slurm controller")) == expected
    clock.advance(15)
    assert m.polls.banner().startswith("⚠ controller unreachable, retry in 25 s")
    assert "Unable to contact slurm controller" in m.polls.banner() and "r: retry now" in m.polls.banner()
    assert "updated 15 s ago" in m.status_line() and "next in" not in m.status_line()
    rows_before = dict(m.live)
    _, delay = refresh(m, job_line("8"))
    assert delay == 10 and m.polls.banner() == "" and m.policy.errors == 0 and m.live.keys() == rows_before.keys()
    assert "updated 0 s ago" in m.status_line() and "next in 10 s" in m.status_line()


def test_a_view_change_during_a_fetch_discards_it_and_polls_again() -> None:
    m, _ = model()
    request = m.request_poll()
    assert request is not None
    m.toggle_all_users()
    assert m.request_poll() is None  # the fetch still runs: the new view follows it
    applied, delay = m.poll_succeeded(request, m.fetcher.parse(MIX, False))
    assert applied is None and delay == 0
    again = m.request_poll()
    assert again is not None and again.all_users and again.generation == 1


def test_a_byte_identical_answer_is_not_diffed() -> None:
    m, _ = model()
    first, _ = refresh(m, MIX)
    second, _ = refresh(m, MIX)
    assert not first.unchanged and second.unchanged
    assert m.refresh_count == 2


def test_the_line_cache_reuses_unchanged_lines_and_keeps_one_tracked_object_a_line() -> None:
    """A line seen last time keeps its parsed job and cells; what the cache keeps besides the job is strings only, so
    the collector stops tracking it (one tracked object a line: fewer full gc passes in a refresh of 10,000 new
    lines, bench/queue_scale.py --offline)."""
    fetcher = QueueFetcher()
    first = fetcher.parse(MIX, False)
    second = fetcher.parse(without(MIX, "34") + job_line("77"), False)
    assert "34" in first.live and "34" not in second.live and second.rows["77"][0] == "77"
    for key in first.live.keys() - {"34"}:
        assert second.live[key] is first.live[key] and second.rows[key] is first.rows[key]
    assert second.counts == first.counts  # a running job left, another came
    gc.collect()
    gc.collect()
    assert fetcher._cells and not any(gc.is_tracked(cells) for cells in fetcher._cells.values())


def test_stale_after_the_active_interval() -> None:
    m, clock = model()
    assert not m.polls.stale()
    refresh(m, MIX)
    clock.advance(9)
    assert not m.polls.stale()
    clock.advance(1)
    assert m.polls.stale()


# ---------------------------------------------------------------- ended jobs


def test_an_ended_row_shows_its_final_elapsed_once_the_final_state_is_known() -> None:
    """The last poll saw job 34 at 0:12; sacct's Elapsed (95 s) replaces it once looked up (issue 15: an
    ended job kept its last polled elapsed, 1:24 for a ~95 s run)."""

    def resolver(runner: CommandRunner, job_id: str) -> Outcome:
        return Outcome(job_id, "COMPLETED", "0:0", "sacct", True, elapsed_s=95)

    m, _ = model(resolver=resolver)
    refresh(m, MIX)
    applied, _ = refresh(m, without(MIX, "34"))
    assert applied.rows["34"][3] == "0:12"  # still looking up: the last polled value
    batch = m.finished.take()
    assert batch is not None
    rows = m.finished.resolved(m.finished.resolve(Runner({}), batch), all_users=m.all_users)
    assert rows["34"][2] == "COMPLETED" and rows["34"][3] == "1:35"
    # no run time known (scontrol forgot the job, no accounting): the last polled value stays
    job = m.ended["34"].job
    unknown = FinishedJob("34", "34", job, Outcome("34", UNKNOWN, None, "none", True))
    assert queue_row(job, False, unknown)[3] == "0:12"


def test_a_final_state_not_known_yet_is_asked_again_after_the_next_refresh_not_in_a_loop() -> None:
    """Accounting lags the controller: the first answer is not final (finished=False). The row keeps
    "looking up" (never an ended job shown as RUNNING) and the look-up is repeated after the next refresh."""
    answers = [Outcome("34", "RUNNING", "0:0", "sacct", False), Outcome("34", "COMPLETED", "0:0", "scontrol", True)]
    asked: list[str] = []

    def resolver(runner: CommandRunner, job_id: str) -> Outcome:
        asked.append(job_id)
        return answers[len(asked) - 1]

    m, _ = model(resolver=resolver)
    refresh(m, MIX)
    refresh(m, without(MIX, "34"))
    batch = m.finished.take()
    assert batch == (("34", "34"),)
    assert m.finished.resolved(m.finished.resolve(Runner({}), batch), all_users=m.all_users) == {}
    assert m.finished.take() is None and m.ended["34"].outcome is None  # not again at once
    refresh(m, without(MIX, "34"))
    assert queue_row(m.ended["34"].job, False, m.ended["34"])[6] == "(looking up the final state…)"
    batch = m.finished.take()
    assert batch == (("34", "34"),)
    rows = m.finished.resolved(m.finished.resolve(Runner({}), batch), all_users=m.all_users)
    assert rows["34"][2] == "COMPLETED" and asked == ["34", "34"]


def test_look_ups_that_never_become_final_stop_after_the_cap() -> None:
    asked: list[str] = []

    def resolver(runner: CommandRunner, job_id: str) -> Outcome:
        asked.append(job_id)
        return Outcome(job_id, "RUNNING", "0:0", "sacct", False)

    m, _ = model(resolver=resolver)
    refresh(m, MIX)
    refresh(m, without(MIX, "34"))
    rows: dict[str, object] = {}
    for _ in range(MAX_LOOKUP_RETRIES + 5):
        batch = m.finished.take()
        if batch is not None:
            rows = dict(m.finished.resolved(m.finished.resolve(Runner({}), batch), all_users=m.all_users))
        refresh(m, without(MIX, "34"))
    assert len(asked) == MAX_LOOKUP_RETRIES + 1 and "34" in rows  # then the row keeps the last answer
    assert m.finished.take() is None


def test_departed_jobs_stay_listed_and_are_resolved_once() -> None:
    resolved: list[str] = []
    departures: list[tuple[str, ...]] = []

    def resolver(runner: CommandRunner, job_id: str) -> Outcome:
        resolved.append(job_id)
        if job_id == "35":
            raise RuntimeError("sacct exploded")  # one failure does not lose the others
        return Outcome(job_id, "COMPLETED", "0:0", "sacct", True)

    m, _ = model(resolver=resolver)
    m.finished.on_departure(lambda gone: departures.append(tuple(f.key for f in gone)))
    refresh(m, MIX)
    assert m.finished.take() is None and departures == []
    applied, _ = refresh(m, without(MIX, "34", "35"))
    assert departures == [("34", "35")]
    assert applied.tags == {"34": ENDED, "35": ENDED}
    assert applied.rows["34"][2] == "ENDED" and applied.rows["34"][6] == "(looking up the final state…)"
    assert [f.key for f in m.finished.recent] == ["34", "35"]
    batch = m.finished.take()
    assert batch == (("34", "34"), ("35", "35")) and m.busy
    assert m.finished.take() is None  # one batch at a time
    rows = m.finished.resolved(m.finished.resolve(Runner({}), batch), all_users=m.all_users)
    assert rows["34"][2] == "COMPLETED" and rows["34"][6] == "exit 0:0"
    assert rows["35"][2] == "ENDED" and rows["35"][6] == "ended (state unknown; last seen RUNNING)"
    for _ in range(3):
        refresh(m, without(MIX, "34", "35"))
    assert m.finished.take() is None and resolved == ["34", "35"]  # once per job, not per tick
    assert not m.busy


def test_many_tasks_of_one_array_collapse_into_one_row_and_one_lookup() -> None:
    def tasks(n: int) -> str:
        return "".join(job_line("100", "PENDING", "sweep", task=str(i)) for i in range(n))

    m, _ = model()
    refresh(m, tasks(500))
    applied, _ = refresh(m, tasks(20))
    ended = [k for k, tag in applied.tags.items() if tag == ENDED]
    assert ended == ["100_[20-499]"]
    assert applied.rows["100_[20-499]"][6] == "480 tasks · (looking up the final state…)"
    assert m.finished.take() == (("100_[20-499]", "100"),)


def test_lookups_are_capped_per_refresh() -> None:
    n = MAX_LOOKUPS_PER_REFRESH + 5
    m, _ = model()
    refresh(m, "".join(job_line(str(200 + i)) for i in range(n)))
    applied, _ = refresh(m, job_line("999"))
    batch = m.finished.take()
    assert batch is not None and len(batch) == MAX_LOOKUPS_PER_REFRESH
    not_looked_up = [f for f in m.finished.recent if not f.looked_up]
    assert len(not_looked_up) == 5 and all(f.outcome is not None and f.outcome.state == UNKNOWN
                                           for f in not_looked_up)
    assert applied.rows[not_looked_up[0].key][6] == "ended (not looked up)"


def test_a_requeued_job_leaves_the_ended_rows() -> None:
    m, _ = model()
    refresh(m, MIX)
    refresh(m, without(MIX, "34"))
    assert "34" in m.ended
    applied, _ = refresh(m, MIX)
    assert "34" not in m.ended and "34" not in applied.tags


def test_a_submission_that_ended_unseen_gets_its_row() -> None:
    m, _ = model()
    refresh(m, MIX)
    m.expect_submission("47")
    applied, _ = refresh(m, MIX)  # byte-identical, but the job is missing: not skipped
    assert not applied.unchanged and applied.tags.get("47") == ENDED
    assert m.finished.take() == (("47", "47"),)


def test_one_row_formatter_for_live_and_ended_rows_and_hostile_names() -> None:
    hostile = "x\x1b]0;pwned\x07\x1b[31mred\x9b2J\rname"
    job = QueueFetcher().parse(job_line("5", name=hostile), False).jobs[0]
    live = queue_row(job)
    ended = queue_row(job, True, FinishedJob("5", "5", job, Outcome("5", "FAILED", "1:0", "sacct", True)))
    for cells in (live, ended):
        assert not any(ch in cell for cell in cells for ch in "\x1b\x07\x9b\r"), cells
    assert live[:3] == ("5", "xredname", "RUNNING")
    assert ended[:4] == ("5", "xredname", "root", "FAILED") and ended[7] == "exit 1:0"


# ---------------------------------------------------------------- details and history


def test_details_are_cached_per_state_and_node_states_rechecked_only_when_shown() -> None:
    m, clock = model()
    refresh(m, MIX)
    m.select("34")
    step = m.details_step("34", details_visible=True)
    assert step.request is not None and step.view is not None and step.view.note == "loading details…"
    assert m.details_step("34", details_visible=True).request is None  # in flight: not asked twice
    result = m.details.fetch(Runner({"scontrol": ok(SHOW_RUNNING), "sinfo": ok("")}), step.request)
    assert result.details is not None and result.details.gres_by_node["nid001"] == (0, 1, 2, 3)
    assert m.details.fetched(result)
    fresh = m.details_step("34", details_visible=True)
    assert fresh.request is None and fresh.view is not None and fresh.view.details is result.details
    # a running job's nodes: looked at again after the idle interval, only while the details are shown
    m.details.fetched(DetailsResult("34", m.state_of("34"), result.details, nodes=(NodeState("nid001", "mixed"),)))
    clock.advance(61)
    assert m.details_step("34", details_visible=False).request is None
    assert m.details_step("34", details_visible=True).request is not None


def test_a_failed_details_lookup_keeps_what_was_known_and_is_retried_on_reselect() -> None:
    m, _ = model()
    refresh(m, MIX)
    m.select("34")
    step = m.details_step("34", details_visible=True)
    assert step.request is not None
    failed = m.details.fetch(Runner({"scontrol": ControllerUnreachable("Unable to contact slurm controller")}),
                             step.request)
    assert not failed.ok and "Unable to contact" in failed.note
    m.details.fetched(failed)
    assert m.details_step("34", details_visible=True).request is None  # no retry storm
    m.select("35")
    m.select("34")  # reselecting retries
    assert m.details_step("34", details_visible=True).request is not None


def _target(m: JobModel, key: str) -> LogTarget | None:
    """The log pane's target of the queue row ``key`` (no job arrays here)."""
    return log_target(selected_in_queue(m, Folded({}, {}), key))


def test_log_paths_of_ntui_jobs_do_not_wait_for_the_controller() -> None:
    """The history look-up is separate from scontrol: while scontrol hangs, ntui's own job already has its
    log target; a job ntui did not submit waits for scontrol's StdOut."""
    m, _ = model()
    refresh(m, MIX)
    m.select("34")
    step = m.details_step("34", details_visible=True)
    assert step.request is not None
    gate = threading.Event()
    hung = Runner({"scontrol": ok(SHOW_RUNNING), "sinfo": ok("")}, gate=gate)
    details: list[DetailsResult] = []
    worker = threading.Thread(target=lambda: details.append(m.details.fetch(hung, step.request)))  # type: ignore[arg-type]
    worker.start()
    try:
        assert _target(m, "34") is None  # the history has not answered yet
        key = m.history.request("34")
        assert key == "34" and m.history.request("34") is None
        found = EntryBook.lookup(lambda: FakeHistory({"34": entry("34")}), key)
        m.history.found(key, found)
        target = _target(m, "34")
        assert target is not None and worker.is_alive() and not details  # scontrol still hangs
        assert target.paths == LogPaths("/scratch/logs", "run") and target.world_size == 4 and target.job_active
        assert target.batch_log is None
        # a job ntui did not submit: no paths until scontrol told its StdOut
        m.history.found("35", None)
        assert _target(m, "35") is None
    finally:
        gate.set()
        worker.join(5)
    m.details.fetched(details[0])
    target = _target(m, "34")
    assert target is not None and target.batch_log == "/tmp/ntui-capture/train 2n-34.out"
    m.details.fetched(DetailsResult("35", m.state_of("35"), parse_scontrol_jobs(SHOW_RUNNING)[0]))
    other = _target(m, "35")
    assert other is not None and other.paths is None and other.batch_log is not None


def test_history_lookup_survives_an_unreadable_history() -> None:
    def broken() -> FakeHistory:
        raise OSError(13, "Permission denied", "/home/a/.local/state/ntui/history.sqlite3")

    assert EntryBook.lookup(broken, "34") is None
    hist = FakeHistory({"12": entry("12")})
    found = EntryBook.lookup(lambda: hist, "12_[3-9]")  # a collapsed array row: the array's entry
    assert found is not None and found.job_id == "12" and hist.closed


class FakeHistory:
    def __init__(self, entries: dict[str, HistoryEntry]) -> None:
        self.entries = entries
        self.closed = False

    def get(self, job_id: str) -> HistoryEntry | None:
        return self.entries.get(job_id)

    def close(self) -> None:
        self.closed = True


def test_fetch_runs_one_squeue_with_the_view_argv() -> None:
    m, _ = model()
    runner = Runner({"squeue": ok(MIX)})
    request = m.request_poll()
    assert request is not None
    got = m.fetch(runner, request)
    assert isinstance(got, Fetched) and len(got.rows) == 18
    (argv,) = runner.seen
    assert "--me" in argv and "--array" in argv and "--local" in argv


def test_actions_pick_the_command_for_the_jobs_state() -> None:
    from ntui.core.jobs.actions import JobAction, plan_action

    jobs = {j.job_id: j for j in QueueFetcher().parse(MIX, False).jobs}
    runner = Runner({"scontrol": ok(""), "scancel": ok("")})
    held = plan_action("hold", runner, "40", jobs["40"], timeout=5)  # held by the user: h releases
    pending = plan_action("hold", runner, "38", jobs["38"], timeout=5)
    running = plan_action("hold", runner, "34", jobs["34"], timeout=5)
    assert isinstance(held, JobAction) and isinstance(pending, JobAction)
    assert running == ("Job 34 is RUNNING: hold only keeps a pending job from starting; "
                       "a RUNNING job is not affected.")
    held.call()
    pending.call()
    signal = plan_action("signal", runner, "34", jobs["34"], timeout=5, signal="USR1")
    assert isinstance(signal, JobAction) and signal.done == "Sent SIGUSR1 to job 34's steps."
    signal.call()
    assert runner.seen == [("scontrol", "release", "40"), ("scontrol", "uhold", "38"),
                           ("scancel", "--signal=USR1", "34")]


# ---------------------------------------------------------------- journals (ntui.core.jobs.journals)


class StubHistory:
    """What :meth:`JournalBook.fetch` asks of the history: entries by job id, and the recent ones."""

    def __init__(self, entries: Mapping[str, HistoryEntry], recent: Sequence[HistoryEntry] = ()) -> None:
        self.entries, self.recent = dict(entries), list(recent)
        self.gets: list[str] = []

    def get(self, job_id: str) -> HistoryEntry | None:
        self.gets.append(job_id)
        return self.entries.get(job_id)

    def since(self, when: float) -> list[HistoryEntry]:
        return [e for e in self.recent if (e.submitted_at or 0.0) >= when]

    def close(self) -> None:
        pass


def _journal(log_dir: Path, stem: str, job_id: str, *lines: str) -> None:
    with open(log_dir / f"{stem}-{job_id}.events", "a") as fh:
        fh.writelines(ln + "\n" for ln in lines)


def _tick(m: JobModel, board: object, history: StubHistory | RunHistory) -> object:
    from ntui.core.jobs.journals import JournalBoard

    assert isinstance(board, JournalBoard)
    request = m.journal_request()
    assert request is not None and m.journal_request() is None  # ticks never overlap
    return m.journal_done(JournalBook.fetch(lambda: history, board, request))


ALLOC = '{"v":1,"ev":"alloc","t":100,"job":"%s","restart":0,"nodes":"nid007"}'
END3 = '{"v":1,"ev":"end","t":130,"job":"%s","rc":3,"phase":"launch"}'


def test_a_journal_start_and_end_change_the_rows_at_once_with_no_lookup(tmp_path: Path) -> None:
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    gone: list[tuple[FinishedJob, ...]] = []
    m.finished.on_departure(gone.append)
    refresh(m, job_line("41", "PENDING") + job_line("42"))
    history = StubHistory({"41": entry("41", str(tmp_path)), "42": entry("42", str(tmp_path))})
    board = JournalBoard(retry_s=0.0)
    done = _tick(m, board, history)
    assert done.applied is None and not done.poll_now  # type: ignore[attr-defined]
    assert not m.policy.covered  # the pending one's journal is waited for, but the running one has none
    _journal(tmp_path, "run", "41", ALLOC % "41")
    done = _tick(m, board, history)
    assert done.applied is not None and m.live["41"].state == "RUNNING"  # type: ignore[attr-defined]
    assert m.live["41"].nodelist == "nid007"
    _journal(tmp_path, "run", "41", END3 % "41")
    done = _tick(m, board, history)
    applied = done.applied  # type: ignore[attr-defined]
    assert applied is not None and applied.tags.get("41") == ENDED and "41" not in m.live
    assert m.ended["41"].outcome == Outcome("41", "FAILED", "3:0", "job", True, 30)
    assert applied.rows["41"][2] == "FAILED" and [g[0].key for g in gone] == ["41"]
    assert m.finished.take() is None  # the journal said it: no sacct, no scontrol
    assert history.gets == ["41", "42"]  # each entry looked up once, then known
    # squeue lags behind the journal: the job still listed as running stays ended; pending again: requeued
    refresh(m, job_line("41") + job_line("42"))
    assert "41" not in m.live and "41" in m.ended
    refresh(m, job_line("41", "PENDING") + job_line("42"))
    assert "41" in m.live and "41" not in m.ended
    # the journal still ends with that allocation: the next ticks leave the requeued job pending (they ended it
    # again, and the row flipped between CANCELLED and PENDING until the new allocation started)
    for _ in range(2):
        _tick(m, board, history)
        assert "41" in m.live and "41" not in m.ended and m.live["41"].state == "PENDING"
    # the new allocation runs and ends: ended again
    _journal(tmp_path, "run", "41", ALLOC.replace('"restart":0', '"restart":1') % "41", END3 % "41")
    _tick(m, board, history)
    assert "41" not in m.live and m.ended["41"].outcome is not None and m.ended["41"].outcome.state == "FAILED"
    board.close()


SIGTERM_END = '{"v":1,"ev":"end","t":140,"job":"%s","rc":null,"sig":null,"phase":"launch"}'


def test_an_end_learned_from_a_journal_is_confirmed_by_squeue_soon_so_a_requeue_shows(tmp_path: Path) -> None:
    """Seen in a full run (24.11, a node's slurmd killed): the journal ended the job (its batch shell killed), the
    view went to the idle pace (no own job left active), and squeue, which said PENDING BeginTime (requeued after
    the node failure), was asked only a minute later: the row said CANCELLED all that time."""
    from ntui.core.jobs.journals import JournalBoard
    from ntui.core.jobs.model import CONFIRM_END_S

    m, _ = model()
    refresh(m, job_line("61"))
    history = StubHistory({"61": entry("61", str(tmp_path))})
    board = JournalBoard(retry_s=0.0)
    _journal(tmp_path, "run", "61", ALLOC % "61")
    _tick(m, board, history)
    _, delay = refresh(m, job_line("61"))
    assert m.policy.covered and delay == 60  # followed by its journal: the idle pace
    _journal(tmp_path, "run", "61", SIGTERM_END % "61")
    done = _tick(m, board, history)
    assert done.poll_now and m.ended["61"].outcome is not None  # type: ignore[attr-defined]
    assert m.ended["61"].outcome.state == "CANCELLED"
    _, delay = refresh(m, job_line("61", "COMPLETING"))  # slurmctld has not caught up yet
    assert "61" in m.ended and delay == CONFIRM_END_S
    _, delay = refresh(m, job_line("61", "PENDING"))  # requeued after the node failure
    assert "61" in m.live and "61" not in m.ended and m.live["61"].state == "PENDING"
    assert delay == 10  # an own job pending again: the active pace, no longer the confirmation's
    _, delay = refresh(m, "")
    assert delay == 60  # gone and nothing active: no confirmation polls left over
    board.close()


def test_a_journal_end_read_after_squeue_showed_the_requeue_leaves_the_job_pending(tmp_path: Path) -> None:
    """Seen in a full run (24.11, a node's slurmd killed): squeue already said PENDING BeginTime (requeued) when the
    journal tick read the end of the lost allocation; the job went to the ended rows, and the journal's end removed
    it from the very dict the fetcher keeps for a byte-identical answer, so every later answer said nothing of it:
    the row said CANCELLED while Slurm said PENDING."""
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    refresh(m, job_line("71"))
    history = StubHistory({"71": entry("71", str(tmp_path))})
    board = JournalBoard(retry_s=0.0)
    _journal(tmp_path, "run", "71", ALLOC % "71")
    _tick(m, board, history)
    refresh(m, job_line("71", "PENDING"))  # requeued after the node failure, before its journal's end is read
    _journal(tmp_path, "run", "71", SIGTERM_END % "71")
    _tick(m, board, history)  # the lost allocation's end, read late
    assert "71" in m.ended
    refresh(m, job_line("71", "PENDING"))  # the same bytes as the answer before
    assert "71" in m.live and "71" not in m.ended and m.live["71"].state == "PENDING"
    for _ in range(2):  # and it stays so
        _tick(m, board, history)
        refresh(m, job_line("71", "PENDING"))
        assert "71" in m.live and m.live["71"].state == "PENDING"
    board.close()


def test_squeue_slows_down_only_while_every_own_active_job_is_followed(tmp_path: Path) -> None:
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    _, delay = refresh(m, job_line("51") + job_line("52"))
    assert delay == 10
    board = JournalBoard(retry_s=0.0)
    _journal(tmp_path, "run", "51", ALLOC % "51")
    _tick(m, board, StubHistory({"51": entry("51", str(tmp_path))}))  # 52: not ntui's (no entry)
    assert not m.policy.covered and m.policy.delay() == 10
    _journal(tmp_path, "run", "52", ALLOC % "52")
    m.entries["52"] = None
    m2, _ = model()
    refresh(m2, job_line("51") + job_line("52"))
    _tick(m2, JournalBoard(retry_s=0.0), StubHistory({"51": entry("51", str(tmp_path)),
                                                      "52": entry("52", str(tmp_path))}))
    assert m2.policy.covered and m2.policy.delay() == 60  # the idle pace: journals tell starts and ends
    board.close()


def test_a_submission_from_another_process_is_expected_and_polled_for_at_once(tmp_path: Path) -> None:
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    refresh(m, "")
    newer = entry("61", str(tmp_path))
    newer = HistoryEntry(**{**newer.__dict__, "submitted_at": m.started_at + 1})
    board = JournalBoard(retry_s=0.0)
    done = _tick(m, board, StubHistory({}, [newer]))
    assert done.poll_now  # type: ignore[attr-defined]
    # it failed at once, before any squeue listed it: its journal is read all the same
    _journal(tmp_path, "run", "61", ALLOC % "61", END3 % "61")
    done = _tick(m, board, StubHistory({}, [newer]))
    assert m.ended["61"].outcome is not None and m.ended["61"].outcome.state == "FAILED"
    assert done.applied is not None and done.applied.tags["61"] == ENDED  # type: ignore[attr-defined]
    board.close()


def test_a_new_job_no_journal_tick_has_seen_brings_squeue_back_to_its_pace(tmp_path: Path) -> None:
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    refresh(m, job_line("71"))
    _journal(tmp_path, "run", "71", ALLOC % "71")
    _tick(m, JournalBoard(retry_s=0.0), StubHistory({"71": entry("71", str(tmp_path))}))
    assert m.policy.covered
    _, delay = refresh(m, job_line("71") + job_line("72"))  # 72: submitted with plain sbatch meanwhile
    assert not m.policy.covered and delay == 10


RUN_ALLOC = '{"v":1,"ev":"run-alloc","t":100,"job":"%s","run":"81","restart":%d,"how":"chain","max":5}'


def _run_entry(job_id: str, log_dir: str) -> HistoryEntry:
    return HistoryEntry(**{**entry(job_id, log_dir).__dict__, "script": "#!/bin/bash\nNTUI_RUN_FILE=x\n"})


def test_a_chain_link_submitted_by_the_job_before_it_is_followed_as_its_run(tmp_path: Path) -> None:
    from ntui.core.jobs.journals import JournalBoard

    m, _ = model()
    refresh(m, job_line("81"))
    history = StubHistory({"81": _run_entry("81", str(tmp_path))})  # 82 is not in the history
    board = JournalBoard(retry_s=0.0)
    _journal(tmp_path, "run", "81", ALLOC % "81", RUN_ALLOC % ("81", 0),
             '{"v":1,"ev":"run-continue","t":160,"job":"81","run":"81","how":"chain","next":"82"}')
    _tick(m, board, history)
    assert m.entries["82"] is not None and m.entries["82"].job_id == "81"  # known before squeue lists it
    refresh(m, job_line("82", "PENDING"))
    _journal(tmp_path, "run", "82", ALLOC % "82", RUN_ALLOC % ("82", 1))
    done = _tick(m, board, history)
    applied = done.applied  # type: ignore[attr-defined]
    assert applied is not None and m.live["82"].state == "RUNNING"  # its journal, named by the run's stem
    assert applied.rows["82"][-3].startswith("allocation 2 of ≤ 6")
    assert history.gets == ["81"]  # the link was never looked up in the history: its run named it
    board.close()


class RunHistory:
    """A history that also lists its newest entries, as the real one does."""

    def __init__(self, by_id: Mapping[str, HistoryEntry]) -> None:
        self.by_id = dict(by_id)

    def get(self, job_id: str) -> HistoryEntry | None:
        return self.by_id.get(job_id)

    def since(self, when: float) -> list[HistoryEntry]:
        return []

    def entries(self, limit: int | None = None) -> list[HistoryEntry]:
        return list(self.by_id.values())[:limit]

    def close(self) -> None:
        pass


def test_a_view_opened_mid_chain_finds_the_running_link_through_its_runs_file(tmp_path: Path) -> None:
    from ntui.core.jobfiles.runfile import run_path
    from ntui.core.jobs.journals import JournalBoard

    Path(run_path(str(tmp_path), "run", "81")).write_text(
        '{"v":1,"ev":"alloc","t":100,"job":"81","run":"81","restart":0,"how":"chain","max":5}\n'
        '{"v":1,"ev":"continue","t":160,"job":"81","run":"81","how":"chain","next":"82"}\n'
        '{"v":1,"ev":"alloc","t":170,"job":"82","run":"81","restart":1,"how":"chain","max":5}\n'
        '{"v":1,"ev":"continue","t":230,"job":"82","run":"81","how":"chain","next":"83"}\n')
    _journal(tmp_path, "run", "83", ALLOC % "83", RUN_ALLOC % ("83", 2))
    m, _ = model()
    refresh(m, job_line("83") + job_line("90"))  # 90: not ntui's
    board = JournalBoard(retry_s=0.0)
    done = _tick(m, board, RunHistory({"81": _run_entry("81", str(tmp_path)), "70": entry("70", str(tmp_path))}))
    entry83 = m.entries["83"]
    assert entry83 is not None and entry83.job_id == "81" and m.entries["90"] is None
    assert done.applied is not None  # type: ignore[attr-defined]
    assert done.applied.rows["83"][-3].startswith("allocation 3 of ≤ 6")  # type: ignore[attr-defined]
    board.close()


def test_one_in_flight_idiom_a_look_up_running_is_not_started_twice() -> None:
    from ntui.core.jobs.inflight import InFlight

    entries: InFlight[str] = InFlight()
    assert entries.start("41") and entries.start("42") and not entries.start("41") and entries.busy
    entries.done("41")
    assert "41" not in entries and "42" in entries and entries.start("41")
    entries.clear()
    assert not entries.busy
    details: InFlight[tuple[str, str]] = InFlight(exclusive=True)  # its worker cancels the one before
    assert details.start(("41", "RUNNING")) and details.start(("42", "PENDING"))
    assert ("41", "RUNNING") not in details and not details.start(("42", "PENDING"))
    details.done(("42", "PENDING"))
    assert not details.busy


def test_running_jobs_tick_in_seconds_and_their_cells_spell_them_as_squeue() -> None:
    m, clock = model()
    refresh(m, job_line("7") + job_line("8", "PENDING") + line(JobID="9", ArrayJobID="9", ArrayTaskID="N/A",
                                                               Name="long", StateCompact="R", State="RUNNING",
                                                               Reason="None", TimeUsed="1-00:59:55",
                                                               TimeLimit="2-00:00:00", NumNodes="1",
                                                               Partition="debug", UserName="root"))
    clock.advance(55)
    assert m.ticked_seconds() == {"7": 65, "9": 86400 + 3595 + 55}  # the pending job does not tick
    assert m.ticked_elapsed() == {"7": "1:05", "9": "1-01:00:50"}
