"""The cluster's files, read from another machine: one interface, three ways.

:class:`ClusterFiles` is what the core and the CLI use (stat, a bounded read from an offset, a follow, a whole small
file, a listing, the cluster's history entry of a job and its newest entries, where the cluster's ntui is):

* :class:`LocalFiles`: this machine's own files (ntui on the login node; the tests' reference);
* :class:`AgentFiles`: ``ntui agent --stdio`` on the cluster, started once over the ssh master (one channel for
  every request of the session, :mod:`ntui.core.remote.protocol`); when the link drops, the channel is opened again
  after a :class:`~ntui.core.slurm.ssh.Backoff` wait and the request asked again: every request names its offset, so
  a follow resumes where its last answer ended (nothing lost, nothing read twice);
* :class:`CommandFiles`: where ntui is not installed on the cluster, plain commands (``stat -c``, ``tail -c +N``
  with ``head -c``, ``base64``, ``find -printf``) through the ssh runner, one channel per request. What it cannot
  do is said in :attr:`ClusterFiles.note`: no live follow (a follow is one read, polled by the caller) and no
  history (the records are read by the agent only).

:func:`connect` picks the agent, else the commands. A path is never a word of a shell command line here: the agent
gets it in a JSON string; the commands get it as an argument of a fixed ``sh -c`` script (``"$1"``), quoted for the
login shell by :func:`~ntui.core.slurm.ssh.remote_command`.
"""

from __future__ import annotations

import base64
import contextlib
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ntui.core.remote import agent as local_agent
from ntui.core.remote.link import LinkWatch
from ntui.core.remote.protocol import (
    MAX_CAT,
    MAX_CHUNK,
    MAX_SWEEP_PART,
    MAX_WAIT_S,
    VERSION,
    Chunk,
    Entry,
    FileStat,
    ProtocolError,
    decode_line,
    encode_line,
)
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.ssh import Backoff, SshError, SshRunner

__all__ = [
    "AGENT_COMMAND",
    "AGENT_ENV",
    "AgentFiles",
    "AgentUnavailable",
    "ClusterFiles",
    "CommandFiles",
    "FileRefused",
    "LinkLost",
    "LocalFiles",
    "agent_command",
    "connect",
    "follows_journals",
    "journal_read_at",
    "send_manifest",
]

#: How the agent is started on the cluster (a program of the login's PATH).
AGENT_COMMAND: tuple[str, ...] = ("ntui", "agent", "--stdio")
#: The environment variable that says how the agent starts on every cluster (tests, a private install).
AGENT_ENV = "NTUI_REMOTE_AGENT"
#: Seconds a request may take beyond its own wait before the channel is taken as stuck and opened again.
REQUEST_SLACK_S = 30.0
#: How many times a request is asked again over a reopened channel before the link is said to be down.
RECONNECTS = 6


