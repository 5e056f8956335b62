"""Failure triage over training logs: which rank failed first, where, and with what error.

One responsibility: recognising failures in log lines (the job-level verdict on top is
:mod:`ntui.core.logs.verdict`'s).

Pure and incremental. One :class:`RankDetector` per log file (one per rank, plus one for the batch log) is
fed cleaned lines (see :func:`ntui.core.textsafe.clean_line`) as they arrive; it keeps a few lines of state
(an open traceback, an open torchrun ``ChildFailedError`` summary) and emits :class:`LogFailure` values. The
caller feeds the tail window on open and then only new lines, so the cost is per new line, not per log.

Recognised:

* Python tracebacks, up to the final ``XError: message`` line (chained ones give one finding each);
* CUDA OOM (``torch.OutOfMemoryError: CUDA out of memory``, ``RuntimeError: CUDA out of memory``,
  ``CUDA error: out of memory``);
* NCCL errors (``NCCL error``, ``ncclInternalError`` ..., error-level ``ProcessGroupNCCL`` lines) and
  NCCL watchdog timeouts (``Watchdog caught collective operation timeout``);
* torch.distributed store / rendezvous failures (``RendezvousTimeoutError``, ``DistStoreError``,
  ``DistNetworkError``, ``Timed out after N seconds waiting for``);
* ``srun: error: nid002: task 3: Exited with exit code 1`` (task id = global rank, one task per rank);
* a rank killed by a signal (:mod:`ntui.core.logs.signals`): srun's ``task 3: Aborted`` / ``Segmentation
  fault`` / ``Killed``, torch elastic's summary entry with a negative exit code (``exitcode: -6``, both its
  "Failures" and its "Root Cause" sections), and the rank's own last lines (faulthandler's ``Fatal Python
  error: Aborted``, a C++ ``terminate called ...``, glog's / absl's ``*** SIGSEGV ...``). A fault signal
  (SIGABRT, SIGSEGV, SIGKILL, ...) is a ``rank_signal`` (tier 0, the signal's name in ``LogFailure.signal``);
  a stop signal (SIGTERM, SIGINT, ...) a ``signal`` (tier 3: the launcher or Slurm stopping the rank);
* ``slurmstepd: error: *** JOB|STEP <id> ON <node> CANCELLED AT <time> [DUE TO TIME LIMIT] ***``,
  ``srun: error: Node failure on <node>`` and the ``oom_kill`` event line (srun's and slurmstepd's forms are
  :mod:`ntui.core.slurm.srunlines`'s, which the record's batch-log inference reads too);
* torchrun's ``ChildFailedError`` summary (``rank: 2 (local_rank: 0)`` / ``host:`` / ``exitcode:``), and the
  worker's own error where its entry's ``traceback :`` holds it (``@record``);
* torch elastic's agent line ``failed (exitcode: N) local_rank: M ...`` in each logging style torch has used
  (Python's default, ``[<time>] <logger>: [ERROR]``, glog): a local rank, not a global one;
* srun's folded task lists (``tasks 2-7,9: ...``: the first with the others alike, :attr:`LogFailure.alike`);
* several ranks' NCCL watchdog timeouts: the lowest collective's rank stopped first; all at the same one, a rank
  that never reported (:attr:`TriageSummary.note`);
* a CUDA error said on a line of its own (glog's ``E... Encountered CUDA error: an illegal memory access``): the
  process's own error, its headline from the error on;
* ranks failing alike: the one the launcher says failed first (torch elastic's "Root Cause" with an error file,
  Open MPI's "The first process to do so") leads them.

**The order of one log's lines is evidence** (:func:`triage` is given each log's findings apart): an error printed
before a failure line that carries its own time happened no later than that time; what a rank says after its own
collective timeout did not cause the wait.

Robust to lines glued together (a message that starts right after other text is read as its own line) and, for
``ntui triage``, to a paste's artefacts (:mod:`ntui.core.logs.paste`).

Line prefixes are understood and stripped: srun ``--label`` (``3: ``), torchrun ``--tee``
(``[default1]:``, a local rank; ``[<host>:<local rank>]:``), torch's own ``[rank1]:`` and ntui's merged view
``[r1] ``. In a combined log they also give the rank, and tracebacks of different ranks may interleave.

**Which rank failed first.** Every finding carries a ``time`` and an arrival ``seq``:

* ``time`` is the timestamp printed in the line when there is one (glog ``E1130 04:22:32.7``, ISO
  ``2024-05-01 12:00:00``, torchrun's ``2024-05-01_12:00:00``, slurmstepd's ``CANCELLED AT``), read as
  local time; otherwise the time the caller passed with the line: the poll time for lines that arrived
  while following, the file's mtime for lines that were already in the file when it was opened.
* ``seq`` is the caller's arrival counter (a global one across files when several are followed together),
  the tie-breaker, and the only order when no time is known.

A crash makes the other ranks fail too (``Connection closed by peer``, watchdog timeouts, SIGTERM from the
launcher), usually within moments, and an mtime can lag the error line by whatever the rank wrote after it.
So :func:`triage` takes the earliest finding, then among the findings no later than ``window_s`` (default
10 s) after it picks the most telling *tier* (real errors before timeouts/peer failures, before launcher and
scheduler reports, before cancellations/signals), and only then the earliest. Each rank is reduced to one
representative finding the same way.

A rank that died of a fault signal just *after* its own log said a peer went away or a collective timed out
(NCCL's watchdog ends the process with SIGABRT) died of that: its signal findings count as a consequence
(``signal``), not as a cause. The node of a rank is its log's header (where the rank ran, as Slurm names the
node) over a launcher's ``host`` (torch elastic may say ``localhost``).
"""

from __future__ import annotations

import ast
import re
import time as _time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple, TypeVar, get_args

from ntui.core.hosts import format_index_ranges
from ntui.core.loglines import NO_PREFIX, Prefix, parse_prefix, read_line
from ntui.core.logs.signals import fault_cause, is_fault, signal_name, signal_of_word
from ntui.core.slurm.srunlines import (
    CANCELLED,
    LAUNCH_ERROR,
    NODE_FAILURE,
    OOM_KILL,
    TASK_END,
    task_ids,
)
from ntui.core.textsafe import ellipsize
from ntui.core.timestamps import iso_stamp, local_epoch

__all__ = [
    "KINDS",
    "LogFailure",
    "FindingKind",
    "RankDetector",
    "TimeSource",
    "TriageSummary",
    "cut_frame",
    "parse_line_time",
    "scan_lines",
    "split_prefix",
    "suspect_lines",
    "tier_of",
    "triage",
    "what_happened",
    "where",
]

FindingKind = Literal[
    "traceback",  # a Python exception (the generic case)
    "not_found",  # the job could not start its command: not on PATH (127), not executable (126), no program file
    "oom",  # CUDA out of memory
    "oom_kill",  # the kernel OOM killer, as reported by slurmstepd / srun
    "nccl",  # NCCL error
    "rank_signal",  # a rank (or a node's launcher) killed by a fault signal: SIGABRT, SIGSEGV, SIGKILL ...
    "nccl_timeout",  # NCCL watchdog timeout
    "dist_timeout",  # torch.distributed store / rendezvous timeout or network error
    "peer_failure",  # an error that only says another rank went away
    "node_failure",  # Slurm: CANCELLED DUE TO NODE FAILURE
    "launch_error",  # srun / sbatch could not start or run the step (srun: fatal: ..., srun: error: Unable to ...)
    "child_failed",  # torchrun's ChildFailedError summary entry (exit code > 0)
    "srun_exit",  # srun: error: <node>: task N: Exited with exit code N
    "time_limit",  # Slurm: CANCELLED DUE TO TIME LIMIT
    "cancelled",  # Slurm: CANCELLED (user, preemption, ...)
    "signal",  # killed / terminated by a signal (mostly a consequence of another failure)
]
TimeSource = Literal["line", "given", "none"]

#: Every kind, in the order of :data:`FindingKind` (one home: a new kind is one line there and its tier below).
KINDS: tuple[str, ...] = get_args(FindingKind)

#: 0 real errors, 1 timeouts / peer failures, 2 launcher and scheduler reports, 3 cancel / signals.
_TIERS: dict[str, int] = {
    "traceback": 0,
    "not_found": 0,
    "oom": 0,
    "oom_kill": 0,
    "nccl": 0,
    "rank_signal": 0,
    "node_failure": 1,
    "nccl_timeout": 1,
    "dist_timeout": 1,
    "peer_failure": 1,
    "launch_error": 1,
    "child_failed": 2,
    "srun_exit": 2,
    "time_limit": 2,
    "cancelled": 3,
    "signal": 3,
}
assert set(_TIERS) == set(KINDS), "every finding kind has its tier"

#: words that make a line look like a failure: without a detector's finding, such lines make the verdict "could
#: not name the cause" (with them), never "no failure found"
_SUSPECT_RE = re.compile(
    r"\b(?:error|exception|exit(?:ed)?(?: with)? (?:code|status)|return code|signal|SIG(?:KILL|TERM|ABRT|SEGV|BUS)"
    r"|timed? ?out|traceback|killed|fatal|abort(?:ed)?|fail(?:ed|ure)?|crash(?:ed)?|hang(?:s|ing)?)\b",
    re.IGNORECASE)
_BENIGN_RE = re.compile(r"\b(?:0 errors?|no errors?|error_file|warn(?:ing)?s?\b.*deprecat)", re.IGNORECASE)
_SUSPECTS = 5
_SUSPECT_CHARS = 160


