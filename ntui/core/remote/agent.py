"""``ntui agent --stdio``: the cluster's side of ntui over ssh, serving the files of the login node's filesystems.

Started once per laptop session over the ssh master (one channel), it answers the requests of
:mod:`ntui.core.remote.protocol` one by one: stats, bounded reads from an offset (a log's tail), follows that wait
for a file to grow (polling: inotify does not fire on Lustre or NFS), whole small files (records, journals),
directory listings, the cluster's history entry of a job and its history's newest entries; and it writes the facts
of a submission made from another machine to the cluster's history (``record``: the same one-writer-per-file
records ``ntui submit`` writes on the login node). It works with the rights of the user ssh logged in as and runs
no command: a path or any other value only ever reaches ``open``, ``stat``, ``scandir`` or the records' own writer.

Nothing but the answers goes to standard output; the agent ends at ``bye`` or at the end of its input (the channel
closed).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

from ntui import __version__
from ntui.core.remote.protocol import (
    MAX_CAT,
    MAX_CHUNK,
    MAX_ENTRIES,
    MAX_REQUEST,
    MAX_WAIT_S,
    OPS,
    VERSION,
    Chunk,
    Entry,
    FileStat,
    ProtocolError,
    decode_line,
    encode_line,
    field,
)

__all__ = ["FOLLOW_POLL_S", "AgentError", "handle", "history_entries", "history_record", "serve"]

#: How often a follow looks at its file while it waits.
FOLLOW_POLL_S = 0.25


class AgentError(Exception):
    """A request the agent cannot answer: ``kind`` (``not-found``, ``denied``, ``not-a-file``, ``too-big``,
    ``bad-request``, ``version``, ``failed``) and words."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _path(request: dict[str, Any]) -> str:
    value: str = field(request, "path", str)
    if not value or "\0" in value:
        raise AgentError("bad-request", "a path is a non-empty string without NUL")
    return os.path.expanduser(value)


def _os_error(exc: OSError, path: str) -> AgentError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return AgentError("not-found", f"{path}: no such file or directory")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return AgentError("denied", f"{path}: permission denied")
    return AgentError("failed", f"{path}: {exc.strerror or exc}")


def file_stat(path: str) -> FileStat:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return FileStat(exists=False)
    except OSError as exc:
        raise _os_error(exc, path) from None
    return FileStat(exists=True, size=st.st_size, mtime=st.st_mtime, inode=st.st_ino, device=st.st_dev,
                    is_dir=stat.S_ISDIR(st.st_mode))


def read_chunk(path: str, offset: int, limit: int, *, from_end: bool = False) -> Chunk:
    """At most ``limit`` bytes (and :data:`MAX_CHUNK`) from ``offset`` (``from_end``: that many bytes before the
    end, the file's start at most). A file shorter than ``offset`` answers no data and its size: the reader sees
    it was cut."""
    if offset < 0 or limit < 0:
        raise AgentError("bad-request", "offset and limit are >= 0")
    limit = min(limit, MAX_CHUNK)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Chunk(exists=False, offset=offset, data=b"", size=0)
    except OSError as exc:
        raise _os_error(exc, path) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise AgentError("not-a-file", f"{path}: a directory")
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device: reading could block or never end
            raise AgentError("not-a-file", f"{path}: not a regular file")
        start = max(0, st.st_size - offset) if from_end else offset
        data = os.pread(fd, limit, start) if start < st.st_size else b""
    except OSError as exc:
        raise _os_error(exc, path) from None
    finally:
        os.close(fd)
    return Chunk(exists=True, offset=start, data=data, size=st.st_size, inode=st.st_ino, mtime=st.st_mtime)


def follow_chunk(path: str, offset: int, limit: int, *, inode: int, wait_s: float,
                 sleep: Callable[[float], None] = time.sleep) -> Chunk:
    """As :func:`read_chunk` from ``offset``, once there is something to say: the file grew past ``offset``, is
    shorter than it (cut), is another file than ``inode`` (0: any), appeared or vanished; or ``wait_s`` passed
    (no data)."""
    deadline = time.monotonic() + max(0.0, min(wait_s, MAX_WAIT_S))
    while True:
        chunk = read_chunk(path, offset, limit)
        changed = (not chunk.exists and inode != 0) or (chunk.exists and inode != 0 and chunk.inode != inode)
        if chunk.data or changed or (chunk.exists and chunk.size < offset):
            return chunk
        if time.monotonic() >= deadline:
            return chunk
        sleep(min(FOLLOW_POLL_S, max(0.0, deadline - time.monotonic())))


