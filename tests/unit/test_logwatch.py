"""ntui.core.logs.watch: the job log watcher as a stream (no Textual), and its poll schedulers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths, rank_header
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.logs.rows import BATCH, Appended, Loaded
from ntui.core.logs.schedule import FixedScheduler, PoliteScheduler
from ntui.core.logs.tail import TailUpdate
from ntui.core.logs.watch import JobLogWatcher, watch_files

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 41, in <module>',
    '    raise RuntimeError("loss is nan")',
    "RuntimeError: loss is nan",
]


def write(path: str, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in lines))


def job(tmp: Path, world: int = 4) -> LogPaths:
    paths = LogPaths(str(tmp), "train")
    write(paths.batch("42"), "launching")
    for r in range(world):
        write(paths.rank("42", r), rank_header(r, "nid001" if r < 2 else "nid002"), f"rank {r} step 1")
    return paths


def test_stream_names_the_failing_rank_once_it_fails(tmp_path: Path) -> None:
    paths = job(tmp_path)
    files, discover = watch_files(paths, "42", 4)
    w = JobLogWatcher("42", files, paths=paths, discover=discover, launcher="torchrun")
    w.poll_all(now=100.0)
    assert not w.triage_line().failed and w.triage_line().text == "no failure found (5 logs read)"
    assert [r.node for r in w.rows(job_active=True, now=100.0)] == [None, "nid001", "nid001", "nid002", "nid002"]
    write(paths.rank("42", 2), *TRACEBACK)
    ups = w.poll_all(now=101.0)
    assert ups[2].lines[-1] == "RuntimeError: loss is nan"
    tri = w.triage_line()
    assert tri.failed and (tri.key, tri.rank, tri.node) == (2, 2, "nid002")
    assert tri.text.startswith("rank 2 on nid002 failed first: RuntimeError: loss is nan")
    assert (tri.error_start, tri.error_line) == (2, 5)  # 0-based: the header, then the error line
    rows = {r.key: r for r in w.rows(job_active=True, now=101.0)}
    assert rows[2].status == "errored" and rows[2].first and not rows[1].first
    assert w.verdict().kind == "rank_error"


def test_status_words_of_an_ended_job_say_what_happened_to_each_rank(tmp_path: Path) -> None:
    """Issue 15: ranks stopped after another rank failed showed "finished"; now: failed first (errored),
    killed (no error of their own), and a rank that ended cleanly in a job that did not fail is finished."""
    paths = job(tmp_path)
    files, discover = watch_files(paths, "42", 4)
    w = JobLogWatcher("42", files, paths=paths, discover=discover, launcher="torchrun")
    w.poll_all(now=100.0)
    assert {r.key: r.status for r in w.rows(job_active=False, now=100.0)} == {
        BATCH: "finished", 0: "finished", 1: "finished", 2: "finished", 3: "finished"}
    write(paths.rank("42", 2), *TRACEBACK)
    w.poll_all(now=101.0)
    w.finish()
    running = {r.key: r.status for r in w.rows(job_active=True, now=101.0)}
    assert running == {BATCH: "running", 0: "running", 1: "running", 2: "errored", 3: "running"}
    ended = {r.key: r.status for r in w.rows(job_active=False, now=102.0)}
    assert ended == {BATCH: "finished", 0: "killed", 1: "killed", 2: "errored", 3: "killed"}


def test_a_job_that_ended_without_any_log_never_started(tmp_path: Path) -> None:
    """Issue 15: a job cancelled while pending said "waiting for the logs to appear…" forever."""
    paths = LogPaths(str(tmp_path), "train")
    files, discover = watch_files(paths, "42", 2)
    w = JobLogWatcher("42", files, paths=paths, discover=discover)
    w.poll_all(now=100.0)
    assert w.triage_line(job_active=True).text == "waiting for the logs to appear…"
    assert {r.status for r in w.rows(job_active=True, now=100.0)} == {"pending"}
    tri = w.triage_line(job_active=False)
    assert not tri.failed and "never started" in tri.text and "waiting" not in tri.text
    assert {r.key: r.status for r in w.rows(job_active=False, now=100.0)} == {
        BATCH: "never started", 0: "never started", 1: "never started"}
    write(paths.batch("42"), "launching")  # one log exists: the others are missing, not "never started"
    w.poll_all(now=101.0)
    assert {r.key: r.status for r in w.rows(job_active=False, now=101.0)} == {
        BATCH: "finished", 0: "missing", 1: "missing"}


def test_rank_files_are_discovered_when_the_world_size_is_unknown(tmp_path: Path) -> None:
    paths = LogPaths(str(tmp_path), "train")
    write(paths.batch("42"), "launching")
    files, discover = watch_files(paths, "42", None)
    assert discover and list(files) == [BATCH]
    w = JobLogWatcher("42", files, paths=paths, discover=discover)
    w.poll_all()
    assert w.keys() == [BATCH]
    write(paths.rank("42", 1), rank_header(1, "nid002"), "hello")
    write(str(tmp_path / "train-42-rank-x.out"), "not a rank file")
    w.poll_all()
    assert w.keys() == [BATCH, 1] and w.node(1) == "nid002"


def test_header_of_a_big_file_is_read_once_from_its_start(tmp_path: Path) -> None:
    paths = LogPaths(str(tmp_path), "train")
    write(paths.rank("42", 0), rank_header(0, "nid007"), *[f"line {i}" for i in range(50)])
    w = JobLogWatcher("42", {0: Path(paths.rank("42", 0))}, window=10)  # the header is outside the window
    w.poll_all()
    assert w.node(0) == "nid007"


def test_views_rank_and_merged(tmp_path: Path) -> None:
    paths = job(tmp_path)
    files, _ = watch_files(paths, "42", 4)
    w = JobLogWatcher("42", files)
    w.poll_all()
    loaded = w.view_content("rank", (1,))
    assert isinstance(loaded, Loaded) and loaded.lines == ("ntui: rank 1 on nid001", "rank 1 step 1")
    assert loaded.first_index == 0
    write(paths.rank("42", 1), "rank 1 step 2")
    update = w.view_update("rank", (1,), w.poll_all())
    assert update == Appended(("rank 1 step 2",), "")
    merged = w.view_content("merged", (0, 3))
    assert "[r0] rank 0 step 1" in merged.lines and "[r3] rank 3 step 1" in merged.lines


def test_missing_directory_is_a_problem_not_a_wait(tmp_path: Path) -> None:
    paths = LogPaths(str(tmp_path / "gone"), "train")
    files, _ = watch_files(paths, "42", 2)
    w = JobLogWatcher("42", files)
    w.poll_all()
    problem = w.problem()
    assert problem is not None and problem.problem and "does not exist" in problem.text
    ok = LogPaths(str(tmp_path), "train")  # a readable directory: not written yet is no problem
    assert JobLogWatcher("42", watch_files(ok, "42", 2)[0]).problem() is None


def test_finish_reports_a_traceback_cut_short(tmp_path: Path) -> None:
    paths = job(tmp_path, world=1)
    write(paths.rank("42", 0), *TRACEBACK[:2])  # the job was killed mid-traceback
    w = JobLogWatcher("42", watch_files(paths, "42", 1)[0])
    w.poll_all()
    assert not w.triage_line().failed
    w.finish()
    assert w.triage_line().failed and "(incomplete)" in w.triage_line().text


# ------------------------------------------------------------------------------------------------ schedulers

def _up(changed: bool) -> TailUpdate:
    return TailUpdate(path=Path("x"), exists=True, lines=("new",) if changed else ())


def test_fixed_scheduler_polls_hidden_files_every_nth_tick() -> None:
    s = FixedScheduler(0.5, hidden_every=4)
    keys = [BATCH, 0, 1, 2]
    due = [s.due(keys, (0,), 0.0) for _ in range(5)]
    assert due[0] == [0, BATCH, 1, 2] and due[1] == [0] and due[4] == [0, BATCH, 1, 2]
    s.want(2)
    assert s.due(keys, (0,), 0.0) == [0, 2]


def test_polite_scheduler_backs_off_unchanged_files_and_polls_wanted_ones_at_once() -> None:
    s = PoliteScheduler(fast_s=0.5, slow_s=2.0, max_s=30.0, revisit_s=30.0)  # plain doubling to max_s
    keys = [BATCH, 0, 1]
    assert s.due(keys, (0,), 0.0) == [BATCH, 0, 1]  # everything once at the start
    intervals = []
    now = 0.0
    for _ in range(7):
        s.observed(1, _up(False), now)
        intervals.append(s._every[1])
        now = s._next[1]
    assert intervals == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert 1 not in s.due(keys, (0,), now - 1)
    assert s.due(keys, (0,), now) == [BATCH, 0, 1]
    s.observed(1, _up(True), now)  # it moved: back to the slow (not backed-off) interval
    assert s._every[1] == 2.0
    s.want(1)
    assert s.due(keys, (0,), now + 0.1) == [BATCH, 0, 1]
    for key in (0, 1):
        s.observed(key, _up(False), now + 0.1)
    s.hidden = True  # pane hidden: only the batch log stays fast, rank 0 is backed off like the others
    assert s.due(keys, (0,), now + 0.2) == [BATCH]


def test_polite_scheduler_stops_backing_off_at_revisit_s_while_the_rate_cap_allows() -> None:
    """Few files: every quiet one is re-read within revisit_s (a failure only its own file shows is named in
    time); many files: the back-off goes on up to what the rate cap can serve (files / rest_per_s)."""
    few = PoliteScheduler(fast_s=0.5, slow_s=2.0, max_s=30.0, revisit_s=8.0, rest_per_s=20.0)
    few.due([BATCH, 0, 1, 2], (0,), 0.0)
    for _ in range(6):
        few.observed(1, _up(False), 0.0)
    assert few._every[1] == 8.0
    many = PoliteScheduler(fast_s=0.5, slow_s=2.0, max_s=30.0, revisit_s=8.0, rest_per_s=20.0)
    many.due([BATCH, *range(400)], (0,), 0.0)  # 399 backed-off files / 20 per s: 19.95 s
    for _ in range(6):
        many.observed(1, _up(False), 0.0)
    assert many._every[1] == pytest.approx(19.95)
    many.hidden = True  # hidden: 0.5 per s, the cap is max_s
    many.observed(1, _up(False), 0.0)
    assert many._every[1] == 30.0


def test_watcher_uses_its_scheduler(tmp_path: Path) -> None:
    paths = job(tmp_path)
    files, _ = watch_files(paths, "42", 4)
    w = JobLogWatcher("42", files, scheduler=FixedScheduler(0.5, hidden_every=4))
    first = w.poll(shown=(1,))
    assert sorted(first, key=str) == sorted([BATCH, 0, 1, 2, 3], key=str)
    seen: list[list[object]] = []
    second = w.poll(shown=(1,), on_shown=lambda ups: seen.append(list(ups)))
    assert list(second) == [1] and seen == [[1]]


def test_a_rank_named_by_the_batch_log_is_read_at_once_despite_its_back_off(tmp_path: Path) -> None:
    paths = job(tmp_path)
    files, _ = watch_files(paths, "42", 4)
    t = [0.0]
    w = JobLogWatcher("42", files, launcher="srun", scheduler=PoliteScheduler(0.5, 2.0, 30.0),
                      clock=lambda: t[0], monotonic=lambda: t[0])
    for _ in range(120):  # a minute of quiet: rank 3 is backed off to 30 s
        w.poll(shown=(0,))
        t[0] += 0.5
    write(paths.rank("42", 3), *TRACEBACK)
    write(paths.batch("42"), "srun: error: nid002: task 3: Exited with exit code 1")
    w.poll(shown=(0,))  # the batch log (fast) names task 3 = rank 3 ...
    t[0] += 0.5
    w.poll(shown=(0,))  # ... whose file is read at the next tick, not in 30 s
    tri = w.triage_line()
    assert tri.failed and tri.rank == 3 and tri.key == 3
    assert tri.text.startswith("rank 3 on nid002 failed first: RuntimeError: loss is nan")


def test_hidden_watcher_reads_only_the_batch_log_often(tmp_path: Path) -> None:
    paths = job(tmp_path, world=16)
    files, _ = watch_files(paths, "42", 16)
    t = [0.0]
    w = JobLogWatcher("42", files, scheduler=PoliteScheduler(0.5, 2.0, 30.0), budget=FdBudget(limit=64),
                      clock=lambda: t[0], monotonic=lambda: t[0])
    w.set_hidden(True)
    w.poll()  # the first poll reads every file once
    before = w.ops()
    for _ in range(120):  # 60 s
        t[0] += 0.5
        w.poll()
    opens, stats = (a - b for a, b in zip(w.ops(), before, strict=True))
    assert opens == 0  # every file stayed open (within the budget)
    assert stats <= 2 * 60  # <= 2 metadata ops per second: the batch log each second + a trickle of ranks
    w.close()


def _held(changed: bool) -> TailUpdate:
    return TailUpdate(path=Path("x"), exists=True, lines=("new",) if changed else (), held=True)


def test_polite_scheduler_reads_held_files_and_checks_them_rarely() -> None:
    """A held file is read (light: no metadata operation) with back-off up to revisit_s, and fully checked
    (a stat) only every check_s; the batch log and the shown file are read every tick and fully checked every
    fast_check_s (a deleted file stays readable through its descriptor: only a stat of the path tells)."""
    s = PoliteScheduler(fast_s=0.5, slow_s=2.0, max_s=30.0, revisit_s=8.0, check_s=60.0)
    keys = [BATCH, 0, 1]
    assert s.due(keys, (0,), 0.0) == [BATCH, 0, 1] and 1 not in s.light  # first poll: full (never read: the tail
    # polls a file it never read in full even when asked for a light poll, as for the batch log and rank 0)
    for key in keys:
        s.observed(key, _held(False), 0.0)
    assert s._rnext[1] == 2.0 and s._next[1] == 60.0
    now, reads, fast_checks = 0.0, [], []
    while now < 59.0:
        now += 0.5
        due = s.due(keys, (0,), now)
        assert due[:2] == [BATCH, 0]  # every tick
        full = {BATCH, 0} - set(s.light)
        assert full in (set(), {BATCH, 0}), full
        if full:
            fast_checks.append(now)
        if 1 in due:
            assert 1 in s.light
            reads.append(now)
        for key in due:
            s.observed(key, _held(False), now)
    assert reads == [2.0, 6.0, 14.0, 22.0, 30.0, 38.0, 46.0, 54.0]  # 2, 4, then every revisit_s
    assert fast_checks == [2.0 * i for i in range(1, 30)]  # a stat every fast_check_s, a read in between
    due = s.due(keys, (0,), 60.0)
    assert 1 in due and 1 not in s.light and BATCH not in s.light  # the full checks (stat) fall due
    for key in due:
        s.observed(key, _held(False), 60.0)
    assert s._next[1] == 120.0
    s.observed(1, _held(True), 61.0)  # new bytes: read soon again
    assert s._rnext[1] == 63.0
    s.observed(1, TailUpdate(path=Path("x"), exists=True, held=False), 63.0)  # descriptor given back
    assert 1 not in s._held and 1 not in s._rnext