class FileRefused(SlurmError):
    """The cluster refused a request on a file (permission denied, not a regular file, too big): ``kind`` and
    words, never a traceback."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class LinkLost(SlurmError):
    """The channel to the agent broke or stuck (asked again after a backoff by :class:`AgentFiles`)."""


class AgentUnavailable(SlurmError):
    """No agent there (ntui not installed on the cluster's PATH) or one of another protocol version: the plain
    commands stand in (:func:`connect`)."""


class ClusterFiles(Protocol):
    #: A follow waits on the cluster for the file to change (False: it answers at once; the caller polls).
    live: bool
    #: What this way cannot do, in words (None: nothing left out).
    note: str | None
    #: The cluster's ntui interpreter and py-spy, as its agent said (None: not known; ``ntui stacks`` runs them on
    #: the job's nodes).
    python: str | None
    py_spy: str | None

    def stat(self, path: str) -> FileStat: ...

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk: ...

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = MAX_CHUNK
               ) -> Chunk: ...

    def cat(self, path: str, limit: int = MAX_CAT) -> Chunk: ...

    def listdir(self, path: str) -> list[Entry]: ...

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None: ...

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The cluster's history entries, newest first (at most ``limit``), as
        :class:`~ntui.core.records.history.HistoryEntry`'s fields; :class:`FileRefused` where this way keeps no
        history (plain commands) or the agent there is older than the request."""
        ...

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        """Write one fact of a submission to the cluster's history (see :func:`ntui.core.remote.agent.
        history_record`); False where no history is kept this way (plain commands)."""
        ...

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        """Write one of a sweep's files on the cluster (see :func:`ntui.core.remote.agent.sweep_file`): the
        agent's answer; None where this way writes none (plain commands, an older agent)."""
        ...

    def close(self) -> None: ...


def _refusal(exc: local_agent.AgentError) -> FileRefused:
    return FileRefused(exc.kind, exc.message)


class LocalFiles:
    """This machine's files through the agent's own functions (what the agent answers, without a channel)."""

    live = True
    note: str | None = None
    python: str | None = sys.executable
    py_spy: str | None = None

    def stat(self, path: str) -> FileStat:
        try:
            return local_agent.file_stat(os.path.expanduser(path))
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        try:
            return local_agent.read_chunk(os.path.expanduser(path), offset, limit, from_end=from_end)
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = MAX_CHUNK
               ) -> Chunk:
        try:
            return local_agent.follow_chunk(os.path.expanduser(path), offset, limit, inode=inode, wait_s=wait)
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def cat(self, path: str, limit: int = MAX_CAT) -> Chunk:
        try:
            return local_agent.cat(os.path.expanduser(path), limit)
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def listdir(self, path: str) -> list[Entry]:
        try:
            return local_agent.list_dir(os.path.expanduser(path))[0]
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        return local_agent.history_job(job_id, cluster)

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        try:
            return list(local_agent.history_entries(limit)["entries"])
        except local_agent.AgentError as exc:
            raise _refusal(exc) from None

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        try:
            local_agent.history_record({**fields, "fact": fact, "token": token})
        except (local_agent.AgentError, ProtocolError) as exc:
            raise FileRefused(getattr(exc, "kind", "bad-request"), str(exc)) from None
        return True

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        try:
            return local_agent.sweep_file({**fields, "part": part})
        except (local_agent.AgentError, ProtocolError) as exc:
            raise FileRefused(getattr(exc, "kind", "bad-request"), str(exc)) from None

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- the agent over one channel