def suspect_lines(lines: Iterable[str], first_line_no: int = 1) -> list[tuple[int, str]]:
    """A log's first lines that look like a failure (error, exit code, signal, timeout, traceback ...): for a log
    no detector found anything in, "could not name the cause" with these (line number, text), never "no failure
    found". Read only then: the cost is not on every line."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        for msg in read_line(line.rstrip("\r\n")):
            if _SUSPECT_RE.search(msg.text) is not None and _BENIGN_RE.search(msg.text) is None:
                out.append((first_line_no + i, msg.text.strip()[:_SUSPECT_CHARS]))
                break
        if len(out) >= _SUSPECTS:
            break
    return out
_EXCERPT_LINES = 40
_DEDUP_LINES = 200  # the same line-level kind is reported once per this many lines per stream
_MAX_TB_LINES = 2000  # a "traceback" with no exception line after this many lines is abandoned


def tier_of(kind: str) -> int:
    """0 real errors, 1 timeouts / peer failures, 2 launcher and scheduler reports, 3 cancel / signals."""
    return _TIERS.get(kind, 0)


@dataclass(frozen=True)
class LogFailure:
    """One detected failure in one log.

    ``line_no`` is 1-based and points at the most telling line (the ``XError: msg`` line of a traceback);
    ``start_line_no`` is the first line of the block. ``first_line`` is that telling line without prefixes.
    """

    kind: str
    rank: int | None
    node: str | None
    line_no: int
    time: float | None
    first_line: str
    excerpt: tuple[str, ...] = ()
    time_source: TimeSource = "none"
    seq: int = 0
    start_line_no: int = 0
    from_traceback: bool = False
    task: int | None = None
    """srun's task id (``srun: error: nid002: task 1: ...``) when it is not a global rank: with torchrun and
    accelerate srun starts one launcher per node, so task N is node N's launcher."""
    signal: str | None = None
    """The signal the process died of (``SIGABRT``), for ``rank_signal`` and ``signal`` findings that name it."""
    local_rank: int | None = None
    """The rank's local rank on its node, where the log says it (torch elastic's ``rank: 3 (local_rank: 1)``)."""
    alike: tuple[int, ...] = ()
    """The other ranks (or srun tasks) the same line names, failed the same way: srun's ``tasks 2-7: Exited with
    exit code 1`` is rank 2 with 3-7 alike."""
    root_cause: bool = False
    """From torch elastic's "Root Cause" entry: the launcher's word on which rank failed first."""
    generic: bool = False
    """A wrapper or a category, not the cause itself (an abort, NCCL's "invalid usage", a traceback cut before its
    error, mp.spawn's "process N terminated"): a specific finding of the same tier wins over it."""
    one_node_assumed: bool = False
    """The rank is the local rank because nothing in the log says the job had another node (no second host, no
    node rank above 0, no node count above 1): the wording says so."""

    @property
    def tier(self) -> int:
        return tier_of(self.kind)


# ---------------------------------------------------------------------------------------------------------
# prefixes and timestamps

def split_prefix(line: str) -> tuple[int | None, str]:
    """Strip launcher prefixes; return ``(rank from the prefix or None, rest)`` (:func:`parse_prefix`)."""
    prefix, rest = parse_prefix(line)
    return prefix.rank, rest


_GLOG_RE = re.compile(
    r"^\[?(?P<lvl>[IWEF])(?P<mo>\d\d?)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:\.(?P<f>\d+))?"
)
def _glog_level(text: str) -> str | None:
    m = _GLOG_RE.match(text)
    return m.group("lvl") if m else None


def parse_line_time(text: str, *, year: int | None = None) -> float | None:
    """Epoch seconds of a timestamp at the start of ``text`` (prefixes already stripped), or None.

    Understands glog (``E1130 04:22:32.736000``, ``[E1130 04:22:32.7 ...]``, c10's unpadded month
    ``[E810 03:04:11.06 ...]``; the year is missing from the
    format, ``year`` supplies it, default the current year) and ISO-like dates in the first 64 characters
    (``2024-05-01 12:00:00,123``, ``2024-05-01T12:00:00``, ``2024-05-01_12:00:00``).
    """
    m = _GLOG_RE.match(text)
    if m is not None:
        y = year if year is not None else _time.localtime().tm_year
        return local_epoch(y, int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), m["f"])
    return iso_stamp(text, 64)


# ---------------------------------------------------------------------------------------------------------
# line patterns

_TB_HEADER = "Traceback (most recent call last):"
#: Python's words between two tracebacks of one failure (``raise ... from``, or an error while handling another)
_TB_CHAINS = ("The above exception was the direct cause of the following exception:",
              "During handling of the above exception, another exception occurred:")
_EXC_LINE_RE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::(?: .*)?)?$")
_OOM_RE = re.compile(r"CUDA out of memory|CUDA error: out of memory|OutOfMemoryError|HIP out of memory")
_NCCL_TIMEOUT_RE = re.compile(
    r"Watchdog caught collective operation timeout|ProcessGroupNCCL.*(?:timed out|timeout)"
    # a paste that wrapped the watchdog's line: its parts on lines of their own
    r"|^caught collective operation timeout: WorkNCCL|milliseconds before timing out", re.IGNORECASE
)
_NCCL_ERR_RE = re.compile(
    r"NCCL error|nccl(?:Internal|System|UnhandledCuda|Remote|InvalidUsage|InvalidArgument)Error"
    r"|ProcessGroupNCCL.*(?:error|abort|terminat|exception)",
    re.IGNORECASE,
)
_DIST_TIMEOUT_RE = re.compile(
    r"Rendezvous\w*Error|DistStoreError|DistNetworkError"
    r"|Timed out after \d+ seconds? waiting for|client socket has timed out|Timed out initializing process group"
    r"|Timed out waiting \d+ ?ms for (?:recv|send) operation"
)
#: gloo's collective timeout: this rank waited in a collective for a peer that never came
#: the width a one-line verdict is cut to (the jobs view's and the CLI's)
SUMMARY_WIDTH = 220
_GLOO_WAIT_RE = re.compile(r"Timed out waiting (?P<ms>\d+) ?ms for (?P<op>recv|send) operation")
_PEER_RE = re.compile(
    r"Connection closed by (?:remote )?peer|Connection reset by peer|remote worker crashing|Broken pipe"
    r"|NCCL communicator was aborted|Horovod has been shut down",
    re.IGNORECASE,
)
#: an NCCL warning at the socket level that only says the other end went away (its peer closed or reset the
#: connection, the proxy's receive on it failed): the peer's failure, not this rank's
_NCCL_PEER_RE = re.compile(_PEER_RE.pattern + r"|Socket recv failed", re.IGNORECASE)
_SIGNAL_EXC_RE = re.compile(r"^(?:[\w.]*\.)?(?:KeyboardInterrupt|SignalException|SystemExit)\b")
# torch elastic's agent on a worker's end, in its three logging styles: Python's default (``ERROR:torch.distributed.
# elastic.multiprocessing.api:failed ...``, torch 1.x), ``[<time>] torch.distributed...: [ERROR] failed ...`` (2.1-2.3)
# and glog (``E0909 14:03:50.013000 <pid> torch/distributed/elastic/multiprocessing/api.py:833] failed ...``), or
# bare where the line reader took the logger's header off: the
# worker's local rank and exit code on this node, not its global rank
_ELASTIC_FAILED_RE = re.compile(
    r"(?:multiprocessing\.api:|multiprocessing\.api: \[ERROR\] |multiprocessing/api\.py:\d+\] |^)"
    r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: \d+\) of binary: (?P<binary>.*)$"
)
# the rank's own last words before a signal killed it: faulthandler, libstdc++'s terminate (then SIGABRT), and
# the failure signal handlers of glog (``*** SIGSEGV (@0x0) received by PID``) and absl (``*** SIGABRT received at``)
_FATAL_RE = re.compile(r"^Fatal Python error: (?P<what>[A-Za-z /]+?)\s*$")
_TERMINATE_RE = re.compile(r"^terminate called (?:after throwing|without an active exception|recursively)")
_SIG_BANNER_RE = re.compile(r"^\*\*\* (?P<sig>SIG[A-Z]+) (?:\(@|received)")
# Open MPI's signal handler's report of the process's own death (its [host:pid] prefix taken off): Signal: Aborted (6)
_MPI_OWN_SIGNAL_RE = re.compile(r"^Signal: (?P<what>[A-Za-z][A-Za-z ]*?) \((?P<n>\d+)\)\s*$")
#: the message of the C++ exception libstdc++'s terminate reports on the line after it: what():  <message>
_WHAT_RE = re.compile(r"^\s*what\(\):\s+(?P<what>\S.*)$")
# a cheap pre-filter: one search per ordinary line
#: (searched in the line lowered: a case-sensitive search is several times faster than an IGNORECASE one)
_ANY_RE = re.compile(
    r"out of memory|outofmemory|oom.kill|nccl|rendezvous\w*error|diststoreerror|distnetworkerror"
    r"|timed out after|socket has timed out|^srun: error:|\*\*\* (?:job|step) "
    r"|not found\s*$|permission denied\s*$|no such file or directory|can't open file|failed \(exitcode: "
    r"|return code = |terminated with |exited on signal|process name:|exit code:|received by pid"
    r"|^(?:srun|sbatch|salloc): fatal:|collective operation timeout|before timing out|cuda error: "
)
# ... and the rank's own last words start a line: a startswith, not three more alternatives in that search
_OWN_START = ("Fatal Python error: ", "terminate called ", "*** SIG", "Signal: ")
# the commonest first-day failure: the command the launch line runs is not there (a shell's "command not found",
# 127; "Permission denied", 126; srun exec'ing it directly; python given a script path that does not exist)
_NOT_FOUND_RE = re.compile(
    r"^(?:\S+: line \d+|\S*\b(?:bash|sh|zsh|dash)|/\S+): (?:exec: )?(?P<cmd>[^\s:]+): "
    r"(?P<why>(?:command )?not found|(?:cannot execute: )?Permission denied|No such file or directory)\s*$"
    r"|^slurmstepd(?:-\S+)?: error: execve\(\): (?P<cmd2>[^\s:]+): "
    r"(?P<why2>No such file or directory|Permission denied)"
    r"|^(?P<cmd3>\S*python[\d.]*): can't open file (?P<file>'[^']+'): \[Errno 2\]"
)
# a rank that said one of these and then died of a fault signal died of this (the signal is a consequence)
_AFTER_PEERS = ("nccl_timeout", "dist_timeout", "peer_failure")
_CF_ENTRY_RE = re.compile(r"^\s*\[(?P<i>\d+)\]:\s*$")
_CF_FIELD_RE = re.compile(r"^\s*(?P<key>time|host|rank|exit[ _]?code|error[_ ]file|traceback)\s*:\s?(?P<value>.*)$",
                          re.IGNORECASE)
_CF_RANK_RE = re.compile(r"^\s*(?P<rank>-?\d+)(?:\s*\(local[_ ]rank\s*:\s*(?P<local>\d+)\))?")
#: a summary retyped by hand (copied from a screenshot): fields glued on one line (``rank2 (local rank: 2)exitcode:
#: -9 (pid: 4)error file: <N/A>``), a key's underscore a space, its colon gone before a number
_CF_GLUED_RE = re.compile(r"(?<=\S)(?=(?:exit[ _]?code|error[_ ]file|traceback)\s*:)", re.IGNORECASE)
_CF_RETYPED_RE = re.compile(r"^(?P<indent>\s*)(?P<key>rank|exit[ _]?code|error[ _]file)\s*(?::\s*|(?=\d))",
                            re.IGNORECASE)


