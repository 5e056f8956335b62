"""The verdict on a job that ended (or is ending): what Slurm did first, then which rank's error was the cause.

Pure: it reads :class:`~ntui.core.logs.finding.LogFailure` values (the detectors' output over the batch log and the
rank logs) and, when known, Slurm's final word (:class:`SlurmFinal`: the state from ``sacct``/``scontrol``).

Order of the verdict:

1. **Job-level verdicts** are stated first, because then the ranks' errors are consequences: cancelled
   (``scancel``; who from sacct's ``CANCELLED by <uid>``, when from slurmstepd's ``*** JOB <id> ON <node>
   CANCELLED AT <time> ***``), time limit (``... DUE TO TIME LIMIT``), node failure (``... DUE TO NODE
   FAILURE`` or Slurm's NODE_FAIL), preemption (``... DUE TO PREEMPTION`` or PREEMPTED), OOM kill by the
   cgroup (slurmstepd's ``Detected N oom_kill event`` / srun's ``task N: Out Of Memory`` or OUT_OF_MEMORY).
   A real error on a rank *before* that moment is named after it ("before that: rank 2 ..."); for an OOM
   kill, the rank the killer took when the logs say (its SIGKILL).
2. Otherwise the **root cause** on a rank (:func:`ntui.core.logs.triage.triage`: the earliest finding, the most
   telling tier within 10 s): a Traceback, CUDA OOM, an NCCL error, a rank killed by a fault signal ("rank 3
   on nid002 was killed by SIGABRT (local rank 1) first"), named by its **global** rank and node.
   srun's ``task N`` is a global rank only with the srun launcher; with torchrun/accelerate it is the
   launcher of node N (the detectors are told so, and such a finding names the node and the task), and the
   global rank comes from torch elastic's summary or the rank's own log.
3. Findings on other ranks that came after the root and only say a peer went away (NCCL watchdog timeouts,
   ``Connection closed by peer``, store and rendezvous errors, SIGTERM from the launcher) are
   **consequences**, listed after the cause, never as it.
4. Slurm's exit code, when it says a fault signal (``0:6``, ``134``) the logs do not, is added to the line;
   with nothing in the logs it is the verdict ("killed by SIGABRT (Slurm's exit code 0:6)").
"""

from __future__ import annotations

import pwd
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeVar

from ntui.core.logs.finding import LogFailure
from ntui.core.logs.signals import exit_code_signal, is_fault
from ntui.core.logs.summary import SUMMARY_WIDTH, cut_frame, what_happened, where
from ntui.core.logs.triage import triage
from ntui.core.slurm.srunlines import parse_cancel
from ntui.core.textsafe import ellipsize

__all__ = ["VERDICT_KINDS", "JobVerdict", "SlurmFinal", "VerdictKind", "decide", "unnamed"]

VerdictKind = Literal["cancelled", "timeout", "node_fail", "preempted", "oom", "rank_error", "unnamed", "none"]
VERDICT_KINDS: tuple[str, ...] = ("cancelled", "timeout", "node_fail", "preempted", "oom", "rank_error", "unnamed",
                                  "none")
JobLevel = Literal["cancelled", "timeout", "node_fail", "preempted", "oom"]

# Slurm's final state -> job-level verdict (states that are not one: COMPLETED, FAILED, ...)
_STATE_KIND: dict[str, JobLevel] = {
    "CANCELLED": "cancelled",
    "TIMEOUT": "timeout",
    "NODE_FAIL": "node_fail",
    "PREEMPTED": "preempted",
    "OUT_OF_MEMORY": "oom",
}
_REASON_KIND: tuple[tuple[str, JobLevel], ...] = (
    ("TIME LIMIT", "timeout"),
    ("NODE FAIL", "node_fail"),
    ("PREEMPT", "preempted"),
)
_BY_RE = re.compile(r"\bby (?P<who>\S+)")
_MAX_LINE = SUMMARY_WIDTH


