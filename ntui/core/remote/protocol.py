"""The agent's protocol: JSON lines on one ssh channel (``ntui agent --stdio`` on the cluster's login node).

Each request is one line, a JSON object ``{"id": N, "op": OP, ...}``; each answer is one line ``{"id": N, "ok":
true, ...}`` or ``{"id": N, "ok": false, "error": {"kind": KIND, "message": WORDS}}``, in the order the requests
came. The first request is ``hello`` with the client's :data:`VERSION`; an agent that speaks another one answers
``kind: "version"`` and the client says which side to upgrade. An operation added since (``history``) is known by
its answer: an older agent of the same version answers ``bad-request`` "unknown op", which the client says in words
(update ntui there; ``sweep`` is the latest); ``hello``'s answer may carry fields an older agent lacks
(``python``, ``py_spy``: where the agent's interpreter and py-spy are on the cluster).

The operations (every path is a value in a JSON string, never a word of a command line):

========  =====================================================  ================================================
op        arguments                                              answer
========  =====================================================  ================================================
hello     version                                                version, ntui (its package version), pid,
                                                                 python, py_spy (paths on the cluster)
stat      path                                                   the file's :class:`FileStat` fields
read      path, offset, limit; from_end (offset counted back)    a :class:`Chunk`: data (base64), offset, size...
follow    path, offset, limit, wait (seconds)                    as read, once the file has grown past
                                                                 ``offset``, changed (rotated, cut) or ``wait``
                                                                 passed
cat       path, limit                                            a whole small file (a record, a journal)
list      path                                                   entries: name, kind (f, d, l, o), size, mtime
job       job_id, cluster (or null)                              entry: the cluster's history entry, or null
history   limit (or null: every entry)                           entries: the cluster's history, newest first
                                                                 (at most :data:`MAX_ENTRIES`), left_out
record    fact (intent, submitted, failed), token, its fields    warnings (written to the cluster's history)
          (an intent's resubmit_of: optional, ignored by an
          older agent)
sweep     part manifest: log_dir, log_stem, digest, offset,   path (on the cluster), done (the whole manifest
          total, data (base64, at most :data:`MAX_SWEEP_PART`    is there, checked against its digest)
          bytes): one part of a sweep's manifest, sent in
          order from offset 0
          part job: log_dir, log_stem, job_id, manifest (its     path (the sweep's job file, written)
          name), tasks, indices, parallel, resubmit_of
bye                                                              the agent ends
========  =====================================================  ================================================

Bounds: a chunk is at most :data:`MAX_CHUNK` bytes (a bigger ``limit`` is cut to it), a ``cat`` at most
:data:`MAX_CAT`, a listing :data:`MAX_ENTRIES` entries, a wait :data:`MAX_WAIT_S`; a request line longer than
:data:`MAX_REQUEST` is refused unread.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_CAT",
    "MAX_CHUNK",
    "MAX_ENTRIES",
    "MAX_REQUEST",
    "MAX_SWEEP_PART",
    "MAX_WAIT_S",
    "OPS",
    "VERSION",
    "Chunk",
    "Entry",
    "FileStat",
    "ProtocolError",
    "decode_line",
    "encode_line",
]

#: The protocol's version: an agent and a client of different versions refuse each other at ``hello``.
VERSION = 1
#: The most bytes one ``read`` or ``follow`` answers with (base64 makes the line about 4/3 of it).
MAX_CHUNK = 256 * 1024
#: The most bytes one ``cat`` answers with (records and journals are small; a longer file is refused).
MAX_CAT = 4 * 1024 * 1024
#: The most entries one ``list`` answers with (the rest are said to be left out).
MAX_ENTRIES = 10_000
#: The longest a ``follow`` waits for a file to change before answering that it did not.
MAX_WAIT_S = 30.0
#: The longest request line an agent reads (a path is at most 4096 bytes on Linux).
MAX_REQUEST = 64 * 1024
#: The most bytes of a sweep's manifest one ``sweep`` request carries (base64 makes it 4/3 of it: the request
#: stays under :data:`MAX_REQUEST` with its paths).
MAX_SWEEP_PART = 32 * 1024

OPS = frozenset({"hello", "stat", "read", "follow", "cat", "list", "job", "history", "record", "sweep", "bye"})


class ProtocolError(ValueError):
    """A line that is not one of the protocol's (not JSON, not an object, a field of the wrong type)."""


