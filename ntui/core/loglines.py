"""The line reader: one log line as its messages, each with what its prefixes said (rank, local rank, host, time).

Triage, progress and the log pane read lines that launchers, loggers, CI systems and users' pastes have wrapped
in their own ways. One reader takes those wrappings off, wherever they stand on the line, and keeps what they
say as evidence:

* **several messages on one line**: the segments of a ``\\r``-joined line (a bar redrawn, then an error); a
  message glued onto the end of another with no newline between (two processes writing at once, a paste that
  lost the newline): where srun's, slurmstepd's, libstdc++'s, torch's, NCCL's or Python's own message starts
  right after other text, a new message starts; a paste whose newlines became runs of spaces (a long line with
  several runs of four or more, and a traceback in it) is split at the runs, the traceback's indentation given
  back;
* **prefixes**, taken off one after another at the start of the message, each a row of :data:`PREFIXES` (its
  pattern and what it says): a CI runner's UTC timestamp, a pytest node id and pytest's ``E   `` marker, a
  logger's ``[<time>] <name>: [LEVEL]`` header, torch's ``[rankN]:``, torch elastic's ``[default3]:`` and
  ``[<host>:3]:``, srun's ``--label`` ``3:``, Open MPI's ``[1,3]<stdout>:`` and ``[host:pid] ``, horovodrun's
  ``[3]<stderr>:``, MPICH's
  ``[3] ``, Ray's
  ``(pid=.., rank=3)``, NCCL's ``host:pid:tid [dev]``, pdsh's (the DeepSpeed launcher's) ``host:``, ntui's
  merged view ``[r3]``; a timestamp a wrapper wrote in front of one of those (``[2024-05-01 12:00:00]
  host:pid:tid [0]``, ``date``'s ``Tue Jun 17 08:14:03 2025`` glued to Open MPI's tag); the C++ log header of
  TensorFlow/absl on an error line (``2024-05-01 12:00:00.123456: E file.cc:12] ``);
* **Rich's boxed traceback** (``╭─ Traceback (most recent call last) ─╮``, its frames between ``│`` borders as
  ``path:line in func`` and source lines with a ``❱`` on the failing one, ``╰─╯``; Lightning's, typer's,
  accelerate's) read as Python's plain one: the header, ``File "path", line N, in func``, the source lines
  indented, the bottom border an empty line; the exception line Rich prints under the box is already plain;
* **cut lines**: a message that ends in an ellipsis, a ``[truncated]`` mark or the display cap's ``… [+N bytes]``
  is marked :attr:`Message.cut`: what it says is only its start.

A message keeps the glog and Python logging forms that say a level (``E0909 14:03:50.01 ...``,
``ERROR:torch...``): those are the detectors' to read. Pure; :func:`read_line` is called once per line, so
ordinary lines cost one character test each (no prefix) and a few substring tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ntui.core.timestamps import iso_stamp, local_epoch

__all__ = [
    "PREFIXES",
    "Message",
    "Prefix",
    "PrefixRow",
    "date_stamp",
    "glued_pieces",
    "parse_prefix",
    "read_line",
    "unbox",
    "uncollapse",
]


class Prefix(NamedTuple):
    """What a line's prefixes say: the global rank (torch's ``[rank1]:``, srun's ``--label``, Open MPI's
    ``[1,3]``, Ray's ``rank=3``, ntui's ``[r1]``), the local rank (torch elastic's ``[default3]:``, NCCL's
    ``[dev]``), the host and the time the prefix printed (epoch seconds, local time); ``task``: srun's label when
    the rank said is that label's alone (under a launcher per node, torchrun's or accelerate's, the label is that
    node's launcher, not a rank: the reader of the line knows which). (A tuple: one per line.)"""

    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    time: float | None = None
    task: int | None = None


NO_PREFIX = Prefix()


@dataclass(frozen=True)
class Message:
    """One message of a line: its text without prefixes, what they said, and whether the line was cut."""

    text: str
    prefix: Prefix = NO_PREFIX
    cut: bool = False


