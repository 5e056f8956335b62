"""Failure triage over training logs: which rank failed first, where, and with what error.

This module chooses the root cause among the findings (:func:`triage`); the parts below it have one job each:
:mod:`~ntui.core.logs.finding` (the finding, its kinds and tiers), :mod:`~ntui.core.logs.lineforms` (the lines'
forms, prefixes and times), :mod:`~ntui.core.logs.detectors` (the table of one-line forms),
:mod:`~ntui.core.logs.childfailed` (torchrun's summary block), :mod:`~ntui.core.logs.rankdetector` (one log's
detector) and :mod:`~ntui.core.logs.summary` (the outcome in words). The job-level verdict on top is
:mod:`ntui.core.logs.verdict`'s.

Pure and incremental. One :class:`~ntui.core.logs.rankdetector.RankDetector` per log file (one per rank, plus
one for the batch log) is fed cleaned lines (see :func:`ntui.core.textsafe.clean_line`) as they arrive; it keeps a
few lines of state (an open traceback, an open torchrun ``ChildFailedError`` summary) and emits
:class:`~ntui.core.logs.finding.LogFailure` values. The caller feeds the tail window on open and then only new
lines, so the cost is per new line, not per log.

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

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from ntui.core.hosts import format_index_ranges
from ntui.core.logs.finding import LogFailure
from ntui.core.logs.lineforms import (
    AFTER_PEERS,
    GLOO_WAIT_RE,
    at_collective,
    collective_of,
)
from ntui.core.logs.summary import TriageSummary

__all__ = ["triage"]

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
    if any(f.kind in AFTER_PEERS or (f.from_traceback and f.kind != "rank_signal") for f in group):
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


_ALIKE_RE = re.compile(r"\d+")  # two ranks' errors alike but for their numbers (a rank, a pid, a size)

def _nccl_timeouts(first: LogFailure, per_rank: Mapping[int | None, LogFailure],
                   ranks: Collection[int]) -> tuple[LogFailure, str]:
    """Several ranks' watchdogs timed out. The one at the lowest collective stopped first (the others went on to
    the next and waited there). At the same collective, a rank in another operation than the rest diverged from
    them (it called something else: a barrier while they all-reduced); all alike, the rank that stopped first is
    one that never reported."""
    timed_out = {r: (f, c) for r, f in per_rank.items()
                 if r is not None and f.kind == "nccl_timeout" and (c := collective_of(f)) is not None}
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
            return timed_out[odd][0], (f"it was in {at_collective(seq, op_a)} while ranks "
                                       f"{format_index_ranges(many)} waited in {at_collective(seq, op_b)}: the ranks' "
                                       f"collectives diverged, rank {odd} is where to look")
    silent = _silent(per_rank, ranks)
    said = _never_reported(silent) if silent else "the rank that stopped first is not in this log"
    reported = format_index_ranges(sorted(timed_out))
    where_ = f"at {at_collective(seq, op)}" if seq >= 0 else f"in {at_collective(seq, op)}"
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
    return f.kind == "nccl_timeout" or (f.kind == "dist_timeout" and GLOO_WAIT_RE.search(f.first_line) is not None)


def _silent(per_rank: Mapping[int | None, LogFailure], ranks: Collection[int]) -> list[int]:
    """The ranks known (their files, or a report about them) that said nothing of their own: no error, no wait;
    at most their launcher's report that it stopped them."""
    known = set(ranks) | {r for r in per_rank if r is not None}
    if not ranks and known:
        # one combined log: the ranks below the highest it names ran too (a job's ranks are 0..N-1), so one it
        # never names said nothing
        known |= set(range(max(known)))
    return sorted(r for r in known if r not in per_rank or per_rank[r].tier >= 2)


def _stopped(f: LogFailure | None) -> bool:
    """A launcher's or srun's word that it stopped this rank (SIGTERM, SIGINT: ``task 1: Terminated``), no error of its
    own: the rank was alive until then."""
    return f is not None and f.kind == "signal" and f.signal in ("SIGTERM", "SIGINT")


def _never_reported(silent: Sequence[int]) -> str:
    """``rank 3 never reported: it likely stopped first`` (``ranks 2, 3 ...: one of them ...``)."""
    return (f"{'rank' if len(silent) == 1 else 'ranks'} {format_index_ranges(silent)} never reported: "
            f"{'it' if len(silent) == 1 else 'one of them'} likely stopped first")


def _waited_for(per_rank: Mapping[int | None, LogFailure], ranks: Collection[int]) -> str:
    """The first finding is a wait and no rank reported a cause: who it waited for, as far as the log knows."""
    silent = _silent(per_rank, ranks)
    if silent:
        return _never_reported(silent)
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
    elif first.kind == "peer_failure" and (gone := [r for r in _silent(causal, ranks) if not _stopped(causal.get(r))]):
        # a lost connection says only that a peer went away: a rank that said nothing of its own is likely that
        # peer; not one its launcher or srun stopped (it was alive until then)
        silent = tuple(gone)
        note = note or _never_reported(gone)
    return TriageSummary(first=first, per_rank=per_rank, total=len(flat), note=note, silent=silent)