@dataclass(frozen=True)
class SlurmFinal:
    """Slurm's final word on a job, when known: ``state`` as sacct/scontrol print it (``CANCELLED by 1000``,
    ``TIMEOUT``, ``FAILED`` ...), ``reason`` (scontrol's Reason / sacct's Reason), the nodes, the exit code."""

    state: str
    reason: str | None = None
    nodes: str | None = None
    exit_code: str | None = None
    """sacct's / scontrol's ``ExitCode`` (``exit:signal``, ``0:6``): a fault signal there is named in the verdict."""


@dataclass(frozen=True)
class JobVerdict:
    """The verdict: ``line`` for people, the rest for the job record.

    ``kind``: cancelled / timeout / node_fail / preempted / oom (job-level, Slurm's doing), rank_error (a rank's own
    error), unnamed (lines that look like a failure, none a known form: "could not name the cause"), none (no line
    says error, exit code, signal, timeout or traceback). ``rank``/``node``: who failed (global rank; for a
    job-level verdict the node slurmstepd or Slurm named). ``who``/``when``: who cancelled (a user name, or a uid)
    and when (``2026-11-30T09:29:23`` as Slurm printed it; for a rank error, the error's time: its line's timestamp,
    else when the line was seen or the file's mtime). ``root``: the finding the verdict rests on; ``cause``: for a
    job-level verdict, a rank's real error that came before it; ``consequences``: findings on other ranks that
    followed the root. ``source``: "slurm" (Slurm's state decided the kind), "log", or "none".
    :attr:`signal`: the fault signal the failing rank died of, when that is what the verdict rests on.
    """

    kind: VerdictKind
    line: str
    rank: int | None = None
    node: str | None = None
    who: str | None = None
    when: str | None = None
    root: LogFailure | None = None
    cause: LogFailure | None = None
    consequences: tuple[LogFailure, ...] = ()
    source: Literal["slurm", "log", "none"] = "none"

    @property
    def failed(self) -> bool:
        return self.kind != "none"

    def as_dict(self) -> dict[str, object]:
        """The structured fields (JSON-ready) for the job record."""
        return {
            "kind": self.kind,
            "line": self.line,
            "rank": self.rank,
            "node": self.node,
            "who": self.who,
            "when": self.when,
            "source": self.source,
            "signal": self.signal,
            "consequences": sorted({f.rank for f in self.consequences if f.rank is not None}),
        }

    @property
    def signal(self) -> str | None:
        """The fault signal the failing rank died of (``SIGABRT``), when the verdict rests on one."""
        f = self.cause or self.root
        return f.signal if f is not None and f.kind == "rank_signal" else None


def unnamed(suspects: Sequence[tuple[str, int, str]], *, shown: int = 3) -> JobVerdict:
    """No finding, but lines that look like a failure: ``could not name the cause: the lines that look like it:
    rank 2 line 41: ...; ...`` (``suspects``: who, line number, text), the verdict of a log no detector knows."""
    said = "; ".join(f"{who + ' ' if who else ''}line {n}: {_crop(text, 90)}" for who, n, text in suspects[:shown])
    more = f" (+{len(suspects) - shown} more)" if len(suspects) > shown else ""
    return JobVerdict("unnamed", _crop(f"could not name the cause: the lines that look like it: {said}{more}",
                                       _MAX_LINE * 2), source="log")


_K = TypeVar("_K")


def _flat(findings: Mapping[_K, Sequence[LogFailure]] | Iterable[LogFailure]) -> list[LogFailure]:
    if isinstance(findings, Mapping):
        return [f for group in findings.values() for f in group]
    return list(findings)


def _user(who: str) -> str:
    """``1000`` -> the user name when this machine knows the uid, else the uid as given."""
    if who.isdigit():
        try:
            return pwd.getpwuid(int(who)).pw_name
        except (KeyError, OverflowError):
            return who
    return who


