"""Watching one job's logs as a stream: rank discovery, tailing, node headers, failure detection, triage.

One responsibility: turning one job's log files into what a view shows, as a stream (which file is read when
is the scheduler's choice, see :class:`~ntui.core.logs.schedule.PoliteScheduler`).

:class:`JobLogWatcher` owns one :class:`~ntui.core.logs.tail.FileTail` per file of the job (the batch log,
key :data:`BATCH`, and one per global rank, key ``N``) and one incremental
:class:`~ntui.core.logs.rankdetector.RankDetector` per file. The caller (the log pane's worker thread, ``ntui logs
--follow --triage``, :func:`ntui.core.logs.joblogs.triage_job`) calls :meth:`JobLogWatcher.poll` and reads the
results: :meth:`~JobLogWatcher.rows` (the rank table), :meth:`~JobLogWatcher.triage_line` (who failed
first, where its error is), :meth:`~JobLogWatcher.verdict` (the job-level verdict of
:mod:`ntui.core.logs.verdict`), and what to show for a view (:meth:`~JobLogWatcher.view_content`,
:meth:`~JobLogWatcher.view_update`). No Textual, no threads of its own; one caller thread at a time.

Which files are read when, and how, is a pluggable :class:`~ntui.core.logs.schedule.PollScheduler`
(:mod:`ntui.core.logs.schedule`); a file is polled at once when asked (:meth:`JobLogWatcher.want`, e.g. the user
scrolled to its row). What the watcher reports (rows, the triage line, a view's lines) is
:mod:`ntui.core.logs.rows`'s. The schedulers and those values are named here too, for the modules that import
them from the watcher.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

from ntui.core.jobfiles.lognames import (
    HEADER_BYTES,
    LogPaths,
    discover_rank_logs,
    log_problem,
    node_of,
    parse_rank_header,
)
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.logs.finding import LogFailure
from ntui.core.logs.lineforms import suspect_lines
from ntui.core.logs.multitail import MultiTail, merge_lines, rank_label
from ntui.core.logs.rankdetector import RankDetector
from ntui.core.logs.rankstatus import rank_status
from ntui.core.logs.rows import (
    BATCH,
    Appended,
    Key,
    Loaded,
    RankRow,
    TriageLine,
    ViewMode,
    human_age,
    key_name,
    key_sort,
)
from ntui.core.logs.schedule import FixedScheduler, PollScheduler
from ntui.core.logs.summary import TriageSummary
from ntui.core.logs.tail import (
    DEFAULT_WINDOW,
    FileTail,
    TailUpdate,
)
from ntui.core.logs.triage import triage
from ntui.core.logs.verdict import JobVerdict, SlurmFinal, decide, unnamed

__all__ = ["EXCERPT_AFTER", "EXCERPT_BEFORE", "JobLogWatcher"]

EXCERPT_BEFORE = 15
EXCERPT_AFTER = 45
#: lines all rank files together read on open: a job with more ranks than fit reads each rank's last
#: ``LINES_BUDGET / ranks`` lines (at least :data:`RANK_WINDOW_MIN`) instead of a full window, so triage over
#: 1,024 files stays near 1 s and the pane near 20 MB (a full 5,000-line window each: 30 s and 250 MB for
#: 2,000-line files). A failed rank's traceback is at the end of its file, where that backlog is.
LINES_BUDGET = 100_000
RANK_WINDOW_MIN = 100
DISCOVER_EVERY_S = 4.0  # world size unknown: look for new rank files this often
PROBLEM_EVERY_S = 5.0  # files missing: check this often whether their directory is gone or unreadable


# ---------------------------------------------------------------------------------------------------------
# the watcher


class JobLogWatcher:
    """One job's log files, tailed and triaged incrementally. See the module docstring.

    ``files``: the known files by key (the batch log under :data:`BATCH`); ``paths`` with ``discover=True``
    (world size unknown) finds rank files as they appear. ``launcher`` (srun / torchrun / accelerate) says
    what srun's ``task N`` is: a global rank for srun, a node's launcher otherwise.
    """

    def __init__(
        self,
        job_id: str,
        files: Mapping[Key, Path | str],
        *,
        paths: LogPaths | None = None,
        discover: bool = False,
        launcher: str | None = None,
        window: int = DEFAULT_WINDOW,
        scheduler: PollScheduler | None = None,
        clock: _Clock | None = None,
        budget: FdBudget | None = None,
        monotonic: _Clock | None = None,
        unpaste: Mapping[Key, Callable[[str], str]] | None = None,
        no_job: bool = False,
    ) -> None:
        self.job_id = job_id
        #: logs with no job behind them (``ntui triage FILE``): where nothing in them says the job had several
        #: nodes, a local rank is taken for the rank (and said to be); a job's own logs never assume that
        self.no_job = no_job
        #: per file, what takes a pasted log's artefacts off its lines (``ntui triage``: :mod:`ntui.core.logs.paste`)
        self.unpaste: Mapping[Key, Callable[[str], str]] = unpaste or {}
        self.paths = paths
        self.discover = discover and paths is not None
        self.launcher = launcher
        self.window = max(1, window)
        self.scheduler: PollScheduler = scheduler or FixedScheduler()
        self.clock = clock or _time.time
        self.monotonic = monotonic or _time.monotonic
        self.tails: MultiTail[Key] = MultiTail(window=self.window, merged_window=1, budget=budget)
        #: opens for rank headers outside the tail window (with the tails' own, :meth:`ops`)
        self.header_opens = 0
        self._detectors: dict[Key, RankDetector] = {}
        self._nodes: dict[Key, str | None] = {}
        self._header_done: set[Key] = set()
        self._flushed = False
        self._next_discover = 0.0
        self._triage_cache: tuple[tuple[int, int, bool], TriageLine] | None = None
        self._problem: tuple[int, float, TriageLine | None] | None = None
        self._expected_ranks = sum(1 for k in files if isinstance(k, int))
        for key, path in sorted(files.items(), key=lambda kv: key_sort(kv[0])):
            self.add(key, Path(path))
        self._reserve()

    def _reserve(self) -> None:
        """Ask the descriptor budget for one descriptor per file (a big job: reads, not opens)."""
        if self.tails.budget is not None:
            self.tails.budget.reserve(len(self.tails))

    # -- files ----------------------------------------------------------------------------------------

    def rank_window(self, ranks: int) -> int:
        """The window (and backlog read on open) of each rank's file for a job of ``ranks`` ranks."""
        if ranks * self.window <= LINES_BUDGET:
            return self.window
        return min(self.window, max(RANK_WINDOW_MIN, LINES_BUDGET // max(1, ranks)))

    def add(self, key: Key, path: Path) -> None:
        ranks = sum(1 for k in self.tails.keys() if isinstance(k, int)) + 1  # noqa: SIM118
        self.tails.add(key, path, window=self.window if isinstance(key, str) else self.rank_window(
            max(ranks, self._expected_ranks)))
        rank = key if isinstance(key, int) else None
        self._detectors[key] = det = RankDetector(rank, None, task_is_rank=self.launcher in (None, "srun"))
        det.unpaste = self.unpaste.get(key)
        self._nodes[key] = None

    def keys(self) -> list[Key]:
        return sorted(self.tails.keys(), key=key_sort)

    def __contains__(self, key: object) -> bool:
        return key in self.tails

    def tail(self, key: Key) -> FileTail:
        return self.tails.tail(key)

    def node(self, key: Key) -> str | None:
        return self._nodes.get(key)

    def want(self, key: Key) -> None:
        """Read this file at the next poll (the user looks at it)."""
        self.scheduler.want(key)

    # -- polling --------------------------------------------------------------------------------------

    def poll(self, shown: Collection[Key] = (), *, now: float | None = None,
             on_shown: Callable[[dict[Key, TailUpdate]], None] | None = None) -> dict[Key, TailUpdate]:
        """Poll the files the scheduler says are due and feed their new lines to the detectors.

        The due files among ``shown`` are read first and handed to ``on_shown`` (the caller shows their lines)
        before the others are read. Returns every update.
        """
        when = self.clock() if now is None else now
        mono = self.monotonic()
        if self.discover and mono >= self._next_discover:
            self._next_discover = mono + DISCOVER_EVERY_S
            self.discover_ranks()
        due = self.scheduler.due(self.keys(), shown, mono)
        ups = self._poll_keys([k for k in due if k in shown], mono, when)
        if on_shown is not None:
            on_shown(ups)
        ups.update(self._poll_keys([k for k in due if k not in shown], mono, when))
        self._feed(ups, when)
        return ups

    def _poll_keys(self, keys: list[Key], mono: float, when: float) -> dict[Key, TailUpdate]:
        ups = self.tails.poll_all(keys, light=self.scheduler.light, now=when)
        for key, up in ups.items():
            self.scheduler.observed(key, up, mono)
        return ups

    def poll_all(self, *, now: float | None = None) -> dict[Key, TailUpdate]:
        """Read every file now (one-shot triage)."""
        when = self.clock() if now is None else now
        if self.discover:
            self.discover_ranks()
        ups = self.tails.poll_all(self.keys())
        self._feed(ups, when)
        return ups

    def discover_ranks(self) -> list[int]:
        """Add rank files that appeared (world size unknown). Returns the new ranks."""
        if self.paths is None:
            return []
        new = []
        for rank, path in discover_rank_logs(Path(self.paths.log_dir), self.paths.stem, self.job_id).items():
            if rank not in self.tails:
                self.add(rank, path)
                new.append(rank)
        if new:
            self._reserve()
        return new

    def set_hidden(self, hidden: bool) -> None:
        """The pane left the screen (or came back): the scheduler polls accordingly."""
        self.scheduler.hidden = hidden

    def ops(self) -> tuple[int, int]:
        """File-system metadata operations so far: (opens, stats)."""
        opens, stats = self.tails.ops()
        return opens + self.header_opens, stats

    def reads(self) -> int:
        """``pread`` calls so far (no metadata operations; the rank-header reads are counted in :meth:`ops`)."""
        return self.tails.reads()

    def close(self) -> None:
        """Give back every held descriptor (the watcher stops or pauses)."""
        self.tails.close()

    def finish(self) -> None:
        """The job is over: report what the detectors still hold (tracebacks cut short)."""
        if not self._flushed:
            for det in self._detectors.values():
                det.flush()
            self._flushed = True

    def _feed(self, ups: Mapping[Key, TailUpdate], now: float) -> None:
        for key, up in ups.items():
            det = self._detectors[key]
            if isinstance(key, int) and key not in self._header_done and up.exists:
                self._read_header(key, up, det)
            if up.reset:
                det.reset()
                self._header_done.discard(key)
            if up.lines:
                found = det.feed_many(
                    up.lines,
                    first_line_no=up.first_line_no + 1,
                    time=up.mtime if up.backlog else now,
                    first_seq=up.first_seq,
                )
                if key == BATCH:
                    self._want_named(found)

    def _want_named(self, found: Sequence[LogFailure]) -> None:
        """The batch log named a rank (srun's task exit, torchrun's ChildFailedError) or a node's launcher:
        read those ranks' files at the next poll, whatever their back-off."""
        for f in found:
            if f.rank is not None and f.rank in self.tails:
                self.scheduler.want(f.rank)
            elif f.task is not None and f.node:
                for k, n in self._nodes.items():
                    if n == f.node:
                        self.scheduler.want(k)

    def _read_header(self, key: Key, up: TailUpdate, det: RankDetector) -> None:
        node: str | None = None
        if up.lines and up.first_line_no == 0 and self.tail(key).fully_indexed:
            parsed = parse_rank_header(up.lines[0])  # the header is the file's first line: no extra open
            node = parsed[1] if parsed else None
            done = True
        else:
            self.header_opens += 1
            node = node_of(self.tail(key).path)
            done = node is not None or up.size >= HEADER_BYTES
        if done:
            self._header_done.add(key)
        if node is not None:
            self._nodes[key] = node
            det.node = node

    # -- results --------------------------------------------------------------------------------------

    def findings_count(self) -> int:
        return sum(len(d.findings) for d in self._detectors.values())

    def existing(self) -> int:
        return sum(1 for k in self.tails.keys() if self.tails.tail(k).exists)  # noqa: SIM118

    def named_ranks(self) -> set[int]:
        """The ranks the batch log reports as failed (srun's ``task N: Exited`` for srun jobs, torchrun's
        ``ChildFailedError`` ``rank: N`` lines)."""
        det = self._detectors.get(BATCH)
        if det is None:
            return set()
        return {f.rank for f in det.findings if f.rank is not None and f.rank in self.tails}

    def suspects(self) -> list[tuple[str, int, str]]:
        """Lines that look like a failure in logs with no finding: (whose log, line number, text), in key order."""
        out: list[tuple[str, int, str]] = []
        for key, det in self._detectors.items():
            if det.findings or key not in self.tails:
                continue
            who = f"rank {key}" if isinstance(key, int) else ("batch log" if key == BATCH else "")
            tail = self.tail(key)
            lines = tail.window
            out += [(who, n, text) for n, text in suspect_lines(lines, max(1, tail.line_count - len(lines) + 1))]
        return out

    def summary(self) -> TriageSummary:
        per_key = {k: list(d.findings) for k, d in self._detectors.items()}
        return triage(per_key, nodes_by_rank=self._rank_nodes(), ranks=self._ranks(), hosts_seen=self._hosts_seen(),
                      several_nodes=self._several_nodes())

    def _hosts_seen(self) -> int:
        return len(set().union(*(d.hosts for d in self._detectors.values()))) if self._detectors else 0

    def _several_nodes(self) -> bool:
        """Whether the job may have had several nodes: always for a job's own logs; for logs with no job, when a log
        said so or their rank headers name two nodes."""
        return (not self.no_job or any(d.several_nodes for d in self._detectors.values())
                or len(set(self._rank_nodes().values())) > 1)

    def _rank_nodes(self) -> dict[int, str]:
        return {k: n for k, n in self._nodes.items() if isinstance(k, int) and n}

    def verdict(self, slurm: SlurmFinal | None = None) -> JobVerdict:
        """The job-level verdict (Slurm's verdicts first, then the root cause; see :mod:`ntui.core.logs.verdict`)."""
        per_key = {k: list(d.findings) for k, d in self._detectors.items()}
        return decide(per_key, nodes_by_rank=self._rank_nodes(), launcher=self.launcher, slurm=slurm,
                      ranks=self._ranks(), hosts_seen=self._hosts_seen(), several_nodes=self._several_nodes())

    def _ranks(self) -> list[int]:
        """The ranks whose files exist (read or not yet)."""
        return [k for k in self.keys() if isinstance(k, int) and self.tail(k).exists]

    def triage_line(self, *, job_active: bool = True) -> TriageLine:
        """The one-line triage and where its error is (cached until findings, files or the job's activity
        change). ``job_active`` False: the job is over (a job with no log then never started)."""
        stamp = (self.findings_count(), self.existing(), job_active)
        if self._triage_cache is not None and self._triage_cache[0] == stamp:
            return self._triage_cache[1]
        line = self._triage_line(job_active)
        self._triage_cache = (stamp, line)
        return line

    def _triage_line(self, job_active: bool) -> TriageLine:
        verdict = self.verdict()
        first = verdict.root
        if verdict.kind == "none" or first is None:
            existing = self.existing()
            if existing == 0 and not job_active:
                return TriageLine("the job ended without writing any log: it never started "
                                  "(cancelled or failed while pending)", False)
            if existing == 0:
                return TriageLine("waiting for the logs to appear…", False)
            if verdict.kind != "none":
                return TriageLine(verdict.line, True)
            if not job_active and (suspects := self.suspects()):  # over: what looks like a failure is said
                return TriageLine(unnamed(suspects).line, True)
            return TriageLine(f"no failure found ({existing} log{'s' if existing != 1 else ''} read)", False)
        key: Key | None = None
        for k, det in self._detectors.items():
            if any(f.seq == first.seq and f.line_no == first.line_no for f in det.findings):
                key = k
                break
        start: int | None = (first.start_line_no or first.line_no) - 1
        line: int | None = first.line_no - 1
        rank_det = self._detectors.get(first.rank) if isinstance(key, str) and first.rank is not None else None
        if rank_det is not None and rank_det.findings:  # a batch-log report about a rank: jump to its own error
            key, start, line = first.rank, None, None
        return TriageLine(verdict.line, True, key, first.rank, first.node, start, line)

    def rows(self, *, job_active: bool, now: float | None = None) -> tuple[RankRow, ...]:
        """The rank table from the tails' last polls (no IO)."""
        when = self.clock() if now is None else now
        tri = self.triage_line(job_active=job_active)
        named = self.named_ranks()
        any_log = self.existing() > 0
        out = []
        for key in self.keys():
            tail = self.tail(key)
            det = self._detectors[key]
            ended_as: Literal["finished", "failed", "killed"] = "finished"
            if isinstance(key, int) and tri.failed and not tri.problem:
                # the job failed: the rank that failed (or that the batch log names), else one stopped after it
                ended_as = "failed" if key == tri.rank or key in named else "killed"
            st = rank_status(key if isinstance(key, int) else -1, tail, job_active=job_active,
                             node=self._nodes.get(key), findings=det.findings, ended_as=ended_as, any_log=any_log)
            f = st.finding
            start = None if f is None else (f.start_line_no or f.line_no) - 1
            out.append(RankRow(
                key=key,
                node=st.node if isinstance(key, int) else None,
                exists=st.exists,
                size=st.size,
                age=human_age(when - st.mtime) if st.mtime is not None else "",
                last_line=st.last_line,
                status=st.status,
                first=tri.failed and tri.key == key,
                error_start=start,
                error_line=(f.line_no - 1) if f is not None else None,
                mtime=st.mtime,
                named=key in named,
            ))
        return tuple(out)

    def problem(self) -> TriageLine | None:
        """Why the files cannot be read, when one is missing (the directory gone, unreadable); None if they
        can (a missing file in a readable directory is just not written yet). Checked again when the number
        of missing files changes, else every :data:`PROBLEM_EVERY_S` (each check costs metadata operations)."""
        missing = [self.tail(k).path for k in self.keys() if not self.tail(k).exists]
        if not missing:
            self._problem = None
            return None
        mono = self.monotonic()
        if self._problem is not None and self._problem[0] == len(missing) and mono < self._problem[1]:
            return self._problem[2]
        first = self.tail(BATCH).path if BATCH in self.tails else missing[0]
        why = log_problem(str(first))
        line = TriageLine(why, False, problem=True) if why else None
        self._problem = (len(missing), mono + PROBLEM_EVERY_S, line)
        return line

    # -- views ----------------------------------------------------------------------------------------

    def view_content(self, mode: ViewMode, keys: Sequence[Key], focus: tuple[int, int] | None = None) -> Loaded:
        """What a view shows from scratch: the shown file's window (or an excerpt around ``focus``), or
        the merged windows of ``keys``."""
        window = self.window
        if mode == "merged":
            known = [k for k in keys if k in self.tails]
            share = max(1, window // max(1, len(known)))
            lines: list[str] = []
            for k in known:
                label = rank_label(k)
                lines.extend(label + x for x in self.tail(k).window[-share:])
            return Loaded(tuple(lines[-window:]))
        key = keys[0] if keys else None
        if key is None or key not in self.tails:
            return Loaded(())
        tail = self.tail(key)
        header: list[str] = []
        if not tail.exists:
            why = log_problem(str(tail.path))  # gone or unreadable, rather than not written yet?
            header.append(f"── {why}; waiting for it ──" if why
                          else f"── {tail.path.name} does not exist yet; waiting for it ──")
        elif tail.generation:
            header.append("── the file was truncated or replaced; showing it from its new start ──")
        elif tail.window_size < self.window and not tail.fully_indexed:
            header.append(f"── a big job: each rank's log read from its last {tail.window_size} lines on open; "
                          "new lines follow ──")
        win = tail.window
        first = tail.line_count - len(win)
        if focus is not None:
            start, line = focus
            if line < first:  # older than the window: read around it by offset
                lo = max(0, min(start, line) - EXCERPT_BEFORE)
                got = tail.read_lines(lo, line - lo + EXCERPT_AFTER)
                if got:
                    header = [f"── {key_name(key)}: lines {lo + 1}–{lo + len(got)} of the file's index, around its "
                              f"first error · End: back to the live tail ──"]
                    return Loaded(tuple(got), tuple(header), lo, tail.partial, True, focus)
        return Loaded(tuple(win), tuple(header), first, tail.partial, False, focus)

    def view_update(self, mode: ViewMode, keys: Sequence[Key], ups: Mapping[Key, TailUpdate]
                    ) -> Loaded | Appended | None:
        """What the shown view gains from these updates (None: nothing; :class:`Loaded`: redraw it)."""
        if mode == "rank":
            key = keys[0] if keys else None
            up = ups.get(key) if key is not None else None
            if up is None:
                return None
            if up.reset or up.appeared or len(up.lines) >= self.window:
                return self.view_content(mode, keys)
            if up.lines or up.partial_changed:
                return Appended(up.lines, up.partial)
            return None
        shown = {k: ups[k] for k in keys if k in ups}
        out: list[str] = []
        for k, up in shown.items():
            if up.reset:
                out.append(f"{rank_label(k)}── the file was truncated or replaced; reading it from its new start ──")
        out.extend(merge_lines(shown, label=rank_label))
        if not out:
            return None
        return Appended(tuple(out[-self.window:]))


class _Clock(Protocol):
    def __call__(self) -> float: ...


def watch_files(paths: LogPaths, job_id: str, world_size: int | None) -> tuple[dict[Key, Path], bool]:
    """The files of a job ntui submitted: the batch log and every rank's (``discover``: world size unknown,
    look for rank files as they appear)."""
    files: dict[Key, Path] = {BATCH: Path(paths.batch(job_id))}
    if world_size:
        files.update({r: Path(paths.rank(job_id, r)) for r in range(world_size)})
        return files, False
    return files, True