def encode_line(message: dict[str, Any]) -> bytes:
    """One message as one line (compact JSON, ASCII only, ending in a newline)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n"


def decode_line(line: bytes) -> dict[str, Any]:
    """The message of one line; :class:`ProtocolError` for anything else."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"not a JSON line: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolError("a message is a JSON object")
    return value


def field(message: dict[str, Any], name: str, kind: type | tuple[type, ...], *, default: Any = None,
          required: bool = True) -> Any:
    """``message[name]`` of type ``kind`` (``bool`` is never taken for ``int``); :class:`ProtocolError` otherwise."""
    if name not in message or message[name] is None:
        if required:
            raise ProtocolError(f"missing field {name!r}")
        return default
    value = message[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ProtocolError(f"field {name!r}: expected {'/'.join(k.__name__ for k in kinds)}, got a boolean")
    if not isinstance(value, kinds):
        raise ProtocolError(f"field {name!r}: expected {'/'.join(k.__name__ for k in kinds)}, "
                            f"got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class FileStat:
    """What ``stat`` says of a path (``exists`` False: nothing there; the other fields are then 0)."""

    exists: bool
    size: int = 0
    mtime: float = 0.0
    inode: int = 0
    device: int = 0
    is_dir: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"exists": self.exists, "size": self.size, "mtime": self.mtime, "inode": self.inode,
                "device": self.device, "is_dir": self.is_dir}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FileStat:
        return cls(exists=bool(field(d, "exists", bool)), size=int(field(d, "size", int, default=0, required=False)),
                   mtime=float(field(d, "mtime", (int, float), default=0.0, required=False)),
                   inode=int(field(d, "inode", int, default=0, required=False)),
                   device=int(field(d, "device", int, default=0, required=False)),
                   is_dir=bool(field(d, "is_dir", bool, default=False, required=False)))


@dataclass(frozen=True)
class Chunk:
    """Bytes of a file from ``offset`` (``data``), with the file as it was when they were read: its ``size``,
    ``inode`` and ``mtime``; ``exists`` False: no such file (``data`` empty)."""

    exists: bool
    offset: int
    data: bytes
    size: int
    inode: int = 0
    mtime: float = 0.0

    @property
    def end(self) -> int:
        """The offset after the data: where the next read starts."""
        return self.offset + len(self.data)

    def to_dict(self) -> dict[str, Any]:
        return {"exists": self.exists, "offset": self.offset, "data": base64.b64encode(self.data).decode("ascii"),
                "size": self.size, "inode": self.inode, "mtime": self.mtime}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chunk:
        try:
            data = base64.b64decode(field(d, "data", str), validate=True)
        except ValueError:
            raise ProtocolError("field 'data': not base64") from None
        return cls(exists=bool(field(d, "exists", bool)), offset=int(field(d, "offset", int)), data=data,
                   size=int(field(d, "size", int)), inode=int(field(d, "inode", int, default=0, required=False)),
                   mtime=float(field(d, "mtime", (int, float), default=0.0, required=False)))


@dataclass(frozen=True)
class Entry:
    """One entry of a directory: ``kind`` f (file), d (directory), l (link), o (other)."""

    name: str
    kind: str
    size: int
    mtime: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "size": self.size, "mtime": self.mtime}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Entry:
        return cls(name=str(field(d, "name", str)), kind=str(field(d, "kind", str)), size=int(field(d, "size", int)),
                   mtime=float(field(d, "mtime", (int, float))))
