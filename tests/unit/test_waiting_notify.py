"""A word when a job starts or ends (ntui/core/waiting/notify.py): the transitions of the user's own jobs and the
terminal bytes, byte for byte."""

from __future__ import annotations

from ntui.core.slurm.squeue import QueueJob
from ntui.core.waiting.notify import Notice, Transitions, osc9, osc777, terminal_bytes, tmux_wrap, wanted


def job(job_id: str, state: str, user: str = "alice", **kw: str) -> QueueJob:
    return QueueJob(job_id=job_id, raw_job_id=job_id, name=kw.get("name", "train"), state=state, user=user,
                    nodelist=kw.get("nodelist", ""), partition="debug", reason=kw.get("reason", ""))


NOTICE = Notice("12", "ended", "FAILED", "ntui: job 12 FAILED (exit 3:0)", "train · rank 1 failed first")


def test_osc9_and_osc777_bytes() -> None:
    assert osc9("ntui: job 12 started") == "\x1b]9;ntui: job 12 started\x07"
    assert osc777("ntui: job 12; done", "train") == "\x1b]777;notify;ntui: job 12, done;train\x07"
    # text from job names cannot end the sequence or start another
    assert osc9("evil\x07\x1b]0;title\x07name") == "\x1b]9;evilname\x07"


def test_tmux_passthrough_doubles_every_escape() -> None:
    assert tmux_wrap("\x1b]9;hi\x07") == "\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\"


def test_terminal_bytes() -> None:
    plain = terminal_bytes(NOTICE, bell_on=True, desktop=True, environ={})
    assert plain == ("\x07\x1b]9;ntui: job 12 FAILED (exit 3:0): train · rank 1 failed first\x07"
                     "\x1b]777;notify;ntui: job 12 FAILED (exit 3:0);train · rank 1 failed first\x07")
    tmux = terminal_bytes(NOTICE, bell_on=True, desktop=True, environ={"TMUX": "/tmp/tmux-0/default,1,0"})
    assert tmux == ("\x07\x1bPtmux;\x1b\x1b]9;ntui: job 12 FAILED (exit 3:0): train · rank 1 failed first\x07\x1b\\"
                    "\x1bPtmux;\x1b\x1b]777;notify;ntui: job 12 FAILED (exit 3:0);train · rank 1 failed first\x07"
                    "\x1b\\")
    assert terminal_bytes(NOTICE, bell_on=True, desktop=False, environ={}) == "\x07"
    assert terminal_bytes(NOTICE, bell_on=False, desktop=False, environ={}) == ""


def test_wanted_states() -> None:
    assert wanted(NOTICE, ("RUNNING", "ENDED"))
    assert wanted(NOTICE, ("FAILED",)) and not wanted(NOTICE, ("COMPLETED", "RUNNING"))
    started = Notice("12", "started", "RUNNING", "t", "")
    assert wanted(started, ("running",)) and not wanted(started, ("ENDED",))


def test_started_requeued_and_the_baseline() -> None:
    t = Transitions("alice")
    assert t.observe({"1": job("1", "RUNNING"), "2": job("2", "PENDING")}) == []  # baseline: nothing
    got = t.observe({"1": job("1", "RUNNING"), "2": job("2", "RUNNING", nodelist="nid002")})
    assert [(n.job_id, n.event, n.title, n.body) for n in got] == [
        ("2", "started", "ntui: job 2 started", "train on nid002")]
    got = t.observe({"1": job("1", "PENDING", reason="BeginTime"), "2": job("2", "RUNNING", nodelist="nid002")})
    assert [(n.job_id, n.event, n.state) for n in got] == [("1", "requeued", "REQUEUED")]
    # a job submitted and started between two answers
    got = t.observe({"1": job("1", "PENDING"), "2": job("2", "RUNNING"), "3": job("3", "RUNNING")})
    assert [n.job_id for n in got] == ["3"]


def test_other_users_jobs_never_notify() -> None:
    t = Transitions("alice")
    t.observe({"9": job("9", "PENDING", user="bob")}, all_users=True)
    assert t.observe({"9": job("9", "RUNNING", user="bob")}, all_users=True) == []


def test_an_end_waits_for_its_state_and_the_record_gives_the_verdict() -> None:
    t = Transitions("alice")
    t.observe({"1": job("1", "RUNNING", name="ddp"), "2": job("2", "RUNNING", name="prep")})
    assert t.observe({}) == []  # both left: nothing known yet
    assert t.outcome("1", "FAILED", "1:0") == []  # waits for the records (the verdict)
    got = t.records({"1": ("FAILED", "rank 5 failed first: CUDA out of memory")})
    assert [(n.job_id, n.title, n.body) for n in got] == [
        ("1", "ntui: job 1 FAILED", "ddp · rank 5 failed first: CUDA out of memory")]
    got = t.outcome("2", "COMPLETED", "0:0")  # not ntui's (no record): the look-up's state
    assert [(n.job_id, n.state, n.title) for n in got] == [("2", "COMPLETED", "ntui: job 2 COMPLETED")]
    assert t.outcome("2", "COMPLETED", "0:0") == [] and t.records({}) == []  # said once


def test_a_job_back_in_the_queue_is_not_ended() -> None:
    t = Transitions("alice")
    t.observe({"1": job("1", "RUNNING")})
    t.observe({})
    t.observe({"1": job("1", "PENDING")})  # requeued
    assert t.outcome("1", "PENDING", None) == [] and t.records({}) == []
