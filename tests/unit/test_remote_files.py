"""The cluster's files over a real sshd on the loopback address (``tests/support/sshd.py``): the agent on one channel,
the plain-commands fallback, hostile paths, and follows that survive a killed master and a stalled link with every
line once."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui.core.remote.files import AgentFiles, CommandFiles, FileRefused, connect
from ntui.core.remote.logs import RemoteTail
from ntui.core.slurm.ssh import Backoff, SshError, SshRunner, SshTarget
from tests.support import sshd as sshd_support

ROOT = Path(__file__).resolve().parents[2]
AGENT = (sys.executable, "-m", "ntui", "agent", "--stdio")


@pytest.fixture(scope="module")
def sshd() -> Iterator[sshd_support.Sshd]:
    reason = sshd_support.why_not()
    if reason is not None:
        pytest.skip(reason)
    with sshd_support.private_sshd(environment={"PYTHONPATH": str(ROOT)}) as server:
        yield server


def _runner(server: sshd_support.Sshd, sockets: str, host: str = sshd_support.HOST, **kw: object) -> SshRunner:
    return SshRunner(SshTarget(host=host, control_dir=server.directory / sockets, persist_s=300,
                               config_file=str(server.ssh_config), **kw))  # type: ignore[arg-type]


def _no_sleep(_: float) -> None:
    pass


def _hostile(marker: Path) -> list[str]:
    m = str(marker)
    return [f"; touch {m}", f"$(touch {m})", f"`touch {m}`", f"x\ntouch {m}", f"'; touch {m}; '",
            f"\"; touch {m}; \"", f"x\\'; touch {m}; #", f"| touch {m}", f"!touch {m}", "-n", "--help"]


def test_every_request_of_a_session_goes_over_one_channel_and_one_login(sshd: sshd_support.Sshd,
                                                                        tmp_path: Path) -> None:
    runner = _runner(sshd, "one")
    logins = sshd.logins()
    files = connect(runner, command=AGENT)
    assert isinstance(files, AgentFiles) and files.note is None and files.live
    log = tmp_path / "job-1.out"
    log.write_bytes(b"".join(b"%d\n" % i for i in range(10_000)))
    try:
        assert files.stat(str(log)).size == log.stat().st_size
        assert files.read(str(log), 0, 10).data == b"0\n1\n2\n3\n4\n"
        assert [e.name for e in files.listdir(str(tmp_path))] == ["job-1.out"]
        assert files.cat(str(log)).data == log.read_bytes()
        assert not files.stat(str(tmp_path / "none")).exists
        assert files.job("424242") is None  # the cluster's history (an empty state dir there) has no such job
        with pytest.raises(FileRefused) as refused:
            files.read(str(tmp_path), 0)
        assert refused.value.kind == "not-a-file"
        assert files.channels == 1
    finally:
        files.close()
    assert sshd.logins() - logins == 1
    assert runner.calls == 2  # the master opened by one call, then the agent's channel


def test_a_follow_waits_on_the_cluster_so_one_request_brings_the_next_line(sshd: sshd_support.Sshd,
                                                                            tmp_path: Path) -> None:
    files = AgentFiles(_runner(sshd, "wait"), command=AGENT)
    log = tmp_path / "job-5.out"
    log.write_bytes(b"first\n")
    tail = RemoteTail(files, str(log))
    assert tail.start().lines == ["first"]

    def append() -> None:
        time.sleep(0.5)
        with open(log, "ab") as f:
            f.write(b"second\n")

    t = threading.Thread(target=append)
    try:
        t.start()
        sent = files.bytes_out
        assert tail.poll(wait=30).lines == ["second"]  # one request: the agent waited for the line
        assert files.bytes_out - sent < 300  # one request line went out
    finally:
        t.join()
        files.close()


def test_without_ntui_there_plain_commands_read_the_same_and_say_what_they_cannot(sshd: sshd_support.Sshd,
                                                                                  tmp_path: Path) -> None:
    runner = _runner(sshd, "plain")
    files = connect(runner, command=("ntui-not-installed-here", "agent", "--stdio"))
    assert isinstance(files, CommandFiles) and not files.live
    assert files.note is not None and "not installed" in files.note and "no live follow" in files.note
    log = tmp_path / "job-2.out"
    data = bytes(range(256)) * 3000  # binary, longer than one chunk
    log.write_bytes(data)
    st = files.stat(str(log))
    assert (st.exists, st.size, st.inode) == (True, len(data), log.stat().st_ino)
    assert not files.stat(str(tmp_path / "none")).exists and not files.read(str(tmp_path / "none"), 0).exists
    first = files.read(str(log), 5, 1000)
    assert (first.offset, first.data, first.size) == (5, data[5:1005], len(data))
    end = files.read(str(log), 100, from_end=True)
    assert (end.offset, end.data) == (len(data) - 100, data[-100:])
    assert files.cat(str(log)).data == data
    assert [(e.name, e.kind, e.size) for e in files.listdir(str(tmp_path))] == [("job-2.out", "f", len(data))]
    assert files.job("1") is None


@pytest.mark.parametrize("way", ["agent", "commands"])
def test_a_hostile_path_never_runs_on_the_cluster(sshd: sshd_support.Sshd, tmp_path: Path, way: str) -> None:
    runner = _runner(sshd, f"hostile-{way}")
    files = connect(runner, command=AGENT if way == "agent" else ("ntui-not-installed-here",))
    marker = Path("/tmp") / f"ntui-pwned-{uuid.uuid4().hex}"
    try:
        for path in _hostile(marker):
            for call in (files.stat, lambda p: files.read(p, 0), files.cat, lambda p: files.follow(p, 0, wait=0)):
                try:
                    got = call(path)
                except FileRefused:
                    continue
                assert not getattr(got, "exists", False), (path, got)
            with pytest.raises(FileRefused):
                files.listdir(path)
        # files really named so are read as themselves, whole
        for i, name in enumerate(_hostile(Path(marker.name))):
            if "/" in name or name.startswith("-"):
                continue
            f = tmp_path / name
            f.write_bytes(b"content %d\n" % i)
            assert files.cat(str(f)).data == b"content %d\n" % i, name
            assert files.stat(str(f)).size == len(b"content %d\n" % i)
        assert not marker.exists() and not (ROOT / marker.name).exists()
    finally:
        files.close()


def test_an_expired_or_refused_login_names_the_renew_command(sshd: sshd_support.Sshd) -> None:
    runner = _runner(sshd, "denied", host=sshd_support.DENIED, renew="sshproxy -u someone")
    with pytest.raises(SshError) as caught:
        connect(runner, command=AGENT)
    assert "login was refused" in caught.value.words and "sshproxy -u someone" in caught.value.words
    assert not caught.value.link_down


def test_a_query_is_asked_again_after_the_link_dropped_and_an_action_never(sshd: sshd_support.Sshd) -> None:
    waits: list[float] = []
    runner = _runner(sshd, "retry", host=sshd_support.REFUSED)
    runner.retries, runner.backoff, runner._sleep = 3, Backoff(first=1, cap=3), waits.append
    with pytest.raises(SshError) as caught:
        runner.run(["squeue", "--me"], timeout=60)
    assert caught.value.link_down and runner.calls == 4 and waits == [1, 2, 3]
    before = runner.calls
    with pytest.raises(SshError):
        runner.run(["sbatch", "--parsable"], timeout=60, input="#!/bin/sh\n")
    with pytest.raises(SshError):
        runner.run(["scontrol", "hold", "1"], timeout=60)
    assert runner.calls - before == 2  # once each: an action whose answer is lost may have been done


# ---------------------------------------------------------------- follows across a broken link


class Writer:
    """Appends numbered lines to a file, ``n`` of them, one every ``every`` seconds (some in bursts)."""

    def __init__(self, path: Path, n: int, every: float) -> None:
        self.path, self.n, self.every = path, n, every
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with open(self.path, "ab", buffering=0) as f:
            i = 0
            while i < self.n:
                burst = 1 + (i % 7 == 0) * 20
                f.write(b"".join(b"line %06d %s\n" % (j, b"x" * (j % 50)) for j in range(i, min(self.n, i + burst))))
                i += burst
                time.sleep(self.every)

    def expected(self) -> list[str]:
        return [f"line {j:06d} {'x' * (j % 50)}" for j in range(self.n)]


def _follow_until(tail: RemoteTail, writer: Writer, event: threading.Event | None, at: int,
                  deadline_s: float = 600) -> list[str]:
    """Every line the tail gives until the writer's last; sets ``event`` once ``at`` lines came."""
    got = tail.start().lines
    end = time.monotonic() + deadline_s
    while len(got) < writer.n and time.monotonic() < end:
        update = tail.poll(wait=1.0)
        assert update.reset is None
        got += update.lines
        if event is not None and len(got) >= at:
            event.set()
    return got


