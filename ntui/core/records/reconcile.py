"""Reconcile the local history with the queue: find the submissions ntui lost track of.

``submit_job`` writes the script as ``<log_dir>/.<stem>-<token>.sbatch``, records an *intent* row
keyed by ``token``, runs ``sbatch`` on that path, renames the script to ``<stem>-<jobid>.sbatch`` and
completes the row. Slurm keeps the path it was given as the job's ``Command`` (the rename does not
change it), so a job in the queue names the submission it came from. If ntui died (``kill -9``, a
closed terminal, a lost login node) between ``sbatch`` and the history update, or recorded a failure
because ``sbatch`` timed out after the controller had in fact accepted the job, :func:`reconcile`
finds it with **one** ``squeue --me --states=all -O JobID,...,Command`` call and:

* an intent (or failed) row whose token matches: completed with the job id, status ``recovered``;
  the staging script is renamed to its final name if still there (or rewritten from the history
  when it is gone and the final one is missing);
* an ntui script with no row at all (history deleted, or another history file): a new
  ``recovered`` row, with the log directory and stem taken from the script path, so that
  ``ntui logs`` works for it (its files are left as they are: the ntui that submitted it may still
  be running);
* an own job whose command is not an ntui script: left alone, reported as not submitted by ntui.

An intent younger than ``grace_s`` (default: sbatch's timeout + 30 s) may belong to an ntui that is
still submitting; it is reported as in progress and not touched (the other process renames its
script itself). Intents with no job in the queue stay intents: sbatch never ran, or the job already
left the queue (without accounting there is no telling which).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ntui.core.paths import atomic_write
from ntui.core.records.history import History, HistoryEntry
from ntui.core.slurm.common import DEFAULT_TIMEOUT, SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner, check
from ntui.core.slurm.squeue import SQUEUE_SEPARATOR, build_squeue_argv
from ntui.core.textsafe import clean_line

__all__ = [
    "GRACE_S",
    "RECONCILE_FIELDS",
    "OwnJob",
    "ReconcileReport",
    "Recovered",
    "build_reconcile_argv",
    "own_jobs",
    "parse_own_jobs",
    "reconcile",
    "staging_name",
]

#: An intent younger than this may belong to an ntui still waiting for sbatch (its timeout + margin).
GRACE_S = SUBMIT_TIMEOUT + 30.0
RECONCILE_FIELDS: tuple[str, ...] = ("JobID", "ArrayJobID", "ArrayTaskID", "Name", "State", "Command")
SEPARATOR = SQUEUE_SEPARATOR
MAX_LINES = 20  # per kind, in ReconcileReport.lines()
_STAGING_RE = re.compile(r"^\.(?P<stem>[A-Za-z0-9._-]+)-(?P<token>[0-9a-f]{32})\.sbatch$")


def staging_name(command: str) -> tuple[str, str] | None:
    """``(stem, token)`` when ``command`` is an ntui staging script path, else ``None``."""
    m = _STAGING_RE.match(os.path.basename(command.strip()))
    return (m.group("stem"), m.group("token")) if m else None


@dataclass(frozen=True)
class OwnJob:
    """One of the user's jobs as ``squeue`` lists it. ``job_id`` is what sbatch printed (the array's
    job id for array tasks)."""

    job_id: str
    name: str
    state: str
    command: str

    @property
    def staging(self) -> tuple[str, str] | None:
        return staging_name(self.command)


@dataclass(frozen=True)
class Recovered:
    job_id: str
    token: str
    origin: str  # "intent" | "failed" (sbatch timed out but Slurm accepted) | "no-row" (history lacked it)
    script_path: str | None


@dataclass(frozen=True)
class ReconcileReport:
    recovered: tuple[Recovered, ...] = ()
    known: tuple[str, ...] = ()  # ntui jobs already in the history
    foreign: tuple[OwnJob, ...] = ()  # own jobs not submitted by ntui: left alone
    in_progress: tuple[str, ...] = ()  # tokens of recent intents that may still be submitting
    unmatched: tuple[str, ...] = ()  # tokens of older intents with no job in the queue
    warnings: tuple[str, ...] = field(default=())
    queue: tuple[OwnJob, ...] = ()  # the squeue answer it matched (record resolution can reuse it)

    def lines(self) -> list[str]:
        """A human summary, one fact per line."""
        out = [
            f"recovered job {r.job_id} ({r.origin} {r.token[:8]})"
            + (f": script {r.script_path}" if r.script_path else "")
            for r in self.recovered[:MAX_LINES]
        ]
        if len(self.recovered) > MAX_LINES:
            out.append(f"... and {len(self.recovered) - MAX_LINES} more recovered job(s)")
        if self.known:
            out.append(f"{len(self.known)} ntui job(s) in the queue already in the history")
        out += [f"job {j.job_id} ({clean_line(j.name.encode())}) not submitted by ntui; left alone"
                for j in self.foreign[:MAX_LINES]]
        if len(self.foreign) > MAX_LINES:
            out.append(f"... and {len(self.foreign) - MAX_LINES} more job(s) not submitted by ntui")
        if self.in_progress:
            out.append(f"{len(self.in_progress)} submission(s) in progress (intent < {GRACE_S:g} s old); not touched")
        if self.unmatched:
            out.append(f"{len(self.unmatched)} intent(s) with no job in the queue (sbatch never ran, "
                       "or the job already left the queue)")
        out += [f"warning: {w}" for w in self.warnings]
        return out or ["nothing to reconcile"]


def build_reconcile_argv() -> list[str]:
    """``squeue --noheader --me --states=ALL -O JobID:SEP,...,Command:SEP`` (one RPC; finished jobs still
    held by the controller are included, since a killed ntui may be noticed only after the job ended)."""
    return build_squeue_argv(array_tasks=False, states="all", fields=RECONCILE_FIELDS, separator=SEPARATOR)


def parse_own_jobs(stdout: str) -> tuple[OwnJob, ...]:
    """Parse :func:`build_reconcile_argv` output; malformed lines are dropped, array tasks folded."""
    n = len(RECONCILE_FIELDS)
    seen: dict[str, OwnJob] = {}
    for line in stdout.split("\n"):
        parts = line.split(SEPARATOR)
        if len(parts) == n + 1 and not parts[n].strip():
            parts = parts[:n]
        if len(parts) != n:
            continue
        raw_id, array_job, array_task, name, state, command = (p.strip() for p in parts)
        job_id = array_job if array_task not in ("", "N/A") and array_job else raw_id
        if job_id and job_id not in seen:
            seen[job_id] = OwnJob(job_id, name, state, command)
    return tuple(seen.values())


def own_jobs(
    runner: CommandRunner, *, env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT
) -> tuple[OwnJob, ...]:
    """The user's jobs with their batch script path (raises the typed Slurm errors)."""
    res = check(runner.run(build_reconcile_argv(), timeout=timeout, env=env))
    return parse_own_jobs(res.stdout)


