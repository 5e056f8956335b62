"""The one home of a job's log file names and of the ``ntui: rank N on NODE`` header.

Names: ``<dir>/<stem>-<jobid>.out`` (the batch log), ``<dir>/<stem>-<jobid>-rank-<N>.out`` (global rank N;
srun writes it through ``--output=...%t``, torchrun/accelerate workers redirect themselves to it) and
``<dir>/<stem>-<jobid>.sbatch`` (the submitted script). For a task of a sweep (a job array) the job id in every
name is ``<array id>_<task>`` (:func:`task_job_id`; Slurm's ``%A_%a``, W11), so each task's files stand apart
and every reader that is given ``123_4`` as the job id finds them; the script is ``<stem>-<array id>.sbatch``.
:class:`LogPaths` writes them (as Slurm patterns for
the script and as concrete paths for a job id); :func:`parse_rank_file` and :func:`discover_rank_logs` read
them back.

Header: every rank log starts with ``ntui: rank N on NODE`` because with c10d rendezvous the rank -> node
map is only decided at run time. :data:`RANK_HEADER_SHELL` is the command the rendered script runs (with
``$RANK`` expanded per task); :func:`rank_header` is the same line in Python; :func:`parse_rank_header` and
:func:`node_of` read it back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FLIGHT_RECORDER_SUFFIX",
    "PTRACER_SUFFIX",
    "HEADER_BYTES",
    "LOG_EXT",
    "RANK_HEADER_RE",
    "RANK_HEADER_SHELL",
    "RANK_LOG_SUFFIX",
    "LogPaths",
    "RankLogs",
    "discover_rank_logs",
    "log_problem",
    "node_of",
    "parse_rank_file",
    "parse_rank_header",
    "rank_header",
    "rank_log_paths",
    "split_task_id",
    "task_job_id",
]

RANK_LOG_SUFFIX = "-rank-"
LOG_EXT = ".out"
#: PyTorch's flight-recorder dumps: ``<stem>-<jobid>-flight-recorder-rank-<rank>`` (torch appends the rank).
FLIGHT_RECORDER_SUFFIX = "-flight-recorder-rank-"
#: monitor.allow-attach: ``<stem>-<jobid>-ptracer/sitecustomize.py``, on the ranks' PYTHONPATH.
PTRACER_SUFFIX = "-ptracer"
#: how much of a rank file's start is read for its header
HEADER_BYTES = 4096

# The writer (a fixed payload, single-quoted in the script: each task expands $RANK and the node name) ...
RANK_HEADER_SHELL = 'echo "ntui: rank $RANK on ${SLURMD_NODENAME:-$(hostname)}"'
# ... and its reader.
RANK_HEADER_RE = re.compile(r"^ntui: rank (\d+) on (\S+)")
_RANK_FILE_RE = re.compile(re.escape(RANK_LOG_SUFFIX) + r"(\d+)" + re.escape(LOG_EXT) + "$")


def rank_header(rank: int, node: str) -> str:
    """The header line a rank's log starts with (what :data:`RANK_HEADER_SHELL` prints)."""
    return f"ntui: rank {rank} on {node}"


def parse_rank_header(line: str) -> tuple[int, str] | None:
    """``"ntui: rank 3 on nid002"`` -> ``(3, "nid002")``; None for any other line."""
    m = RANK_HEADER_RE.match(line)
    return (int(m.group(1)), m.group(2)) if m else None


def node_of(path: Path | str) -> str | None:
    """The node named by a rank file's header (first :data:`HEADER_BYTES` only)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        parsed = parse_rank_header(line)
        if parsed is not None:
            return parsed[1]
    return None


def task_job_id(array_id: str, task: int | str) -> str:
    """The job id of array task ``task`` in names (and as Slurm writes it): ``123_4``."""
    return f"{array_id}_{task}"


def split_task_id(job_id: str) -> tuple[str, int | None]:
    """``123_4`` -> ``("123", 4)``; ``123`` -> ``("123", None)`` (also for ``123_[1-3]``: no one task)."""
    base, sep, task = job_id.partition("_")
    return (base, int(task)) if sep and task.isdigit() else (base, None)


#: The job id in file names, as the batch shell writes it: a plain job, and a task of a job array (W11).
JOB_ID_SHELL = '"$SLURM_JOB_ID"'
#: Defaulted: the journal's file name is expanded before the script checks it runs as a sweep task.
TASK_ID_SHELL = '"${SLURM_ARRAY_JOB_ID:-}_${SLURM_ARRAY_TASK_ID:-}"'


@dataclass(frozen=True)
class LogPaths:
    """Where a job's logs go, as Slurm patterns and as concrete paths for a job id. ``array``: the patterns of a
    sweep's tasks (``%A_%a`` where a plain job has ``%j``); concrete paths take the task's ``123_4`` either way."""

    log_dir: str
    stem: str
    array: bool = False

    @property
    def job_pattern(self) -> str:
        """The job id in Slurm's filename patterns (sbatch and srun ``--output``)."""
        return "%A_%a" if self.array else "%j"

    @property
    def job_id_shell(self) -> str:
        """The job id in file names, expanded by the batch shell (a double-quoted word)."""
        return TASK_ID_SHELL if self.array else JOB_ID_SHELL

    @property
    def batch_pattern(self) -> str:
        return f"{self.log_dir}/{self.stem}-{self.job_pattern}{LOG_EXT}"

    @property
    def rank_pattern(self) -> str:
        return f"{self.log_dir}/{self.stem}-{self.job_pattern}{RANK_LOG_SUFFIX}%t{LOG_EXT}"

    @property
    def rank_prefix_dir(self) -> str:
        return f"{self.log_dir}/{self.stem}-"

    def batch(self, job_id: str) -> str:
        return f"{self.log_dir}/{self.stem}-{job_id}{LOG_EXT}"

    def rank(self, job_id: str, rank: int) -> str:
        return f"{self.log_dir}/{self.stem}-{job_id}{RANK_LOG_SUFFIX}{rank}{LOG_EXT}"

    def script(self, job_id: str) -> str:
        return f"{self.log_dir}/{self.stem}-{job_id}.sbatch"

    def flight_recorder(self, job_id: str) -> str:
        """The prefix of the job's flight-recorder dumps (each rank's file: this and its rank)."""
        return f"{self.log_dir}/{self.stem}-{job_id}{FLIGHT_RECORDER_SUFFIX}"


