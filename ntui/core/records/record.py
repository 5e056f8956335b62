"""What became of each job ntui submitted: its *record* in the history, filled after it ended.

:func:`resolve_records` fills the record (:class:`ntui.core.records.history.FinalRecord`) of every history entry whose
job has a job id but no final state yet, whether or not an ntui was running when the job ended:

0. **the job's own journal** first (:mod:`ntui.core.jobfiles.journal`, rule J2; a file read, no Slurm call): a job
   whose batch shell wrote its end gets its state and exit code from it (source ``job``), also when Slurm has
   forgotten the job or cannot be asked. Where accounting answers in the same call as below, sacct *confirms* it
   (``confirmed_by``) and adds who cancelled, the reason, Slurm's times and nodes; when Slurm's final state differs
   (a signal the job took for a cancel was the time limit, a preemption, a node failure; an OOM kill), Slurm's
   wins. A journal record sacct could not confirm yet is confirmed by a later resolution (one more id in the same
   batched call, for a day). A job with no journal (cancelled while pending, an older script) or no end in it
   (killed by SIGKILL, its node lost) goes on:
1. **sacct**, when accounting exists: **one** call for all of them (``sacct -j id1,id2,... -X -P``).
   A job sacct lists as still pending/running stays unresolved.
2. For the jobs sacct does not know (or without accounting): **one** ``squeue --me --states=all`` call says
   which the controller still knows (finished jobs stay there for ``MinJobAge``, 300 s by default).
   A finished one there gets ``scontrol show job`` (one call per such job, so only a few);
   a live one stays unresolved.
3. Jobs Slurm no longer knows: **inferred** from the batch log (:func:`infer_from_batch_log`):
   ``*** JOB N ON node CANCELLED AT time [DUE TO TIME LIMIT|PREEMPTION|NODE FAILURE] ***``, an OOM kill,
   a task killed by a fault signal (``srun: error: ...: task N: Aborted``: FAILED, exit code ``0:6``),
   ``srun: error: ...: task N: Exited with exit code K``, a task stopped by a signal (``Terminated``); a batch
   log with none of these is taken as COMPLETED, a missing one gives UNKNOWN. The record says ``inferred``.
   The lines are read as triage reads them (:mod:`ntui.core.slurm.srunlines`).
   With accounting, a job younger than ``grace_s`` is left for sacct (slurmdbd may lag behind slurmctld).
   When ``squeue`` fails (controller down) nothing is inferred: a job may still be running.

Each resolved job also gets its verdict (:func:`ntui.core.logs.joblogs.job_verdict`, one line: Slurm's job-level
verdict first, else the rank that failed first) when its logs are known, and, when the in-job GPU sampler left its
files, the job's GPU usage summary (:func:`gpu_summary`: one streamed pass over the files; a failure is a warning
and never loses the final state). :func:`recent_jobs` lists the records
of the last days, plus, where accounting exists, the user's other jobs from one ``sacct -S`` call (logs unknown).

One responsibility: what became of a job after it ended (its record, from the journal first, then Slurm, then
the batch log), and the list of recent records built from them.
"""

from __future__ import annotations

import os
import pwd
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ntui.core.gpu.usage import JobFacts, UsageReport, build_report
from ntui.core.jobfiles.journal import JournalState, journal_path, read_journal
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobfiles.samplefiles import find_sample_files
from ntui.core.logs.joblogs import job_verdict
from ntui.core.logs.signals import is_fault, signal_name, signal_number, signal_of_word
from ntui.core.logs.verdict import SlurmFinal
from ntui.core.records.history import FinalRecord, GpuSummary, History, HistoryEntry
from ntui.core.records.reconcile import OwnJob, own_jobs
from ntui.core.records.runs import RunView, run_of
from ntui.core.records.sweeps import SweepStates, resolve_sweeps, sweep_of
from ntui.core.slurm.common import DEFAULT_TIMEOUT, StateCategory, state_category
from ntui.core.slurm.durations import parse_duration, time_limit_from_script
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.sacct import SacctRecord, SacctUnavailable, sacct_jobs, sacct_since
from ntui.core.slurm.scontrol import JobDetails, show_job
from ntui.core.slurm.srunlines import CANCELLED, EXIT_CODE, NODE_FAILURE, OOM_KILL, TASK_END