class _Lines:
    """Lines of a pipe, each waited for until a deadline (select on the descriptor, no thread)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()

    def readline(self, deadline: float) -> bytes | None:
        """The next line (with its newline); None at the end of the stream; :class:`TimeoutError` at the deadline."""
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl + 1])
                del self.buf[:nl + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            data = os.read(self.fd, 1 << 20)
            if not data:
                return None
            self.buf += data


class AgentFiles:
    """The agent on the cluster over one channel of ``runner``'s master (see the module's docstring). Thread-safe:
    requests take turns on the channel. ``channels`` counts the channels opened (1 while the link holds)."""

    live = True
    note: str | None = None

    def __init__(self, runner: SshRunner, *, command: Sequence[str] = AGENT_COMMAND, slack_s: float = REQUEST_SLACK_S,
                 reconnects: int = RECONNECTS, backoff: Backoff | None = None,
                 sleep: Callable[[float], None] = time.sleep, on_link: Callable[[str], None] | None = None,
                 link: LinkWatch | None = None) -> None:
        self.runner = runner
        self.link = link  # the cluster's link state, fed by every request (ntui.core.remote.link)
        self.command = tuple(command)
        self.slack_s = slack_s
        self.reconnects = reconnects
        self.backoff = backoff or Backoff(first=0.5, cap=15.0)
        self._sleep = sleep
        self._on_link = on_link
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: _Lines | None = None
        self._next_id = 0
        self.channels = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.agent_version: str | None = None
        self.python: str | None = None
        self.py_spy: str | None = None

    # -- the channel

    def _open(self) -> None:
        proc = self.runner.open_channel(self.command)
        self.channels += 1
        self._proc = proc
        assert proc.stdout is not None
        self._lines = _Lines(proc.stdout.fileno())
        try:
            hello = self._exchange({"op": "hello", "version": VERSION}, timeout=self.slack_s)
        except LinkLost as exc:
            code, err = self._end()
            problem = self.runner.classify(code if code is not None else 0, err)
            if problem is not None:
                raise problem from None
            if code == 127 or "not found" in err.lower() or "no module named" in err.lower():
                raise AgentUnavailable(f"ntui is not installed on {self.runner.name} (`{' '.join(self.command)}` "
                                       f"not found there)", stderr=err) from None
            raise exc
        if not hello.get("ok"):
            error = hello.get("error") or {}
            self._end()
            if isinstance(error, dict) and error.get("kind") == "version":
                raise AgentUnavailable(f"ntui on {self.runner.name} speaks another protocol: {error.get('message')}; "
                                       "install the same ntui version there")
            raise AgentUnavailable(f"the agent on {self.runner.name} refused the handshake: {error}")
        ntui_version = hello.get("ntui")
        self.agent_version = ntui_version if isinstance(ntui_version, str) else None
        python, py_spy = hello.get("python"), hello.get("py_spy")  # absent from an older agent's hello
        self.python = python if isinstance(python, str) and python else None
        self.py_spy = py_spy if isinstance(py_spy, str) and py_spy else None

    def _end(self) -> tuple[int | None, str]:
        """Close the channel (killing it if it hangs); its exit status and standard error."""
        proc, self._proc, self._lines = self._proc, None, None
        if proc is None:
            return None, ""
        for pipe in (proc.stdin,):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err = b""
        if proc.stderr is not None:
            try:
                err = proc.stderr.read() or b""
            except OSError:
                err = b""
            proc.stderr.close()
        if proc.stdout is not None:
            proc.stdout.close()
        return proc.returncode, err.decode("utf-8", errors="replace")

    def _exchange(self, request: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Send one request and read its answer on the open channel; :class:`LinkLost` if the channel breaks or
        says nothing before the deadline."""
        proc, lines = self._proc, self._lines
        if proc is None or lines is None or proc.stdin is None:
            raise LinkLost("no channel")
        self._next_id += 1
        rid = self._next_id
        line = encode_line({**request, "id": rid})
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
            self.bytes_out += len(line)
            deadline = time.monotonic() + timeout
            while True:
                answer_line = lines.readline(deadline)
                if answer_line is None:
                    raise LinkLost("the channel closed")
                self.bytes_in += len(answer_line)
                answer = decode_line(answer_line)
                if answer.get("id") == rid:
                    return answer
                # an answer to an earlier request whose wait was given up: not this one's
        except (BrokenPipeError, OSError, ValueError, ProtocolError) as exc:
            raise LinkLost(f"the channel broke: {exc}") from None
        except TimeoutError:
            raise LinkLost(f"no answer within {timeout:g} s") from None

    def request(self, op: str, *, wait: float = 0.0, **fields: Any) -> dict[str, Any]:
        """One request's answer (its ``ok`` fields; ``wait``: the seconds the agent may wait before answering, sent
        with the request and added to its deadline here), over the channel, opened (again) as needed: a broken or
        stuck channel is closed and the request asked again over a new one after a backoff, up to
        :attr:`reconnects` times (every request reads, or writes what it would write the same again: a record's
        fact, a sweep's part at its offset). :class:`FileRefused` for the agent's refusals,
        :class:`~ntui.core.slurm.ssh.SshError` for the link's or the login's failure, in words."""
        with self._lock:
            failures = 0
            link = self.link
            while True:
                token = link.begin(wait) if link is not None else 0
                try:
                    if self._proc is None:
                        self._open()
                    sent = {"op": op, **fields, **({"wait": wait} if wait else {})}
                    answer = self._exchange(sent, timeout=wait + self.slack_s)
                except LinkLost as exc:
                    self._end()
                    failures += 1
                    if link is not None:
                        link.dropped(f"the channel to the agent: {exc}")
                    if failures > self.reconnects:
                        raise SshError(f"ssh to {self.runner.target.host}: the link to the agent is down ({exc})",
                                       host=self.runner.target.host, words="the connection dropped") from None
                    if self._on_link is not None:
                        self._on_link(f"the link to {self.runner.name} dropped ({exc}); reopening")
                    self._sleep(self.backoff.delay())
                    continue
                except SshError as exc:
                    self._end()
                    failures += 1
                    if link is not None:
                        link.dropped(exc.words, login=not exc.link_down)
                    if not exc.link_down or failures > self.reconnects:
                        raise
                    if self._on_link is not None:
                        self._on_link(f"{exc.words}; reopening")
                    self._sleep(self.backoff.delay())
                    continue
                finally:
                    if link is not None:
                        link.end(token)
                self.backoff.reset()
                if link is not None:
                    link.answered()
                if answer.get("ok"):
                    return answer
                error = answer.get("error")
                kind = str(error.get("kind")) if isinstance(error, dict) else "failed"
                message = str(error.get("message")) if isinstance(error, dict) else str(error)
                raise FileRefused(kind, f"{self.runner.name}: {message}")

    # -- the interface

    def stat(self, path: str) -> FileStat:
        return FileStat.from_dict(self.request("stat", path=path))

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        return Chunk.from_dict(self.request("read", path=path, offset=offset, limit=limit, from_end=from_end))

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = MAX_CHUNK
               ) -> Chunk:
        wait = max(0.0, min(wait, MAX_WAIT_S))
        return Chunk.from_dict(self.request("follow", wait=wait, path=path, offset=offset, inode=inode, limit=limit))

    def cat(self, path: str, limit: int = MAX_CAT) -> Chunk:
        return Chunk.from_dict(self.request("cat", path=path, limit=limit))

    def listdir(self, path: str) -> list[Entry]:
        answer = self.request("list", path=path)
        entries = answer.get("entries")
        if not isinstance(entries, list):
            raise FileRefused("failed", f"{self.runner.name}: a listing without entries")
        return [Entry.from_dict(e) for e in entries if isinstance(e, dict)]

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        found = self.request("job", job_id=job_id, cluster=cluster).get("job")
        return found if isinstance(found, dict) else None

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        try:
            answer = self.request("history", limit=limit)
        except FileRefused as exc:
            if exc.kind == "bad-request" and "unknown op" in str(exc):
                raise FileRefused("old-agent", f"ntui on {self.runner.name} ({self.agent_version or 'older'}) "
                                               "cannot list its history: install this ntui version there") from None
            raise
        entries = answer.get("entries")
        if not isinstance(entries, list):
            raise FileRefused("failed", f"{self.runner.name}: a history without entries")
        return [e for e in entries if isinstance(e, dict)]

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        try:
            self.request("record", fact=fact, token=token, **fields)
        except FileRefused as exc:
            if exc.kind == "bad-request" and "unknown op" in str(exc):
                return False  # an older agent: it keeps no history of submits from elsewhere
            raise
        return True

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        try:
            return self.request("sweep", part=part, **fields)
        except FileRefused as exc:
            if exc.kind == "bad-request" and "unknown op" in str(exc):
                return None  # an older agent: it writes no sweep files
            raise

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                with contextlib.suppress(LinkLost):
                    self._exchange({"op": "bye"}, timeout=5)
                self._end()


