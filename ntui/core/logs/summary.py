"""What triage found, in words: :class:`TriageSummary` (the outcome of :func:`ntui.core.logs.triage.triage`) and
the phrases of a finding (:func:`where`, :func:`what_happened`, :func:`missing_command`, :func:`cut_frame`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.hosts import format_index_ranges
from ntui.core.logs.finding import LogFailure
from ntui.core.logs.lineforms import (
    GLOO_WAIT_RE,
    MODULE_RE,
    NOT_FOUND_RE,
    at_collective,
    collective_of,
)
from ntui.core.logs.signals import fault_cause
from ntui.core.textsafe import ellipsize

__all__ = ["SUMMARY_WIDTH", "TriageSummary", "cut_frame", "missing_command", "what_happened", "where"]

#: the width a one-line verdict is cut to (the jobs view's and the CLI's)
SUMMARY_WIDTH = 220

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
        missing = MODULE_RE.match(f.first_line) if f.kind == "traceback" else None
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
    m = NOT_FOUND_RE.match(f.first_line)
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
        op = collective_of(f)
        return f"timed out in NCCL {at_collective(*op)}" if op else "hit NCCL's watchdog timeout"
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
        if (g := GLOO_WAIT_RE.search(text)) is not None:
            return f"timed out after {int(g['ms']) / 1000:g} s waiting for a peer in a collective (gloo {g['op']})"
        if "RendezvousTimeout" in text:
            return "gave up waiting for the rendezvous (not every node's launcher joined)"
        if "Rendezvous" in text:
            return "could not reach the rendezvous"
        if "waiting for clients" in text or "waiting for" in text and "Timed out after" in text:
            return "timed out waiting for the other ranks at the store"
        if "EADDRINUSE" in text or "address already in use" in text.lower():  # the store's own listen(), not a peer
            return "could not open the store: its port (MASTER_PORT) is in use on the first node"
        if "DistNetworkError" in text or "socket has timed out" in text:
            return "could not reach the store (MASTER_ADDR:MASTER_PORT)"
    return "failed"