__all__ = [
    "DEFAULT_RECENT_DAYS",
    "GRACE_S",
    "RECENT_ORDERS",
    "RecentJob",
    "RecentJobs",
    "RecentOrder",
    "ResolveReport",
    "gpu_summary",
    "gpu_summary_for",
    "infer_from_batch_log",
    "journal_record",
    "next_order",
    "recent_jobs",
    "recent_order",
    "record_job",
    "refresh_gpu_summary",
    "resolve_records",
    "sort_recent",
]

#: Slurm's default MinJobAge: how long the controller keeps a finished job (scontrol still knows it).
GRACE_S = 300.0
#: A record from a job's journal is offered to sacct for confirmation for this long after it was written.
CONFIRM_S = 86400.0
#: The ends a journal tells from a signal: Slurm may still requeue such a job (preemption), so while accounting says
#: the job is not over, the journal's word waits for Slurm's.
SIGNAL_ENDS = frozenset({"CANCELLED", "TIMEOUT"})
DEFAULT_RECENT_DAYS = 7
TAIL_BYTES = 256 * 1024
NOT_FROM_NTUI = "not from ntui: logs unknown"

_DUE_TO: dict[str, str] = {
    "TIME LIMIT": "TIMEOUT",
    "PREEMPTION": "PREEMPTED",
    "NODE FAILURE": "NODE_FAIL",
}
#: the kernel's own words where slurmstepd's line is not there (a node's log copied into the batch log)
_OOM = re.compile(r"out of memory|oom-killer", re.IGNORECASE)
# an entry of torch elastic's ChildFailedError summary: "rank      : 3 (local_rank: 1)" then "exitcode  : -6 ..."
_ELASTIC_SIGNAL = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+).*\n\s*exitcode\s*:\s*-(?P<sig>\d+)", re.MULTILINE)
_PREEMPTED = re.compile(r"\bPREEMPTED\b")


def _tail(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return None


def infer_from_batch_log(path: Path | str | None) -> FinalRecord:
    """The final state as the batch log tells it (``source='inferred'``, verdict left empty)."""
    if not path:
        return FinalRecord("UNKNOWN", None, "batch log unknown", None, None, None, None, "", "inferred")
    text = _tail(Path(path))
    if text is None:
        return FinalRecord("UNKNOWN", None, f"no batch log at {path}", None, None, None, None, "", "inferred")
    cancel = None
    for m in CANCELLED.finditer(text):
        if m["scope"] == "JOB":
            cancel = m
    if cancel is not None:
        why = (cancel["reason"] or "").strip()
        state = _DUE_TO.get(why.upper(), "CANCELLED")
        reason = f"batch log: CANCELLED AT {cancel['at']}" + (f" DUE TO {why}" if why else "")
        return FinalRecord(state, None, reason, None, cancel["at"], None, cancel["node"], "", "inferred")
    node_fail = NODE_FAILURE.search(text)
    if node_fail:
        return FinalRecord("NODE_FAIL", None, f"batch log: node failure on {node_fail['node']}", None, None, None,
                           node_fail["node"], "", "inferred")
    if OOM_KILL.search(text) or _OOM.search(text):
        return FinalRecord("OUT_OF_MEMORY", None, "batch log: OOM kill", None, None, None, None, "", "inferred")
    if _PREEMPTED.search(text):
        return FinalRecord("PREEMPTED", None, "batch log: preempted", None, None, None, None, "", "inferred")
    ends = list(TASK_END.finditer(text))
    killed = [(m, sig) for m in ends if (sig := signal_of_word(m["what"]))]
    faults = [(m, sig) for m, sig in killed if is_fault(sig)]
    if faults:  # a task died of its own fault: that comes before the exits and stops it caused
        return _task_signal_record(*faults[0])
    exits = [(m, code) for m in ends if (code := EXIT_CODE.fullmatch(m["what"]))]
    if exits:
        first, code = exits[0]
        died = next((f"rank {m.group('rank')} killed by {sig} (torch elastic); " for m in _ELASTIC_SIGNAL.finditer(text)
                     if is_fault(sig := signal_name(int(m.group("sig"))))), "")
        return FinalRecord("FAILED", f"{code['code']}:0",
                           f"batch log: {died}task {first['tasks']} on {first['node']} exited with code "
                           f"{code['code']}", None, None, None, first["node"], "", "inferred")
    if killed:  # only stopped (Terminated ...): by whom, the batch log does not say
        return _task_signal_record(*killed[0])
    return FinalRecord("COMPLETED", None, "batch log: no failure reported", None, None, None, None, "", "inferred")


def _task_signal_record(m: re.Match[str], sig: str) -> FinalRecord:
    """``srun: error: nid002: task 3: Aborted`` -> FAILED, exit code ``0:6`` (Slurm's exit:signal)."""
    return FinalRecord("FAILED", f"0:{signal_number(sig) or 0}",
                       f"batch log: task {m.group('tasks')} on {m.group('node')} killed by {sig} ({m.group('what')})",
                       None, None, None, m.group("node"), "", "inferred")


def _cancelled_by(raw_state: str) -> str | None:
    m = re.match(r"CANCELLED by (\d+)", raw_state.strip())
    if not m:
        return None
    uid = int(m.group(1))
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = "?"
    return f"cancelled by {name} (uid {uid})"


def _from_sacct(rec: SacctRecord) -> FinalRecord:
    reason = _cancelled_by(rec.raw_state) or (rec.reason if rec.reason not in ("", "None") else None)
    return FinalRecord(rec.state, rec.exit_code or None, reason, rec.start, rec.end, rec.elapsed_s,
                       rec.node_list or None, "", "sacct")


def _from_scontrol(d: JobDetails) -> FinalRecord:
    reason = d.reason if d.reason and d.reason != "None" else None
    return FinalRecord(d.state, d.exit_code or None, reason, d.start_time, d.end_time,
                       parse_duration(d.run_time), d.nodelist or None, "", "scontrol")


def _iso_local(ts: float | None) -> str | None:
    return None if ts is None else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))