def _master_pid(runner: SshRunner) -> int:
    said = runner.control("check").stderr
    m = re.search(r"pid=(\d+)", said)
    assert m, said
    return int(m.group(1))


def test_a_follow_resumes_from_its_offset_when_the_master_is_killed(sshd: sshd_support.Sshd, tmp_path: Path) -> None:
    runner = _runner(sshd, "killed")
    links: list[str] = []
    files = AgentFiles(runner, command=AGENT, on_link=links.append, sleep=_no_sleep, reconnects=20)
    log = tmp_path / "job-3.out"
    log.write_bytes(b"")
    writer = Writer(log, 1500, 0.004)
    tail = RemoteTail(files, str(log))
    logins = sshd.logins()
    tail.start()
    half = threading.Event()
    killed: list[int] = []

    def kill_master() -> None:
        half.wait(300)
        pid = _master_pid(runner)
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_master, daemon=True)
    killer.start()
    writer.thread.start()
    try:
        got = _follow_until(tail, writer, half, at=300)
    finally:
        killer.join(30)
        files.close()
    assert killed, "the master was never killed"
    assert got == writer.expected()  # every line once, in order
    assert links and files.channels >= 2  # the channel broke and was opened again
    assert _master_pid(runner) != killed[0]  # a new master
    assert sshd.logins() - logins == 2  # the first master's login and the new one's: no login per channel