def _cf_key(key: str) -> str:
    """A summary field's name as torch elastic prints it (``exit code``, ``Exitcode``: ``exitcode``)."""
    key = key.lower()
    return "exitcode" if key.startswith("exit") else "error_file" if key.startswith("error") else key


def _cf_parts(text: str) -> list[str]:
    """A summary line as its fields, each in torch elastic's own form (``  rank: 2 (local rank: 2)``); a line that
    is one field in that form already is returned as it is (the cost is a substring test)."""
    low = text.lower()
    parts = _CF_GLUED_RE.split(text) if "exit" in low or "error" in low or "traceback" in low else [text]
    out = []
    for part in parts:
        m = _CF_RETYPED_RE.match(part)
        if m is not None:
            part = f"{m['indent'] or '  '}{_cf_key(m['key'])}: {part[m.end():]}"
        out.append(part)
    return out
_CF_EXIT_RE = re.compile(r"^\s*(?P<code>-?\d+)")


def _classify_exception(text: str) -> str:
    if _OOM_RE.search(text):
        return "oom"
    if _NCCL_TIMEOUT_RE.search(text):
        return "nccl_timeout"
    if _PEER_RE.search(text):
        return "peer_failure"
    if _NCCL_ERR_RE.search(text):
        return "nccl"
    if _DIST_TIMEOUT_RE.search(text):
        return "dist_timeout"
    if _SIGNAL_EXC_RE.match(text):
        return "signal"
    return "traceback"


@dataclass
class _Traceback:
    start_line_no: int
    header_time: float | None
    header_given_time: float | None
    header_seq: int
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=_EXCERPT_LINES))
    head: str = _TB_HEADER
    frames: int = 0
    count: int = 1
    rank_hint: int | None = None  # mp.spawn named the process whose traceback this is


@dataclass
class _ChildFailed:
    section: str = ""  # "failures" | "root"
    rules: int = 0  # "=====" lines seen
    entry: dict[str, str] | None = None
    entry_lines: list[str] = field(default_factory=list)
    entry_line_no: int = 0
    count: int = 0
    tb_lines: list[str] = field(default_factory=list)  # the entry's traceback, when it holds the worker's (@record)