def parse_rank_file(file_name: str, stem: str, job_id: str) -> int | None:
    """The global rank of ``<stem>-<job_id>-rank-<N>.out``; None for any other name."""
    prefix = f"{stem}-{job_id}{RANK_LOG_SUFFIX}"
    if not file_name.startswith(prefix):
        return None
    m = _RANK_FILE_RE.search(file_name)
    if m is None or m.start() + len(RANK_LOG_SUFFIX) != len(prefix):
        return None
    return int(m.group(1))


@dataclass(frozen=True)
class RankLogs:
    """``<dir>/<name>-<jobid>.out`` and ``<dir>/<name>-<jobid>-rank-<N>.out`` (N = global rank)."""

    batch: Path
    ranks: Mapping[int, Path] = field(default_factory=dict)


def discover_rank_logs(log_dir: Path, name: str, job_id: str) -> dict[int, Path]:
    """Existing ``<name>-<job_id>-rank-<N>.out`` files in ``log_dir``, by rank (numeric order)."""
    found: dict[int, Path] = {}
    try:
        entries = list(os.scandir(log_dir))
    except OSError:
        return {}
    for entry in entries:
        rank = parse_rank_file(entry.name, name, job_id)
        if rank is not None:
            found[rank] = Path(log_dir) / entry.name
    return dict(sorted(found.items()))


def rank_log_paths(log_dir: Path, name: str, job_id: str, world_size: int | None) -> RankLogs:
    """The batch log and per-rank log paths; with ``world_size=None`` the ranks whose files exist."""
    paths = LogPaths(str(log_dir), name)
    batch = Path(paths.batch(job_id))
    if world_size is None:
        return RankLogs(batch=batch, ranks=discover_rank_logs(Path(log_dir), name, job_id))
    if world_size < 0:
        raise ValueError("world_size must be >= 0")
    return RankLogs(batch=batch, ranks={r: Path(paths.rank(job_id, r)) for r in range(world_size)})


def log_problem(path: str) -> str | None:
    """Why the log at ``path`` cannot be read, when its directory (or the file) is gone or unreadable.
    A missing file in a readable directory is not a problem: the job may not have started yet."""
    log_dir = os.path.dirname(path) or "."
    try:
        if not os.path.isdir(log_dir):
            os.stat(log_dir)  # raises for a missing directory, a parent that is a file, no permission
            return f"log directory {log_dir} is not a directory"
        with os.scandir(log_dir):  # readable? (opens it, lists nothing)
            pass
        with open(path, "rb"):
            pass
    except FileNotFoundError as exc:
        if exc.filename == path:
            return None
        return f"log directory {log_dir} does not exist (moved or deleted?)"
    except NotADirectoryError:
        return f"log directory {log_dir} does not exist: a component of the path is a file"
    except PermissionError as exc:
        what = "log file" if exc.filename == path else "log directory"
        return f"{what} {exc.filename or log_dir} is not readable (permission denied)"
    except OSError as exc:
        return f"cannot read {exc.filename or path}: {exc.strerror or exc}"
    return None


def shown_command(command: str | None, script_path: str | None) -> str | None:
    """The job's command as it exists now. Slurm's ``Command`` is the path sbatch was given: for ntui's own jobs
    a temporary name that ntui renames to ``<preset>-<jobid>.sbatch`` once sbatch answered, which the history
    records; that final name is shown (details and ``ntui show`` alike)."""
    if script_path and (not command or os.path.dirname(command) == os.path.dirname(script_path)):
        return script_path
    return command