def journal_of(entry: HistoryEntry, job_id: str) -> JournalState | None:
    """The job's journal as it is now (None: no log directory known, or no journal there)."""
    if not entry.log_dir or not entry.log_stem:
        return None
    return read_journal(journal_path(entry.log_dir, entry.log_stem, job_id), job_id)


def journal_record(entry: HistoryEntry, state: JournalState) -> FinalRecord | None:
    """The record the journal alone gives (source ``job``); None while it has not ended (or never wrote it)."""
    end = state.final(time_limit_from_script(entry.script))
    if end is None:
        return None
    return FinalRecord(end.state, end.exit_code, end.reason, _iso_local(state.start), _iso_local(state.end),
                       state.elapsed_s, state.nodes or None, "", "job")


def confirm(journal: FinalRecord, slurm: FinalRecord) -> FinalRecord:
    """The journal's record with what Slurm adds (who cancelled, reason, its times and nodes); Slurm's own when it
    names another final state (the job cannot tell a time limit or a preemption from a cancel)."""
    if slurm.state != journal.state:
        why = f"{slurm.reason}; " if slurm.reason else ""
        return replace(slurm, reason=f"{why}the job's journal said {journal.state}")
    return replace(journal, reason=slurm.reason or journal.reason, start_time=slurm.start_time or journal.start_time,
                   end_time=slurm.end_time or journal.end_time,
                   elapsed_s=slurm.elapsed_s if slurm.elapsed_s is not None else journal.elapsed_s,
                   node_list=slurm.node_list or journal.node_list, confirmed_by=slurm.source)


def _finished(state: str) -> bool:
    return state_category(state).finished


def _paths(entry: HistoryEntry) -> LogPaths | None:
    return LogPaths(entry.log_dir, entry.log_stem) if entry.log_dir and entry.log_stem else None


def verdict_for(entry: HistoryEntry, job_id: str, slurm_final: SlurmFinal | None = None) -> str:
    """One line: Slurm's job-level verdict first (cancelled, time limit, node failure, ...), else the rank that
    failed first over the job's logs (:func:`ntui.core.logs.joblogs.job_verdict`); "" when there is nothing to say."""
    paths = _paths(entry)
    if paths is None or not os.path.isdir(paths.log_dir):
        return ""
    try:
        found = job_verdict(paths, job_id, entry.world_size or None, entry.launcher or None, slurm=slurm_final)
    except OSError:
        return ""
    return found.line if found.kind != "none" else ""