class RankDetector:
    """Stateful, incremental failure detector for one log stream.

    ``rank`` / ``node`` describe the file (a per-rank file); a combined log leaves them None and ranks come
    from the line prefixes. Not thread-safe: feed from one thread.
    """

    def __init__(
        self, rank: int | None = None, node: str | None = None, *, year: int | None = None, task_is_rank: bool = True
    ) -> None:
        self.rank = rank
        self.task_is_rank = task_is_rank
        self.node = node
        self._year = year
        self._line_no = 0
        self._seq = 0
        self._tb: dict[int | str | None, _Traceback] = {}  # by the rank of its lines' prefix (else local rank)
        self._prefix = NO_PREFIX  # what the current line's prefixes say
        self._cf: _ChildFailed | None = None
        self._last_kind_line: dict[tuple[int | str | None, str], int] = {}
        #: per traceback key, its last traceback's finding and line; and the one a chain's words tied to the next
        self._last_tb: dict[int | str | None, tuple[LogFailure, int]] = {}
        self._chained: dict[int | str | None, LogFailure] = {}
        self.findings: list[LogFailure] = []
        #: what a line said of the lines after it: Open MPI's box names the rank above its exit code, NCCL's
        #: "Last error:" comes above the specific cause, mp.spawn's "-- Process N terminated with the following
        #: error:" above that process's traceback
        self.pending_rank: int | None = None
        self.last_error_next = False
        self.spawn_rank: int | None = None
        #: the hosts this log's prefixes named (pdsh's "host: ", NCCL's), up to a few: several mean several nodes
        self.hosts: set[str] = set()
        #: the log said the job ran on one node (a launcher's nnodes=1, its group world size 1): a local rank it
        #: reports from then on is the global rank
        self.one_node = False
        #: the log said the job had several nodes (nnodes=2, a node rank above 0, two hosts in the world info): a
        #: local rank is then never taken for the rank without proof
        self.several_nodes = False
        #: the DeepSpeed launcher's world info: each host's first global rank
        self.world: dict[str, int] = {}
        #: a pasted log's artefact remover for each line (``> `` quotes, line numbers, indentation), or None
        self.unpaste: Callable[[str], str] | None = None

    def reset(self) -> None:
        """Forget all state (the file was truncated or replaced)."""
        self._line_no = 0
        self._tb.clear()
        self._cf = None
        self._last_kind_line.clear()
        self._last_tb.clear()
        self._chained.clear()
        self.findings = []
        self.pending_rank = self.spawn_rank = None
        self.last_error_next = self.one_node = self.several_nodes = False
        self.world = {}
        self.hosts = set()

    # -- feeding --------------------------------------------------------------------------------------

    def feed_many(
        self,
        lines: Iterable[str],
        *,
        first_line_no: int | None = None,
        time: float | None = None,
        first_seq: int | None = None,
    ) -> list[LogFailure]:
        """Feed consecutive lines; ``first_line_no`` is the 1-based number of the first one."""
        out: list[LogFailure] = []
        for i, line in enumerate(lines):
            out.extend(
                self.feed(
                    line,
                    line_no=None if first_line_no is None else first_line_no + i,
                    time=time,
                    seq=None if first_seq is None else first_seq + i,
                )
            )
        return out

    def feed(
        self, line: str, *, line_no: int | None = None, time: float | None = None, seq: int | None = None
    ) -> list[LogFailure]:
        """Feed one line; return the findings it completed (usually none).

        ``line_no`` (1-based) defaults to the previous one + 1; ``time`` is the arrival time (poll time, or
        the file mtime for lines already in the file); ``seq`` a global arrival counter (default: own).
        """
        self._line_no = line_no if line_no is not None else self._line_no + 1
        self._seq = seq if seq is not None else self._seq + 1
        raw = line.rstrip("\r\n")
        if self.unpaste is not None:
            raw = self.unpaste(raw)
        out: list[LogFailure] = []
        for msg in read_line(raw):  # each message of the line (glued, collapsed) with what its prefixes said
            out.extend(self._feed_text(msg.prefix, msg.text, time))
        return self._keep(out)

    def _feed_text(self, prefix: Prefix, text: str, time: float | None) -> list[LogFailure]:
        """One line's text, its prefixes parsed (or one message of a glued line): the findings it completed."""
        if prefix.task is not None and not self.task_is_rank:
            # srun's label under a launcher per node (torchrun, accelerate): that node's launcher, not a rank
            prefix = prefix._replace(rank=None)
        self._prefix = prefix
        prefix_rank = prefix.rank
        if prefix.host is not None and len(self.hosts) < 8:
            self.hosts.add(prefix.host)
        # tracebacks of different ranks interleave in a combined log: each rank's (else each local rank's) its own
        key: int | str | None = prefix_rank
        if key is None and prefix is not NO_PREFIX:
            node_of = prefix.host or ("" if prefix.task is None else f"task{prefix.task}")
            if prefix.local_rank is not None:
                key = f"local{node_of}:{prefix.local_rank}"
            elif node_of:  # pdsh's "host: ", srun's label of a node's launcher: each node's lines their own
                key = f"host:{node_of}"
        out: list[LogFailure] = []

        if self._cf is not None:
            done = self._feed_child_failed(text, prefix_rank, time, out)
            if not done:
                return out

        tb = self._tb.get(key)
        if tb is not None and self._feed_traceback(tb, key, text, prefix_rank, time, out):
            return out

        if text in _TB_CHAINS and (last := self._last_tb.get(key)) is not None and self._line_no - last[1] <= 3:
            self._chained[key] = last[0]  # the next traceback of this key is the same failure's
            return out

        if text.startswith(_TB_HEADER):
            self._tb[key] = _Traceback(
                start_line_no=self._line_no,
                header_time=parse_line_time(text, year=self._year) or prefix.time,
                header_given_time=time,
                header_seq=self._seq,
                rank_hint=self.spawn_rank,
            )
            self.spawn_rank = None
            self._tb[key].lines.append(text)
            return out

        if self.last_error_next:
            self._line_level(text, prefix_rank, time, out, (LAST_ERROR,))
            return out
        if text.endswith("Last error:"):
            self.last_error_next = True
        elif text.startswith("-- Process ") and (sp := _SPAWN_ERROR_RE.match(text)) is not None:
            self.spawn_rank = int(sp["rank"])

        if "ChildFailedError" in text and not text.lstrip().startswith(("File ", "raise ")):
            self._cf = _ChildFailed()
            return out
        if text.startswith(("Root Cause", "Failures:")) and text.rstrip().endswith(":"):
            # the summary's sections, its ChildFailedError header not in the log (a paste that starts below it)
            self._cf = _ChildFailed(rules=1)
            self._feed_child_failed(text, prefix_rank, time, out)
            return out

        if _ANY_RE.search(text.lower()) or text.startswith(_OWN_START) or "what():" in text:
            self._line_level(text, prefix_rank, time, out)
        elif any(word in text for word in _LAYOUT_WORDS):
            self._layout(text)
        return out

    def _first_rank_of(self, host: str | None) -> int | None:
        """The first global rank of ``host``'s workers as the launchers' lines gave it (``None`` for a line with no
        host: the node whose launcher wrote this log, when the log says it of one node only)."""
        first = self.world.get(host if host is not None else "")
        return first if first is not None and first >= 0 else None

    def _layout(self, text: str) -> None:
        """What a launcher's banner says of the job's layout: one node, or the DeepSpeed launcher's world info
        (each host's local ranks, in the order global ranks are given out)."""
        if not self.one_node and _ONE_NODE_RE.search(text):
            self.one_node = True
        if not self.several_nodes and _SEVERAL_NODES_RE.search(text):
            self.several_nodes = True
        host = self._prefix.host or self.node
        # a line with no host is this log's own node's launcher's: its key is "" (see _first_rank_of)
        key = host if host is not None else ""
        if key not in self.world and (node := _NODE_RANK_RE.search(text)) is not None \
                and (procs := _LOCAL_PROCS_RE.search(text)) is not None:
            # a node's launcher says its node rank and its processes (the DeepSpeed launcher's "nnodes=2,
            # num_local_procs=4, node_rank=1"): the host's first rank, ranks given out node by node
            self.world[key] = int(node["n"]) * int(procs["n"])
        elif (given := _GLOBAL_RANKS_RE.search(text)) is not None:
            # torch elastic's rendezvous result: its workers' global ranks, in the order of their local ranks; a
            # second agent's (another node's, in a log that does not say which) makes the host's first rank unknown
            first = int(given["first"])
            self.world[key] = first if self.world.get(key, first) == first else -1
        if (m := _WORLD_INFO_RE.search(text)) is not None and not self.world:
            try:
                world = ast.literal_eval(m["dict"])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return
            if isinstance(world, dict) and all(isinstance(v, list) for v in world.values()):
                first = 0
                for host, local_ranks in world.items():
                    self.world[str(host)] = first
                    first += len(local_ranks)
                self.several_nodes = self.several_nodes or len(world) > 1

    def flush(self) -> list[LogFailure]:
        """End of input (the job is over): report tracebacks that never reached an exception line."""
        out: list[LogFailure] = []
        self._prefix = NO_PREFIX
        for key, tb in list(self._tb.items()):
            if tb.frames:
                out.append(
                    self._finding(
                        "traceback",
                        key if isinstance(key, int) else None,
                        f"{tb.head} (incomplete)",
                        tb.start_line_no,
                        tb.header_given_time,
                        tb.header_time,
                        tuple(tb.lines),
                        tb.start_line_no,
                        from_tb=True,
                        seq=tb.header_seq,
                    )
                )
        self._tb.clear()
        if self._cf is not None and self._cf.entry is not None:
            self._emit_cf_entry(self._cf, None, out)
        self._cf = None
        return self._keep(out)

    # -- internals ------------------------------------------------------------------------------------

    def _chain(self, inner: LogFailure, outer: LogFailure, out: list[LogFailure]) -> LogFailure:
        """Two tracebacks of one failure (Python's chain words between them): one of them is the cause, the other
        is marked generic so that the choice takes the cause. The inner one is, as a rule (the outer wraps it); the
        outer one when it names a specific failure and the inner only a plain error or a broken connection (a
        store that failed, said over its socket's ``Broken pipe``). The outer keeps the inner's rank."""
        outer_wins = outer.kind not in ("traceback", "peer_failure") and not outer.generic \
            and inner.kind in ("traceback", "peer_failure")
        if outer.rank is None and inner.rank is not None:
            outer = replace(outer, rank=inner.rank)
        if inner.generic and not outer.generic:
            return outer  # the inner only wraps (a subprocess's exit status): the outer says what failed
        if not outer_wins:
            return replace(outer, generic=True)
        marked = replace(inner, generic=True)
        for pool in (out, self.findings):
            for i in range(len(pool) - 1, -1, -1):
                if pool[i] is inner:
                    pool[i] = marked
                    return outer
        return outer

    def _keep(self, out: list[LogFailure]) -> list[LogFailure]:
        self.findings.extend(out)
        return out

    def _finding(
        self,
        kind: str,
        prefix_rank: int | None,
        first_line: str,
        line_no: int,
        given_time: float | None,
        line_time: float | None,
        excerpt: tuple[str, ...],
        start_line_no: int,
        *,
        from_tb: bool = False,
        task: int | None = None,
        rank: int | None = None,
        node: str | None = None,
        seq: int | None = None,
        signal: str | None = None,
        local_rank: int | None = None,
        alike: tuple[int, ...] = (),
        generic: bool = False,
        root_cause: bool = False,
    ) -> LogFailure:
        when: float | None
        src: TimeSource
        if line_time is None:
            line_time = self._prefix.time  # a logger's or a CI runner's timestamp, taken off with the prefix
        if line_time is not None:
            when, src = line_time, "line"
        elif given_time is not None:
            when, src = given_time, "given"
        else:
            when, src = None, "none"
        r = rank if rank is not None else (prefix_rank if prefix_rank is not None else self.rank)
        said = self._prefix
        local_said = local_rank if local_rank is not None else said.local_rank
        if r is None and (own := _self_rank(first_line)) is not None:
            r = own  # the message names its own rank: NCCL's "[Rank 6]", "[PG 0 Rank 3]"
        if local_said is None and kind == "oom" and (gpu := _OOM_GPU_RE.search(first_line)) is not None:
            local_said = int(gpu["gpu"])  # "GPU 1 has a total capacity", "(GPU 0; ...)": the rank's device
        if r is None and local_said is not None and self.one_node:
            r = local_said  # one node: the local rank is the rank
        host = node if node is not None else (said.host or self.node)
        if r is None and local_said is not None and (base := self._first_rank_of(host)) is not None:
            r = base + local_said  # the launcher's world info: the host's first rank, then its local
        return LogFailure(
            kind=kind,
            rank=r,
            node=node if node is not None else (said.host or self.node),
            line_no=line_no,
            time=when,
            first_line=first_line.strip(),
            excerpt=excerpt,
            time_source=src,
            seq=self._seq if seq is None else seq,
            start_line_no=start_line_no,
            from_traceback=from_tb,
            task=task if task is not None or r is not None or self.task_is_rank else said.task,
            signal=signal,
            local_rank=local_said,
            alike=alike,
            generic=generic or _is_generic(kind, first_line),
            root_cause=root_cause,
        )

    def _feed_traceback(
        self,
        tb: _Traceback,
        key: int | str | None,
        text: str,
        prefix_rank: int | None,
        time: float | None,
        out: list[LogFailure],
    ) -> bool:
        """Return True when the line was consumed by the open traceback."""
        tb.count += 1
        if not text or text[0] in " \t":
            tb.lines.append(text)
            if text.lstrip().startswith("File "):
                tb.frames += 1
            return True
        if text.startswith(_TB_HEADER):  # a new traceback without an exception line: restart
            del self._tb[key]
            return False
        m = _EXC_LINE_RE.match(text)
        if m is not None and ":" not in text and "." not in text and text.islower():
            m = None  # a bare lowercase word ("zvous"): the tail of a frame line a terminal wrapped, no exception
        if tb.frames == 0 or m is None:
            if tb.count > _MAX_TB_LINES:
                del self._tb[key]
                return False
            tb.lines.append(text)  # interleaved noise
            return True
        del self._tb[key]
        tb.lines.append(text)
        if "ChildFailedError" in m.group("name"):
            self._cf = _ChildFailed()  # the summary that follows says more than this line
            return True
        line_time = parse_line_time(text, year=self._year)
        if line_time is None:
            line_time = tb.header_time
        kind = _classify_exception(text)
        if m.group("name").endswith("ProcessRaisedException"):
            kind = "child_failed"  # mp.spawn's report that a process raised: the process's own traceback follows
        rank, sig = None, None
        if prefix_rank is None and tb.rank_hint is not None:
            rank = tb.rank_hint
        if kind == "signal" and (gs := _GOT_SIGNAL_RE.search(text)) is not None:  # torch elastic's SignalException
            sig = signal_name(-int(gs["n"]))
        if (sm := _SPAWN_EXIT_RE.search(text)) is not None:  # mp.spawn's report of another process's end
            spawn = _spawn_hit(self, sm, text, prefix_rank, None)
            kind, rank, sig = spawn.kind, spawn.rank, spawn.signal
        excerpt = (tb.head, *tb.lines) if tb.lines and tb.lines[0] != tb.head else tuple(tb.lines)
        found = self._finding(kind, prefix_rank, text, self._line_no, time, line_time, excerpt, tb.start_line_no,
                              from_tb=True, rank=rank, signal=sig)
        inner = self._chained.pop(key, None)
        if inner is not None:
            found = self._chain(inner, found, out)
        out.append(found)
        self._last_tb[key] = (found, self._line_no)
        self._last_kind_line[(key, kind)] = self._line_no
        self._last_kind_line[("*", kind)] = self._line_no
        return True

    def _line_level(self, text: str, prefix_rank: int | None, time: float | None, out: list[LogFailure],
                    rows: Sequence[Detector] | None = None) -> None:
        """A line outside a traceback: the first row of :data:`DETECTORS` that matches it says what it is."""
        level = _glog_level(text)
        if level in ("I", "W"):
            return  # info / warning (e.g. "retrying"): not a failure
        hit: Hit | None = None
        for row in DETECTORS if rows is None else rows:
            m = row.find(text)
            if m is not None:
                hit = row.hit(self, m, text, prefix_rank, level)
                if hit is not None:
                    break
        if hit is None:
            return
        kind, rank, task, local = hit.kind, hit.rank, hit.task, hit.local
        line_time = hit.line_time if hit.line_time is not None else parse_line_time(text, year=self._year)
        own = prefix_rank if rank is None else rank
        if own is None:
            own = _self_rank(text)  # NCCL's "[Rank 6]": each rank's line its own, not a repeat of another's
        dedup_key: tuple[int | str | None, str] = (own, kind)
        if task is not None:
            dedup_key = (f"task{task}", kind)
        elif local is not None:  # one line per worker of the agent
            dedup_key = (f"local{local}", kind)
        last = self._last_kind_line.get(dedup_key)
        if dedup_key[0] is None:  # an unprefixed line repeats whichever rank reported this kind lately
            last = self._last_kind_line.get(("*", kind), last)
        if (
            kind not in ("srun_exit", "signal", "oom_kill", "rank_signal")
            and not hit.job_level  # the job-level word is never a repeat
            and last is not None
            and (0 <= self._line_no - last < _DEDUP_LINES)
        ):
            return
        self._last_kind_line[dedup_key] = self._line_no
        self._last_kind_line[("*", kind)] = self._line_no
        out.append(
            self._finding(
                kind,
                prefix_rank,
                text if hit.said is None else hit.said,
                self._line_no,
                time,
                line_time,
                (text,),
                self._line_no,
                rank=rank,
                node=hit.node,
                task=task,
                signal=hit.signal,
                from_tb=hit.from_tb,
                local_rank=local,
                alike=hit.alike,
                generic=hit.generic,
                root_cause=hit.root_cause,
            )
        )

    def after_peer(self, prefix_rank: int | None) -> bool:
        """Whether this rank (or, unprefixed, any) said a peer went away or a collective timed out lately."""
        keys = (prefix_rank, "*") if prefix_rank is None else (prefix_rank,)
        return any(0 <= self._line_no - self._last_kind_line.get((k, p), -_DEDUP_LINES) < _DEDUP_LINES
                   for p in _AFTER_PEERS for k in keys)

    @property
    def year(self) -> int | None:
        return self._year

    def _feed_child_failed(self, text: str, prefix_rank: int | None, time: float | None, out: list[LogFailure]) -> bool:
        """Parse torchrun's summary block; return True when the block ended (line not consumed)."""
        cf = self._cf
        assert cf is not None
        cf.count += 1
        stripped = text.strip()
        if stripped.startswith("====="):
            cf.rules += 1
            if cf.entry is not None:
                self._emit_cf_entry(cf, time, out)
            if cf.rules >= 2:
                self._cf = None  # the closing rule ends the block (and is consumed)
            return False
        if cf.count > _MAX_TB_LINES or text.startswith(_TB_HEADER):  # not the format we know: give up
            self._cf = None
            return True
        if stripped.startswith("-----"):
            if cf.entry is not None:
                self._emit_cf_entry(cf, time, out)
            return False
        if stripped.startswith("Failures:"):
            cf.section = "failures"
            return False
        if stripped.startswith("Root Cause"):
            cf.section = "root"
            return False
        if _CF_ENTRY_RE.match(text):
            if cf.entry is not None:
                self._emit_cf_entry(cf, time, out)
            cf.entry = {}
            cf.entry_lines = [text]
            cf.entry_line_no = self._line_no
            return False
        parts = _cf_parts(text) if cf.entry is not None and "traceback" not in cf.entry else [text]
        fm = _CF_FIELD_RE.match(parts[0])
        if fm is not None and cf.entry is not None and "traceback" not in cf.entry:
            for part in parts:
                if (fm := _CF_FIELD_RE.match(part)) is not None and "traceback" not in cf.entry:
                    cf.entry[_cf_key(fm["key"])] = fm["value"].strip()
            cf.entry_lines.append(text)
        elif cf.entry is not None and "traceback" in cf.entry and text.startswith("  ") and stripped:
            # the traceback the worker's @record wrote, indented under "traceback :": its last line is the error
            cf.tb_lines.append(stripped)
            if len(cf.entry_lines) < _EXCERPT_LINES:
                cf.entry_lines.append(text)
        return False

    def _emit_cf_entry(self, cf: _ChildFailed, time: float | None, out: list[LogFailure]) -> None:
        entry = cf.entry or {}
        cf.entry = None
        rank_m = _CF_RANK_RE.match(entry.get("rank", ""))
        exit_m = _CF_EXIT_RE.match(entry.get("exitcode", ""))
        if rank_m is None and exit_m is None:
            return
        rank = int(rank_m["rank"]) if rank_m else None
        local = int(rank_m["local"]) if rank_m and rank_m["local"] else None
        code = int(exit_m["code"]) if exit_m else None
        host = entry.get("host") or None
        tb_text = entry.get("traceback", "")
        tb_lines, cf.tb_lines = cf.tb_lines, []
        error = tb_lines[-1] if tb_text.startswith(_TB_HEADER) and tb_lines else None
        if error is not None and (error.startswith("File ") or _EXC_LINE_RE.match(error) is None):
            error = None
        sig = signal_name(code) if code is not None and code < 0 else None
        from_tb = False
        if error is not None:  # the worker's own error, as its traceback ended
            kind, msg, from_tb = _classify_exception(error), error, True
        elif code is not None and code < 0:  # killed by a signal: a fault is the rank's own, a stop the launcher's
            kind = "rank_signal" if is_fault(sig) else "signal"
            part = "root cause" if cf.section == "root" else "failures"
            msg = f"exitcode {code}" + (f" ({sig})" if sig else "") + f" in torch elastic's {part}"
        else:
            kind = "child_failed"
            where = f"rank {entry.get('rank', '?')}"
            msg = f"ChildFailedError: {where} on {host or '?'} exited with exitcode {entry.get('exitcode', '?')}"
            if tb_text and not tb_text.startswith("To enable traceback") and tb_text != "<N/A>":
                msg += f": {tb_text}"
            if cf.section == "root":
                msg += " (root cause)"
        line_time = parse_line_time(entry.get("time", ""), year=self._year)
        out.append(
            self._finding(
                kind,
                None,
                msg,
                cf.entry_line_no,
                time,
                line_time,
                tuple(cf.entry_lines),
                cf.entry_line_no,
                rank=rank,
                node=host,
                signal=sig,
                local_rank=local,
                from_tb=from_tb,
                # the root cause proves the rank only from the worker's error file (@record): without one it is the
                # first exit the agent saw, a consequence as often as not (torch 2.0's captures: rank 0 for rank 1)
                root_cause=cf.section == "root" and entry.get("error_file", "<N/A>") not in ("", "<N/A>"),
            )
        )


