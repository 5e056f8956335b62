"""The detector table: what a line outside a traceback says, one row per form of failure line.

Each row (:class:`Detector`) names a form, the finding kinds it gives, how it is found and what it reads off the
line (a :class:`Hit`); :class:`~ntui.core.logs.rankdetector.RankDetector` tries them in order. A new form is one
row of :data:`DETECTORS` (and a test).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ntui.core.logs.lineforms import (
    DIST_TIMEOUT_RE,
    ELASTIC_FAILED_RE,
    FATAL_RE,
    MPI_OWN_SIGNAL_RE,
    NCCL_ERR_RE,
    NCCL_PEER_RE,
    NCCL_TIMEOUT_RE,
    NOT_FOUND_RE,
    OOM_RE,
    SIG_BANNER_RE,
    SPAWN_EXIT_RE,
    TERMINATE_RE,
    WHAT_RE,
    classify_exception,
    parse_line_time,
)
from ntui.core.logs.signals import is_fault, signal_name, signal_of_word
from ntui.core.slurm.srunlines import CANCELLED, LAUNCH_ERROR, NODE_FAILURE, OOM_KILL, TASK_END, task_ids

__all__ = ["DETECTORS", "LAST_ERROR", "Detector", "DetectorState", "Hit", "is_generic", "spawn_hit"]


class DetectorState(Protocol):
    """What a row may read or set of the log's detector (:class:`~ntui.core.logs.rankdetector.RankDetector`): the
    lines before this one said something of it (Open MPI's box names a rank above its exit code, NCCL's ``Last
    error:`` comes above the cause)."""

    task_is_rank: bool
    pending_rank: int | None
    last_error_next: bool

    @property
    def year(self) -> int | None: ...

    def after_peer(self, prefix_rank: int | None) -> bool: ...


class Hit(NamedTuple):
    """What a detector row read off a line."""

    kind: str
    node: str | None = None
    rank: int | None = None
    task: int | None = None
    signal: str | None = None
    local: int | None = None
    alike: tuple[int, ...] = ()
    line_time: float | None = None
    from_tb: bool = False
    generic: bool = False
    job_level: bool = False  # never taken for a repeat: slurmstepd's JOB-level word, the cause under "Last error:"
    root_cause: bool = False  # the launcher's word that this worker failed first (Open MPI's "first process")
    said: str | None = None  # the telling part of a long line (its error, without the logger's words before it)


@dataclass(frozen=True)
class Detector:
    """One form of failure line: its name, the kinds it gives, how it is found (a compiled pattern's ``match`` or
    ``search``, or any function of the text) and what it reads off the match (None: not a failure after all)."""

    name: str
    kinds: tuple[str, ...]
    find: Callable[[str], re.Match[str] | None]
    hit: Callable[[DetectorState, re.Match[str], str, int | None, str | None], Hit | None]


def _srun_hit(det: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    ids = task_ids(m["tasks"])
    rank = task = None
    if ids:  # "tasks 2-7,9": the first, the others alike
        rank, task = (ids[0], None) if det.task_is_rank else (None, ids[0])
    what = m["what"].lower()
    if "out of memory" in what or "oom" in what:
        return Hit("oom_kill", m["node"], rank, task, alike=ids[1:])
    if "exited with exit code" in what:
        return Hit("srun_exit", m["node"], rank, task, alike=ids[1:])
    sig = signal_of_word(m["what"])  # Aborted, Segmentation fault, Killed (a fault); Terminated, ... (stopped)
    return Hit("rank_signal" if is_fault(sig) else "signal", m["node"], rank, task, sig, alike=ids[1:])


def _cancel_hit(det: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    reason = (m["reason"] or "").upper()
    when = parse_line_time(m["at"].replace("T", " "), year=det.year)
    kind = "time_limit" if "TIME LIMIT" in reason else "node_failure" if "NODE FAIL" in reason else "cancelled"
    return Hit(kind, m["node"], line_time=when, job_level=m["scope"] == "JOB")


def _own_signal(text: str) -> re.Match[str] | None:
    """The rank's own last words before a fault signal killed it (faulthandler, terminate, glog/absl)."""
    return FATAL_RE.match(text) or TERMINATE_RE.match(text) or SIG_BANNER_RE.match(text) \
        or MPI_OWN_SIGNAL_RE.match(text)


def _own_signal_hit(det: DetectorState, m: re.Match[str], text: str, rank: int | None, _l: str | None) -> Hit | None:
    groups = m.groupdict()
    if "what" in groups:
        sig = signal_of_word(groups["what"])
        if sig is None and groups.get("n"):  # Open MPI's report: the number beside the name
            sig = signal_name(-int(groups["n"]))
    elif "sig" in groups:
        sig = groups["sig"]
    else:
        sig = "SIGABRT"  # std::terminate calls abort()
    if not is_fault(sig):
        return None
    after = det.after_peer(rank)  # NCCL's watchdog aborts after its timeout: a consequence
    return Hit("signal" if after else "rank_signal", signal=sig,
               from_tb=not after and text.startswith("Fatal Python error"))


