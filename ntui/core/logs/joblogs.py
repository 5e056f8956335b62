"""A job's logs as a whole: which files exist, which node each rank ran on, who failed first, the verdict.

ntui knows every path from the job id and the history (:class:`~ntui.core.jobfiles.lognames.LogPaths`). Each rank's
file starts with ``ntui: rank N on NODE`` (:mod:`ntui.core.jobfiles.lognames`), which gives the rank -> node map
that c10d rendezvous only decides at run time. The reading is :class:`~ntui.core.logs.watch.JobLogWatcher`'s,
polled once over every file (the log pane and ``ntui logs --follow --triage`` poll the same watcher live).
"""

from __future__ import annotations

from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths, RankLogs, rank_log_paths
from ntui.core.logs.tail import FileTail
from ntui.core.logs.triage import Finding, RankDetector, TriageSummary
from ntui.core.logs.verdict import JobVerdict, SlurmFinal
from ntui.core.logs.watch import JobLogWatcher, watch_files

__all__ = [
    "TRIAGE_WINDOW",
    "job_logs",
    "job_verdict",
    "scan_file",
    "triage_job",
]

TRIAGE_WINDOW = 5000


def job_logs(paths: LogPaths, job_id: str, world_size: int | None = None) -> RankLogs:
    """The batch log and one file per global rank: the expected ones when the world size is
    known (files may not exist yet), else the ones on disk."""
    return rank_log_paths(Path(paths.log_dir), paths.stem, job_id, world_size or None)


def scan_file(path: Path, rank: int | None, node: str | None, window: int = TRIAGE_WINDOW) -> list[Finding]:
    """Findings in the last ``window`` lines of a file (tail-first read, bounded memory)."""
    tail = FileTail(path, window=window)
    update = tail.poll()
    if not update.exists:
        return []
    det = RankDetector(rank, node)
    lines = list(tail.window)
    det.feed_many(lines, first_line_no=max(1, tail.line_count - len(lines) + 1), time=update.mtime)
    det.flush()
    return list(det.findings)


def _read_once(paths: LogPaths, job_id: str, world_size: int | None, launcher: str | None) -> JobLogWatcher:
    files, discover = watch_files(paths, job_id, world_size or None)
    watcher = JobLogWatcher(job_id, files, paths=paths, discover=discover, launcher=launcher, window=TRIAGE_WINDOW)
    watcher.poll_all()
    watcher.finish()
    return watcher


def triage_job(
    paths: LogPaths, job_id: str, world_size: int | None = None, *, launcher: str | None = None
) -> TriageSummary:
    """Who failed first, over every log of the job. ``launcher`` (srun / torchrun / accelerate) says whether
    srun's ``task N`` is global rank N (srun) or node N's launcher (the others); None: as with srun."""
    return _read_once(paths, job_id, world_size, launcher).summary()


def job_verdict(
    paths: LogPaths,
    job_id: str,
    world_size: int | None = None,
    launcher: str | None = None,
    *,
    slurm: SlurmFinal | None = None,
) -> JobVerdict:
    """The job record's verdict (stable API): Slurm's job-level verdict first (cancelled, time limit, node
    failure, preemption, OOM kill), else the root-cause rank and its node, with the consequences named as
    such. ``verdict.line`` is one line for people; ``verdict.as_dict()`` the structured fields (kind, rank,
    node, who, when, signal). ``slurm`` (the final state from sacct/scontrol, when known) takes precedence over
    what the batch log says; without it the verdict is inferred from the logs (``source == "log"``)."""
    return _read_once(paths, job_id, world_size, launcher).verdict(slurm)