def _final_script(staging: Path, final: Path, script: str, warnings: list[str]) -> str | None:
    """Move the staging script to its final name (or rewrite it from the history); its path or None."""
    try:
        if staging.exists():
            os.replace(staging, final)
        elif not final.exists():
            if not script:
                return None
            atomic_write(final, script, mode=0o600)
        return str(final)
    except OSError as exc:
        warnings.append(f"{final}: {exc.strerror or exc}")
        return None


def _existing(*candidates: Path) -> str | None:
    for p in candidates:
        try:
            if p.is_file():
                return str(p)
        except OSError:
            pass
    return None


def reconcile(
    history: History,
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    grace_s: float = GRACE_S,
    now: float | None = None,
) -> ReconcileReport:
    """Match the user's queue against the history and record what it lacks (see the module doc)."""
    jobs = own_jobs(runner, env=env, timeout=timeout)
    now = time.time() if now is None else now
    known_ids = history.known_job_ids()
    open_rows: dict[str, HistoryEntry] = {e.token: e for e in history.intents(include_failed=True)}
    recovered: list[Recovered] = []
    known: list[str] = []
    foreign: list[OwnJob] = []
    in_progress: list[str] = []
    warnings: list[str] = []
    matched: set[str] = set()
    for job in jobs:
        if job.job_id in known_ids:
            known.append(job.job_id)
            continue
        staging = job.staging
        if staging is None:
            foreign.append(job)
            continue
        stem, token = staging
        entry = open_rows.get(token)
        if entry is not None:
            matched.add(token)
            if entry.status == "intent" and now - entry.created_at < grace_s:
                in_progress.append(token)
                continue
            log_dir = Path(entry.log_dir)
            path = _final_script(log_dir / f".{entry.log_stem}-{token}.sbatch",
                                 log_dir / f"{entry.log_stem}-{job.job_id}.sbatch", entry.script, warnings)
            if history.record_recovered_intent(token, job.job_id, path):
                recovered.append(Recovered(job.job_id, token, entry.status, path))
            else:
                known.append(job.job_id)  # completed meanwhile by the ntui that submitted it
            continue
        if history.has_token(token):
            warnings.append(f"job {job.job_id}: submission {token[:8]} is recorded with another job id")
            continue
        # No row: the ntui that submitted it kept another history (or this one was deleted); that ntui may
        # still be running, so its files are not touched, only pointed at.
        log_dir = Path(os.path.dirname(job.command.strip()))
        path = _existing(log_dir / f"{stem}-{job.job_id}.sbatch", Path(job.command.strip()))
        history.record_recovered(job.job_id, job.name, str(log_dir), log_stem=stem, token=token, script_path=path)
        recovered.append(Recovered(job.job_id, token, "no-row", path))
    unmatched = [t for t, e in open_rows.items()
                 if e.status == "intent" and t not in matched and now - e.created_at >= grace_s]
    in_progress += [t for t, e in open_rows.items()
                    if e.status == "intent" and t not in matched and now - e.created_at < grace_s]
    return ReconcileReport(tuple(recovered), tuple(known), tuple(foreign), tuple(in_progress), tuple(unmatched),
                           tuple(warnings), tuple(jobs))
