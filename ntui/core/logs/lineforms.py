"""The forms of the lines failure triage reads: patterns, one reading each, and the line's prefix and time.

Pure: regular expressions and small readers of one line's text (:func:`parse_line_time`,
:func:`classify_exception`, :func:`self_rank`, :func:`collective_of`), used by the detectors
(:mod:`ntui.core.logs.detectors`, :mod:`ntui.core.logs.rankdetector`, :mod:`ntui.core.logs.childfailed`) and by
the wording of what they found (:mod:`ntui.core.logs.summary`). srun's and slurmstepd's own forms are
:mod:`ntui.core.slurm.srunlines`'s.
"""

from __future__ import annotations

import re
import time as _time
from collections.abc import Iterable

from ntui.core.loglines import parse_prefix, read_line
from ntui.core.logs.finding import LogFailure
from ntui.core.timestamps import iso_stamp, local_epoch

__all__ = [
    "AFTER_PEERS",
    "ANY_RE",
    "DIST_TIMEOUT_RE",
    "ELASTIC_FAILED_RE",
    "EXCERPT_LINES",
    "EXC_LINE_RE",
    "FATAL_RE",
    "GLOBAL_RANKS_RE",
    "GLOO_WAIT_RE",
    "GOT_SIGNAL_RE",
    "LAYOUT_WORDS",
    "LOCAL_PROCS_RE",
    "MAX_TB_LINES",
    "MODULE_RE",
    "MPI_OWN_SIGNAL_RE",
    "NCCL_ERR_RE",
    "NCCL_PEER_RE",
    "NCCL_TIMEOUT_RE",
    "NODE_RANK_RE",
    "NOT_FOUND_RE",
    "ONE_NODE_RE",
    "OOM_GPU_RE",
    "OOM_RE",
    "OWN_START",
    "SEVERAL_NODES_RE",
    "SIG_BANNER_RE",
    "SPAWN_ERROR_RE",
    "SPAWN_EXIT_RE",
    "TB_CHAINS",
    "TB_HEADER",
    "TERMINATE_RE",
    "WHAT_RE",
    "WORLD_INFO_RE",
    "at_collective",
    "classify_exception",
    "collective_of",
    "glog_level",
    "parse_line_time",
    "self_rank",
    "split_prefix",
    "suspect_lines",
]

#: the lines a finding keeps of its block (a traceback's last ones, a summary entry's)
EXCERPT_LINES = 40
MAX_TB_LINES = 2000  # a "traceback" with no exception line after this many lines is abandoned

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

def split_prefix(line: str) -> tuple[int | None, str]:
    """Strip launcher prefixes; return ``(rank from the prefix or None, rest)`` (:func:`parse_prefix`)."""
    prefix, rest = parse_prefix(line)
    return prefix.rank, rest


_GLOG_RE = re.compile(
    r"^\[?(?P<lvl>[IWEF])(?P<mo>\d\d?)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:\.(?P<f>\d+))?"
)
def glog_level(text: str) -> str | None:
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


TB_HEADER = "Traceback (most recent call last):"
#: Python's words between two tracebacks of one failure (``raise ... from``, or an error while handling another)
TB_CHAINS = ("The above exception was the direct cause of the following exception:",
              "During handling of the above exception, another exception occurred:")