def gpu_summary(report: UsageReport) -> GpuSummary | None:
    """The few numbers of ``report`` the history keeps (None when no GPU was sampled)."""
    gpus = report.all_gpus
    if not gpus:
        return None
    idle = [g.idle_fraction for g in gpus if g.idle_fraction is not None]
    peaks = [f for g in gpus if (f := g.mem_peak_fraction) is not None]
    first = report.findings[0].message if report.findings else ""
    return GpuSummary(report.util_mean, sum(idle) / len(idle) if idle else None, max(peaks, default=None),
                      len(gpus), report.energy_wh, len(report.findings), first)


def gpu_summary_for(entry: HistoryEntry, job_id: str, final: FinalRecord) -> GpuSummary | None:
    """The summary over the job's sample files (None when there are none): one streamed pass per file."""
    if not entry.log_dir or not entry.log_stem:
        return None
    files = find_sample_files(entry.log_dir, entry.log_stem, job_id)
    if not files:
        return None
    elapsed = float(final.elapsed_s) if final.elapsed_s is not None else None
    facts = JobFacts(job_id, final.state, True, elapsed, time_limit_from_script(entry.script))
    return gpu_summary(build_report(files, facts))


def refresh_gpu_summary(history: History, entry: HistoryEntry, report: UsageReport) -> bool:
    """After a full report of an ended, resolved job (``ntui report``): store its summary (e.g. for a record
    resolved before summaries existed). False when nothing was stored (not resolved, not ended, no GPU data)."""
    summary = gpu_summary(report)
    if entry.job_id is None or entry.final_state is None or not report.finished or summary is None:
        return False
    return history.record_gpu_summary(entry.job_id, summary)


@dataclass(frozen=True)
class ResolveReport:
    resolved: tuple[tuple[str, FinalRecord], ...] = ()
    unresolved: tuple[str, ...] = ()  # still pending/running, or not decidable now
    sacct_calls: int = 0
    squeue_calls: int = 0
    scontrol_calls: int = 0
    accounting: bool | None = None  # True: sacct answered; False: accounting disabled; None: not asked/failed
    warnings: tuple[str, ...] = field(default=())
    confirmed: tuple[str, ...] = ()  # journal records resolved earlier that sacct confirmed now
    sweeps: Mapping[str, str] = field(default_factory=dict)
    """The task counts of each unresolved sweep asked about (``6 tasks: 2 running, ...``), by its job id."""

    def lines(self) -> list[str]:
        out = [f"job {j}: {r.state}" + (f" (exit {r.exit_code})" if r.exit_code else "")
               + f" [{r.source}" + (f", confirmed by {r.confirmed_by}" if r.confirmed_by else "") + "]"
               for j, r in self.resolved]
        return out + [f"warning: {w}" for w in self.warnings]