class PrefixRow(NamedTuple):
    """One prefix form: its name, the pattern that matches it at the start of a message, and what its groups
    say (``rank``, ``local``, ``host``, ``time``: a group of that name; ``time`` read by :func:`iso_stamp`, a
    ``date`` group by :func:`date_stamp`)."""

    name: str
    pattern: re.Pattern[str]
    # (the first characters a message may start with for the pattern to be tried: the cheap test; "" any)
    first: str = ""


_HOST = r"[A-Za-z][\w-]*\d[\w.-]*|\d{1,3}(?:\.\d{1,3}){3}"
_ISO = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?"
#: what a wrapper's timestamp stands in front of (it is taken off only there: a line that starts with a time and
#: says anything else keeps it): Open MPI's tag, torch's [rankN]:, NCCL's host:pid:tid [dev]
_STAMPED = r"(?=\[\d+,\d+\]<std|\[rank\d+\]:|[A-Za-z][\w.-]*:\d+:\d+ \[\d+\] )"
_DAYS = ("Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun ")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), 1)}
#: words that look like a host before a colon but are a program's own words (``rank0: ...``, ``epoch3: ...``) or
#: Slurm's (``slurmstepd-nid001:``); a hyphen after the others makes it a host's name (``gpu-b08``)
_NOT_HOSTS = re.compile(r"(?i)^(?:slurmstepd|(?:rank|task|step|epoch|iter|gpu|cuda|device|dev|line|layer|worker_?id"
                        r"|block|stage|batch|loss|cpu|proc|thread|tid|pid)(?!-))")