def _exit_code_hit(code: int, local: int | None = None, rank: int | None = None, node: str | None = None) -> Hit:
    """A launcher's report of a worker's exit: a negative code (or 128+N from a shell) is a signal."""
    if code < 0:  # a signal: a fault is the worker's own, a stop its agent's or Slurm's
        sig = signal_name(code)
        return Hit("rank_signal" if is_fault(sig) else "signal", node, rank, signal=sig, local=local)
    return Hit("child_failed", node, rank, local=local)


def _elastic_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    return _exit_code_hit(int(m["code"]), local=int(m["local"]))


def spawn_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    if m["sig"]:
        sig = m["sig"]
        return Hit("rank_signal" if is_fault(sig) else "signal", rank=int(m["rank"]), signal=sig)
    return Hit("child_failed", rank=int(m["rank"]))


def _mpi_signal_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    sig = signal_name(-int(m["sig"]))
    return Hit("rank_signal" if is_fault(sig) else "signal", m["node"], int(m["rank"]), signal=sig)


def _mpi_exit_hit(det: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit | None:
    det.pending_rank = int(m["rank"])  # Open MPI's box: "Process name: [[jobid,1],rank]", its exit code below
    return None


def _mpi_code_hit(det: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit | None:
    rank, det.pending_rank = det.pending_rank, None
    # Open MPI's box names "the first process to do so": the launcher's word on which rank failed first
    return None if rank is None else _exit_code_hit(int(m["code"]), rank=rank)._replace(root_cause=True)


def _kind(kind: str) -> Callable[[DetectorState, re.Match[str], str, int | None, str | None], Hit]:
    def hit(_d: DetectorState, _m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
        return Hit(kind)
    return hit


def _nccl_hit(_d: DetectorState, _m: re.Match[str], text: str, _r: int | None, level: str | None) -> Hit | None:
    if level is None and not re.search(r"error|fail", text, re.IGNORECASE):
        return None  # a ProcessGroupNCCL line that says no error
    return Hit("nccl")


def _last_error_hit(det: DetectorState, _m: re.Match[str], text: str, _r: int | None, _l: str | None) -> Hit | None:
    """The line after NCCL's ``Last error:``: the specific cause under its category (a socket that says the peer
    went away: that peer's failure)."""
    det.last_error_next = False
    if not text.strip():
        return None
    return Hit("peer_failure" if NCCL_PEER_RE.search(text) else "nccl", job_level=True)


def _nccl_warn_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    """NCCL's ``NCCL WARN ...``: its error, or, at the socket level, only that the other end went away."""
    return Hit("peer_failure" if NCCL_PEER_RE.search(m["what"]) else "nccl")


_DEEPSPEED_RE = re.compile(r"exits with return code = (?P<code>-?\d+)(?:.*?--local_rank=(?P<local>\d+))?"
                           r"|--local_rank=(?P<l2>\d+).*exits with return code = (?P<c2>-?\d+)")
_MPI_SIGNAL_RE = re.compile(
    r"process rank (?P<rank>\d+) with PID \d+ on node (?P<node>\S+) exited on signal (?P<sig>\d+)")
_MPI_NAME_RE = re.compile(r"^\s*Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]")
_MPI_CODE_RE = re.compile(r"^\s*Exit code:\s*(?P<code>-?\d+)")
_NCCL_WARN_RE = re.compile(r"\bNCCL WARN (?P<what>.+)")
_NCCL_SPECIFIC_RE = re.compile(r"Duplicate GPU detected|Cuda failure|NET/\w+ ?:|Call to \w+ failed|"
                               r"Connection (?:refused|timed out)|Error: failed to|no route to host", re.IGNORECASE)


def _deepspeed_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    code = m["code"] if m["code"] is not None else m["c2"]
    local = m["local"] if m["local"] is not None else m["l2"]
    return _exit_code_hit(int(code), local=int(local) if local else None)


#: torch elastic's traceback field for a worker killed by a signal: "Signal 9 (SIGKILL) received by PID 48817"
_SIGNAL_FIELD_RE = re.compile(r"\b[Ss]ignal \d+ \((?P<sig>SIG[A-Z]+)\) received by PID \d+")


def _signal_field_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    sig = m["sig"]
    return Hit("rank_signal" if is_fault(sig) else "signal", signal=sig)


def _what_hit(_d: DetectorState, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    """The message of the C++ exception that ended the process (after libstdc++'s ``terminate called``): its own
    error, like a traceback's last line (the abort that follows is its consequence)."""
    kind = classify_exception(m["what"])
    return Hit("traceback" if kind == "signal" else kind, from_tb=True)


#: a CUDA error that is not an allocation failure, said on a line of its own (glog's ``E... Encountered CUDA error:
#: an illegal memory access was encountered``, a logger's line): the rank's own error, like a traceback's last line
_CUDA_ERROR_RE = re.compile(r"\bCUDA error: (?!out of memory)(?P<what>[a-z][\w -]{3,80})")


def _always(text: str) -> re.Match[str] | None:
    return _EMPTY_RE.match(text)


_EMPTY_RE = re.compile("")

#: Every form of failure line outside a traceback, tried in this order; the first that matches and reads a hit
#: says what the line is. A new form is one row here (and a test).
DETECTORS: tuple[Detector, ...] = (
    Detector("srun-task", ("oom_kill", "srun_exit", "rank_signal", "signal"), TASK_END.match, _srun_hit),
    Detector("slurmstepd-cancel", ("time_limit", "node_failure", "cancelled"), CANCELLED.search, _cancel_hit),
    Detector("srun-node-failure", ("node_failure",), NODE_FAILURE.match,
             lambda _d, m, _t, _r, _l: Hit("node_failure", m["node"])),
    Detector("own-last-words", ("rank_signal", "signal"), _own_signal, _own_signal_hit),
    Detector("elastic-agent", ("rank_signal", "signal", "child_failed"), ELASTIC_FAILED_RE.search, _elastic_hit),
    Detector("deepspeed-launcher", ("rank_signal", "signal", "child_failed"), _DEEPSPEED_RE.search, _deepspeed_hit),
    Detector("mp-spawn-exit", ("rank_signal", "signal", "child_failed"), SPAWN_EXIT_RE.search, spawn_hit),
    Detector("mpirun-signal", ("rank_signal", "signal"), _MPI_SIGNAL_RE.search, _mpi_signal_hit),
    Detector("mpirun-name", (), _MPI_NAME_RE.match, _mpi_exit_hit),
    Detector("mpirun-exit", ("child_failed", "rank_signal", "signal"), _MPI_CODE_RE.match, _mpi_code_hit),
    Detector("elastic-signal-field", ("rank_signal", "signal"), _SIGNAL_FIELD_RE.search, _signal_field_hit),
    Detector("srun-launch", ("launch_error",), LAUNCH_ERROR.match, _kind("launch_error")),
    Detector("not-found", ("not_found",), NOT_FOUND_RE.match, _kind("not_found")),
    Detector("oom-kill", ("oom_kill",), OOM_KILL.search, _kind("oom_kill")),
    Detector("cuda-oom", ("oom",), OOM_RE.search, _kind("oom")),
    Detector("nccl-timeout", ("nccl_timeout",), NCCL_TIMEOUT_RE.search, _kind("nccl_timeout")),
    Detector("nccl-warn", ("nccl", "peer_failure"), _NCCL_WARN_RE.search, _nccl_warn_hit),
    Detector("nccl-error", ("nccl",), NCCL_ERR_RE.search, _nccl_hit),
    Detector("dist-timeout", ("dist_timeout",), DIST_TIMEOUT_RE.search, _kind("dist_timeout")),
    Detector("cpp-what", ("traceback", "oom", "nccl", "nccl_timeout", "peer_failure", "dist_timeout"), WHAT_RE.match,
             _what_hit),
    Detector("cuda-error", ("traceback",), _CUDA_ERROR_RE.search,
             lambda _d, m, t, _r, _l: Hit("traceback", said=t[m.start():])),
)
#: the row a line gets when the one before it was NCCL's ``Last error:``
LAST_ERROR = Detector("nccl-last-error", ("nccl", "peer_failure"), _always, _last_error_hit)

#: categories and wrappers: a finding whose line says only one of these is generic (:attr:`LogFailure.generic`)
_GENERIC_RE = re.compile(
    r"invalid usage|unhandled system error|internal error|unhandled cuda error|remote process exited"
    r"|ProcessRaisedException|ChildFailedError|CalledProcessError|Caught \w+ in replica|\(incomplete\)$"
    r"|process \d+ terminated with|NCCL communicator was aborted|DistBackendError: NCCL error in"
    r"|DataLoader worker \(pid\(?s?\)? ?[\d, ]+\) (?:is killed by signal|exited unexpectedly)",
    re.IGNORECASE)


def is_generic(kind: str, line: str) -> bool:
    """A signal names no cause of its own (the ``what()`` under a ``terminate called``, the OOM before an abort may);
    nor does a category or a wrapper (:data:`_GENERIC_RE`) unless the line also says the specific cause."""
    if kind in ("rank_signal", "signal"):
        return True
    if kind in ("nccl", "traceback", "child_failed") and _NCCL_SPECIFIC_RE.search(line):
        return False
    return _GENERIC_RE.search(line) is not None