EXC_LINE_RE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::(?: .*)?)?$")
#: A line Slurm's own tools write (``srun: error: nid001: task 0: Exited with exit code 1``, ``slurmstepd-nid001:
#: error: ...``): it lands anywhere in a batch log, inside a task's traceback too, and is never its exception line.
SLURM_TOOL_LINE_RE = re.compile(r"^(?:srun|sbatch|salloc|slurmstepd(?:-[^\s:]+)?): ")
OOM_RE = re.compile(r"CUDA out of memory|CUDA error: out of memory|OutOfMemoryError|HIP out of memory")
NCCL_TIMEOUT_RE = re.compile(
    r"Watchdog caught collective operation timeout|ProcessGroupNCCL.*(?:timed out|timeout)"
    # a paste that wrapped the watchdog's line: its parts on lines of their own
    r"|^caught collective operation timeout: WorkNCCL|milliseconds before timing out", re.IGNORECASE
)
NCCL_ERR_RE = re.compile(
    r"NCCL error|nccl(?:Internal|System|UnhandledCuda|Remote|InvalidUsage|InvalidArgument)Error"
    r"|ProcessGroupNCCL.*(?:error|abort|terminat|exception)",
    re.IGNORECASE,
)
DIST_TIMEOUT_RE = re.compile(
    r"Rendezvous\w*Error|DistStoreError|DistNetworkError"
    r"|Timed out after \d+ seconds? waiting for|client socket has timed out|Timed out initializing process group"
    r"|Timed out waiting \d+ ?ms for (?:recv|send) operation"
)
#: gloo's collective timeout: this rank waited in a collective for a peer that never came
GLOO_WAIT_RE = re.compile(r"Timed out waiting (?P<ms>\d+) ?ms for (?P<op>recv|send) operation")
_PEER_RE = re.compile(
    r"Connection closed by (?:remote )?peer|Connection reset by peer|remote worker crashing|Broken pipe"
    r"|NCCL communicator was aborted|Horovod has been shut down",
    re.IGNORECASE,
)
#: an NCCL warning at the socket level that only says the other end went away (its peer closed or reset the
#: connection, the proxy's receive on it failed): the peer's failure, not this rank's
NCCL_PEER_RE = re.compile(_PEER_RE.pattern + r"|Socket recv failed", re.IGNORECASE)
_SIGNAL_EXC_RE = re.compile(r"^(?:[\w.]*\.)?(?:KeyboardInterrupt|SignalException|SystemExit)\b")
# torch elastic's agent on a worker's end, in its three logging styles: Python's default (``ERROR:torch.distributed.
# elastic.multiprocessing.api:failed ...``, torch 1.x), ``[<time>] torch.distributed...: [ERROR] failed ...`` (2.1-2.3)
# and glog (``E0909 14:03:50.013000 <pid> torch/distributed/elastic/multiprocessing/api.py:833] failed ...``), or
# bare where the line reader took the logger's header off: the
# worker's local rank and exit code on this node, not its global rank
ELASTIC_FAILED_RE = re.compile(
    r"(?:multiprocessing\.api:|multiprocessing\.api: \[ERROR\] |multiprocessing/api\.py:\d+\] |^)"
    r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: \d+\) of binary: (?P<binary>.*)$"
)
# the rank's own last words before a signal killed it: faulthandler, libstdc++'s terminate (then SIGABRT), and
# the failure signal handlers of glog (``*** SIGSEGV (@0x0) received by PID``) and absl (``*** SIGABRT received at``)
FATAL_RE = re.compile(r"^Fatal Python error: (?P<what>[A-Za-z /]+?)\s*$")
TERMINATE_RE = re.compile(r"^terminate called (?:after throwing|without an active exception|recursively)")
SIG_BANNER_RE = re.compile(r"^\*\*\* (?P<sig>SIG[A-Z]+) (?:\(@|received)")
# Open MPI's signal handler's report of the process's own death (its [host:pid] prefix taken off): Signal: Aborted (6)
MPI_OWN_SIGNAL_RE = re.compile(r"^Signal: (?P<what>[A-Za-z][A-Za-z ]*?) \((?P<n>\d+)\)\s*$")
#: the message of the C++ exception libstdc++'s terminate reports on the line after it: what():  <message>
WHAT_RE = re.compile(r"^\s*what\(\):\s+(?P<what>\S.*)$")
# a cheap pre-filter: one search per ordinary line
#: (searched in the line lowered: a case-sensitive search is several times faster than an IGNORECASE one)
ANY_RE = re.compile(
    r"out of memory|outofmemory|oom.kill|nccl|rendezvous\w*error|diststoreerror|distnetworkerror"
    r"|timed out after|socket has timed out|^srun: error:|\*\*\* (?:job|step) "
    r"|not found\s*$|permission denied\s*$|no such file or directory|can't open file|failed \(exitcode: "
    r"|return code = |terminated with |exited on signal|process name:|exit code:|received by pid"
    r"|^(?:srun|sbatch|salloc): fatal:|collective operation timeout|before timing out|cuda error: "
)
# ... and the rank's own last words start a line: a startswith, not three more alternatives in that search
OWN_START = ("Fatal Python error: ", "terminate called ", "*** SIG", "Signal: ")
# the commonest first-day failure: the command the launch line runs is not there (a shell's "command not found",
# 127; "Permission denied", 126; srun exec'ing it directly; python given a script path that does not exist)
NOT_FOUND_RE = re.compile(
    r"^(?:\S+: line \d+|\S*\b(?:bash|sh|zsh|dash)|/\S+): (?:exec: )?(?P<cmd>[^\s:]+): "
    r"(?P<why>(?:command )?not found|(?:cannot execute: )?Permission denied|No such file or directory)\s*$"
    r"|^slurmstepd(?:-\S+)?: error: execve\(\): (?P<cmd2>[^\s:]+): "
    r"(?P<why2>No such file or directory|Permission denied)"
    r"|^(?P<cmd3>\S*python[\d.]*): can't open file (?P<file>'[^']+'): \[Errno 2\]"
)
# a rank that said one of these and then died of a fault signal died of this (the signal is a consequence)
AFTER_PEERS = ("nccl_timeout", "dist_timeout", "peer_failure")