PREFIXES: tuple[PrefixRow, ...] = (
    # GitHub Actions and other CI runners: a UTC timestamp before every line
    PrefixRow("ci-time", re.compile(r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ")),
    # pytest: a node id before the first line of a test's output, its "E   " before each line of a failure
    PrefixRow("pytest-node", re.compile(r"[\w./-]+\.py::[\w\[\]:.,-]+ "), ""),
    PrefixRow("pytest-e", re.compile(r"E {7}|E {1,6}(?=\S)"), "E"),
    # torch's [rank1]:, torch elastic's --tee [default3]: / [<host>:3]:, srun's --label 3:, ntui's [r3]
    PrefixRow("ntui-merged", re.compile(r"\[r(?P<rank>\d+)\] "), "["),
    PrefixRow("torch-rank", re.compile(r"\[rank(?P<rank>\d+)\]:[ ]?"), "["),
    # Lightning's rank_prefixed_message "[rank: N] " (torch elastic's "[${rank}]:" template is not read: its
    # failure summary lists "[N]:" entries)
    PrefixRow("lightning-rank", re.compile(r"\[rank: (?P<rank>\d+)\] "), "["),
    PrefixRow("elastic-host", re.compile(r"\[(?P<host>[A-Za-z][\w.-]*):(?P<local>\d+)\]:[ ]?"), "["),
    PrefixRow("elastic-role", re.compile(r"\[(?!rank\d)[A-Za-z_][\w-]*?(?P<local>\d+)\]:[ ]?"), "["),
    PrefixRow("srun-label", re.compile(r"\s*(?P<rank>\d+): "), ""),
    # Open MPI's --tag-output: [jobid,rank]<stdout>:; horovodrun's own (Gloo) tag: [rank]<stdout>:
    PrefixRow("mpi-tag", re.compile(r"\[\d+,(?P<rank>\d+)\]<std(?:out|err)>:\s?"), "["),
    PrefixRow("horovod-tag", re.compile(r"\[(?P<rank>\d{1,5})\]<std(?:out|err)>:\s?"), "["),
    # MPICH's and Intel MPI's rank label (mpirun -l, -prepend-rank): [3] before each line of rank 3
    PrefixRow("mpich-rank", re.compile(r"\[(?P<rank>\d{1,5})\] (?=\S)"), "["),
    # Open MPI's signal handler before each line of its report: [host:pid] (the process's host, not a rank), then
    # its banner, the signal, the address or a frame
    PrefixRow("mpi-proc", re.compile(
        r"\[(?P<host>[A-Za-z][\w.-]*):\d+\] (?=\*\*\* |Signal|Failing at |\[ ?\d+\] )"), "["),
    # Ray's worker prefix: (RayTrainWorker pid=4121, ip=10.0.0.3) or (head, rank=0, pid=4121)
    PrefixRow("ray", re.compile(r"\((?:[\w-]+(?:, | ))?(?:rank=(?P<rank>\d+), )?pid=\d+(?:, ip=[\d.]+)?\) "), "("),
    # a logger's header: [2024-05-01 12:00:00,123] torch.distributed.run: [ERROR] , or the DeepSpeed launcher's
    # [2024-05-01 12:00:00,123] [ERROR] [launch.py:321:sigkill_handler]
    PrefixRow("logger", re.compile(
        r"\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] (?:[\w.]+: )?"
        r"\[(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\] (?:\[[\w.]+:\d+:\w+\] )?"), "["),
    # a wrapper's timestamp in front of another prefix: NCCL's own [YYYY-MM-DD HH:MM:SS] (its debug timestamps),
    # a bare ISO time, the `date` command's form glued to Open MPI's tag (a wrapper script's `$(date)`)
    PrefixRow("stamp-iso", re.compile(rf"\[?(?P<time>{_ISO})\]?[ ]?{_STAMPED}"), "[0123456789"),
    PrefixRow("stamp-date", re.compile(
        r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<date>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} "
        rf"\d\d:\d\d:\d\d \d{{4}})[ ]?{_STAMPED}"), "MTWFS"),
    # TensorFlow's and absl's C++ log header on an error line: 2024-05-01 12:00:00.123456: E file.cc:12] (an info or
    # warning line keeps its header: not a failure, and the detectors read its level)
    PrefixRow("absl", re.compile(rf"(?P<time>{_ISO}): [EF] [\w./-]+:\d+\] "), "0123456789"),
    # Metaflow's local runtime before each line of a task's output (runtime.py, Task.log: "[%s (pid %s)] " % (the
    # task's run-id/step/task-id, its pid), after its logger's "%Y-%m-%d %H:%M:%S.%f" time cut to milliseconds)
    PrefixRow("metaflow", re.compile(
        r"(?:(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) )?\[[\w.-]+/\w+/\d+ \(pid \d+\)\] ?"), "0123456789["),
    # NCCL's own: host:pid:tid [device]
    PrefixRow("nccl", re.compile(r"(?P<host>[A-Za-z][\w.-]*):\d+:\d+ \[(?P<local>\d+)\] "), ""),
    # pdsh (the DeepSpeed launcher's multi-node runner) and mpirun's per-host output: host:
    PrefixRow("host", re.compile(rf"(?P<host>{_HOST}): "), ""),
)

#: pytest's failure marker as it writes it: "E" then blanks to its eighth column
_PYTEST_E_WIDTH = 8
_HOST_COLON = re.compile(rf"(?:{_HOST}): |(?:{_HOST}):\d+:\d+ \[")
_MAX_PREFIXES = 8
_CACHE: dict[tuple[int | None, int | None, str | None, int | None], Prefix] = {}


def _may_have_prefix(line: str) -> bool:
    c = line[0]
    if c in "[( " or c.isdigit():
        return True
    # a letter starts a host, a pytest node id or "E   ": only when a colon or "::" comes early
    if c == "E" and line.startswith("E  "):
        return True
    if c in "MTWFS" and line[3:4] == " " and line.startswith(_DAYS) and "<std" in line[:40]:
        return True  # `date`'s time glued to Open MPI's tag
    head = line[:80]
    return c.isalpha() and ":" in head and (".py::" in head or _HOST_COLON.match(head) is not None)


def parse_prefix(line: str) -> tuple[Prefix, str]:
    """Take every known prefix off the start of ``line`` (:data:`PREFIXES`, again and again: a timestamp before
    ``[rank1]:`` before a logger's header); return what they said and the rest. torch's ``[rankN]:`` wins over an
    srun label and ntui's ``[rN]``; of the times said the innermost is kept (the program's own)."""
    if not line or not _may_have_prefix(line):
        return NO_PREFIX, line
    rank: int | None = None
    rank_torch = False
    rank_label = False  # the rank said is srun's label's
    local: int | None = None
    host: str | None = None
    when: float | None = None
    rest = line
    for _ in range(_MAX_PREFIXES):
        if not rest:
            break
        for row in PREFIXES:
            if row.first and rest[0] not in row.first:
                continue
            m = row.pattern.match(rest)
            if m is None or m.end() == 0:
                continue
            said = m.groupdict()
            if row.name == "host" and _NOT_HOSTS.match(said["host"] or ""):
                continue
            if row.name == "srun-label" and rank is not None:
                continue  # "3: " after a rank was said is the program's own text
            if row.name == "pytest-e" and (rank is not None or local is not None) and m.end() != _PYTEST_E_WIDTH:
                continue  # after a rank's label, pytest's marker is its own "E" and seven blanks; a shorter gap is
                # the program's text (a table's first column named "E": spaCy's "E    #       LOSS ...")
            if said.get("rank") is not None and (rank is None or (row.name == "torch-rank" and not rank_torch)):
                rank = int(said["rank"])
                rank_torch = row.name == "torch-rank"
                rank_label = row.name == "srun-label"
            if said.get("local") is not None and local is None:
                local = int(said["local"])
            if said.get("host") is not None and host is None:
                host = said["host"]
            if said.get("time") is not None:  # the innermost: the program's own over a CI runner's
                when = iso_stamp(said["time"].replace("T", " ").rstrip("Z"), 40)
            elif said.get("date") is not None:
                when = date_stamp(said["date"])
            rest = rest[m.end():]
            break
        else:
            break
    if rest is line:
        return NO_PREFIX, line
    task = rank if rank_label else None
    if when is not None:
        return Prefix(rank, local, host, when, task), rest
    key = (rank, local, host, task)
    prefix = _CACHE.get(key)
    if prefix is None:  # one per rank, local rank and host, not one per line
        prefix = Prefix(rank, local, host, None, task)
        if len(_CACHE) < 4096:
            _CACHE[key] = prefix
    return prefix, rest


def date_stamp(text: str) -> float | None:
    """Epoch seconds (local time) of the ``date`` command's form without its weekday: ``Jun 17 08:14:03 2025``."""
    parts = text.split()
    if len(parts) != 4 or parts[0] not in _MONTHS or not parts[1].isdigit() or not parts[3].isdigit():
        return None
    h, mi, sec = (int(x) for x in parts[2].split(":"))
    return local_epoch(int(parts[3]), _MONTHS[parts[0]], int(parts[1]), h, mi, sec, None)


# a message glued onto the end of another line (no newline between): where srun's, slurmstepd's, libstdc++'s,
# torch's, NCCL's or Python's own message starts right after other text (not after a space or a colon: torch
# elastic's "traceback : Traceback (most recent call last):" is one line), a new message starts
_GLUED_RE = re.compile(
    r"(?<=[^\s:])"
    r"(?=srun: error: |slurmstepd(?:-[\w.-]+)?: error: |terminate called |Traceback \(most recent call last\):"
    r"|\[rank\d+\]:|(?:WARNING|ERROR|CRITICAL):torch\.|\[E ProcessGroupNCCL|\[E\d{3,4} \d\d:)")
_GLUE_HINTS = ("error: ", "terminate called", "Traceback (", "[rank", ":torch.", "[E")
_CUT_ENDS = ("…", "...", "[truncated]", "(truncated)")
_CAP_RE = re.compile(r" … \[\+\d+ bytes\]$")
_TB = "Traceback (most recent call last):"
_RUN_RE = re.compile(r" {4,}(?!: )")  # (not the padding of a "key      : value" field)
_COLLAPSED_MIN = 120  # a line this long with ...
_COLLAPSED_RUNS = 3  # ... this many runs of four spaces or more is a paste whose newlines became spaces


def uncollapse(text: str) -> list[str]:
    """A paste whose newlines became runs of spaces, as its lines: split at each run of four spaces or more, a
    traceback's ``File`` line indented by two and its source line by four, as Python prints them."""
    parts = [p for p in _RUN_RE.split(text) if p]
    out: list[str] = []
    after_file = False
    for p in parts:
        if p.startswith('File "'):
            out.append("  " + p)
            after_file = True
        elif after_file:
            out.append("    " + p)
            after_file = False
        else:
            out.append(p)
    return out


def glued_pieces(text: str) -> list[str]:
    """One line's messages: its ``\\r`` segments, each split where a known message starts glued onto other text,
    and a collapsed paste split back into its lines."""
    segments = [s for s in text.split("\r") if s.strip()] if "\r" in text else [text]
    out: list[str] = []
    for seg in segments:
        if len(seg) >= _COLLAPSED_MIN and seg.count("    ") >= _COLLAPSED_RUNS and ('File "' in seg or _TB in seg) \
                and _RUN_RE.search(seg.strip()):  # (a traceback's: a table's padded columns stay one line)
            parts = uncollapse(seg)
        else:
            parts = [seg]
        for part in parts:
            if any(h in part for h in _GLUE_HINTS):
                out.extend(p for p in _GLUED_RE.split(part) if p)
            else:
                out.append(part)
    return out or [text]


_BOX_CHARS = "╭│╰"
_BOX_TOP_RE = re.compile(r"^╭─+ ?(?P<title>Traceback \(most recent call last\)) ?─+╮\s*$")
_BOX_FRAME_RE = re.compile(r"^(?P<file>\S+\.pyx?|<[\w ]+>):(?P<line>\d+) in ?(?P<func>.*)$")
_TB_PLAIN = "Traceback (most recent call last):"


def unbox(text: str) -> str:
    """A line of Rich's boxed traceback as Python's plain traceback prints it (any other line as it is): the top
    border with its title is the header, a frame's ``path:line in func`` its ``File`` line, every other line between
    the borders (source, the ``❱`` line, a nested box of locals) indented, the bottom border an empty line."""
    head = text[:1]
    if head not in _BOX_CHARS:
        return text
    if head == "╭":
        return _TB_PLAIN if _BOX_TOP_RE.match(text) is not None else text
    if head == "╰":
        return "" if text.rstrip().endswith("╯") and text.strip("╰─╯ ") == "" else text
    if not text.rstrip().endswith("│") or len(text) < 3:
        return text
    inner = text.rstrip()[1:-1].strip()
    m = _BOX_FRAME_RE.match(inner)
    if m is not None:
        func = f", in {m['func'].strip()}" if m["func"].strip() else ""
        return f'  File "{m["file"]}", line {m["line"]}{func}'
    return "    " + inner.lstrip("❱ ").strip() if inner else "    "


def _is_cut(text: str) -> bool:
    end = text.rstrip()
    return end.endswith(_CUT_ENDS) or _CAP_RE.search(end) is not None


def read_line(line: str) -> list[Message]:
    """A line (cleaned, without its newline) as its messages, each with its prefixes taken off and what they said.
    A message glued after another keeps the line's prefix, except srun's and slurmstepd's own words (no rank's)."""
    if "\r" not in line and (len(line) < _COLLAPSED_MIN or "    " not in line) \
            and not any(h in line for h in _GLUE_HINTS):
        prefix, text = parse_prefix(line)
        if text and text[0] in _BOX_CHARS:
            text = unbox(text)
        return [Message(text, prefix, _is_cut(text) if text[-1:] in ".…]" else False)]
    prefix, text = parse_prefix(line)
    out: list[Message] = []
    for i, piece in enumerate(glued_pieces(text)):
        own_prefix, rest = parse_prefix(piece) if i else (NO_PREFIX, piece)
        said = own_prefix if own_prefix is not NO_PREFIX else (
            prefix if i == 0 or not rest.startswith(("srun: ", "slurmstepd")) else NO_PREFIX)
        if rest and rest[0] in _BOX_CHARS:
            rest = unbox(rest)
        out.append(Message(rest, said, _is_cut(rest)))
    return out