def _epoch(at: str | None) -> float | None:
    if not at:
        return None
    try:
        return datetime.fromisoformat(at).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class _JobEvent:
    kind: JobLevel
    finding: LogFailure | None
    node: str | None
    when: str | None
    reporter: str | None = None  # the host whose slurmstepd told a node failure (not the node that failed)


def _job_event(flat: Sequence[LogFailure]) -> _JobEvent | None:
    """The job-level event the logs tell (the earliest, JOB lines before STEP lines)."""
    events: list[tuple[int, float, int, _JobEvent]] = []
    failed_node: str | None = None
    for f in flat:
        if f.kind == "oom_kill":
            events.append((1, f.time or float("inf"), f.seq, _JobEvent("oom", f, f.node, None)))
            continue
        if f.kind not in ("cancelled", "time_limit", "node_failure"):
            continue
        c = parse_cancel(f.first_line)
        if c is None:
            if f.kind == "node_failure":  # srun: error: Node failure on nid002
                failed_node = failed_node or f.node
                events.append((2, f.time or float("inf"), f.seq, _JobEvent("node_fail", f, f.node, None)))
            continue
        reason = (c.reason or "").upper()
        kind: JobLevel | None = next((k for text, k in _REASON_KIND if text in reason), None)
        if kind is None:
            if c.scope != "JOB":
                continue  # a step cancelled by srun (--kill-on-bad-exit) or by the launcher: not Slurm's verdict
            kind = "cancelled"
        events.append((0 if c.scope == "JOB" else 1, f.time or float("inf"), f.seq, _JobEvent(kind, f, c.node, c.at)))
    if not events:
        return None
    best = min(events, key=lambda e: e[:3])[3]
    if best.kind == "node_fail" and best.finding is not None and best.finding.kind == "node_failure" \
            and parse_cancel(best.finding.first_line) is not None:
        # slurmstepd's "*** STEP ... ON nid001 CANCELLED ... DUE TO NODE FAILURE" names the host it ran on; only
        # srun's "Node failure on nid002" names the node that failed
        best = _JobEvent(best.kind, best.finding, failed_node, best.when, reporter=best.node)
    return best


def _crop(text: str, n: int = _MAX_LINE) -> str:
    return ellipsize(text, n)


def _ranks_text(found: Sequence[LogFailure]) -> str:
    ranks = sorted({f.rank for f in found if f.rank is not None})
    if not ranks:
        return ""
    shown = ", ".join(str(r) for r in ranks[:8]) + (f" and {len(ranks) - 8} more" if len(ranks) > 8 else "")
    return f"rank{'s' if len(ranks) != 1 else ''} {shown}"


