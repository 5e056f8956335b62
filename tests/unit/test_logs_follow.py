"""ntui/core/logs/follow.py: the loop the log pane's worker runs for a job on this machine, on real files, in a thread
of its own as in the pane, what it hands on collected in order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths, rank_header
from ntui.core.logs.follow import follow_job
from ntui.core.logs.rows import BATCH, Appended, Loaded, RankRow, TriageLine
from ntui.core.logs.session import LogView, WatchSession
from ntui.core.logs.watch import watch_files
from tests.support.waits import WAIT_BOUND_S


def _write(path: str, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in lines))


def _views(items: list[tuple[object, ...]]) -> list[tuple[int, Loaded | Appended]]:
    return [(x[1], x[2]) for x in items if x[0] == "view"]  # type: ignore[misc]


class _Seen:
    """What the loop handed on, in order: ("view", gen, content) and ("rows", rows, triage)."""

    def __init__(self) -> None:
        self.items: list[tuple[object, ...]] = []
        self.changed = threading.Condition()

    def view(self, gen: int, content: Loaded | Appended) -> None:
        with self.changed:
            self.items.append(("view", gen, content))
            self.changed.notify_all()

    def rows(self, rows: tuple[RankRow, ...], triage: TriageLine) -> None:
        with self.changed:
            self.items.append(("rows", rows, triage))
            self.changed.notify_all()

    def wait(self, what: Callable[[list[tuple[object, ...]]], bool]) -> list[tuple[object, ...]]:
        with self.changed:
            assert self.changed.wait_for(lambda: what(self.items), timeout=WAIT_BOUND_S), self.items
            return list(self.items)

    def views(self) -> list[tuple[int, Loaded | Appended]]:
        return _views(self.items)


def _job(tmp: Path) -> LogPaths:
    paths = LogPaths(str(tmp), "train")
    _write(paths.batch("42"), "launching")
    for r in range(2):
        _write(paths.rank("42", r), rank_header(r, "nid001"), f"rank {r} step 1")
    return paths


@contextmanager
def _following(session: WatchSession, seen: _Seen) -> Iterator[threading.Thread]:
    def shown(gen: int, content: Loaded | Appended) -> None:
        seen.view(gen, content)
        session.shown.set()  # the pane drew it

    thread = threading.Thread(target=follow_job, args=(session,), daemon=True, kwargs={
        "window": 100, "interval": 0.05, "clock": lambda: 1000.0, "show_view": shown, "show_rows": seen.rows,
        "running": lambda: True})
    thread.start()
    try:
        yield thread
    finally:
        session.stop()
        thread.join(WAIT_BOUND_S)
    # a loop still running would go on handing on into this test's collector while the next tests run
    assert not thread.is_alive(), "the follow loop did not stop when its session was stopped"


def test_the_shown_file_goes_out_before_the_rows_then_its_new_lines_once(tmp_path: Path) -> None:
    paths = _job(tmp_path)
    files, discover = watch_files(paths, "42", 2)
    session = WatchSession(1, "42", files, LogView(0, "rank", (0,)), job_active=True, paths=paths, discover=discover)
    seen = _Seen()
    with _following(session, seen):
        items = seen.wait(lambda xs: any(x[0] == "rows" for x in xs))
        assert items[0][0] == "view" and items[0][1] == 0
        first = items[0][2]
        assert isinstance(first, Loaded) and first.lines[-1] == "rank 0 step 1"
        rows, triage = items[-1][1], items[-1][2]
        assert [r.key for r in rows] == [BATCH, 0, 1] and isinstance(triage, TriageLine)  # type: ignore[attr-defined]
        _write(paths.rank("42", 0), "rank 0 step 2", "rank 0 step 3")
        seen.wait(lambda xs: sum(len(c.lines) for g, c in _views(xs) if isinstance(c, Appended)) >= 2)
        session.view = LogView(1, "rank", (1,))
        session.wake.set()
        seen.wait(lambda xs: any(g == 1 for g, _ in _views(xs)))
    appended = [line for g, c in seen.views() if g == 0 and isinstance(c, Appended) for line in c.lines]
    assert appended == ["rank 0 step 2", "rank 0 step 3"]  # each new line once
    (gen1,) = [c for g, c in seen.views() if g == 1]
    assert isinstance(gen1, Loaded) and gen1.lines[-1] == "rank 1 step 1"  # a view change: its whole content


def test_the_rows_go_out_again_only_when_they_changed(tmp_path: Path) -> None:
    paths = _job(tmp_path)
    files, discover = watch_files(paths, "42", 2)
    session = WatchSession(1, "42", files, LogView(0, "rank", (BATCH,)), job_active=True, paths=paths,
                           discover=discover)
    seen = _Seen()
    with _following(session, seen):
        seen.wait(lambda xs: any(x[0] == "rows" for x in xs))
        _write(paths.rank("42", 1), "Traceback (most recent call last):",
               '  File "/opt/train.py", line 41, in <module>', '    raise RuntimeError("loss is nan")',
               "RuntimeError: loss is nan")
        items = seen.wait(lambda xs: any(x[0] == "rows" and x[2].failed for x in xs))  # type: ignore[attr-defined]
    rows = [x for x in items if x[0] == "rows"]
    assert all(a[1:] != b[1:] for a, b in zip(rows, rows[1:], strict=False))  # never the same twice in a row
    triage = rows[-1][2]
    assert isinstance(triage, TriageLine) and triage.failed and triage.rank == 1


def test_an_ended_job_is_read_to_its_end_and_a_stopped_session_ends_the_loop(tmp_path: Path) -> None:
    paths = _job(tmp_path)
    _write(paths.rank("42", 0), "done")
    files, discover = watch_files(paths, "42", 2)
    session = WatchSession(1, "42", files, LogView(0, "rank", (0,)), job_active=False, paths=paths,
                           discover=discover)
    seen = _Seen()
    with _following(session, seen) as thread:
        items = seen.wait(lambda xs: any(x[0] == "rows" for x in xs))
        rows = {r.key: r for r in items[-1][1]}  # type: ignore[attr-defined]
        assert rows[0].last_line == "done" and rows[1].last_line == "rank 1 step 1"
    assert not thread.is_alive()
