"""A job's logs as a whole: which files exist, which node each rank ran on, who failed first, the verdict.

ntui knows every path from the job id and the history (:class:`~ntui.core.jobfiles.lognames.LogPaths`). Each rank's
file starts with ``ntui: rank N on NODE`` (:mod:`ntui.core.jobfiles.lognames`), which gives the rank -> node map
that c10d rendezvous only decides at run time. The reading is :class:`~ntui.core.logs.watch.JobLogWatcher`'s,
polled once over every file (the log pane and ``ntui logs --follow --triage`` poll the same watcher live).

Any log files, of a job ntui did not submit (``ntui triage FILE...``: :func:`files_verdict`), go through the same
watcher: a file whose name says its rank (``...-rank-3.out``, ``rank3.log``) is that rank's, any other a combined
log whose lines say theirs; the launcher, when not given, is read off the files (torch elastic's and accelerate's
own lines); a log pasted by hand loses the paste's artefacts first (:mod:`ntui.core.logs.paste`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ntui.core.jobfiles.lognames import LogPaths, RankLogs, rank_log_paths
from ntui.core.logs.finding import LogFailure
from ntui.core.logs.paste import SAMPLE_LINES, unpaster
from ntui.core.logs.rankdetector import RankDetector
from ntui.core.logs.rows import Key
from ntui.core.logs.summary import TriageSummary
from ntui.core.logs.tail import FileTail
from ntui.core.logs.verdict import JobVerdict, SlurmFinal, unnamed
from ntui.core.logs.watch import JobLogWatcher, watch_files

__all__ = [
    "TRIAGE_WINDOW",
    "files_verdict",
    "guess_launcher",
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


def scan_file(path: Path, rank: int | None, node: str | None, window: int = TRIAGE_WINDOW) -> list[LogFailure]:
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


#: A file name that says whose rank the file is: ``train-rank-3.out``, ``rank3.log``, ``log_rank_12.txt``.
_RANK_IN_NAME = re.compile(r"(?:^|[-_.])rank[-_]?(?P<rank>\d+)(?:\.\w+)*$", re.IGNORECASE)
#: How much of each end of a file :func:`guess_launcher` reads.
_GUESS_BYTES = 64 * 1024
_ACCELERATE_RE = re.compile(r"\baccelerate(?:\.commands|/commands| launch)\b|accelerate-launch")
#: (torch elastic's words, its logger's path as glog prints it, its --tee prefix also behind srun's label)
_ELASTIC_RE = re.compile(r"torch[./]distributed[./]elastic|torch\.distributed\.run|ChildFailedError"
                         r"|^(?:\s*\d+: )?\[default\d+\]:|\btorchrun\b", re.MULTILINE)


def _ends(path: Path) -> str:
    """The first and last :data:`_GUESS_BYTES` of a file, as text ("" when unreadable)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_GUESS_BYTES)
            size = fh.seek(0, 2)
            tail = b""
            if size > 2 * _GUESS_BYTES:
                fh.seek(size - _GUESS_BYTES)
                tail = fh.read(_GUESS_BYTES)
    except OSError:
        return ""
    return (head + b"\n" + tail).decode("utf-8", "replace")


def guess_launcher(paths: Sequence[Path]) -> str | None:
    """``accelerate`` or ``torchrun`` when the files carry their agents' own lines (then srun's ``task N`` is a
    node's launcher, not rank N), else None (as with srun)."""
    texts = [_ends(p) for p in paths]
    if any(_ACCELERATE_RE.search(t) for t in texts):
        return "accelerate"
    if any(_ELASTIC_RE.search(t) for t in texts):
        return "torchrun"
    return None


def _first_lines(path: Path) -> list[str]:
    """The first :data:`~ntui.core.logs.paste.SAMPLE_LINES` lines of a file (none when unreadable)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return [line.rstrip("\r\n") for _, line in zip(range(SAMPLE_LINES), fh, strict=False)]
    except OSError:
        return []


def files_verdict(paths: Sequence[Path], *, launcher: str | None = None,
                  window: int = TRIAGE_WINDOW) -> tuple[JobVerdict, tuple[str, ...]]:
    """The verdict over any log files (see the module docstring) and which rank each file was read as (``rank 3``,
    ``combined``). ``launcher`` None: guessed (:func:`guess_launcher`)."""
    files: dict[Key, Path] = {}
    said: list[str] = []
    for i, path in enumerate(paths):
        m = _RANK_IN_NAME.search(path.name)
        rank = int(m["rank"]) if m else None
        if rank is not None and rank not in files:
            files[rank] = path
            said.append(f"rank {rank}")
        else:
            files[f"file{i}"] = path
            said.append("combined")
    chosen = launcher if launcher is not None else guess_launcher(paths)
    cleaners = {key: fn for key, path in files.items() if (fn := unpaster(_first_lines(path))) is not None}
    watcher = JobLogWatcher("", files, launcher=chosen, window=window, unpaste=cleaners, no_job=True)
    try:
        watcher.poll_all()
        watcher.finish()
        verdict = watcher.verdict()
        if verdict.kind == "none" and (suspects := watcher.suspects()):
            verdict = unnamed(suspects)  # lines that look like a failure: never "no failure found"
        return verdict, tuple(said)
    finally:
        watcher.close()