def decide(
    findings: Mapping[_K, Sequence[LogFailure]] | Iterable[LogFailure],
    *,
    nodes_by_rank: Mapping[int, str] | None = None,
    launcher: str | None = None,
    slurm: SlurmFinal | None = None,
    window_s: float = 10.0,
    ranks: Collection[int] = (),
    hosts_seen: int = 0,
    several_nodes: bool = True,
) -> JobVerdict:
    """The verdict over a job's findings (see the module docstring). The detectors already read srun's
    ``task N`` according to the launcher (``RankDetector(task_is_rank=...)``); ``launcher`` is kept for the
    record's sake and future wording. ``ranks``: the ranks whose logs were read (a rank among them that reported
    nothing may be the one an NCCL timeout waited for)."""
    flat = _flat(findings)
    nodes = dict(nodes_by_rank or {})
    event = _job_event(flat)
    kind: JobLevel | None = event.kind if event else None
    source: Literal["slurm", "log", "none"] = "log" if event else "none"
    who: str | None = None
    if slurm is not None:
        state = slurm.state.strip().upper()
        base = state.split()[0].rstrip("+") if state else ""
        slurm_kind = _STATE_KIND.get(base)
        if slurm_kind is not None:
            kind, source = slurm_kind, "slurm"
            m = _BY_RE.search(slurm.state)
            if m is not None:
                who = _user(m["who"])
        elif base in ("COMPLETED", "FAILED"):
            kind = None  # Slurm says the program ended by itself: the log's STEP cancels are the launcher's
            source = "slurm"
    # the rank-level root cause: job-level kinds and scheduler noise are not a rank's error
    job_level = ("cancelled", "time_limit", "node_failure")
    # (each log's findings kept apart: the order of a log's lines is evidence, see triage's)
    rank_findings = {k: [f for f in group if f.kind not in job_level] for k, group in findings.items()} \
        if isinstance(findings, Mapping) else [f for f in flat if f.kind not in job_level]
    summary = triage(rank_findings, nodes_by_rank=nodes, window_s=window_s, ranks=ranks, hosts_seen=hosts_seen,
                     several_nodes=several_nodes)
    root = summary.first
    earlier = ""
    if kind is not None and source == "log" and event is not None and root is not None and root.tier <= 1:
        # one log appended over a requeue: the job's end it tells is an earlier allocation's when a rank's own
        # error comes well after it (the job ran again); that error is this failure, the end is said after it
        limit = _epoch(event.when)
        if limit is not None and root.time is not None and root.time > limit + _RAN_AGAIN_S:
            ended = _job_line(kind, who=who, when=event.when, node=event.node, event=event)
            earlier = f" · the job ran again after an earlier end: {ended}"
            kind, event = None, None
    if kind is not None:
        event = event if event is not None and event.kind == kind else None  # the logs may tell another story
        when = event.when if event else None
        node = event.node if event else None
        limit = _epoch(when)
        before = root is not None and (limit is None or (root.time is not None and root.time < limit))
        cause = root if before and root is not None and root.tier == 0 and root.kind != "oom_kill" else None
        line = _job_line(kind, who=who, when=when, node=node, event=event)
        if cause is not None and kind == "node_fail" and node is not None and cause.node == node:
            # a rank on the node that failed erred as it went down (CUDA's "unknown error"): a symptom
            line += f" · on {node} as it failed: {where(cause)}: {_crop(cause.first_line, 120)}"
        elif cause is not None and cause.kind == "rank_signal":  # an OOM kill's victim, or a crash before a cancel
            told = f"{where(cause)} {what_happened(cause, likely=kind != 'oom')}: {_crop(cause.first_line, 120)}"
            line += f" · {told}" if kind == "oom" else f" · before that {told}"
        elif cause is not None:
            line += f" · before that {where(cause)}: {_crop(cause.first_line, 120)}"
        oom_rank = event.finding.rank if kind == "oom" and event and event.finding else None
        if kind == "oom" and oom_rank is None and cause is None:
            # slurmstepd names the step, srun the task the killer took ("task 0: Out Of Memory"): that rank
            taken = sorted({f.rank for f in flat if f.kind == "oom_kill" and f.rank is not None})
            if len(taken) == 1:
                oom_rank = taken[0]
                line += f" · it took rank {oom_rank}" + (f" on {node}" if node else "")
        return JobVerdict(kind, line, rank=oom_rank if cause is None else cause.rank,
                          node=node if cause is None else cause.node, who=who, when=when,
                          root=event.finding if event else None, cause=cause, source=source)
    slurm_signal = exit_code_signal(slurm.exit_code) if slurm is not None else None
    if not is_fault(slurm_signal):
        slurm_signal = None  # SIGTERM and the like: how srun or a launcher stopped the step, not the cause
    if root is None:
        if slurm is not None and slurm_signal is not None:  # nothing in the logs, but Slurm saw the signal
            return JobVerdict("rank_error", f"killed by {slurm_signal} (Slurm's exit code {slurm.exit_code}); "
                              "no log says which rank", source="slurm")
        return JobVerdict("none", "no failure found", source=source)
    after = None if root.time is None else root.time - window_s
    consequences = tuple(
        f for r, f in sorted(summary.per_rank.items(), key=lambda kv: -1 if kv[0] is None else kv[0])
        if r is not None and r != root.rank and f.tier >= 1 and (after is None or f.time is None or f.time >= after)
        and r not in summary.silent  # a rank a timeout waited for is where to look, not a consequence
        and r not in root.alike  # a rank that failed alike is in the finding
    )
    if root.rank is None:
        # the cause's rank is not in the log: a rank whose only word is its plain exit (torch elastic's "exitcode:
        # 1") may be that very rank, so it is no consequence
        consequences = tuple(f for f in consequences if f.kind != "child_failed")
    line = _crop(summary.summary())
    if root.kind == "signal" and not root.from_traceback and root.signal in (None, "SIGTERM", "SIGINT", "SIGKILL"):
        # the first word is a launcher's or Slurm's stopping a rank: what made it stop is in no log
        return JobVerdict("unnamed", _crop(f"could not name the cause: {where(root)} {what_happened(root)} first "
                                           f"and no rank's log says why ({root.first_line}, line {root.line_no})"),
                          rank=root.rank, node=root.node, root=root, source=source)
    if (frame := cut_frame(root)) is not None:
        # the log ends (or the paste stops) inside the traceback: its error line is not there to name
        return JobVerdict("unnamed", _crop(f"could not name the cause: the log is cut mid-traceback ({where(root)}: "
                                           f"its error line is not in it); the last frame shown: {frame} (traceback "
                                           f"(incomplete), line {root.line_no})"),
                          rank=root.rank, node=root.node, root=root, source=source)
    if root.kind == "child_failed" and not any(f.tier < 2 for f in flat):
        # only a launcher's word that a worker exited with a code (torch elastic's summary, mp.spawn's exception,
        # Open MPI's box): the worker's own error is in no log read
        return JobVerdict("unnamed", _crop(f"could not name the cause: {where(root)} exited with an error code and no "
                                           f"log read shows its error ({root.first_line}, line {root.line_no})"),
                          rank=root.rank, node=root.node, root=root, source=source)
    if consequences:
        line += f" · then {_ranks_text(consequences)} as a consequence"
    line += earlier
    if slurm is not None and slurm_signal is not None and root.signal != slurm_signal:
        line += f" · Slurm's exit code {slurm.exit_code}: {slurm_signal}"
    when = datetime.fromtimestamp(root.time).isoformat(timespec="seconds") if root.time is not None else None
    rank, node = root.rank, root.node
    if len(summary.silent) == 1 and root.kind in ("nccl_timeout", "dist_timeout", "peer_failure") \
            and root.rank != summary.silent[0]:
        rank, node = summary.silent[0], None  # the one rank the others waited for or lost (the line says so)
    return JobVerdict("rank_error", line, rank=rank, node=node, root=root, consequences=consequences,
                      source=source, when=when)


#: how long after a job's end (its log's words) a rank's own error must come to be a later allocation's
_RAN_AGAIN_S = 120.0


def _job_line(kind: JobLevel, *, who: str | None, when: str | None, node: str | None, event: _JobEvent | None
              ) -> str:
    at = f" at {when}" if when else ""
    if kind == "cancelled":
        return "cancelled" + (f" by {who}" if who else "") + at + (" (scancel)" if who is None else "")
    if kind == "timeout":
        return f"time limit reached{at}: Slurm cancelled the job"
    if kind == "node_fail":
        unnamed = (f" (the log names no failed node: slurmstepd on {event.reporter} reported it)"
                   if node is None and event is not None and event.reporter else "")
        return "node failure" + (f" on {node}" if node else "") + at + ": Slurm ended the job" + unnamed
    if kind == "preempted":
        return f"preempted{at}: Slurm ended the job for a higher-priority one"
    f = event.finding if event else None
    on = f" on {where(f)}" if f is not None and (f.rank is not None or f.task is not None) else (
        f" on {node}" if node else "")
    return f"killed by the out-of-memory killer (cgroup memory limit){on}"