def resolve_records(
    history: History,
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    grace_s: float = GRACE_S,
    now: float | None = None,
    verdict: Callable[[HistoryEntry, str, SlurmFinal | None], str] = verdict_for,
    usage: Callable[[HistoryEntry, str, FinalRecord], GpuSummary | None] = gpu_summary_for,
    queue: Sequence[OwnJob] | None = None,
    journal: Callable[[HistoryEntry, str], JournalState | None] = journal_of,
) -> ResolveReport:
    """Fill the record of every ended, unresolved job in ``history`` (see the module doc). Sweeps (job arrays) are
    resolved as a whole once every task ended (:func:`ntui.core.records.sweeps.resolve_sweeps`)."""
    now = time.time() if now is None else now
    unresolved = history.unresolved()
    current = history.cluster if any(e.cluster for e in unresolved) else None
    # another cluster's jobs are resolved there: this cluster's Slurm knows a different job by that id
    entries = [e for e in unresolved if e.job_id and (e.cluster is None or _ours(e.cluster, current))]
    sweeps = [ref for e in entries if (ref := sweep_of(e)) is not None]
    swept: SweptPart | None = None
    if sweeps:
        swept = resolve_sweeps(history, runner, sweeps, env=env, timeout=timeout, verdict=verdict,
                               infer=infer_from_batch_log)
        entries = [e for e in entries if e.job_id not in swept[1]]
    to_confirm = {e.job_id: e for e in history.unconfirmed(now - CONFIRM_S) if e.job_id and sweep_of(e) is None}
    if not entries and not to_confirm:
        return _with_sweeps(ResolveReport(), swept)
    warnings: list[str] = []
    decided: dict[str, FinalRecord] = {}
    said: dict[str, SlurmFinal] = {}  # Slurm's own final word, for the verdict
    waiting: set[str] = set()
    sacct_calls = squeue_calls = scontrol_calls = 0
    accounting: bool | None = None
    from_journal: dict[str, FinalRecord] = {}
    for e in entries:
        assert e.job_id is not None
        try:
            state = journal(e, e.job_id)
        except Exception as exc:  # a journal that cannot be read leaves the job to Slurm
            warnings.append(f"journal of job {e.job_id}: {exc}")
            state = None
        found = journal_record(e, state) if state is not None else None
        if found is not None:
            from_journal[e.job_id] = found
    ids = list(dict.fromkeys([*(e.job_id for e in entries if e.job_id), *to_confirm]))
    known: dict[str, SacctRecord] = {}
    try:
        sacct_calls += 1
        known = sacct_jobs(runner, ids, env=env, timeout=timeout)
        accounting = True
    except SacctUnavailable as exc:
        accounting = False if exc.disabled else None
        if not exc.disabled:
            warnings.append(f"sacct: {exc}")
    confirmed: list[tuple[str, FinalRecord]] = []
    for job_id, rec in known.items():
        if _finished(rec.state):
            slurm = _from_sacct(rec)
            said[job_id] = SlurmFinal(rec.raw_state, rec.reason or None, rec.node_list or None, rec.exit_code or None)
            old = to_confirm.get(job_id)
            if old is not None and old.final_state is not None:  # a journal record of an earlier resolution
                first = FinalRecord(old.final_state, old.exit_code, old.reason, old.start_time, old.end_time,
                                    old.elapsed_s, old.node_list, old.verdict or "", "job")
                confirmed.append((job_id, confirm(first, slurm)))
            elif job_id in from_journal:
                decided[job_id] = confirm(from_journal[job_id], slurm)
            elif job_id not in to_confirm:
                decided[job_id] = slurm
        elif job_id in from_journal and from_journal[job_id].state in SIGNAL_ENDS:
            waiting.add(job_id)  # ended by a signal, and Slurm says it is not over: requeued (preempted), or lagging
        elif job_id not in to_confirm and job_id not in from_journal:
            waiting.add(job_id)
    for job_id, own_word in from_journal.items():
        if job_id not in waiting:  # sacct had not got its end yet (or there is none): the journal's word
            decided.setdefault(job_id, own_word)
    confirmed_ids = tuple(j for j, both in confirmed if history.record_confirmation(j, both))
    rest = [j for j in ids if j not in decided and j not in waiting and j not in to_confirm]
    if rest:
        own: dict[str, OwnJob] | None
        if queue is not None:  # the caller's fresh squeue answer (app start: the one reconcile just got)
            own = {j.job_id: j for j in queue}
        else:
            try:
                squeue_calls += 1
                own = {j.job_id: j for j in own_jobs(runner, env=env, timeout=timeout)}
            except SlurmError as exc:
                warnings.append(f"squeue: {exc}; jobs not in accounting left unresolved")
                own = None
        by_id = {e.job_id: e for e in entries}
        for job_id in rest:
            if own is None:
                waiting.add(job_id)
                continue
            job = own.get(job_id)
            entry = by_id[job_id]
            if job is not None:
                if not _finished(job.state):
                    waiting.add(job_id)
                    continue
                try:
                    scontrol_calls += 1
                    details = show_job(runner, job_id, env=env, timeout=timeout)
                    decided[job_id] = _from_scontrol(details)
                    said[job_id] = SlurmFinal(details.state, details.reason or None, details.nodelist or None,
                                              details.exit_code or None)
                    continue
                except JobNotFound:
                    pass  # forgotten between the two calls: infer below
                except SlurmError as exc:
                    warnings.append(f"scontrol show job {job_id}: {exc}")
                    waiting.add(job_id)
                    continue
            if accounting and now - (entry.submitted_at or entry.created_at) < grace_s:
                waiting.add(job_id)  # slurmdbd may not have it yet
                continue
            paths = _paths(entry)
            decided[job_id] = infer_from_batch_log(paths.batch(job_id) if paths else None)
    by_id = {e.job_id: e for e in entries}
    resolved: list[tuple[str, FinalRecord]] = []
    for job_id, found in decided.items():
        try:
            text = verdict(by_id[job_id], job_id, said.get(job_id))
        except Exception as exc:  # a triage bug must not lose the state
            text = ""
            warnings.append(f"triage of job {job_id}: {exc}")
        final = replace(found, verdict=text)
        if history.record_final(job_id, final):
            resolved.append((job_id, final))
            try:
                summary = usage(by_id[job_id], job_id, final)
                if summary is not None:
                    history.record_gpu_summary(job_id, summary)
            except Exception as exc:  # the state is recorded already; a bad sample file must not hide it
                warnings.append(f"GPU usage of job {job_id}: {exc}")
    return _with_sweeps(ResolveReport(tuple(resolved), tuple(sorted(waiting)), sacct_calls, squeue_calls,
                                      scontrol_calls, accounting, tuple(warnings), confirmed_ids), swept)