def classify_exception(text: str) -> str:
    if OOM_RE.search(text):
        return "oom"
    if NCCL_TIMEOUT_RE.search(text):
        return "nccl_timeout"
    if _PEER_RE.search(text):
        return "peer_failure"
    if NCCL_ERR_RE.search(text):
        return "nccl"
    if DIST_TIMEOUT_RE.search(text):
        return "dist_timeout"
    if _SIGNAL_EXC_RE.match(text):
        return "signal"
    return "traceback"

SPAWN_ERROR_RE = re.compile(r"^-- Process (?P<rank>\d+) terminated with the following error:")
SPAWN_EXIT_RE = re.compile(r"process (?P<rank>\d+) terminated with (?:exit code \d+|signal (?P<sig>SIG[A-Z]+))")

#: a launcher's word that the job has one node: torchrun's nnodes / max_nodes / group_world_size, accelerate's
#: num_machines, the DeepSpeed launcher's world info with one host
ONE_NODE_RE = re.compile(
    r"\b(?:nnodes|max_nodes|num_nodes|num_machines|group_world_size)\b['\"]?\s*[=:]\s*['\"]?1\b(?![\d:.])"
    r"|--nnodes[= ]1\b(?![\d:])|WORLD INFO DICT: \{'[^']+': \[[\d, ]*\]\}\s*$")
#: a launcher's or the environment's word that the job has several nodes: a node count above 1 (torchrun's
#: nnodes, its elastic range min:max, accelerate's num_machines, Slurm's SLURM_NNODES), a node's rank above 0
_MANY = r"(?:[2-9]|[1-9]\d+)\b"
SEVERAL_NODES_RE = re.compile(
    r"\b(?:nnodes|max_nodes|num_nodes|num_machines|group_world_size|SLURM_NNODES|SLURM_JOB_NUM_NODES)\b['\"]?"
    rf"\s*[=:]\s*['\"]?(?:\d+:)?{_MANY}(?![.])|--nnodes[= ](?:\d+:)?{_MANY}"
    r"|\b(?:group_rank|node_rank|machine_rank|NODE_RANK|SLURM_NODEID)\b['\"]?\s*[=:]\s*['\"]?[1-9]")
NODE_RANK_RE = re.compile(r"\b(?:node_rank|group_rank|machine_rank)\b['\"]?\s*[=:]\s*(?P<n>\d+)")
#: torch elastic's rendezvous result (``global_ranks=[4, 5, 6, 7]``, one line of its banner): the first of them
GLOBAL_RANKS_RE = re.compile(r"\bglobal_ranks=\[(?P<first>\d+)")
LOCAL_PROCS_RE = re.compile(r"\b(?:num_local_procs|nproc_per_node|local_world_size)\b['\"]?\s*[=:]\s*(?P<n>\d+)")
#: the words a line of the job's layout has (the cheap test before the layout's patterns)
LAYOUT_WORDS = ("nodes", "world_size", "machines", "WORLD INFO", "NNODES", "node_rank", "group_rank", "NODE_RANK",
                 "machine_rank", "NODEID", "NUM_NODES", "global_ranks")
GOT_SIGNAL_RE = re.compile(r"SignalException: Process \d+ got signal: (?P<n>\d+)")
WORLD_INFO_RE = re.compile(r"WORLD INFO DICT: (?P<dict>\{.{1,4000}\})\s*$")
#: a message that names its own rank: NCCL's and c10d's "[Rank 6]", "[PG 0 Rank 3]", the store barrier's "on rank: 0"
_SELF_RANK_RE = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]|\bbarrier on rank: (?P<on>\d+)\b")


def self_rank(text: str) -> int | None:
    m = _SELF_RANK_RE.search(text)
    return None if m is None else int(m["rank"] or m["on"])
OOM_GPU_RE = re.compile(r"\bGPU (?P<gpu>\d+)(?: has a total capacity|;)")
MODULE_RE = re.compile(r"^(?:\w+\.)*ModuleNotFoundError: No module named '(?P<module>[^']+)'")
#: an NCCL watchdog's work item: its sequence number (torch 1.13 on; older ones print none) and operation
_WORK_NCCL_RE = re.compile(r"WorkNCCL\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)")


def collective_of(f: LogFailure) -> tuple[int, str] | None:
    """The sequence number and operation of an NCCL watchdog timeout (``WorkNCCL(SeqNum=78, OpType=ALLREDUCE``);
    -1 for a torch that prints no sequence number."""
    m = _WORK_NCCL_RE.search(f.first_line)
    return (int(m["seq"]) if m["seq"] else -1, m["op"]) if m is not None else None


def at_collective(seq: int, op: str) -> str:
    return f"collective {seq} ({op})" if seq >= 0 else f"an {op}" if op[:1] in "AEIOU" else f"a {op}"

