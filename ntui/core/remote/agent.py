"""``ntui agent --stdio``: the cluster's side of ntui over ssh, serving the files of the login node's filesystems.

Started once per laptop session over the ssh master (one channel), it answers the requests of
:mod:`ntui.core.remote.protocol` one by one: stats, bounded reads from an offset (a log's tail), follows that wait
for a file to grow (polling: inotify does not fire on Lustre or NFS), whole small files (records, journals),
directory listings, the cluster's history entry of a job and its history's newest entries; and it writes the facts
of a submission made from another machine to the cluster's history (``record``: the same one-writer-per-file
records ``ntui submit`` writes on the login node) and a sweep's files (``sweep``: its manifest, sent in parts, and
its job file, where the tasks and ``ntui sweep`` read them). It works with the rights of the user ssh logged in
as and runs no command: a path or any other value only ever reaches ``open``, ``stat``, ``scandir``, the records'
own writer or the sweep files' (whose names it makes itself from a stem, a digest and a job id it checks).

Nothing but the answers goes to standard output; the agent ends at ``bye`` or at the end of its input (the channel
closed).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from ntui import __version__
from ntui.core.remote.protocol import (
    MAX_CAT,
    MAX_CHUNK,
    MAX_ENTRIES,
    MAX_REQUEST,
    MAX_SWEEP_PART,
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

__all__ = ["FOLLOW_POLL_S", "AgentError", "handle", "history_entries", "history_record", "serve", "sweep_file"]

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


def history_job(job_id: str, cluster: str | None, state: Path | None = None) -> dict[str, Any] | None:
    """The cluster's history entry of ``job_id`` (as :class:`~ntui.core.records.history.HistoryEntry`'s fields),
    and the clusters of the other entries with this id; read from the records under this login's home (``state``:
    that state directory instead of the environment's)."""
    from ntui.core.records.history import History

    warnings: list[str] = []
    history = History(state, warn=warnings.append, cluster=cluster)
    try:
        entry = history.get(job_id, cluster)
        if entry is None:
            return None
        return {"entry": asdict(entry), "others": list(history.others(entry)), "warnings": warnings}
    finally:
        history.close()


def history_entries(limit: int | None, state: Path | None = None) -> dict[str, Any]:
    """The cluster's history, newest first: at most ``limit`` entries (None: all, at most
    :data:`~ntui.core.remote.protocol.MAX_ENTRIES`), as :class:`~ntui.core.records.history.HistoryEntry`'s fields;
    how many more were left out, and the history's warnings."""
    from ntui.core.records.history import History

    if limit is not None and limit < 0:
        raise AgentError("bad-request", "a limit is >= 0")
    cap = MAX_ENTRIES if limit is None else min(limit, MAX_ENTRIES)
    warnings: list[str] = []
    history = History(state, warn=warnings.append)
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


def history_record(request: dict[str, Any], state: Path | None = None) -> dict[str, Any]:
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
    history = History(state, warn=warnings.append)
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


_DIGEST_RE = re.compile(r"[0-9a-f]{16}")
_JOB_ID_RE = re.compile(r"[0-9]+")

#: A manifest's staging file (``.NAME.part``) that an upload cut between its parts left behind (the link dropped,
#: the client gave up) is removed by the next upload of a manifest of the same stem in that directory once nothing
#: has written to it for this long (seconds): the parts of one upload follow each other within a request's time, so
#: an older one is no upload's any more.
STAGING_STALE_S = 600.0


def _staging(log_dir: str, name: str) -> str:
    """The hidden file a manifest's parts are gathered in, beside where it goes."""
    return os.path.join(log_dir, f".{name}.part")


def _drop_staging(path: str) -> None:
    """Remove a staging file an upload will not finish (gone already: nothing to do)."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def _drop_stale_staging(log_dir: str, stem: str, keep: str, now: float) -> None:
    """Remove the staging files of ``stem``'s manifests in ``log_dir`` that cut uploads left (nothing written to them
    for :data:`STAGING_STALE_S`), but ``keep`` (the one this upload writes)."""
    from ntui.core.jobfiles.manifest import manifest_name

    ours = re.compile(re.escape(f".{manifest_name(stem, '@')}.part").replace("@", "[0-9a-f]{16}"))
    try:
        entries = list(os.scandir(log_dir))
    except OSError:
        return
    for e in entries:
        if e.name == keep or not ours.fullmatch(e.name):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and now - st.st_mtime >= STAGING_STALE_S:
            _drop_staging(e.path)


def _sweep_dir(request: dict[str, Any]) -> tuple[str, str]:
    """The sweep's log dir (made when missing: Slurm does not make it) and its file stem (one name, no ``/``)."""
    log_dir = os.path.expanduser(field(request, "log_dir", str))
    stem = field(request, "log_stem", str)
    if not log_dir or "\0" in log_dir:
        raise AgentError("bad-request", "a log dir is a non-empty path without NUL")
    if not stem or "/" in stem or "\0" in stem or stem.startswith("."):
        raise AgentError("bad-request", f"a log stem is one file name: {stem!r}")
    try:
        os.makedirs(log_dir, exist_ok=True)
    except OSError as exc:
        raise AgentError("failed", f"the log directory {log_dir} cannot be made there: {exc.strerror or exc} "
                                   "(paths in a preset are resolved where ntui runs: write the cluster's own "
                                   "path in logs.dir)") from None
    return log_dir, stem


def _digest_of_file(path: str, size: int) -> str | None:
    """The manifest digest of the file at ``path`` when it holds ``size`` bytes, else None."""
    from ntui.core.jobfiles.manifest import digest_of

    try:
        with open(path, "rb") as fh:
            data = fh.read(size + 1)
    except OSError:
        return None
    return digest_of(data) if len(data) == size else None