SweptPart = tuple[list[tuple[str, FinalRecord]], dict[str, str], SweepStates]


def _with_sweeps(report: ResolveReport, swept: SweptPart | None) -> ResolveReport:
    """``report`` of the plain jobs with what :func:`~ntui.core.records.sweeps.resolve_sweeps` did for the sweeps."""
    if swept is None:
        return report
    done, counts, found = swept
    return replace(report, resolved=(*report.resolved, *done), sacct_calls=report.sacct_calls + found.sacct_calls,
                   scontrol_calls=report.scontrol_calls + found.scontrol_calls,
                   accounting=report.accounting if report.accounting is not None else found.accounting,
                   warnings=(*report.warnings, *found.warnings),
                   sweeps={k: v for k, v in counts.items() if k not in {j for j, _ in done}})


# ---------------------------------------------------------------- recent jobs


@dataclass(frozen=True)
class RecentJob:
    job_id: str
    name: str
    state: str  # final state, or "" while unresolved (still queued/running, or unknown yet)
    exit_code: str | None
    elapsed_s: int | None
    verdict: str
    submitted_at: float | None
    end_time: str | None
    source: str  # sacct | scontrol | inferred | "" (unresolved)
    from_ntui: bool
    note: str = ""  # NOT_FROM_NTUI for the user's other jobs
    cluster: str | None = None  # the record's cluster (Slurm's ClusterName); None: this one, or unknown
    entry: HistoryEntry | None = field(default=None, compare=False, repr=False)
    run: RunView | None = field(default=None, compare=False, repr=False)
    """A long run's allocations (its run file, read with the list, thread-side; T10)."""

    @property
    def key(self) -> str:
        """Unique in a list, whatever the job ids: two clusters (or a cluster whose ids restarted) may each have
        a job 4. ntui's jobs by their record, the user's other jobs (one sacct answer) by their id."""
        return f"record:{self.entry.token}" if self.entry is not None else f"sacct:{self.job_id}"

    @property
    def gpu_util(self) -> float | None:
        """Mean GPU utilisation (percent) from the record's summary; None without samples or a record."""
        gpu = self.entry.gpu if self.entry is not None else None
        return gpu.util_mean if gpu is not None else None


@dataclass(frozen=True)
class RecentJobs:
    jobs: tuple[RecentJob, ...]
    accounting: bool | None
    warnings: tuple[str, ...] = ()


SORT_KEYS: dict[str, Callable[[RecentJob], tuple[object, ...]]] = {
    "submitted": lambda j: (j.submitted_at or 0.0, j.job_id),
    "ended": lambda j: (j.end_time or "", j.job_id),
    "elapsed": lambda j: (j.elapsed_s if j.elapsed_s is not None else -1, j.job_id),
    "state": lambda j: (j.state, j.job_id),
    "job": lambda j: (len(j.job_id), j.job_id),
    # jobs without a summary sort below every measured one (descending: last)
    "gpu": lambda j: (j.gpu_util is not None, j.gpu_util or 0.0, j.job_id),
    # descending: measured jobs first, the lowest utilisation (the most GPU time wasted) on top, then newest first
    "gpu-low": lambda j: (j.gpu_util is not None, -(j.gpu_util or 0.0), j.submitted_at or 0.0, j.job_id),
    # descending: the jobs that ended unsuccessfully (failed, cancelled, timeout, OOM, ...) first, newest first
    "failed": lambda j: (state_category(j.state) is StateCategory.FAILED, j.submitted_at or 0.0,
                         j.job_id),
}


