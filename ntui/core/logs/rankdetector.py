"""The failure detector of one log stream: fed cleaned lines as they arrive, it emits findings.

:class:`RankDetector` keeps a few lines of state (an open traceback per rank, an open torchrun summary, what the
launcher said of the job's layout) and reads every other line by the detector table
(:mod:`ntui.core.logs.detectors`); the forms of the lines are :mod:`ntui.core.logs.lineforms`'s, the summary's
:mod:`ntui.core.logs.childfailed`'s. Which finding is the root cause is :mod:`ntui.core.logs.triage`'s choice.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from ntui.core.loglines import NO_PREFIX, Prefix, read_line
from ntui.core.logs.childfailed import ChildEntry, ChildFailedBlock
from ntui.core.logs.detectors import DETECTORS, LAST_ERROR, Detector, Hit, is_generic, spawn_hit
from ntui.core.logs.finding import LogFailure, TimeSource
from ntui.core.logs.lineforms import (
    AFTER_PEERS,
    ANY_RE,
    EXC_LINE_RE,
    EXCERPT_LINES,
    GLOBAL_RANKS_RE,
    GOT_SIGNAL_RE,
    LAYOUT_WORDS,
    LOCAL_PROCS_RE,
    MAX_TB_LINES,
    NODE_RANK_RE,
    ONE_NODE_RE,
    OOM_GPU_RE,
    OWN_START,
    SEVERAL_NODES_RE,
    SLURM_TOOL_LINE_RE,
    SPAWN_ERROR_RE,
    SPAWN_EXIT_RE,
    TB_CHAINS,
    TB_HEADER,
    WORLD_INFO_RE,
    classify_exception,
    glog_level,
    parse_line_time,
    self_rank,
)
from ntui.core.logs.signals import signal_name

__all__ = ["RankDetector", "scan_lines"]

_DEDUP_LINES = 200  # the same line-level kind is reported once per this many lines per stream

@dataclass
class _Traceback:
    start_line_no: int
    header_time: float | None
    header_given_time: float | None
    header_seq: int
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=EXCERPT_LINES))
    head: str = TB_HEADER
    frames: int = 0
    count: int = 1
    rank_hint: int | None = None  # mp.spawn named the process whose traceback this is
    slurm_seen: bool = False  # srun's or slurmstepd's line came inside it: the task may have been cut mid-print


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
        self._cf: ChildFailedBlock | None = None
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

        if text in TB_CHAINS and (last := self._last_tb.get(key)) is not None and self._line_no - last[1] <= 3:
            self._chained[key] = last[0]  # the next traceback of this key is the same failure's
            return out

        if text.startswith(TB_HEADER):
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
        elif text.startswith("-- Process ") and (sp := SPAWN_ERROR_RE.match(text)) is not None:
            self.spawn_rank = int(sp["rank"])

        if "ChildFailedError" in text and not text.lstrip().startswith(("File ", "raise ")):
            self._cf = ChildFailedBlock()
            return out
        if text.startswith(("Root Cause", "Failures:")) and text.rstrip().endswith(":"):
            # the summary's sections, its ChildFailedError header not in the log (a paste that starts below it)
            self._cf = ChildFailedBlock(rules=1)
            self._feed_child_failed(text, prefix_rank, time, out)
            return out

        if ANY_RE.search(text.lower()) or text.startswith(OWN_START) or "what():" in text:
            self._line_level(text, prefix_rank, time, out)
        elif any(word in text for word in LAYOUT_WORDS):
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
        if not self.one_node and ONE_NODE_RE.search(text):
            self.one_node = True
        if not self.several_nodes and SEVERAL_NODES_RE.search(text):
            self.several_nodes = True
        host = self._prefix.host or self.node
        # a line with no host is this log's own node's launcher's: its key is "" (see _first_rank_of)
        key = host if host is not None else ""
        if key not in self.world and (node := NODE_RANK_RE.search(text)) is not None \
                and (procs := LOCAL_PROCS_RE.search(text)) is not None:
            # a node's launcher says its node rank and its processes (the DeepSpeed launcher's "nnodes=2,
            # num_local_procs=4, node_rank=1"): the host's first rank, ranks given out node by node
            self.world[key] = int(node["n"]) * int(procs["n"])
        elif (given := GLOBAL_RANKS_RE.search(text)) is not None:
            # torch elastic's rendezvous result: its workers' global ranks, in the order of their local ranks; a
            # second agent's (another node's, in a log that does not say which) makes the host's first rank unknown
            first = int(given["first"])
            self.world[key] = first if self.world.get(key, first) == first else -1
        if (m := WORLD_INFO_RE.search(text)) is not None and not self.world:
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
        if self._cf is not None:
            entries: list[ChildEntry] = []
            self._cf.finish(self._year, entries)
            out.extend(self._child_finding(entry, None) for entry in entries)
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
        if r is None and (own := self_rank(first_line)) is not None:
            r = own  # the message names its own rank: NCCL's "[Rank 6]", "[PG 0 Rank 3]"
        if local_said is None and kind == "oom" and (gpu := OOM_GPU_RE.search(first_line)) is not None:
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
            generic=generic or is_generic(kind, first_line),
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
        if text.startswith(TB_HEADER):  # a new traceback without an exception line: restart
            del self._tb[key]
            return False
        if SLURM_TOOL_LINE_RE.match(text):
            tb.slurm_seen = True
            return False  # srun's word on a task, between the traceback's lines: read as itself, the traceback open
        m = EXC_LINE_RE.match(text)
        if m is not None and ":" not in text and "." not in text and text.islower():
            m = None  # a bare lowercase word ("zvous"): the tail of a frame line a terminal wrapped, no exception
        if m is not None and tb.slurm_seen and "." not in m["name"] and not m["name"][:1].isupper():
            m = None  # after srun's word the task may be gone: only an exception's name ends it ("ntui: ..." does not)
        if tb.frames == 0 or m is None:
            if tb.count > MAX_TB_LINES:
                del self._tb[key]
                return False
            tb.lines.append(text)  # interleaved noise
            return True
        del self._tb[key]
        tb.lines.append(text)
        if "ChildFailedError" in m.group("name"):
            self._cf = ChildFailedBlock()  # the summary that follows says more than this line
            return True
        line_time = parse_line_time(text, year=self._year)
        if line_time is None:
            line_time = tb.header_time
        kind = classify_exception(text)
        if m.group("name").endswith("ProcessRaisedException"):
            kind = "child_failed"  # mp.spawn's report that a process raised: the process's own traceback follows
        rank, sig = None, None
        if prefix_rank is None and tb.rank_hint is not None:
            rank = tb.rank_hint
        if kind == "signal" and (gs := GOT_SIGNAL_RE.search(text)) is not None:  # torch elastic's SignalException
            sig = signal_name(-int(gs["n"]))
        if (sm := SPAWN_EXIT_RE.search(text)) is not None:  # mp.spawn's report of another process's end
            spawn = spawn_hit(self, sm, text, prefix_rank, None)
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
        level = glog_level(text)
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
            own = self_rank(text)  # NCCL's "[Rank 6]": each rank's line its own, not a repeat of another's
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
                   for p in AFTER_PEERS for k in keys)

    @property
    def year(self) -> int | None:
        return self._year

    def _feed_child_failed(self, text: str, prefix_rank: int | None, time: float | None, out: list[LogFailure]) -> bool:
        """Parse torchrun's summary block; return True when the block ended (line not consumed)."""
        cf = self._cf
        assert cf is not None
        entries: list[ChildEntry] = []
        ended = cf.feed(text, self._line_no, self._year, entries)
        if cf.closed:
            self._cf = None
        out.extend(self._child_finding(entry, time) for entry in entries)
        return ended

    def _child_finding(self, entry: ChildEntry, time: float | None) -> LogFailure:
        return self._finding(
            entry.kind,
            None,
            entry.message,
            entry.line_no,
            time,
            entry.line_time,
            entry.lines,
            entry.line_no,
            rank=entry.rank,
            node=entry.node,
            signal=entry.signal,
            local_rank=entry.local_rank,
            from_tb=entry.from_tb,
            root_cause=entry.root_cause,
        )

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