def _session_processes(server: sshd_support.Sshd) -> list[int]:
    """The sshd processes serving connections (children of the listener, and theirs)."""
    out: list[int] = []
    todo = [server.pid]
    while todo:
        parent = todo.pop()
        kids = subprocess.run(["ps", "-o", "pid=", "--ppid", str(parent)], capture_output=True, text=True,
                              check=False).stdout.split()
        for k in kids:
            pid = int(k)
            exe = os.path.basename(os.readlink(f"/proc/{pid}/exe")) if os.path.exists(f"/proc/{pid}/exe") else ""
            if exe.startswith("sshd"):
                out.append(pid)
                todo.append(pid)
    return out


def test_a_follow_resumes_from_its_offset_after_the_link_stalls(sshd: sshd_support.Sshd, tmp_path: Path) -> None:
    """The server's session processes stopped (SIGSTOP) for several seconds mid-follow: the request in flight
    gets no answer, its channel is given up and opened again once the link moves; no line is lost or doubled."""
    runner = _runner(sshd, "stalled")
    links: list[str] = []
    files = AgentFiles(runner, command=AGENT, on_link=links.append, slack_s=2.0, reconnects=40,
                       backoff=Backoff(first=0.5, cap=2.0))
    log = tmp_path / "job-4.out"
    log.write_bytes(b"")
    writer = Writer(log, 1200, 0.01)
    tail = RemoteTail(files, str(log))
    tail.start()
    half = threading.Event()
    stopped: list[int] = []

    def stall() -> None:
        half.wait(300)
        pids = _session_processes(sshd)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        stopped.extend(pids)
        time.sleep(8)
        for pid in pids:
            os.kill(pid, signal.SIGCONT)

    staller = threading.Thread(target=stall, daemon=True)
    staller.start()
    writer.thread.start()
    try:
        got = _follow_until(tail, writer, half, at=200)
    finally:
        staller.join(60)
        for pid in stopped:  # never leave a stopped process behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        files.close()
    assert stopped, "no session process was stopped"
    assert got == writer.expected()
    assert links, "the stalled channel was never given up"


def test_the_agent_lists_its_history_and_says_where_its_interpreter_is(sshd: sshd_support.Sshd,
                                                                       tmp_path: Path) -> None:
    runner = _runner(sshd, "hist")
    files = connect(runner, command=AGENT)
    assert isinstance(files, AgentFiles)
    try:
        assert files.python == sys.executable  # the cluster's interpreter (the same machine here)
        assert files.history(5) == []  # the cluster side's own, empty, state directory
        with pytest.raises(FileRefused) as refused:
            files.request("history", limit=-1)
        assert refused.value.kind == "bad-request"
        assert files.channels == 1
    finally:
        files.close()
    # an agent of the same protocol from before ``history`` (it knew no such op): said, with what to do
    older = ("import sys; from ntui.core.remote import agent, protocol; agent.OPS = protocol.OPS - {'history'}; "
             "sys.exit(agent.serve(sys.stdin.buffer, sys.stdout.buffer))")
    old = connect(runner, command=(sys.executable, "-c", older))
    assert isinstance(old, AgentFiles)
    try:
        with pytest.raises(FileRefused) as refused:
            old.history(5)
        assert refused.value.kind == "old-agent" and "install this ntui version there" in str(refused.value)
    finally:
        old.close()
    plain = CommandFiles(runner, name="dev")
    with pytest.raises(FileRefused, match="needs ntui installed there"):
        plain.history()
    assert plain.python is None


