"""ntui.core.logs.tail: offset following, cleaning, tail-first indexing, lazy reads, multi-file merge."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.jobfiles.lognames import discover_rank_logs, rank_log_paths
from ntui.core.logs.multitail import MultiTail, merge_lines
from ntui.core.logs.rankdetector import scan_lines
from ntui.core.logs.rankstatus import rank_status
from ntui.core.logs.tail import FileTail, TailUpdate
from ntui.core.textsafe import DISPLAY_CAP, clean_line


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


# --------------------------------------------------------------------------------------------- following


def test_appends_and_partial_lines(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"one\ntwo\nthr")
    t = FileTail(p)
    u = t.poll()
    assert u.exists and u.appeared and u.backlog
    assert u.lines == ("one", "two")
    assert u.first_line_no == 0
    assert u.partial == "thr" and u.partial_changed
    assert t.poll().lines == ()  # nothing new
    append(p, b"ee\nfour\n")
    u = t.poll()
    assert not u.backlog and not u.appeared
    assert u.lines == ("three", "four")
    assert u.first_line_no == 2
    assert u.partial == "" and u.partial_changed
    assert u.offset == p.stat().st_size and u.behind == 0
    assert t.window == ["one", "two", "three", "four"]
    assert t.line_count == 4 and t.fully_indexed


def test_partial_line_split_across_many_polls(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"")
    t = FileTail(p)
    assert t.poll().lines == ()
    for piece in (b"ab", b"cd", b"ef"):
        append(p, piece)
        assert t.poll().lines == ()
    append(p, b"\n")
    assert t.poll().lines == ("abcdef",)


def test_missing_file_then_created(tmp_path: Path) -> None:
    p = tmp_path / "pending-123.out"
    t = FileTail(p)
    u = t.poll()
    assert not u.exists and not u.vanished and not u.changed
    assert t.poll().lines == ()
    p.write_bytes(b"hello\n")
    u = t.poll()
    assert u.exists and u.appeared and u.lines == ("hello",)


def test_truncation_restarts_from_zero(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"old 1\nold 2\nold 3\n")
    t = FileTail(p)
    t.poll()
    ino = p.stat().st_ino
    with open(p, "r+b") as f:
        f.truncate(0)
    append(p, b"new 1\n")
    assert p.stat().st_ino == ino
    u = t.poll()
    assert u.reset and u.reset_reason == "truncated"
    assert u.lines == ("new 1",) and u.first_line_no == 0
    assert t.window == ["new 1"]
    assert t.generation == 1


def test_truncate_and_regrow_past_offset_is_detected(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"aaaa\nbbbb\n")
    t = FileTail(p)
    t.poll()
    with open(p, "r+b") as f:  # requeued job rewrote more than before between two polls
        f.truncate(0)
        f.write(b"XXXXXXXXXXXXXXXXXXXX\nYYYY\n")
    u = t.poll()
    assert u.reset and u.reset_reason == "truncated"
    assert u.lines == ("XXXXXXXXXXXXXXXXXXXX", "YYYY")


def test_rotation_new_inode(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"first file line\n")
    t = FileTail(p)
    t.poll()
    os.rename(p, tmp_path / "a.out.1")  # keep the old inode alive so the new one differs
    p.write_bytes(b"second file line 1\nsecond file line 2\n")
    u = t.poll()
    assert u.reset and u.reset_reason == "replaced"
    assert u.lines == ("second file line 1", "second file line 2")
    append(p, b"more\n")
    assert t.poll().lines == ("more",)


def test_vanish_and_reappear(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"x\n")
    t = FileTail(p)
    t.poll()
    keep = tmp_path / "keep"
    os.rename(p, keep)
    u = t.poll()
    assert u.vanished and not u.exists and u.changed
    assert not t.poll().vanished  # reported once
    p.write_bytes(b"again\n")
    u = t.poll()
    assert u.exists and u.appeared and u.reset and u.lines == ("again",)


def test_max_read_per_poll_catches_up(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"")
    t = FileTail(p, chunk_size=16, max_read_per_poll=64)
    t.poll()
    append(p, b"".join(b"line %03d\n" % i for i in range(40)))  # 360 bytes
    seen: list[str] = []
    u = t.poll()
    seen += u.lines
    assert u.behind > 0
    for _ in range(10):
        seen += t.poll().lines
    assert seen == [f"line {i:03d}" for i in range(40)]


# --------------------------------------------------------------------------------------------- cleaning


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"ok \xff\xfe bad \xe2\x82\n\xc3\xa9t\xc3\xa9\n")
    u = FileTail(p).poll()
    assert u.lines[0] == "ok \ufffd\ufffd bad \ufffd"
    assert u.lines[1] == "été"


def test_carriage_return_progress_bars() -> None:
    assert clean_line(b" 10%|#    |\r 50%|###  |\r100%|#####|\n") == "100%|#####|"
    assert clean_line(b"windows line\r\n") == "windows line"
    assert clean_line(b"ends with two\r\r\n") == ""
    assert clean_line(b"no newline") == "no newline"


def test_progress_bar_streamed_through_the_tail(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"epoch 1\n  0%|\r")
    t = FileTail(p)
    u = t.poll()
    assert u.lines == ("epoch 1",)
    assert u.partial == "  0%|"
    append(p, b" 40%|##\r")
    assert t.poll().partial == " 40%|##"
    append(p, b"100%|#####\r\n")  # CRLF end: the last state stays
    u = t.poll()
    assert u.lines == ("100%|#####",) and u.partial == ""


def test_ansi_and_title_escapes_are_stripped() -> None:
    raw = (
        b"\x1b]0;pwned title\x07\x1b]2;other\x1b\\\x1b[2J\x1b[H\x1b[1;31mERROR\x1b[0m: "
        b"\x1b[5Aup\x1b7\x1b8\x1bc \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ "
        b"\xc2\x9b31m\x00\x08\x7fend\ttab\x1bP1$r\x1b\\"
    )
    out = clean_line(raw)
    assert out == "ERROR: up link end\ttab"
    assert "\x1b" not in out and "title" not in out
    # a raw 0x9b byte is not UTF-8: it becomes U+FFFD, which is harmless
    assert clean_line(b"a\x9b31mb") == "a\ufffd31mb"


def test_unterminated_escapes_are_removed() -> None:
    assert clean_line(b"text \x1b]0;never terminated title") == "text "
    assert clean_line(b"text \x1b[12") == "text "
    assert clean_line(b"text \x1b") == "text "


@given(st.binary(max_size=300))
def test_clean_line_never_leaks_control_characters(raw: bytes) -> None:
    out = clean_line(raw)
    bad = [c for c in out if (ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) <= 0x9F]
    assert bad == []


def test_display_cap_marker() -> None:
    out = clean_line(b"x" * 100 + b"\n", max_bytes=10)
    assert out == "x" * 10 + " … [+90 bytes]"


def test_ten_megabyte_line_is_bounded(tmp_path: Path) -> None:
    p = tmp_path / "big.out"
    size = 10 * 1024 * 1024
    with open(p, "wb") as f:
        f.write(b"head\n")
        f.write(b"y" * size + b"\n")
        f.write(b"tail\n")
    t = FileTail(p)
    tracemalloc.start()
    try:
        u = t.poll()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert u.lines[0] == "head" and u.lines[2] == "tail"
    assert u.lines[1] == "y" * DISPLAY_CAP + f" … [+{size - DISPLAY_CAP} bytes]"
    assert peak < 2 * 1024 * 1024  # chunks + one capped head, never the 10 MB line
    # the index keeps the true offsets: line 2 starts after the whole 10 MB line
    assert t.read_lines(2, 1) == ["tail"]
    assert t.read_lines(1, 1) == [u.lines[1]]


def test_ten_megabyte_line_arriving_in_pieces(tmp_path: Path) -> None:
    p = tmp_path / "big.out"
    p.write_bytes(b"")
    t = FileTail(p)
    t.poll()
    piece = b"z" * (1024 * 1024)
    for _ in range(10):
        append(p, piece)
        u = t.poll()
        assert u.lines == ()
        assert len(u.partial) <= DISPLAY_CAP + 40
    append(p, b"\nnext\n")
    u = t.poll()
    assert u.lines == ("z" * DISPLAY_CAP + f" … [+{10 * len(piece) - DISPLAY_CAP} bytes]", "next")
    assert t.read_lines(1, 1) == ["next"]


# --------------------------------------------------------------------------------------- index + lazy reads


def test_lazy_old_line_reads(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    t = FileTail(p, window=10)
    u = t.poll()
    assert u.lines == tuple(f"line {i}" for i in range(990, 1000))
    assert not t.fully_indexed and t.line_count == 10
    # before full indexing, numbers count from the first indexed line
    assert t.read_lines(0, 2) == ["line 990", "line 991"]
    head = t.indexed_from
    assert head == sum(len(b"line %d\n" % i) for i in range(990))
    progress: list[tuple[int, int]] = []
    shift = t.index_all(lambda done, total: progress.append((done, total)), chunk_size=1000)
    assert shift == 990 and t.fully_indexed and t.line_count == 1000
    assert len(progress) > 1 and progress[-1] == (head, head)
    before = t.bytes_read
    assert t.read_lines(0, 3) == ["line 0", "line 1", "line 2"]
    assert t.read_lines(500, 2) == ["line 500", "line 501"]
    assert t.read_lines(998, 5) == ["line 998", "line 999"]  # from the window, clipped
    assert t.read_lines(1000, 1) == [] and t.read_lines(-1, 1) == []
    assert t.bytes_read - before < 100  # two short ranges, not the file
    append(p, b"line 1000\n")
    u = t.poll()
    assert u.first_line_no == 1000 and u.lines == ("line 1000",)


def test_index_all_cancel_and_truncation_race(tmp_path: Path) -> None:
    p = tmp_path / "a.out"
    p.write_bytes(b"".join(b"l%d\n" % i for i in range(500)))
    t = FileTail(p, window=5)
    t.poll()
    assert t.index_all(cancelled=lambda: True) == -1
    assert not t.fully_indexed
    p.write_bytes(b"short\n")  # truncated under us
    assert t.index_all() == -1
    assert t.poll().reset
    assert t.fully_indexed and t.index_all() == 0


def test_fifty_megabyte_file_opens_tail_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "huge.out"
    line = b"step %07d loss 0.123456 lr 1e-4 " + b"." * 60 + b"\n"
    n_lines = 0
    with open(p, "wb") as f:
        block = b"".join(line % i for i in range(10_000))
        while f.tell() < 50 * 1024 * 1024:
            f.write(block)
            n_lines += 10_000
    size = p.stat().st_size
    counted = {"bytes": 0}
    real_pread = os.pread

    def counting_pread(fd: int, n: int, off: int) -> bytes:
        data = real_pread(fd, n, off)
        counted["bytes"] += len(data)
        return data

    monkeypatch.setattr(os, "pread", counting_pread)  # the module reads only through os.pread
    t = FileTail(p, window=5_000)
    u = t.poll()
    assert len(u.lines) == 5_000
    assert u.lines[-1].startswith("step ")
    assert counted["bytes"] < size // 20  # a few hundred KB, not 50 MB
    assert counted["bytes"] == t.bytes_read
    assert not t.fully_indexed
    shift = t.index_all()
    assert shift == n_lines - 5_000
    assert t.line_count == n_lines
    assert t.read_lines(0, 1) == [clean_line(block.split(b"\n", 1)[0])]
    assert t.read_lines(n_lines - 1, 1) == [u.lines[-1]]


# --------------------------------------------------------------------------------------------- multi-file


def test_multitail_polls_together_and_merges_by_arrival(tmp_path: Path) -> None:
    a, b = tmp_path / "r0.out", tmp_path / "r1.out"
    a.write_bytes(b"a1\n")
    mt: MultiTail[int] = MultiTail({0: a, 1: b})
    ups = mt.poll_all()
    assert set(ups) == {0, 1}
    assert ups[0].lines == ("a1",) and not ups[1].exists
    b.write_bytes(b"b1\nb2\n")
    ups = mt.poll_all()
    assert ups[1].lines == ("b1", "b2") and ups[1].first_seq == 1
    append(a, b"a2\n")
    ups = mt.poll_all()
    assert merge_lines(ups) == ["[r0] a2"]
    assert mt.merged_view() == ["[r0] a1", "[r1] b1", "[r1] b2", "[r0] a2"]
    assert mt.merged_view(last=2) == ["[r1] b2", "[r0] a2"]
    only = mt.poll_all(keys=[1])
    assert set(only) == {1}


def test_merge_lines_orders_by_sequence() -> None:
    ups = {
        3: TailUpdate(path=Path("x"), lines=("late",), first_seq=5),
        "batch": TailUpdate(path=Path("y"), lines=("early", "mid"), first_seq=1),
    }
    assert merge_lines(ups) == ["[batch] early", "[batch] mid", "[r3] late"]
    assert merge_lines(ups, label=lambda k: f"<{k}>") == ["<batch>early", "<batch>mid", "<3>late"]


# --------------------------------------------------------------------------------------------- rank files


def test_rank_log_paths_and_discovery(tmp_path: Path) -> None:
    logs = rank_log_paths(tmp_path, "llama", "4242", 3)
    assert logs.batch == tmp_path / "llama-4242.out"
    assert logs.ranks == {r: tmp_path / f"llama-4242-rank-{r}.out" for r in range(3)}
    for r in (10, 2, 0):
        (tmp_path / f"llama-4242-rank-{r}.out").write_text("")
    (tmp_path / "llama-4242.out").write_text("")
    (tmp_path / "llama-42420-rank-5.out").write_text("")  # other job
    (tmp_path / "llama-x-4242-rank-7.out").write_text("")  # other name
    (tmp_path / "llama-4242-rank-3.err").write_text("")
    (tmp_path / "llama-4242-rank-.out").write_text("")
    found = discover_rank_logs(tmp_path, "llama", "4242")
    assert list(found) == [0, 2, 10]
    assert rank_log_paths(tmp_path, "llama", "4242", None).ranks == found
    assert discover_rank_logs(tmp_path / "nope", "llama", "4242") == {}


def test_rank_status(tmp_path: Path) -> None:
    p = tmp_path / "llama-1-rank-1.out"
    t = FileTail(p)
    t.poll()
    assert rank_status(1, t, job_active=True).status == "pending"
    assert rank_status(1, t, job_active=False).status == "missing"
    p.write_text("step 1\nstep 2\n")
    t.poll()
    s = rank_status(1, t, job_active=True, node="nid002")
    assert (s.status, s.node, s.last_line, s.size) == ("running", "nid002", "step 2", 14)
    assert rank_status(1, t, job_active=False).status == "finished"
    append(p, b'Traceback (most recent call last):\n  File "t.py", line 1\nValueError: bad\n')
    u = t.poll()
    findings = scan_lines(u.lines, rank=1)
    s = rank_status(1, t, job_active=True, findings=findings)
    assert s.status == "errored" and s.finding is not None
    assert s.finding.first_line == "ValueError: bad"


# ------------------------------------------------------------------------------- descriptors and metadata ops


def test_held_descriptor_costs_one_stat_per_poll(tmp_path: Path) -> None:
    from ntui.core.logs.fdbudget import FdBudget

    p = tmp_path / "r.out"
    p.write_bytes(b"a\n")
    budget = FdBudget(limit=4)
    t = FileTail(p, budget=budget)
    t.poll()
    assert (t.opens, t.stats, budget.held) == (1, 1, 1)
    for _ in range(5):
        assert not t.poll().changed
    assert (t.opens, t.stats) == (1, 6)  # no open, one stat of the path each
    append(p, b"b\n")
    assert t.poll().lines == ("b",) and t.opens == 1
    plain = FileTail(p)
    for _ in range(3):
        plain.poll()
    assert (plain.opens, plain.stats) == (3, 3)  # open + fstat (+ close) every poll
    t.release()
    assert budget.held == 0


def test_held_descriptor_sees_a_replaced_file(tmp_path: Path) -> None:
    from ntui.core.logs.fdbudget import FdBudget

    p = tmp_path / "r.out"
    p.write_bytes(b"old\n")
    t = FileTail(p, budget=FdBudget(limit=1))
    t.poll()
    tmp = tmp_path / "new"
    tmp.write_bytes(b"new 1\nnew 2\n")
    os.replace(tmp, p)  # a requeue without --open-mode=append
    assert not t.poll(light=True).changed  # a light poll reads the held (old) inode: it needs the full one
    u = t.poll()  # a stat of the path: a new inode
    assert u.reset and u.reset_reason == "replaced" and u.lines == ("new 1", "new 2")
    p.unlink()
    assert t.poll().vanished


def test_budget_is_a_limit_with_a_fallback(tmp_path: Path) -> None:
    from ntui.core.logs.fdbudget import FdBudget

    budget = FdBudget(limit=2)
    multi: MultiTail[int] = MultiTail(budget=budget)
    for r in range(5):
        (tmp_path / f"{r}.out").write_bytes(b"x\n")
        multi.add(r, tmp_path / f"{r}.out")
    multi.poll_all()
    multi.poll_all()
    assert budget.held == 2 and budget.refused >= 3
    opens, stats = multi.ops()
    assert opens == 2 + 3 * 2  # two held files opened once, three fall back to open on every poll
    assert stats == 10
    multi.close()
    assert budget.held == 0
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert FdBudget().limit <= 256
    if soft != resource.RLIM_INFINITY:
        assert FdBudget(limit=10**9).limit <= soft // 4  # RLIMIT_NOFILE is respected whatever is asked


def test_light_poll_through_a_held_descriptor_is_one_read_and_no_metadata_operation(tmp_path: Path) -> None:
    from ntui.core.logs.fdbudget import FdBudget

    p = tmp_path / "r.out"
    p.write_bytes(b"a\n")
    t = FileTail(p, budget=FdBudget(limit=4))
    assert t.poll(light=True).lines == ("a",)  # never read yet: a full poll (open + fstat)
    assert (t.opens, t.stats) == (1, 1) and t.held
    reads = t.reads
    for _ in range(5):
        assert not t.poll(light=True, now=50.0).changed
    assert (t.opens, t.stats, t.reads - reads) == (1, 1, 5)  # one pread each, no open, no stat
    append(p, b"b\nc")
    u = t.poll(light=True, now=60.0)
    assert u.lines == ("b",) and u.partial == "c" and (t.opens, t.stats) == (1, 1)
    assert (u.mtime, u.size, u.offset) == (60.0, 5, 5)  # no stat: the poll's time and the offset
    append(p, b"\n")
    assert t.poll(light=True, now=61.0).lines == ("c",)


def test_light_poll_without_a_descriptor_is_one_open(tmp_path: Path) -> None:
    p = tmp_path / "r.out"
    p.write_bytes(b"a\n")
    t = FileTail(p)
    t.poll()
    assert (t.opens, t.stats) == (1, 1)
    append(p, b"b\n")
    assert t.poll(light=True, now=1.0).lines == ("b",)
    assert not t.poll(light=True, now=2.0).changed
    assert (t.opens, t.stats) == (3, 1) and not t.held  # open + pread + close: no fstat
    p.unlink()
    assert t.poll(light=True).vanished


def test_light_poll_sees_a_truncation_by_the_bytes_before_the_offset(tmp_path: Path) -> None:
    from ntui.core.logs.fdbudget import FdBudget

    p = tmp_path / "r.out"
    p.write_bytes(b"first run line 1\nfirst run line 2\n")
    t = FileTail(p, budget=FdBudget(limit=1))
    t.poll()
    p.write_bytes(b"x\n")  # truncated and rewritten (a requeue without --open-mode=append), shorter
    u = t.poll(light=True)
    assert u.reset and u.reset_reason == "truncated" and u.lines == ("x",)
    with open(p, "wb") as fh:  # truncated again, then longer than the old offset
        fh.write(b"second run, a much longer first line than before\n")
    u = t.poll(light=True)
    assert u.reset and u.lines == ("second run, a much longer first line than before",)


def test_budget_reserve_grows_toward_the_files_within_a_cap_raising_the_soft_nofile_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    from ntui.core.logs import fdbudget
    from ntui.core.logs.fdbudget import FD_RESERVE_MAX, FdBudget

    limits = {"soft": 1024, "hard": 8192}
    monkeypatch.setattr(fdbudget.resource, "getrlimit", lambda _which: (limits["soft"], limits["hard"]))

    def setrlimit(_which: int, value: tuple[int, int]) -> None:
        if value[0] > limits["hard"]:
            raise ValueError("not allowed")
        limits["soft"] = value[0]

    monkeypatch.setattr(fdbudget.resource, "setrlimit", setrlimit)
    b = FdBudget()
    assert b.limit == 256  # a quarter of the soft limit
    assert b.reserve(1025) == 1025 and b.nofile_raised == (1024, 4100) and limits["soft"] == 4100
    assert b.reserve(100_000) == 2048 and limits["soft"] == 8192  # never past the hard limit (a quarter of it)
    limits.update(soft=1024, hard=1024)
    low = FdBudget()
    assert low.reserve(1025) == 256 and low.nofile_raised is None  # the hard limit allows no more: fallback
    limits.update(soft=100_000, hard=resource.RLIM_INFINITY)
    assert FdBudget().reserve(100_000) == FD_RESERVE_MAX  # the hard cap
    assert FdBudget(limit=64).reserve(1025) == 64  # an explicit limit is a cap
    gone = FdBudget()
    gone.exhausted()  # EMFILE: hold no more, and grow no more
    assert gone.reserve(1025) == 0