# ---------------------------------------------------------------- plain commands, where ntui is not installed

#: ``sh -c`` scripts with fixed text: every value is a positional argument ("$1"...), never read as shell code.
#: read PATH OFFSET LIMIT END: "exists size inode mtime start" on the first line, the bytes (base64) on the second.
_READ_SH = ('if [ ! -e "$1" ]; then echo 0 0 0 0 0; exit 0; fi; '
            'set -- "$1" "$2" "$3" "$4" $(stat -L -c "%s %i %Y" -- "$1") || exit 3; '
            'if [ "$4" = end ]; then if [ "$5" -gt "$2" ]; then s=$(($5 - $2)); else s=0; fi; else s=$2; fi; '
            'echo 1 "$5" "$6" "$7" "$s"; tail -c +$((s + 1)) -- "$1" | head -c "$3" | base64 -w0; echo')
#: stat PATH: "exists size mtime inode device type".
_STAT_SH = ('if [ ! -e "$1" ]; then echo 0; exit 0; fi; stat -L -c "1 %s %Y %i %d %F" -- "$1"')
#: list DIR: one entry per NUL: "type size mtime name".
_LIST_SH = 'find -L "$1" -mindepth 1 -maxdepth 1 -printf "%y %s %T@ %f\\0"'


class CommandFiles:
    """The cluster's files through plain commands over the ssh runner, one channel each (see the module's
    docstring); ``why``: why the agent is not used (said in :attr:`note`)."""

    live = False
    python: str | None = None
    py_spy: str | None = None

    def __init__(self, runner: CommandRunner, *, name: str = "the cluster", why: str | None = None,
                 timeout: float = 60.0) -> None:
        self.runner = runner
        self.name = name
        self.timeout = timeout
        self.note: str | None = (
            f"{why + ': ' if why else ''}reading {name}'s files with plain commands (one ssh channel per read): no "
            "live follow (logs are polled), no history of that cluster (its records are read by `ntui agent`, which "
            "needs ntui installed there)")

    def _sh(self, script: str, path: str, *args: str) -> str:
        if path.startswith("-"):  # never an option of find, whatever it holds
            path = f"./{path}"
        res = self.runner.run(["sh", "-c", script, "ntui", path, *args], timeout=self.timeout)
        if res.returncode != 0:
            said = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
            kind = "denied" if "permission denied" in said.lower() else "failed"
            raise FileRefused(kind, f"{self.name}: {said}")
        return res.stdout

    def stat(self, path: str) -> FileStat:
        words = self._sh(_STAT_SH, path).split(maxsplit=5)
        if not words or words[0] != "1" or len(words) < 6:
            return FileStat(exists=False)
        try:
            return FileStat(exists=True, size=int(words[1]), mtime=float(words[2]), inode=int(words[3]),
                            device=int(words[4]), is_dir=words[5].strip() == "directory")
        except ValueError:
            raise FileRefused("failed", f"{self.name}: stat said {' '.join(words)!r}") from None

    def read(self, path: str, offset: int, limit: int = MAX_CHUNK, *, from_end: bool = False) -> Chunk:
        if offset < 0 or limit < 0:
            raise ValueError("offset and limit are >= 0")
        out = self._sh(_READ_SH, path, str(offset), str(min(limit, MAX_CHUNK)), "end" if from_end else "start")
        head, _, body = out.partition("\n")
        words = head.split()
        try:
            exists, size, inode, mtime, start = (int(words[0]), int(words[1]), int(words[2]), float(words[3]),
                                                 int(words[4]))
            data = base64.b64decode(body.strip(), validate=True)
        except (ValueError, IndexError):
            raise FileRefused("failed", f"{self.name}: cannot read {path} with plain commands") from None
        if not exists:
            return Chunk(exists=False, offset=offset, data=b"", size=0)
        return Chunk(exists=True, offset=start, data=data, size=max(size, start + len(data)), inode=inode,
                     mtime=mtime)

    def follow(self, path: str, offset: int, *, inode: int = 0, wait: float = 5.0, limit: int = MAX_CHUNK
               ) -> Chunk:
        """One read: plain commands cannot wait for a file to change (the caller polls)."""
        return self.read(path, offset, limit)

    def cat(self, path: str, limit: int = MAX_CAT) -> Chunk:
        cap = min(limit, MAX_CAT)
        chunk = self.read(path, 0, min(cap + 1, MAX_CHUNK))
        parts = [chunk.data]
        while chunk.exists and chunk.data and sum(map(len, parts)) <= cap and chunk.end < chunk.size:
            chunk = self.read(path, chunk.end, min(cap + 1 - sum(map(len, parts)), MAX_CHUNK))
            parts.append(chunk.data)
        data = b"".join(parts)
        if len(data) > cap:
            raise FileRefused("too-big", f"{self.name}: {path}: longer than {cap} bytes: read it in chunks")
        return Chunk(exists=chunk.exists, offset=0, data=data, size=len(data), inode=chunk.inode, mtime=chunk.mtime)

    def listdir(self, path: str) -> list[Entry]:
        out: list[Entry] = []
        for item in self._sh(_LIST_SH, path).split("\0"):
            words = item.split(" ", 3)
            if len(words) != 4:
                continue
            kind = {"f": "f", "d": "d", "l": "l"}.get(words[0], "o")
            try:
                out.append(Entry(name=words[3], kind=kind, size=int(words[1]), mtime=float(words[2])))
            except ValueError:
                continue
        return sorted(out, key=lambda e: e.name)

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        return None  # the records are read by the agent only (see note)

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        raise FileRefused("no-agent", f"{self.name}: its history is read by `ntui agent`, which needs ntui "
                                      "installed there")

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        return False  # ... and written by it only

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        return None  # a sweep's files are written by the agent only

    def close(self) -> None:
        pass