@dataclass(frozen=True)
class RecentOrder:
    """An order a person picks for the recent jobs: ``name`` (``ntui history --sort``), ``label`` (shown with the
    list), a :data:`SORT_KEYS` key and its direction."""

    name: str
    label: str
    key: str
    descending: bool = True


#: The orders the jobs view's recent list cycles through and ``ntui history --sort`` accepts, the default first.
RECENT_ORDERS: tuple[RecentOrder, ...] = (
    RecentOrder("newest", "newest first", "submitted"),
    RecentOrder("gpu", "lowest GPU use first", "gpu-low"),
    RecentOrder("failed", "failed first", "failed"),
)


def recent_order(name: str) -> RecentOrder:
    """The order called ``name`` (:data:`RECENT_ORDERS`); ``ValueError`` names the choices."""
    for order in RECENT_ORDERS:
        if order.name == name:
            return order
    raise ValueError(f"unknown order {name!r} (one of {', '.join(o.name for o in RECENT_ORDERS)})")


def next_order(order: RecentOrder) -> RecentOrder:
    """The order after ``order`` in :data:`RECENT_ORDERS` (after the last one, the first again)."""
    return RECENT_ORDERS[(RECENT_ORDERS.index(order) + 1) % len(RECENT_ORDERS)]


def sort_recent(jobs: Iterable[RecentJob], order: RecentOrder) -> list[RecentJob]:
    return sorted(jobs, key=SORT_KEYS[order.key], reverse=order.descending)


def record_job(e: HistoryEntry) -> RecentJob:
    """A history row as a recent job (ntui's own: its record, when resolved)."""
    return RecentJob(e.job_id or "", e.job_name, e.final_state or "", e.exit_code, e.elapsed_s, e.verdict or "",
                     e.submitted_at or e.created_at, e.end_time, e.record_source or "", True, cluster=e.cluster,
                     entry=e, run=run_of(e))


def _ours(cluster: str, current: str | None) -> bool:
    """Whether a record of ``cluster`` is of the cluster this process talks to (unknown: taken as ours)."""
    return current is None or cluster.lower() == current.lower()


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return time.mktime(time.strptime(iso, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def recent_jobs(
    history: History,
    runner: CommandRunner | None = None,
    *,
    days: float = DEFAULT_RECENT_DAYS,
    now: float | None = None,
    sort: str = "submitted",
    descending: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> RecentJobs:
    """ntui's jobs of the last ``days`` (from the history; call :func:`resolve_records` first for fresh states),
    plus, with a ``runner`` and accounting, the user's other jobs from **one** ``sacct -S`` call, marked
    :data:`NOT_FROM_NTUI`. Sorted by ``sort`` (a key of :data:`SORT_KEYS`)."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r} (one of {', '.join(SORT_KEYS)})")
    now = time.time() if now is None else now
    since = now - days * 86400
    jobs: list[RecentJob] = []
    seen: set[str] = set()
    for e in history.since(since):
        if not e.job_id:
            continue
        if e.cluster is None or (runner is not None and _ours(e.cluster, history.cluster)):
            seen.add(e.job_id)  # another cluster's job 4 does not hide this cluster's job 4 from sacct
        jobs.append(record_job(e))
    accounting: bool | None = None
    warnings: list[str] = []
    if runner is not None:
        try:
            others = sacct_since(runner, _iso(since), env=env, timeout=timeout)
            accounting = True
        except SacctUnavailable as exc:
            accounting = False if exc.disabled else None
            if not exc.disabled:
                warnings.append(f"sacct: {exc}")
            others = ()
        for rec in others:
            if rec.job_id in seen or rec.base_id in seen:
                continue
            seen.add(rec.job_id)
            state = rec.state if _finished(rec.state) else ""
            jobs.append(RecentJob(rec.job_id, rec.name, state, rec.exit_code or None, rec.elapsed_s, "",
                                  _epoch(rec.submit), rec.end, "sacct", False, NOT_FROM_NTUI))
    jobs.sort(key=SORT_KEYS[sort], reverse=descending)
    return RecentJobs(tuple(jobs), accounting, tuple(warnings))