def test_an_agent_over_a_master_another_process_opened_costs_one_channel(sshd: sshd_support.Sshd) -> None:
    """A new process finds the master up (``ssh -O check``, no channel) instead of opening it with a command."""
    _runner(sshd, "shared").run(["true"], timeout=120)  # an earlier ntui process: the master outlives it
    sessions = sshd.log.read_text(errors="replace").count("Starting session:")
    logins = sshd.logins()
    runner = _runner(sshd, "shared")
    files = connect(runner, command=AGENT)
    try:
        assert isinstance(files, AgentFiles) and files.history(1) == []
    finally:
        files.close()
    assert sshd.log.read_text(errors="replace").count("Starting session:") - sessions == 1
    assert sshd.logins() == logins and runner.calls == 1


def test_a_sweeps_manifest_goes_in_parts_checked_there_and_an_older_agent_is_said(sshd: sshd_support.Sshd,
                                                                                  tmp_path: Path) -> None:
    from ntui.core.jobfiles.manifest import Manifest, encode_manifest, manifest_path, read_manifest
    from ntui.core.remote.files import send_manifest
    from ntui.core.remote.protocol import MAX_SWEEP_PART

    manifest = Manifest(("lr", "note"), tuple((f"{i}e-4", f"a value; $(touch {tmp_path}/x) {i}") for i in range(3000)),
                        "loss=([0-9.]+)")
    data = encode_manifest(manifest)
    assert len(data) > 2 * MAX_SWEEP_PART  # three parts at least
    log_dir = tmp_path / "logs" / "deep"  # made there
    runner = _runner(sshd, "sweep")
    files = connect(runner, command=AGENT)
    assert isinstance(files, AgentFiles)
    try:
        path = send_manifest(files, str(log_dir), "train", data)
        assert path == manifest_path(str(log_dir), "train", data)
        assert read_manifest(path) == manifest and os.stat(path).st_mode & 0o777 == 0o600
        assert os.listdir(log_dir) == [os.path.basename(path)]  # the staging file is gone
        assert not (tmp_path / "x").exists()
        mtime = os.stat(path).st_mtime_ns
        assert send_manifest(files, str(log_dir), "train", data) == path  # the same sweep: kept, one request
        assert os.stat(path).st_mtime_ns == mtime
        # the last part asked again (its answer lost with the link): the manifest is there, said done
        digest = os.path.basename(path).split("-sweep-")[1].split(".")[0]
        last = len(data) - len(data) % MAX_SWEEP_PART
        again = files.sweep("manifest", log_dir=str(log_dir), log_stem="train", digest=digest, offset=last,
                            total=len(data), data=base64.b64encode(data[last:]).decode())
        assert again == {"id": again["id"], "ok": True, "path": path, "done": True}
        # bytes that are not the digest's, a stem that is a path, a part past the end: refused, nothing written
        bad = {"log_dir": str(tmp_path / "bad"), "log_stem": "t", "digest": "0" * 16, "offset": 0, "total": 4,
               "data": base64.b64encode(b"abcd").decode()}
        for fields, words in ((bad, "not the 4 sent"), ({**bad, "log_stem": "../t"}, "one file name"),
                              ({**bad, "offset": 2}, "a part of 4 bytes at 2")):
            with pytest.raises(FileRefused, match=words) as refused:
                files.sweep("manifest", **fields)
            assert refused.value.kind == "bad-request"
        assert [p for p in (tmp_path / "bad").iterdir() if not p.name.startswith(".")] == []
        job = files.sweep("job", log_dir=str(log_dir), log_stem="train", job_id="77",
                          manifest=os.path.basename(path), tasks=3000, indices="1,4", parallel=None,
                          resubmit_of="70")
        assert job is not None and job["path"] == f"{log_dir}/train-77.sweep"
        with pytest.raises(FileRefused, match="a number"):
            files.sweep("job", log_dir=str(log_dir), log_stem="train", job_id="77; rm", manifest="m", tasks=1,
                        indices="0")
        assert files.channels == 1
    finally:
        files.close()
    older = ("import sys; from ntui.core.remote import agent, protocol; agent.OPS = protocol.OPS - {'sweep'}; "
             "sys.exit(agent.serve(sys.stdin.buffer, sys.stdout.buffer))")
    old = connect(runner, command=(sys.executable, "-c", older))
    try:
        assert send_manifest(old, str(tmp_path / "old"), "train", data) is None  # an older agent writes none
    finally:
        old.close()
    assert not (tmp_path / "old").exists()
    assert send_manifest(CommandFiles(runner, name="dev"), str(tmp_path / "old"), "train", data) is None