def ssh_runner_of(runner: CommandRunner) -> SshRunner | None:
    """The :class:`SshRunner` under ``runner`` (a :class:`~ntui.core.slurm.runner.TimeoutRunner` holds it as
    ``inner``), or None: Slurm here."""
    seen = 0
    current: object = runner
    while seen < 8:
        if isinstance(current, SshRunner):
            return current
        current = getattr(current, "inner", None)
        if current is None:
            return None
        seen += 1
    return None


def agent_command(configured: Sequence[str] | None = None,
                  environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """How the agent is started on a cluster: ``$NTUI_REMOTE_AGENT``, else the cluster's ``agent:`` setting, else
    ntui's own command (split into words, never given to a shell)."""
    words = shlex.split((os.environ if environ is None else environ).get(AGENT_ENV, ""))
    if words:
        return tuple(words)
    return tuple(configured) if configured else AGENT_COMMAND


def connect(runner: CommandRunner, *, command: Sequence[str] = AGENT_COMMAND,
            on_link: Callable[[str], None] | None = None, link: LinkWatch | None = None) -> ClusterFiles:
    """The files of the cluster ``runner`` reaches: :class:`LocalFiles` when it runs Slurm here; the agent over
    ssh; else (no ntui there, or another protocol) :class:`CommandFiles`, whose ``note`` says why and what it
    cannot do. ssh's own failures (the login refused, the host unreachable) raise
    :class:`~ntui.core.slurm.ssh.SshError` in words. ``link``: the cluster's link state, which the agent's requests
    feed (:mod:`ntui.core.remote.link`)."""
    ssh = ssh_runner_of(runner)
    if ssh is None:
        return LocalFiles()
    files = AgentFiles(ssh, command=command, on_link=on_link, link=link)
    try:
        files.request("hello", version=VERSION)
    except AgentUnavailable as exc:
        return CommandFiles(runner, name=ssh.name, why=exc.message)
    return files


def follows_journals(files: ClusterFiles) -> bool:
    """Whether a cluster's journals are read through ``files`` on the view's journal tick: its agent's (one request
    per journal per tick on its one channel). Plain commands (a channel each) and this machine's own files (the
    local queue's journals) are not."""
    return files.live and not isinstance(files, LocalFiles)


def journal_read_at(files: ClusterFiles) -> Callable[[str, int, int], bytes | None]:
    """A journal's bytes from an offset through ``files`` (``read``, in every agent of protocol version 1): b"" when
    nothing more is there, None when the file is not there or the cluster refuses it (permission denied, not a
    regular file). The link's failure raises (:class:`~ntui.core.slurm.ssh.SshError`)."""

    def read_at(path: str, offset: int, limit: int) -> bytes | None:
        try:
            chunk = files.read(path, offset, limit)
        except FileRefused:
            return None
        return chunk.data if chunk.exists else None

    return read_at


def send_manifest(files: ClusterFiles, log_dir: str, stem: str, data: bytes) -> str | None:
    """Write a sweep's manifest (``data``) in ``log_dir`` on the cluster through its agent, in parts of at most
    :data:`~ntui.core.remote.protocol.MAX_SWEEP_PART` bytes: its path there (named by its digest, as
    :func:`~ntui.core.jobfiles.manifest.manifest_path` names it on a login node); None where no agent writes it
    (plain commands, an older agent). :class:`FileRefused` when the agent refuses it (in words)."""
    from ntui.core.jobfiles.manifest import digest_of

    digest = digest_of(data)
    offset = 0
    while True:
        part = data[offset:offset + MAX_SWEEP_PART]
        answer = files.sweep("manifest", log_dir=log_dir, log_stem=stem, digest=digest, offset=offset,
                             total=len(data), data=base64.b64encode(part).decode("ascii"))
        if answer is None:
            return None
        path = answer.get("path")
        if answer.get("done") and isinstance(path, str):
            return path
        offset += len(part)
        if offset >= len(data):
            raise FileRefused("failed", f"the manifest's {len(data)} bytes were sent, but the agent did not say it "
                                        "was written")