def cat(path: str, limit: int) -> Chunk:
    """A whole small file (at most ``limit`` and :data:`MAX_CAT` bytes; a longer one is refused: ``too-big``)."""
    cap = min(max(0, limit), MAX_CAT)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise AgentError("not-a-file", f"{path}: not a regular file")
            data = f.read(cap + 1)
    except FileNotFoundError:
        return Chunk(exists=False, offset=0, data=b"", size=0)
    except OSError as exc:
        raise _os_error(exc, path) from None
    if len(data) > cap:
        raise AgentError("too-big", f"{path}: longer than {cap} bytes: read it in chunks")
    return Chunk(exists=True, offset=0, data=data, size=len(data), inode=st.st_ino, mtime=st.st_mtime)


def list_dir(path: str) -> tuple[list[Entry], int]:
    """The entries of a directory, by name (at most :data:`MAX_ENTRIES`), and how many more were left out."""
    out: list[Entry] = []
    total = 0
    try:
        with os.scandir(path) as it:
            for e in it:
                total += 1
                if len(out) >= MAX_ENTRIES:
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone since it was listed
                kind = ("l" if stat.S_ISLNK(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else
                        "f" if stat.S_ISREG(st.st_mode) else "o")
                out.append(Entry(name=e.name, kind=kind, size=st.st_size, mtime=st.st_mtime))
    except OSError as exc:
        raise _os_error(exc, path) from None
    out.sort(key=lambda e: e.name)
    return out, total - len(out)


def history_job(job_id: str, cluster: str | None) -> dict[str, Any] | None:
    """The cluster's history entry of ``job_id`` (as :class:`~ntui.core.records.history.HistoryEntry`'s fields),
    and the clusters of the other entries with this id; read from the records under this login's home."""
    from ntui.core.records.history import History

    warnings: list[str] = []
    history = History(warn=warnings.append, cluster=cluster)
    try:
        entry = history.get(job_id, cluster)
        if entry is None:
            return None
        return {"entry": asdict(entry), "others": list(history.others(entry)), "warnings": warnings}
    finally:
        history.close()


def history_entries(limit: int | None) -> dict[str, Any]:
    """The cluster's history, newest first: at most ``limit`` entries (None: all, at most
    :data:`~ntui.core.remote.protocol.MAX_ENTRIES`), as :class:`~ntui.core.records.history.HistoryEntry`'s fields;
    how many more were left out, and the history's warnings."""
    from ntui.core.records.history import History

    if limit is not None and limit < 0:
        raise AgentError("bad-request", "a limit is >= 0")
    cap = MAX_ENTRIES if limit is None else min(limit, MAX_ENTRIES)
    warnings: list[str] = []
    history = History(warn=warnings.append)
    try:
        found = history.entries(limit=cap + 1)
    finally:
        history.close()
    left_out = max(0, len(found) - cap) if limit is None else 0
    return {"entries": [asdict(e) for e in found[:cap]], "left_out": left_out, "warnings": warnings}


def _py_spy() -> str | None:
    """The py-spy beside the agent's interpreter, else on its PATH (what ``ntui stacks`` runs on the nodes)."""
    beside = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("py-spy")


_TOKEN_RE = re.compile(r"[0-9a-f]{32}")


def history_record(request: dict[str, Any]) -> dict[str, Any]:
    """One fact of a submission written to the cluster's history (the one-writer-per-file records under this
    login's home), as ``ntui submit`` on the login node writes it: ``intent`` before sbatch runs, then
    ``submitted`` with the job id (its cluster, when not given, from the slurm.conf the clients here read) or
    ``failed``."""
    from ntui.core.records.history import History
    from ntui.core.slurm.scontrol import cluster_name

    fact = field(request, "fact", str)
    token = field(request, "token", str)
    if not _TOKEN_RE.fullmatch(token):
        raise AgentError("bad-request", "a submission's token is 32 hex digits")
    warnings: list[str] = []
    history = History(warn=warnings.append)
    try:
        if fact == "intent":
            overrides = field(request, "overrides", list)
            if not all(isinstance(o, str) for o in overrides):
                raise AgentError("bad-request", "overrides are strings")
            history.record_intent(
                token=token, preset=field(request, "preset", str),
                preset_path=field(request, "preset_path", str, required=False), overrides=overrides,
                job_name=field(request, "job_name", str), launcher=field(request, "launcher", str),
                nodes=field(request, "nodes", int), world_size=field(request, "world_size", int),
                log_dir=field(request, "log_dir", str), log_stem=field(request, "log_stem", str),
                script=field(request, "script", str),
                resubmit_of=field(request, "resubmit_of", str, required=False))
        elif fact == "submitted":
            cluster = field(request, "cluster", str, required=False) or cluster_name()
            history.record_submitted(token, field(request, "job_id", str), cluster, None)
        elif fact == "failed":
            history.record_failed(token)
        else:
            raise AgentError("bad-request", f"unknown fact {fact!r} (intent, submitted, failed)")
    except OSError as exc:
        raise AgentError("failed", f"the history there cannot be written: {exc.strerror or exc}") from None
    finally:
        history.close()
    return {"warnings": warnings}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """The answer's fields for one request (``ok`` and ``id`` are added by :func:`serve`); :class:`AgentError`
    or :class:`ProtocolError` when it cannot be answered."""
    op = field(request, "op", str)
    if op not in OPS:
        raise AgentError("bad-request", f"unknown op {op!r} (this agent knows {', '.join(sorted(OPS))})")
    if op == "hello":
        theirs = field(request, "version", int)
        if theirs != VERSION:
            raise AgentError("version", f"the agent speaks protocol {VERSION} (ntui {__version__}), the client "
                                        f"{theirs}")
        return {"version": VERSION, "ntui": __version__, "pid": os.getpid(), "python": sys.executable,
                "py_spy": _py_spy()}
    if op == "bye":
        return {}
    if op == "record":
        return history_record(request)
    if op == "job":
        job_id = field(request, "job_id", str)
        cluster = field(request, "cluster", str, required=False)
        return {"job": history_job(job_id, cluster)}
    if op == "history":
        return history_entries(field(request, "limit", int, required=False))
    path = _path(request)
    if op == "stat":
        return file_stat(path).to_dict()
    if op == "list":
        entries, left_out = list_dir(path)
        return {"entries": [e.to_dict() for e in entries], "left_out": left_out}
    limit = field(request, "limit", int, default=MAX_CHUNK, required=False)
    if op == "cat":
        return cat(path, limit).to_dict()
    offset = field(request, "offset", int, default=0, required=False)
    if op == "read":
        return read_chunk(path, offset, limit, from_end=bool(field(request, "from_end", bool, default=False,
                                                                    required=False))).to_dict()
    # follow
    wait = float(field(request, "wait", (int, float), default=0.0, required=False))
    inode = field(request, "inode", int, default=0, required=False)
    return follow_chunk(path, offset, limit, inode=inode, wait_s=wait).to_dict()


def _read_request(inp: IO[bytes]) -> bytes | None:
    """One request line (None at the end of input); a line longer than :data:`MAX_REQUEST` is skipped to its end
    and answered as a bad request (an empty line stands for it)."""
    line = inp.readline(MAX_REQUEST + 1)
    if not line:
        return None
    if len(line) > MAX_REQUEST and not line.endswith(b"\n"):
        while True:
            rest = inp.readline(MAX_REQUEST)
            if not rest or rest.endswith(b"\n"):
                break
        return b""
    return line


def serve(inp: IO[bytes], out: IO[bytes]) -> int:
    """Answer requests from ``inp`` on ``out`` until ``bye`` or the end of input. Returns 0."""
    while True:
        line = _read_request(inp)
        if line is None:
            return 0
        if not line.strip():
            if line == b"":
                out.write(encode_line({"id": None, "ok": False, "error": {
                    "kind": "bad-request", "message": f"a request line is at most {MAX_REQUEST} bytes"}}))
                out.flush()
            continue
        rid: Any = None
        op = None
        try:
            request = decode_line(line)
            rid = request.get("id")
            if not isinstance(rid, int) or isinstance(rid, bool):
                rid = None
            op = request.get("op")
            answer: dict[str, Any] = {"id": rid, "ok": True, **handle(request)}
        except AgentError as exc:
            answer = {"id": rid, "ok": False, "error": {"kind": exc.kind, "message": exc.message}}
        except ProtocolError as exc:
            answer = {"id": rid, "ok": False, "error": {"kind": "bad-request", "message": str(exc)}}
        except Exception as exc:  # noqa: BLE001 - one request's failure never ends the agent
            answer = {"id": rid, "ok": False, "error": {"kind": "failed", "message": f"{type(exc).__name__}: {exc}"}}
        out.write(encode_line(answer))
        out.flush()
        if op == "bye":
            return 0
