"""The jobs view's list of recent jobs, without Textual: what to load, one row per job, what selecting one shows.

The jobs view shows, under the live queue, the user's jobs of the last ``queue.recent-days`` days
(:func:`ntui.core.records.record.recent_jobs`): ntui's own with their record (final state, elapsed, verdict), and, where
accounting exists, the user's other jobs from ``sacct`` (their logs are unknown, and the row says so).

* :func:`load_recent` (*thread-side*): first :func:`~ntui.core.records.record.resolve_records` when asked (a job just
  left the queue: its record is filled now), then the list. A failure to resolve does not hide the list.
* :class:`RecentLoads`: loads never overlap; a request during a load makes exactly one more follow it.
* :func:`shown_jobs` / :func:`recent_cells` / :data:`RECENT_COLUMNS`: one row per job (jobs still in the live
  queue are left out: the queue above shows them), in the order the user picked
  (:data:`ntui.core.records.record.RECENT_ORDERS`).
* :func:`cluster_recent` / :func:`merged_recent`: the recent jobs of the clusters reached over ssh, from each
  cluster's own history (read there by its agent; the UI's worker hands the entries here), marked with that
  cluster's name, merged with this machine's list newest first (a record both histories hold, by its token, once);
  :class:`RecentParts` keeps the last of each (and the clusters whose history could not be read) between loads.
* :func:`record_details`: the details panel's view of a selected record (its logs:
  :func:`ntui.core.jobs.selected.log_target` of :func:`~ntui.core.jobs.selected.selected_record`, as for a live job,
  ``job_active=False``).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ntui.core.jobfiles.manifest import is_sweep_script
from ntui.core.jobs.clusters import cluster_key
from ntui.core.jobs.details import DetailsView
from ntui.core.records.history import GpuSummary, History, HistoryEntry
from ntui.core.records.outcome import UNKNOWN, Outcome
from ntui.core.records.record import (
    NOT_FROM_NTUI,
    RecentJob,
    RecentJobs,
    RecentOrder,
    recent_jobs,
    record_job,
    resolve_records,
    sort_recent,
)
from ntui.core.records.runs import RunView
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.runner import CommandRunner, SlurmError

__all__ = [
    "MAX_RECENT",
    "RECENT_COLUMNS",
    "RecentLoads",
    "RecentParts",
    "RecentRequest",
    "age_text",
    "cluster_recent",
    "gpu_line",
    "gpu_text",
    "live_key",
    "load_recent",
    "merged_recent",
    "recent_cells",
    "recent_title",
    "run_cell",
    "run_note",
    "record_details",
    "shown_jobs",
    "state_text",
]

#: At most this many rows (the newest): a busy week of job arrays must not make the list slow to draw.
MAX_RECENT = 500

#: Column titles of the recent-jobs list (one home for the row format: :func:`recent_cells`).
RECENT_COLUMNS: tuple[str, ...] = ("Job", "Name", "State", "Elapsed", "GPU", "Submitted", "Verdict")


@dataclass(frozen=True)
class RecentRequest:
    """One load to run: ``resolve`` first fills the records of jobs that ended."""

    resolve: bool


class RecentLoads:
    """Loads never overlap: :meth:`request` returns the load to start now, or None while one runs (then one
    more follows it, resolving if any of the waiting requests asked to)."""

    def __init__(self) -> None:
        self.running = False
        self._waiting: RecentRequest | None = None

    def request(self, *, resolve: bool) -> RecentRequest | None:
        if self.running:
            self._waiting = RecentRequest(resolve or (self._waiting is not None and self._waiting.resolve))
            return None
        self.running = True
        return RecentRequest(resolve)

    def finished(self) -> RecentRequest | None:
        """The load ended (or failed): the one to start now, if any was asked for meanwhile."""
        self.running = False
        waiting, self._waiting = self._waiting, None
        return self.request(resolve=waiting.resolve) if waiting is not None else None


def load_recent(
    history: object,
    runner: CommandRunner | None,
    request: RecentRequest,
    *,
    days: float,
    now: float,
    timeout: float,
    env: Mapping[str, str] | None = None,
    sort: str = "submitted",
) -> RecentJobs | None:
    """*Thread-side*: the recent jobs (None when ``history`` is not ntui's history file, e.g. a test stand-in).
    With ``request.resolve``, records of jobs that ended are filled first (one batched sacct). ``sort``: a key of
    :data:`ntui.core.records.record.SORT_KEYS` (``gpu``: by mean GPU utilisation, unmeasured jobs last)."""
    if not isinstance(history, History):
        return None
    warnings: list[str] = []
    if request.resolve and runner is not None:
        try:
            report = resolve_records(history, runner, env=env, timeout=timeout, now=now)
            warnings.extend(report.warnings)
        except (SlurmError, OSError) as exc:  # the list stands without fresh records
            warnings.append(f"records not resolved: {exc}")
    got = recent_jobs(history, runner, days=days, now=now, env=env, timeout=timeout, sort=sort)
    return RecentJobs(got.jobs, got.accounting, (*warnings, *got.warnings))


def cluster_recent(name: str, entries: Iterable[HistoryEntry], *, days: float, now: float) -> tuple[RecentJob, ...]:
    """The recent jobs of cluster ``name`` reached over ssh: its history's entries (as its agent sent them) of the
    last ``days`` with a job id, each marked with that cluster (whatever the record's own ``cluster`` says: the
    list's Cluster column and the live-queue check go by the name the settings give it)."""
    since = now - days * 86400
    return tuple(replace(record_job(e), cluster=name) for e in entries
                 if e.job_id and (e.submitted_at or e.created_at) >= since)


def merged_recent(local: RecentJobs | None, clusters: Mapping[str, Sequence[RecentJob]]) -> RecentJobs | None:
    """This machine's recent jobs with those of the clusters reached over ssh, newest first (None: neither has
    any history). A record this machine's history holds too (a job submitted from here to that cluster), by its
    token, is listed once: this machine's."""
    if local is None and not clusters:
        return None
    jobs = list(local.jobs) if local is not None else []
    tokens = {j.entry.token for j in jobs if j.entry is not None}
    for got in clusters.values():
        jobs.extend(j for j in got if j.entry is None or j.entry.token not in tokens)
    if clusters:
        jobs.sort(key=lambda j: j.submitted_at or 0.0, reverse=True)
    return RecentJobs(tuple(jobs), local.accounting if local is not None else None,
                      local.warnings if local is not None else ())


class RecentParts:
    """The recent list's sources as last loaded: this machine's list, each cluster's own history (by the cluster's
    name), and the words of the clusters whose history could not be read (the list's title says them; what such a
    cluster's history said before stays listed). Each load answers the merged list (:func:`merged_recent`)."""

    def __init__(self) -> None:
        self.here: RecentJobs | None = None
        self.there: dict[str, tuple[RecentJob, ...]] = {}
        self._notes: dict[str, str] = {}

    def here_loaded(self, jobs: RecentJobs) -> RecentJobs | None:
        """This machine's list, loaded again."""
        self.here = jobs
        return merged_recent(jobs, self.there)

    def cluster_loaded(self, cluster: str, jobs: tuple[RecentJob, ...] | None, note: str = "") -> RecentJobs | None:
        """Cluster ``cluster``'s history read again (``jobs``), or not (None: ``note`` says why)."""
        if jobs is not None:
            self.there[cluster] = jobs
            self._notes.pop(cluster, None)
        else:
            self._notes[cluster] = note
        return merged_recent(self.here, self.there)

    def notes(self) -> tuple[str, ...]:
        """Why some clusters' histories are not fresh, one line each."""
        return tuple(self._notes.values())


def live_key(job: RecentJob, remote: Container[str]) -> str:
    """The live queue's row key of a recent job: ``CLUSTER/JOBID`` for a job of a cluster reached over ssh
    (``remote``: their names), its job id for the local cluster's."""
    return cluster_key(job.cluster, job.job_id) if job.cluster is not None and job.cluster in remote else job.job_id


def shown_jobs(jobs: Iterable[RecentJob], live: Container[str], limit: int = MAX_RECENT,
               order: RecentOrder | None = None, remote: Container[str] = ()) -> tuple[RecentJob, ...]:
    """The jobs to list: the first ``limit`` in the given (loaded: newest first) order, then in ``order`` when
    given (:data:`ntui.core.records.record.RECENT_ORDERS`; re-sorting asks Slurm nothing). Those still in the live
    queue (its row keys: :func:`live_key`) are shown there, not here."""
    out: list[RecentJob] = []
    for j in jobs:
        if live_key(j, remote) not in live:
            out.append(j)
            if len(out) >= limit:
                break
    return tuple(out if order is None else sort_recent(out, order))


def state_text(job: RecentJob) -> str:
    """``COMPLETED``, ``FAILED 1:0``, ``~TIMEOUT`` (``~``: inferred from the batch log), ``?`` unresolved."""
    if not job.state:
        return "?"
    code = f" {job.exit_code}" if job.exit_code and job.exit_code not in ("0:0", "0") else ""
    return ("~" if job.source == "inferred" else "") + job.state + code


def age_text(submitted_at: float | None, now: float) -> str:
    """How long ago, in the largest unit that fits (``45 min ago``, ``3 h ago``, ``2 d ago``)."""
    if submitted_at is None:
        return "-"
    ago = max(0.0, now - submitted_at)
    if ago < 3600:
        return f"{int(ago // 60)} min ago"
    if ago < 86400:
        return f"{int(ago // 3600)} h ago"
    return f"{int(ago // 86400)} d ago"


def gpu_text(util_mean: float | None) -> str:
    """A job's mean GPU utilisation as its record keeps it: ``37%``; ``-`` without samples."""
    return "-" if util_mean is None else f"{util_mean:.0f}%"


def gpu_line(gpu: GpuSummary) -> str:
    """The record's GPU summary in one line (the details panel; ``ntui report`` has the whole report)."""
    def pct(x: float | None) -> str:
        return "?" if x is None else f"{100 * x:.0f} %"

    energy = f", {gpu.energy_wh:.1f} Wh" if gpu.energy_wh is not None else ""
    line = (f"GPU: {gpu.gpus} sampled, mean utilisation {gpu_text(gpu.util_mean)}, idle {pct(gpu.idle_fraction)}, "
            f"peak memory {pct(gpu.mem_peak_fraction)} of total{energy}")
    if gpu.findings:
        more = f" (+{gpu.findings - 1} more)" if gpu.findings > 1 else ""
        line += f"\nfinding: {gpu.first_finding}{more}"
    return line


def recent_cells(job: RecentJob, now: float) -> tuple[str, ...]:
    """One row of the list, in the order of :data:`RECENT_COLUMNS`."""
    elapsed = format_elapsed(job.elapsed_s) if job.elapsed_s is not None else "-"
    if job.run is not None and job.run.training_s:
        elapsed = format_elapsed(job.run.training_s)  # a run: the training time of all its allocations
    said = job.note if not job.from_ntui else job.verdict or ("" if job.state else "not resolved yet")
    entry = job.entry
    if entry is not None and job.state and entry.reason and is_sweep_script(entry.script):
        said = " · ".join(x for x in (entry.reason, job.verdict) if x)  # a sweep: its task counts first
    if job.run is not None:  # a long run: its allocations first (T10)
        said = " · ".join(x for x in (run_cell(job.run), job.verdict) if x)
    return (job.job_id, job.name, state_text(job), elapsed, gpu_text(job.gpu_util), age_text(job.submitted_at, now),
            said)


def run_cell(run: RunView) -> str:
    """A run in a list cell: ``allocation 3 of ≤ 6`` while it goes on, else ``3 allocations · done``."""
    if run.state.stopped is None:
        return run.allocation_text
    n = run.count
    status = run.status.removeprefix("stopped: ")
    return f"{n} allocation{'s' if n != 1 else ''} · {status}"


def run_note(run: RunView) -> str:
    """A run in the details panel: its summary and one line per allocation."""
    return "\n".join([run.summary(), *run.allocation_lines()])


def recent_title(days: float, jobs: int, accounting: bool | None, limit: int = MAX_RECENT) -> str:
    span = f"{days:g} day" + ("" if days == 1 else "s")
    source = "" if accounting else " · ntui's jobs only (no accounting)" if accounting is False else ""
    count = f"the newest {limit} jobs" if jobs >= limit else f"{jobs} job" + ("" if jobs == 1 else "s")
    return f"Recent · last {span} · {count}{source}"


def record_details(job: RecentJob) -> DetailsView:
    """The details panel's view of a record (no Slurm call: the record is what Slurm said when it ended)."""
    outcome = Outcome(job.job_id, job.state or UNKNOWN, job.exit_code, job.source or "none", bool(job.state))
    entry = job.entry
    if not job.from_ntui:
        note = f"{NOT_FROM_NTUI} (listed by sacct; ntui did not submit it)"
    elif not job.state:
        note = "not resolved yet: Slurm has not said how it ended"
    else:
        how = {"inferred": " (the batch log)", "job": " (its own journal)"}.get(job.source, "")
        if entry is not None and entry.confirmed_by:
            how += f", confirmed by {entry.confirmed_by}"
        parts = [f"record from {job.source}{how}"]
        if entry is not None and entry.reason:
            parts.append(f"reason: {entry.reason}")
        if job.elapsed_s is not None:
            parts.append(f"elapsed {format_elapsed(job.elapsed_s)}")
        if job.end_time:
            parts.append(f"ended {job.end_time}")
        if job.verdict:
            parts.append(f"verdict: {job.verdict}")
        if entry is not None and entry.gpu is not None:
            parts.append(gpu_line(entry.gpu))
        if entry is not None and entry.resubmit_of:
            parts.append(f"resubmit of job {entry.resubmit_of}")
        if job.run is not None:
            parts.append(run_note(job.run))
        note = "\n".join(parts)
    if job.from_ntui and not job.state and job.run is not None:
        note = "\n".join([note, run_note(job.run)])
    return DetailsView(job_id=job.job_id, entry=entry, outcome=outcome, note=note)


