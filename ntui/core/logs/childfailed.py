"""torchrun's ``ChildFailedError`` summary, read block by block: one entry per failed worker.

The block (``=====`` rules, its ``Failures:`` and ``Root Cause`` sections, one ``[i]:`` entry per worker with its
``time``, ``host``, ``rank``, ``exitcode``, ``error_file`` and ``traceback`` fields) is fed line by line by
:class:`~ntui.core.logs.rankdetector.RankDetector`; each entry read is a :class:`ChildEntry`, which the detector
makes a finding of. A summary retyped by hand (fields glued, a key's underscore a space) is read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ntui.core.logs.lineforms import (
    EXC_LINE_RE,
    EXCERPT_LINES,
    MAX_TB_LINES,
    TB_HEADER,
    classify_exception,
    parse_line_time,
)
from ntui.core.logs.signals import is_fault, signal_name

__all__ = ["ChildEntry", "ChildFailedBlock"]

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


@dataclass(frozen=True)
class ChildEntry:
    """One worker's entry of the summary: what it says failed, and where in the log."""

    kind: str
    message: str
    line_no: int
    line_time: float | None
    lines: tuple[str, ...]
    rank: int | None
    node: str | None
    signal: str | None
    local_rank: int | None
    from_tb: bool
    root_cause: bool


@dataclass
class ChildFailedBlock:
    """The summary being read: its section, its rules and the entry under way."""

    section: str = ""  # "failures" | "root"
    rules: int = 0  # "=====" lines seen
    entry: dict[str, str] | None = None
    entry_lines: list[str] = field(default_factory=list)
    entry_line_no: int = 0
    count: int = 0
    tb_lines: list[str] = field(default_factory=list)  # the entry's traceback, when it holds the worker's (@record)
    closed: bool = False  # the closing rule was read (and consumed), or the block was given up

    def feed(self, text: str, line_no: int, year: int | None, out: list[ChildEntry]) -> bool:
        """One line of the block (line ``line_no``); the entries it ended go to ``out``. True when the block
        ended before this line (not the format we know: the line is not consumed, :attr:`closed` is set)."""
        self.count += 1
        stripped = text.strip()
        if stripped.startswith("====="):
            self.rules += 1
            if self.entry is not None:
                self._emit(year, out)
            if self.rules >= 2:
                self.closed = True  # the closing rule ends the block (and is consumed)
            return False
        if self.count > MAX_TB_LINES or text.startswith(TB_HEADER):  # not the format we know: give up
            self.closed = True
            return True
        if stripped.startswith("-----"):
            if self.entry is not None:
                self._emit(year, out)
            return False
        if stripped.startswith("Failures:"):
            self.section = "failures"
            return False
        if stripped.startswith("Root Cause"):
            self.section = "root"
            return False
        if _CF_ENTRY_RE.match(text):
            if self.entry is not None:
                self._emit(year, out)
            self.entry = {}
            self.entry_lines = [text]
            self.entry_line_no = line_no
            return False
        parts = _cf_parts(text) if self.entry is not None and "traceback" not in self.entry else [text]
        fm = _CF_FIELD_RE.match(parts[0])
        if fm is not None and self.entry is not None and "traceback" not in self.entry:
            for part in parts:
                if (fm := _CF_FIELD_RE.match(part)) is not None and "traceback" not in self.entry:
                    self.entry[_cf_key(fm["key"])] = fm["value"].strip()
            self.entry_lines.append(text)
        elif self.entry is not None and "traceback" in self.entry and text.startswith("  ") and stripped:
            # the traceback the worker's @record wrote, indented under "traceback :": its last line is the error
            self.tb_lines.append(stripped)
            if len(self.entry_lines) < EXCERPT_LINES:
                self.entry_lines.append(text)
        return False

    def finish(self, year: int | None, out: list[ChildEntry]) -> None:
        """End of input: the entry under way, if any, is read as it stands."""
        if self.entry is not None:
            self._emit(year, out)

    def _emit(self, year: int | None, out: list[ChildEntry]) -> None:
        entry = self.entry or {}
        self.entry = None
        rank_m = _CF_RANK_RE.match(entry.get("rank", ""))
        exit_m = _CF_EXIT_RE.match(entry.get("exitcode", ""))
        if rank_m is None and exit_m is None:
            return
        rank = int(rank_m["rank"]) if rank_m else None
        local = int(rank_m["local"]) if rank_m and rank_m["local"] else None
        code = int(exit_m["code"]) if exit_m else None
        host = entry.get("host") or None
        tb_text = entry.get("traceback", "")
        tb_lines, self.tb_lines = self.tb_lines, []
        error = tb_lines[-1] if tb_text.startswith(TB_HEADER) and tb_lines else None
        if error is not None and (error.startswith("File ") or EXC_LINE_RE.match(error) is None):
            error = None
        sig = signal_name(code) if code is not None and code < 0 else None
        from_tb = False
        if error is not None:  # the worker's own error, as its traceback ended
            kind, msg, from_tb = classify_exception(error), error, True
        elif code is not None and code < 0:  # killed by a signal: a fault is the rank's own, a stop the launcher's
            kind = "rank_signal" if is_fault(sig) else "signal"
            part = "root cause" if self.section == "root" else "failures"
            msg = f"exitcode {code}" + (f" ({sig})" if sig else "") + f" in torch elastic's {part}"
        else:
            kind = "child_failed"
            who = f"rank {entry.get('rank', '?')}"
            msg = f"ChildFailedError: {who} on {host or '?'} exited with exitcode {entry.get('exitcode', '?')}"
            if tb_text and not tb_text.startswith("To enable traceback") and tb_text != "<N/A>":
                msg += f": {tb_text}"
            if self.section == "root":
                msg += " (root cause)"
        out.append(ChildEntry(
            kind=kind,
            message=msg,
            line_no=self.entry_line_no,
            line_time=parse_line_time(entry.get("time", ""), year=year),
            lines=tuple(self.entry_lines),
            rank=rank,
            node=host,
            signal=sig,
            local_rank=local,
            from_tb=from_tb,
            # the root cause proves the rank only from the worker's error file (@record): without one it is the
            # first exit the agent saw, a consequence as often as not (torch 2.0's captures: rank 0 for rank 1)
            root_cause=self.section == "root" and entry.get("error_file", "<N/A>") not in ("", "<N/A>"),
        ))