# ---------------------------------------------------------------------------------------------------------
# the detector table: what a line outside a traceback says, one row per form


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
    hit: Callable[[RankDetector, re.Match[str], str, int | None, str | None], Hit | None]


def _srun_hit(det: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
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


def _cancel_hit(det: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    reason = (m["reason"] or "").upper()
    when = parse_line_time(m["at"].replace("T", " "), year=det.year)
    kind = "time_limit" if "TIME LIMIT" in reason else "node_failure" if "NODE FAIL" in reason else "cancelled"
    return Hit(kind, m["node"], line_time=when, job_level=m["scope"] == "JOB")


def _own_signal(text: str) -> re.Match[str] | None:
    """The rank's own last words before a fault signal killed it (faulthandler, terminate, glog/absl)."""
    return _FATAL_RE.match(text) or _TERMINATE_RE.match(text) or _SIG_BANNER_RE.match(text) \
        or _MPI_OWN_SIGNAL_RE.match(text)


def _own_signal_hit(det: RankDetector, m: re.Match[str], text: str, rank: int | None, _l: str | None) -> Hit | None:
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


def _elastic_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    return _exit_code_hit(int(m["code"]), local=int(m["local"]))


def _spawn_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    if m["sig"]:
        sig = m["sig"]
        return Hit("rank_signal" if is_fault(sig) else "signal", rank=int(m["rank"]), signal=sig)
    return Hit("child_failed", rank=int(m["rank"]))


def _mpi_signal_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    sig = signal_name(-int(m["sig"]))
    return Hit("rank_signal" if is_fault(sig) else "signal", m["node"], int(m["rank"]), signal=sig)


def _mpi_exit_hit(det: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit | None:
    det.pending_rank = int(m["rank"])  # Open MPI's box: "Process name: [[jobid,1],rank]", its exit code below
    return None


def _mpi_code_hit(det: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit | None:
    rank, det.pending_rank = det.pending_rank, None
    # Open MPI's box names "the first process to do so": the launcher's word on which rank failed first
    return None if rank is None else _exit_code_hit(int(m["code"]), rank=rank)._replace(root_cause=True)


def _kind(kind: str) -> Callable[[RankDetector, re.Match[str], str, int | None, str | None], Hit]:
    def hit(_d: RankDetector, _m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
        return Hit(kind)
    return hit


def _nccl_hit(_d: RankDetector, _m: re.Match[str], text: str, _r: int | None, level: str | None) -> Hit | None:
    if level is None and not re.search(r"error|fail", text, re.IGNORECASE):
        return None  # a ProcessGroupNCCL line that says no error
    return Hit("nccl")


def _last_error_hit(det: RankDetector, _m: re.Match[str], text: str, _r: int | None, _l: str | None) -> Hit | None:
    """The line after NCCL's ``Last error:``: the specific cause under its category (a socket that says the peer
    went away: that peer's failure)."""
    det.last_error_next = False
    if not text.strip():
        return None
    return Hit("peer_failure" if _NCCL_PEER_RE.search(text) else "nccl", job_level=True)


def _nccl_warn_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    """NCCL's ``NCCL WARN ...``: its error, or, at the socket level, only that the other end went away."""
    return Hit("peer_failure" if _NCCL_PEER_RE.search(m["what"]) else "nccl")


_DEEPSPEED_RE = re.compile(r"exits with return code = (?P<code>-?\d+)(?:.*?--local_rank=(?P<local>\d+))?"
                           r"|--local_rank=(?P<l2>\d+).*exits with return code = (?P<c2>-?\d+)")
_SPAWN_ERROR_RE = re.compile(r"^-- Process (?P<rank>\d+) terminated with the following error:")
_SPAWN_EXIT_RE = re.compile(r"process (?P<rank>\d+) terminated with (?:exit code \d+|signal (?P<sig>SIG[A-Z]+))")
_MPI_SIGNAL_RE = re.compile(
    r"process rank (?P<rank>\d+) with PID \d+ on node (?P<node>\S+) exited on signal (?P<sig>\d+)")
_MPI_NAME_RE = re.compile(r"^\s*Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]")
_MPI_CODE_RE = re.compile(r"^\s*Exit code:\s*(?P<code>-?\d+)")
_NCCL_WARN_RE = re.compile(r"\bNCCL WARN (?P<what>.+)")
_NCCL_SPECIFIC_RE = re.compile(r"Duplicate GPU detected|Cuda failure|NET/\w+ ?:|Call to \w+ failed|"
                               r"Connection (?:refused|timed out)|Error: failed to|no route to host", re.IGNORECASE)


def _deepspeed_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    code = m["code"] if m["code"] is not None else m["c2"]
    local = m["local"] if m["local"] is not None else m["l2"]
    return _exit_code_hit(int(code), local=int(local) if local else None)


#: torch elastic's traceback field for a worker killed by a signal: "Signal 9 (SIGKILL) received by PID 48817"
_SIGNAL_FIELD_RE = re.compile(r"\b[Ss]ignal \d+ \((?P<sig>SIG[A-Z]+)\) received by PID \d+")


def _signal_field_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    sig = m["sig"]
    return Hit("rank_signal" if is_fault(sig) else "signal", signal=sig)


def _what_hit(_d: RankDetector, m: re.Match[str], _t: str, _r: int | None, _l: str | None) -> Hit:
    """The message of the C++ exception that ended the process (after libstdc++'s ``terminate called``): its own
    error, like a traceback's last line (the abort that follows is its consequence)."""
    kind = _classify_exception(m["what"])
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
    Detector("elastic-agent", ("rank_signal", "signal", "child_failed"), _ELASTIC_FAILED_RE.search, _elastic_hit),
    Detector("deepspeed-launcher", ("rank_signal", "signal", "child_failed"), _DEEPSPEED_RE.search, _deepspeed_hit),
    Detector("mp-spawn-exit", ("rank_signal", "signal", "child_failed"), _SPAWN_EXIT_RE.search, _spawn_hit),
    Detector("mpirun-signal", ("rank_signal", "signal"), _MPI_SIGNAL_RE.search, _mpi_signal_hit),
    Detector("mpirun-name", (), _MPI_NAME_RE.match, _mpi_exit_hit),
    Detector("mpirun-exit", ("child_failed", "rank_signal", "signal"), _MPI_CODE_RE.match, _mpi_code_hit),
    Detector("elastic-signal-field", ("rank_signal", "signal"), _SIGNAL_FIELD_RE.search, _signal_field_hit),
    Detector("srun-launch", ("launch_error",), LAUNCH_ERROR.match, _kind("launch_error")),
    Detector("not-found", ("not_found",), _NOT_FOUND_RE.match, _kind("not_found")),
    Detector("oom-kill", ("oom_kill",), OOM_KILL.search, _kind("oom_kill")),
    Detector("cuda-oom", ("oom",), _OOM_RE.search, _kind("oom")),
    Detector("nccl-timeout", ("nccl_timeout",), _NCCL_TIMEOUT_RE.search, _kind("nccl_timeout")),
    Detector("nccl-warn", ("nccl", "peer_failure"), _NCCL_WARN_RE.search, _nccl_warn_hit),
    Detector("nccl-error", ("nccl",), _NCCL_ERR_RE.search, _nccl_hit),
    Detector("dist-timeout", ("dist_timeout",), _DIST_TIMEOUT_RE.search, _kind("dist_timeout")),
    Detector("cpp-what", ("traceback", "oom", "nccl", "nccl_timeout", "peer_failure", "dist_timeout"), _WHAT_RE.match,
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


def _is_generic(kind: str, line: str) -> bool:
    """A signal names no cause of its own (the ``what()`` under a ``terminate called``, the OOM before an abort may);
    nor does a category or a wrapper (:data:`_GENERIC_RE`) unless the line also says the specific cause."""
    if kind in ("rank_signal", "signal"):
        return True
    if kind in ("nccl", "traceback", "child_failed") and _NCCL_SPECIFIC_RE.search(line):
        return False
    return _GENERIC_RE.search(line) is not None



def scan_lines(
    lines: Iterable[str],
    *,
    rank: int | None = None,
    node: str | None = None,
    time: float | None = None,
    year: int | None = None,
) -> list[LogFailure]:
    """One-shot convenience: feed ``lines`` (numbered from 1) to a fresh detector, flush, return findings."""
    det = RankDetector(rank, node, year=year)
    det.feed_many(lines, first_line_no=1, time=time)
    det.flush()
    return list(det.findings)


# ---------------------------------------------------------------------------------------------------------
# the summary


@dataclass(frozen=True)
class TriageSummary:
    """The outcome of :func:`triage`. ``first`` is None when nothing was found."""

    first: LogFailure | None
    per_rank: Mapping[int | None, LogFailure]
    total: int
    note: str = ""
    """What the log cannot show, said after the finding: several ranks' NCCL watchdogs timed out at the same
    collective, and the rank that stopped first never reported."""
    silent: tuple[int, ...] = ()
    """When the first finding is a wait (a collective's timeout): the ranks that said nothing of their own, one of
    which it likely waited for (none of them is a consequence)."""

    @property
    def rank(self) -> int | None:
        return self.first.rank if self.first else None

    @property
    def node(self) -> str | None:
        return self.first.node if self.first else None

    @property
    def failed_ranks(self) -> tuple[int, ...]:
        return tuple(sorted(r for r in self.per_rank if r is not None))

    def summary(self) -> str:
        """``rank 2 on nid002 failed first: RuntimeError: boom (traceback, line 41)``; a rank killed by a
        signal: ``rank 3 on nid002 was killed by SIGABRT (local rank 1) first: ... (rank_signal, line 38)``."""
        f = self.first
        if f is None:
            return "no failure found"
        text = f.first_line
        keep = 200
        if self.note:  # the note says what the raw line cannot: the raw line is cut so that a line of
            # SUMMARY_WIDTH keeps it whole
            keep = max(40, SUMMARY_WIDTH - len(f"{where(f)} {what_happened(f)} first: ({f.kind}, line "
                                               f"{f.line_no}) · {self.note}") - 6)
        text = ellipsize(text, keep)
        if f.kind == "not_found":
            return f"{missing_command(f)}: {text} ({f.kind}, line {f.line_no})"
        missing = _MODULE_RE.match(f.first_line) if f.kind == "traceback" else None
        if missing is not None:  # the other first-day failure: the compute node's Python is not the user's
            return (f"{where(f)} could not import {missing['module']} first (not in the job's Python: activate its "
                    f"environment before submitting, or in setup:): {text} ({f.kind}, line {f.line_no})")
        alike = ", alike" if f.alike else ""
        note = f" · {self.note}" if self.note else ""
        return f"{where(f)} {what_happened(f)} first{alike}: {text} ({f.kind}, line {f.line_no}){note}"


_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')


def cut_frame(f: LogFailure) -> str | None:
    """For a traceback the log cut before its error line (``... (incomplete)``): the last frame it shows, as
    ``File "train.py", line 88, in main: model.cuda()`` (its source line when there is one); None for any other."""
    if f.kind != "traceback" or not f.first_line.endswith("(incomplete)"):
        return None
    lines = list(f.excerpt)
    for i in range(len(lines) - 1, -1, -1):
        m = _FRAME_RE.match(lines[i])
        if m is not None:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) else ""
            frame = f'File "{m["file"]}", line {m["line"]}, in {m["func"]}'
            return f"{frame}: {code}" if code else frame
    return None


def where(f: LogFailure) -> str:
    """Who a finding is about, as far as the log proves it: ``rank 3 on nid002``, ``ranks 2-7 on nid002`` (srun's
    folded task list), ``the launcher on nid002 (srun task 1)``, ``local rank 3 on an unnamed node`` (a torch
    elastic agent's line), ``the job``."""
    on = f" on {f.node}" if f.node else ""
    if f.rank is not None:
        assumed = " (the log names no other node)" if f.one_node_assumed else ""
        return (f"ranks {format_index_ranges((f.rank, *f.alike))}" if f.alike else f"rank {f.rank}") + on + assumed
    if f.task is not None and f.local_rank is not None and not f.alike:
        return f"local rank {f.local_rank} of the launcher{on} (srun task {f.task})"
    if f.task is not None:
        if f.alike:
            return f"the launchers{on} (srun tasks {format_index_ranges((f.task, *f.alike))})"
        return f"the launcher{on} (srun task {f.task})"
    if f.local_rank is not None:
        return f"local rank {f.local_rank} on {f.node or 'an unnamed node'}"
    return f"the job{on}"


def missing_command(f: LogFailure) -> str:
    """A ``not_found`` finding in words, with the fix: ``torchrun was not found on nid001, nid002 (exit 127: not
    on the PATH the job inherits; activate its environment before submitting, or in setup:)``."""
    m = _NOT_FOUND_RE.match(f.first_line)
    nodes = f" on {f.node.replace(',', ', ')}" if f.node else ""
    if m is None:
        return f"{where(f)} could not start its command"
    if m["cmd3"]:
        return f"{m['cmd3']} could not open the program file {m['file']}{nodes} (exit 2: the path is wrong there)"
    cmd, why = m["cmd"] or m["cmd2"], m["why"] or m["why2"] or ""
    if "denied" in why:
        return f"{cmd} is not executable{nodes} (exit 126: chmod +x it, or run it through its interpreter)"
    if "/" in cmd:
        return f"{cmd} does not exist{nodes} (exit 127: the path is wrong on the compute nodes)"
    return (f"{cmd} was not found{nodes} (exit 127: not on the PATH the job inherits; activate its environment "
            "before submitting, or in setup:)")


def what_happened(f: LogFailure, *, likely: bool = True) -> str:
    """The cause in words, said before the raw line: ``failed`` (an exception: its line says which), ``was killed by
    SIGKILL (local rank 1; likely the out-of-memory killer)``, ``ran out of GPU memory``, ``timed out in NCCL
    collective 78 (ALLREDUCE)``, ``timed out after 8 s waiting for a peer in a collective (gloo recv)``, ``gave up
    waiting for the rendezvous``, ..."""
    if f.kind == "rank_signal":
        said = [f"local rank {f.local_rank}"] if f.local_rank is not None and f.rank is not None else []
        said += [why] if likely and (why := fault_cause(f.signal)) else []  # not when the verdict already says it
        return f"was killed by {f.signal or 'a signal'}" + (f" ({'; '.join(said)})" if said else "")
    if f.kind == "oom":
        return "ran out of GPU memory"
    if f.kind == "nccl_timeout":
        op = _collective(f)
        return f"timed out in NCCL {_at(*op)}" if op else "hit NCCL's watchdog timeout"
    if f.kind == "nccl":
        return "hit an NCCL error"
    if f.kind == "peer_failure":
        return "lost its connection to a peer"
    if f.kind == "signal" and f.signal:
        hint = " (its terminal or session went away: start it with sbatch, nohup or tmux)" \
            if f.signal == "SIGHUP" else ""
        return f"was stopped by {f.signal}{hint}"
    if f.kind == "launch_error":
        return "could not start its step (srun's own error)"
    if f.kind == "dist_timeout":
        text = f.first_line
        if (g := _GLOO_WAIT_RE.search(text)) is not None:
            return f"timed out after {int(g['ms']) / 1000:g} s waiting for a peer in a collective (gloo {g['op']})"
        if "RendezvousTimeout" in text:
            return "gave up waiting for the rendezvous (not every node's launcher joined)"
        if "Rendezvous" in text:
            return "could not reach the rendezvous"
        if "waiting for clients" in text or "waiting for" in text and "Timed out after" in text:
            return "timed out waiting for the other ranks at the store"
        if "DistNetworkError" in text or "socket has timed out" in text:
            return "could not reach the store (MASTER_ADDR:MASTER_PORT)"
    return "failed"


_K = TypeVar("_K")


def _order_key(f: LogFailure) -> tuple[float, int]:
    return (f.time if f.time is not None else float("inf"), f.seq)


def _signals_in_context(group: list[LogFailure]) -> list[LogFailure]:
    """One rank's findings, its signal findings read in context (see the module docstring): a fault signal of
    a rank that said a peer went away or timed out, or whose own traceback ended it, is a consequence (``signal``;
    that earlier error represents the rank); the others get the signal and local rank another
    finding of the same death names (the summary's local rank on faulthandler's line)."""
    deaths = [f for f in group if f.kind == "rank_signal"]
    if not deaths:
        return group
    if any(f.kind in _AFTER_PEERS or (f.from_traceback and f.kind != "rank_signal") for f in group):
        # after a peer's loss or a timeout, or after the rank's own uncaught exception (the interpreter then exits;
        # an abort at that exit, libstdc++'s terminate, is its teardown), the death is the consequence: the log
        # lines without a time of their own (read when polled) must not lose to the launcher's timestamped report
        return [replace(f, kind="signal") if f.kind == "rank_signal" else f for f in group]
    sig = next((f.signal for f in deaths if f.signal), None)
    local = next((f.local_rank for f in group if f.local_rank is not None), None)
    return [replace(f, signal=f.signal or sig, local_rank=local if f.local_rank is None else f.local_rank)
            if f.kind == "rank_signal" else f for f in group]


def _pick(findings: Sequence[LogFailure], window_s: float) -> LogFailure:
    # a launcher's or Slurm's report of a death (tier 2 and above) comes after the death: it does not open the
    # window, whose time may be its own timestamp while the error's is only its file's
    errors = [f for f in findings if f.tier < 2]
    earliest = min(errors or findings, key=_order_key)
    if earliest.time is None:
        pool = list(findings)
    else:
        limit = earliest.time + window_s
        pool = [f for f in findings if f.time is None or f.time <= limit]
    return min(pool, key=lambda f: (_weight(f), 0 if f.from_traceback else 1, *_order_key(f)))


def _weight(f: LogFailure) -> float:
    """A finding's tier as the choice weighs it: a generic one (a wrapper, a category) after the specific ones of
    its tier; a traceback cut before its error after the timeouts (it says no cause; the timeout may)."""
    if not f.generic:
        return f.tier
    return f.tier + (1.5 if f.first_line.endswith("(incomplete)") else 0.5)


#: a launcher's word that the job has one node: torchrun's nnodes / max_nodes / group_world_size, accelerate's
#: num_machines, the DeepSpeed launcher's world info with one host
_ONE_NODE_RE = re.compile(
    r"\b(?:nnodes|max_nodes|num_nodes|num_machines|group_world_size)\b['\"]?\s*[=:]\s*['\"]?1\b(?![\d:.])"
    r"|--nnodes[= ]1\b(?![\d:])|WORLD INFO DICT: \{'[^']+': \[[\d, ]*\]\}\s*$")
#: a launcher's or the environment's word that the job has several nodes: a node count above 1 (torchrun's
#: nnodes, its elastic range min:max, accelerate's num_machines, Slurm's SLURM_NNODES), a node's rank above 0
_MANY = r"(?:[2-9]|[1-9]\d+)\b"
_SEVERAL_NODES_RE = re.compile(
    r"\b(?:nnodes|max_nodes|num_nodes|num_machines|group_world_size|SLURM_NNODES|SLURM_JOB_NUM_NODES)\b['\"]?"
    rf"\s*[=:]\s*['\"]?(?:\d+:)?{_MANY}(?![.])|--nnodes[= ](?:\d+:)?{_MANY}"
    r"|\b(?:group_rank|node_rank|machine_rank|NODE_RANK|SLURM_NODEID)\b['\"]?\s*[=:]\s*['\"]?[1-9]")
_NODE_RANK_RE = re.compile(r"\b(?:node_rank|group_rank|machine_rank)\b['\"]?\s*[=:]\s*(?P<n>\d+)")
#: torch elastic's rendezvous result (``global_ranks=[4, 5, 6, 7]``, one line of its banner): the first of them
_GLOBAL_RANKS_RE = re.compile(r"\bglobal_ranks=\[(?P<first>\d+)")
_LOCAL_PROCS_RE = re.compile(r"\b(?:num_local_procs|nproc_per_node|local_world_size)\b['\"]?\s*[=:]\s*(?P<n>\d+)")
#: the words a line of the job's layout has (the cheap test before the layout's patterns)
_LAYOUT_WORDS = ("nodes", "world_size", "machines", "WORLD INFO", "NNODES", "node_rank", "group_rank", "NODE_RANK",
                 "machine_rank", "NODEID", "NUM_NODES", "global_ranks")
_ALIKE_RE = re.compile(r"\d+")  # two ranks' errors alike but for their numbers (a rank, a pid, a size)
_GOT_SIGNAL_RE = re.compile(r"SignalException: Process \d+ got signal: (?P<n>\d+)")
_WORLD_INFO_RE = re.compile(r"WORLD INFO DICT: (?P<dict>\{.{1,4000}\})\s*$")
#: a message that names its own rank: NCCL's and c10d's "[Rank 6]", "[PG 0 Rank 3]", the store barrier's "on rank: 0"
_SELF_RANK_RE = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]|\bbarrier on rank: (?P<on>\d+)\b")


def _self_rank(text: str) -> int | None:
    m = _SELF_RANK_RE.search(text)
    return None if m is None else int(m["rank"] or m["on"])
_OOM_GPU_RE = re.compile(r"\bGPU (?P<gpu>\d+)(?: has a total capacity|;)")
_MODULE_RE = re.compile(r"^(?:\w+\.)*ModuleNotFoundError: No module named '(?P<module>[^']+)'")
#: an NCCL watchdog's work item: its sequence number (torch 1.13 on; older ones print none) and operation
_WORK_NCCL_RE = re.compile(r"WorkNCCL\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)")


def _collective(f: LogFailure) -> tuple[int, str] | None:
    """The sequence number and operation of an NCCL watchdog timeout (``WorkNCCL(SeqNum=78, OpType=ALLREDUCE``);
    -1 for a torch that prints no sequence number."""
    m = _WORK_NCCL_RE.search(f.first_line)
    return (int(m["seq"]) if m["seq"] else -1, m["op"]) if m is not None else None


def _at(seq: int, op: str) -> str:
    return f"collective {seq} ({op})" if seq >= 0 else f"an {op}" if op[:1] in "AEIOU" else f"a {op}"


def _nccl_timeouts(first: LogFailure, per_rank: Mapping[int | None, LogFailure],
                   ranks: Collection[int]) -> tuple[LogFailure, str]:
    """Several ranks' watchdogs timed out. The one at the lowest collective stopped first (the others went on to
    the next and waited there). At the same collective, a rank in another operation than the rest diverged from
    them (it called something else: a barrier while they all-reduced); all alike, the rank that stopped first is
    one that never reported."""
    timed_out = {r: (f, c) for r, f in per_rank.items()
                 if r is not None and f.kind == "nccl_timeout" and (c := _collective(f)) is not None}
    if len(timed_out) < 2:
        return first, ""
    lowest = min(timed_out, key=lambda r: (timed_out[r][1][0], r))
    seq, op = timed_out[lowest][1]
    others = sorted(r for r in timed_out if r != lowest)
    if seq >= 0 and any(timed_out[r][1][0] != seq for r in others):
        later = sorted({timed_out[r][1][0] for r in others} - {seq})
        return timed_out[lowest][0], (f"it stopped at collective {seq} ({op}); the others waited at "
                                      f"{', '.join(map(str, later))}: rank {lowest} is where to look")
    by_op: dict[str, list[int]] = {}
    for r in sorted(timed_out):
        by_op.setdefault(timed_out[r][1][1], []).append(r)
    if len(by_op) == 2:
        (op_a, few), (op_b, many) = sorted(by_op.items(), key=lambda kv: (len(kv[1]), kv[1]))
        if len(few) == 1 and len(many) >= 2:
            odd = few[0]
            return timed_out[odd][0], (f"it was in {_at(seq, op_a)} while ranks {format_index_ranges(many)} "
                                       f"waited in {_at(seq, op_b)}: the ranks' collectives diverged, rank {odd} "
                                       "is where to look")
    silent = _silent(per_rank, ranks)
    said = (f"{'rank' if len(silent) == 1 else 'ranks'} {format_index_ranges(silent)} never reported: "
            f"{'it' if len(silent) == 1 else 'one of them'} likely stopped first") if silent else \
        "the rank that stopped first is not in this log"
    reported = format_index_ranges(sorted(timed_out))
    where_ = f"at {_at(seq, op)}" if seq >= 0 else f"in {_at(seq, op)}"
    return first, f"ranks {reported} all timed out {where_}; {said}"


def _rank_by_evidence(first: LogFailure, flat: Sequence[LogFailure], hosts_seen: int = 0,
                      several_nodes: bool = True) -> LogFailure:
    """A finding no prefix gave a rank (a combined log's traceback): the rank other lines prove it is. A local rank
    (the device an OOM names, an agent's line) is the rank when the log names one node and no other; else the
    launcher's reports name it: torch elastic's root cause from an error file, or the one rank every report of a
    failed worker names. Last, when nothing in the log says the job had several nodes (``several_nodes`` false,
    one host at most), a local rank is taken for the rank and the finding says it was assumed."""
    found = _rank_by_proof(first, flat, hosts_seen)
    if found.rank is not None or several_nodes or hosts_seen > 1 or any(f.task is not None for f in flat):
        return found
    if len({f.node for f in flat if f.node}) > 1:
        return found
    local = first.local_rank
    if local is None:
        locals_ = {f.local_rank for f in flat if f.local_rank is not None and (f.tier >= 2 or f.kind == "rank_signal")
                   and f.kind in ("child_failed", "rank_signal")}
        local = locals_.pop() if len(locals_) == 1 else None
    return replace(first, rank=local, one_node_assumed=True) if local is not None else found


def _failed_workers(reports: Sequence[LogFailure]) -> set[int]:
    """The ranks a launcher's reports say failed on their own: an exit code (torch elastic's summary, Open MPI's box,
    srun's ``task 2: Exited with exit code 1`` where a task is a rank, with the tasks alike) or a fault signal; a
    rank the launcher stopped (SIGTERM) is not one."""
    out: set[int] = set()
    for f in reports:
        if f.rank is not None and f.kind in ("child_failed", "rank_signal", "srun_exit"):
            out.add(f.rank)
            if f.kind == "srun_exit":
                out.update(f.alike)
    return out


def _alike_by_count(first: LogFailure, flat: Sequence[LogFailure]) -> LogFailure:
    """A combined log with no rank on its errors: when it holds the same error as many times as the launcher's
    reports name ranks that failed on their own (two tracebacks alike, torch elastic's summary naming ranks 0 and
    1 with an exit code), those ranks failed alike: ``ranks 0-1 failed first, alike``."""
    said = _ALIKE_RE.sub("#", first.first_line)
    same = sum(1 for f in flat if f.rank is None and f.kind == first.kind and f.from_traceback == first.from_traceback
               and _ALIKE_RE.sub("#", f.first_line) == said)
    workers = sorted(_failed_workers([f for f in flat if f.tier >= 2 or f.kind == "rank_signal"]))
    if same < 2 or same != len(workers):
        return first
    return replace(first, rank=workers[0], alike=tuple(workers[1:]))


def _launcher_first(first: LogFailure, per_rank: Mapping[int | None, LogFailure],
                    flat: Sequence[LogFailure]) -> LogFailure:
    """Ranks that failed alike (``first`` and its :attr:`LogFailure.alike`): the one the launcher says failed first
    (torch elastic's "Root Cause" entry, Open MPI's "The first process to do so") is named first, with its own line;
    the arrival order of alike errors says nothing (the ranks' output is interleaved as the launcher relays it)."""
    roots = {f.rank for f in flat if f.root_cause and f.rank is not None}
    alike = {first.rank, *first.alike}
    if len(roots) != 1 or (root := roots.pop()) == first.rank or root not in alike:
        return first
    own = per_rank.get(root)
    base = own if own is not None and own.kind == first.kind else replace(first, rank=root)
    return replace(base, alike=tuple(sorted(r for r in alike if r is not None and r != root)))


def _rank_by_proof(first: LogFailure, flat: Sequence[LogFailure], hosts_seen: int) -> LogFailure:
    nodes = {f.node for f in flat if f.node}
    # a node named, and only one (hosts_seen: the hosts the logs' prefixes named, findings or not)
    one_node = len(nodes) == 1 and hosts_seen <= 1 and not any(f.task for f in flat)
    if first.local_rank is not None and one_node:
        return replace(first, rank=first.local_rank)
    reports = [f for f in flat if f.tier >= 2 or f.kind == "rank_signal"]
    roots = {f.rank for f in reports if f.root_cause and f.rank is not None}
    named = roots or _failed_workers(reports)
    if len(named) == 1:
        return replace(first, rank=named.pop())
    if one_node:
        locals_ = {f.local_rank for f in reports if f.local_rank is not None and f.kind in ("child_failed",
                                                                                            "rank_signal")}
        if len(locals_) == 1:
            return replace(first, rank=locals_.pop())
    return first


def _bounded_by_later_lines(log: list[LogFailure]) -> list[LogFailure]:
    """One log's findings, each with no time of its own (the file's time, an upper bound) given the earliest time of
    a finding the log printed after it: a line printed before another happened no later than it."""
    if not any(f.time_source == "line" for f in log) or not any(f.time_source == "given" for f in log):
        return log
    out = list(log)
    later: float | None = None
    for i in sorted(range(len(out)), key=lambda i: out[i].seq, reverse=True):
        f = out[i]
        if f.time_source == "line" and f.time is not None:
            later = f.time if later is None else min(later, f.time)
        elif later is not None and f.time_source == "given" and (f.time is None or f.time > later):
            out[i] = replace(f, time=later)
    return out


def _after_waits(logs: Sequence[Sequence[LogFailure]]) -> set[int]:
    """The errors (by ``id``) a rank printed after its own collective's timeout in the same log: it had waited the
    whole timeout before, so what it said after (an allocation or a CUDA call failing as the process group is torn
    down) did not cause the wait. (Another rank's line after it proves nothing: a paste may join the ranks' logs
    one after another.)"""
    late: set[int] = set()
    for log in logs:
        waits: dict[int | None, int] = {}
        for f in sorted(log, key=lambda f: f.seq):
            if f.kind == "nccl_timeout":
                waits.setdefault(f.rank, f.seq)
            elif f.tier == 0 and f.rank in waits and f.seq > waits[f.rank]:
                late.add(id(f))
    return late


def _is_wait(f: LogFailure) -> bool:
    """A rank's timeout in a collective: a consequence of a peer that did not come, never a cause by itself."""
    return f.kind == "nccl_timeout" or (f.kind == "dist_timeout" and _GLOO_WAIT_RE.search(f.first_line) is not None)


def _silent(per_rank: Mapping[int | None, LogFailure], ranks: Collection[int]) -> list[int]:
    """The ranks known (their files, or a report about them) that said nothing of their own: no error, no wait;
    at most their launcher's report that it stopped them."""
    known = set(ranks) | {r for r in per_rank if r is not None}
    if not ranks and known:
        # one combined log: the ranks below the highest it names ran too (a job's ranks are 0..N-1), so one it
        # never names said nothing
        known |= set(range(max(known)))
    return sorted(r for r in known if r not in per_rank or per_rank[r].tier >= 2)


def _waited_for(per_rank: Mapping[int | None, LogFailure], ranks: Collection[int]) -> str:
    """The first finding is a wait and no rank reported a cause: who it waited for, as far as the log knows."""
    silent = _silent(per_rank, ranks)
    if silent:
        return (f"{'rank' if len(silent) == 1 else 'ranks'} {format_index_ranges(silent)} never reported: "
                f"{'it' if len(silent) == 1 else 'one of them'} likely stopped first")
    return "the rank it waited for reported no error in this log"


def triage(
    per_rank_findings: Mapping[_K, Sequence[LogFailure]] | Iterable[LogFailure],
    *,
    nodes_by_rank: Mapping[int, str] | None = None,
    window_s: float = 10.0,
    ranks: Collection[int] = (),
    hosts_seen: int = 0,
    several_nodes: bool = True,
) -> TriageSummary:
    """Name the rank that failed first (see the module docstring for the ordering rule).

    Accepts ``{rank: findings}`` (the key is only a grouping hint; each finding's own ``rank`` decides) or a
    flat iterable. ``nodes_by_rank`` fills in the node when the finding does not name one; otherwise a
    node named by another finding for the same rank (``srun: error: nid002: task 2``, torchrun's
    ``host:``) is used.
    """
    if isinstance(per_rank_findings, Mapping):
        logs = [list(group) for group in per_rank_findings.values()]
    else:
        logs = [list(per_rank_findings)]  # one log's findings (a flat list: one detector's, or the caller's choice)
    logs = [_bounded_by_later_lines(log) for log in logs]
    flat = [f for log in logs for f in log]
    if not flat:
        return TriageSummary(first=None, per_rank={}, total=0)
    late = _after_waits(logs)
    if any(f.kind == "nccl_timeout" for f in flat):
        # an agent's word that a worker died of SIGABRT, in a log of NCCL watchdog timeouts: the watchdog's own
        # abort after its timeout (it ends the process so), a consequence
        flat = [replace(f, kind="signal") if f.kind == "rank_signal" and f.signal == "SIGABRT" and f.rank is None
                and not f.from_traceback else f for f in flat]
    by_rank: dict[int | None, list[LogFailure]] = {}
    nodes: dict[int, str] = dict(nodes_by_rank or {})
    for f in flat:
        by_rank.setdefault(f.rank, []).append(f)
        if f.rank is not None and f.node and f.rank not in nodes and f.node != "localhost":
            nodes[f.rank] = f.node
    for f in flat:  # localhost only as a last resort
        if f.rank is not None and f.node and f.rank not in nodes:
            nodes[f.rank] = f.node
    headers = nodes_by_rank or {}
    per_rank: dict[int | None, LogFailure] = {}
    for r, group in by_rank.items():
        group = [f for f in group if id(f) not in late] or group  # its own error before what came after the waits
        if r is not None:
            group = _signals_in_context(group)
            # the rank's own error over a launcher's or Slurm's report about it (torch elastic's summary, srun's
            # exit line): the report's time may be its own timestamp, the error's the file's (a copied log's is
            # later), and time must not make the report win
            group = [f for f in group if f.tier < 2] or group
        rep = _pick(group, window_s)
        if r is not None and r in nodes and (rep.node is None or r in headers or rep.node == "localhost"):
            rep = replace(rep, node=nodes[r])  # the rank's header (where it ran) over a launcher's "host"
        per_rank[r] = rep
    # what a log printed after a collective's timeouts did not cause them: chosen only when nothing else is there
    causal = {r: f for r, f in per_rank.items() if id(f) not in late}
    candidates = list(causal.values()) or list(per_rank.values())
    ranked = [f for f in candidates if f.rank is not None]
    first = _pick(candidates, window_s)
    if first.kind == "not_found" and first.node is None:  # the shell's line names no node: srun's exits do
        failed = sorted({f.node for f in flat if f.kind == "srun_exit" and f.node
                         and re.search(r"exit code 12[67]\b", f.first_line)})
        if failed:
            first = replace(first, node=",".join(failed))
    if first.rank is None and ranked:
        # a rank-less report (the batch log's "CANCELLED", a ranged srun error) loses to a rank's own
        # finding of the same or a more telling tier, unless that one is only a wrapper or a signal over the
        # specific error (an abort after the C++ exception's message: the rank comes from evidence then)
        alt = _pick(ranked, window_s)
        if alt.tier <= first.tier and (first.tier >= 2 or _weight(alt) <= _weight(first)):
            first = alt
    if _is_wait(first):
        # a wait is never the cause when another rank says its own error: that rank is why the wait timed out
        causes = [f for r, f in causal.items() if r is not None and r != first.rank and f.tier == 0]
        if causes:
            first = _pick(causes, float("inf"))
    if first.rank is None:
        first = _rank_by_evidence(first, flat, hosts_seen, several_nodes)
        if first.rank is None and first.tier == 0:
            first = _alike_by_count(first, flat)
    elif first.tier == 0 and not first.alike and not first.generic:
        # several ranks failing alike are one finding: "ranks 4-7 failed first, alike: ValueError: ..."
        said = _ALIKE_RE.sub("#", first.first_line)
        same = sorted(r for r, f in per_rank.items() if r is not None and r != first.rank and f.kind == first.kind
                      and _ALIKE_RE.sub("#", f.first_line) == said)
        if same:
            first = replace(first, alike=tuple(same))
    if first.alike:
        first = _launcher_first(first, per_rank, flat)
    if first.rank is None and first.task is not None and first.node is None:
        # a worker of a node's launcher known by srun's task: the node srun's own line names for that task
        first = replace(first, node=next((f.node for f in flat if f.task == first.task and f.node), None))
    note = ""
    if first.kind == "nccl_timeout":
        first, note = _nccl_timeouts(first, causal, ranks)
    silent: tuple[int, ...] = ()
    if _is_wait(first):
        silent = tuple(_silent(causal, ranks))
        note = note or _waited_for(causal, ranks)
        after = sorted(r for r, f in per_rank.items() if r is not None and r not in causal)
        if after:  # they did say something, but only after the others had timed out waiting
            note = note.replace("never reported", "reported nothing before the timeouts")
            note += (f"; {'rank' if len(after) == 1 else 'ranks'} {format_index_ranges(after)} erred only after "
                     "them (a consequence)")
    return TriageSummary(first=first, per_rank=per_rank, total=len(flat), note=note, silent=silent)