def sweep_file(request: dict[str, Any]) -> dict[str, Any]:
    """A sweep's file written on this side (``ntui submit`` over ssh): ``part`` ``manifest``, one part of its
    manifest (``data`` at ``offset`` of ``total`` bytes; parts come in order from 0 into a staging file beside it,
    so a part asked again over a reopened channel lands where it did); the last part's whole is checked (its
    digest, its format) and then put in place atomically, as ``ntui submit`` writes it on the login node. A
    manifest already there with the same digest is kept, and said ``done`` at the first part. An upload that fails
    here removes its staging file (it is sent again from 0); one cut between its parts (the link dropped) leaves it,
    and the next upload of a manifest of the same stem removes it once stale (:data:`STAGING_STALE_S`). ``part``
    ``job``: the sweep's job file once sbatch gave its id."""
    from ntui.core.jobfiles.manifest import (
        MAX_MANIFEST_BYTES,
        ManifestError,
        SweepJob,
        digest_of,
        job_file_path,
        manifest_name,
        parse_indices,
        parse_manifest,
        write_job_file,
        write_manifest,
    )

    part = field(request, "part", str)
    if part not in ("manifest", "job"):
        raise AgentError("bad-request", f"unknown part {part!r} (manifest, job)")
    log_dir, stem = _sweep_dir(request)
    if part == "job":
        job_id = field(request, "job_id", str)
        manifest = field(request, "manifest", str)
        if not _JOB_ID_RE.fullmatch(job_id):
            raise AgentError("bad-request", f"a sweep's job id is a number: {job_id!r}")
        if "/" in manifest or not manifest.startswith(f"{stem}-sweep-"):
            raise AgentError("bad-request", f"not a manifest of {stem}: {manifest!r}")
        try:
            indices = parse_indices(field(request, "indices", str))
        except ValueError as exc:
            raise AgentError("bad-request", f"indices: {exc}") from None
        path = job_file_path(log_dir, stem, job_id)
        try:
            write_job_file(path, SweepJob(manifest, field(request, "tasks", int), indices,
                                          field(request, "parallel", int, required=False),
                                          field(request, "resubmit_of", str, required=False)))
        except OSError as exc:
            raise _os_error(exc, path) from None
        return {"path": path}
    digest = field(request, "digest", str)
    offset = field(request, "offset", int)
    total = field(request, "total", int)
    if not _DIGEST_RE.fullmatch(digest):
        raise AgentError("bad-request", "a manifest's digest is 16 hex digits")
    if not 0 < total <= MAX_MANIFEST_BYTES:
        raise AgentError("too-big" if total > 0 else "bad-request", f"a manifest of {total} bytes")
    import base64

    try:
        data = base64.b64decode(field(request, "data", str), validate=True)
    except ValueError:
        raise AgentError("bad-request", "field 'data': not base64") from None
    if len(data) > MAX_SWEEP_PART or offset < 0 or offset + len(data) > total:
        raise AgentError("bad-request", f"a part of {len(data)} bytes at {offset} of {total}")
    name = manifest_name(stem, digest)
    path = os.path.join(log_dir, name)
    staging = _staging(log_dir, name)
    if offset == 0:  # a new upload: what cut ones of this stem left there goes
        _drop_stale_staging(log_dir, stem, os.path.basename(staging), time.time())
    if (offset == 0 or offset + len(data) == total) and _digest_of_file(path, total) == digest:
        return {"path": path, "done": True}  # already there (the last part asked again: its answer was lost)
    try:
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if offset == 0 else 0), 0o600)
        try:
            if os.fstat(fd).st_size < offset:
                raise AgentError("bad-request", f"{staging} holds fewer than {offset} bytes: send from 0 again")
            os.pwrite(fd, data, offset)
            os.ftruncate(fd, offset + len(data))
        finally:
            os.close(fd)
        if offset + len(data) < total:
            return {"path": path, "done": False}
        with open(staging, "rb") as fh:
            whole = fh.read(total + 1)
    except OSError as exc:
        _drop_staging(staging)  # this upload cannot finish: it is sent again from 0
        raise _os_error(exc, staging) from None
    except AgentError:
        _drop_staging(staging)
        raise
    _drop_staging(staging)
    if len(whole) != total or digest_of(whole) != digest:
        raise AgentError("bad-request", f"the manifest's {len(whole)} bytes there are not the {total} sent "
                                        f"(digest {digest}): send it again")
    try:
        parse_manifest(whole)
    except ManifestError as exc:
        raise AgentError("bad-request", f"not a sweep manifest: {exc}") from None
    try:
        write_manifest(path, whole)
    except OSError as exc:
        raise _os_error(exc, path) from None
    return {"path": path, "done": True}


def handle(request: dict[str, Any], state: Path | None = None) -> dict[str, Any]:
    """The answer's fields for one request (``ok`` and ``id`` are added by :func:`serve`); :class:`AgentError`
    or :class:`ProtocolError` when it cannot be answered. ``state``: the history's state directory (default: the
    environment's, :func:`~ntui.core.paths.state_dir`), given where several agents share one process."""
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
        return history_record(request, state)
    if op == "sweep":
        return sweep_file(request)
    if op == "job":
        job_id = field(request, "job_id", str)
        cluster = field(request, "cluster", str, required=False)
        return {"job": history_job(job_id, cluster, state)}
    if op == "history":
        return history_entries(field(request, "limit", int, required=False), state)
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


def serve(inp: IO[bytes], out: IO[bytes], *, state: Path | None = None) -> int:
    """Answer requests from ``inp`` on ``out`` until ``bye`` or the end of input (``state``: as :func:`handle`).
    Returns 0."""
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
            answer: dict[str, Any] = {"id": rid, "ok": True, **handle(request, state)}
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
