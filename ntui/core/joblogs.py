"""A job's logs as a whole: which files exist, which node each rank ran on, who failed first.

ntui knows every path from the job id and the history (``render.LogPaths``). Each rank's file
starts with ``ntui: rank N on NODE`` (written by the rendered script), which gives the rank ->
node map that c10d rendezvous only decides at run time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ntui.core.logtail import FileTail, RankLogs, rank_log_paths
from ntui.core.render import LogPaths
from ntui.core.triage import Finding, RankDetector, TriageSummary, triage

RANK_HEADER = re.compile(r"^ntui: rank (\d+) on (\S+)")
HEADER_BYTES = 4096
TRIAGE_WINDOW = 5000


def job_logs(paths: LogPaths, job_id: str, world_size: int | None = None) -> RankLogs:
    """The batch log and one file per global rank: the expected ones when the world size is
    known (files may not exist yet), else the ones on disk."""
    return rank_log_paths(Path(paths.log_dir), paths.stem, job_id, world_size or None)


def node_of(path: Path) -> str | None:
    """The node named by a rank file's ``ntui: rank N on NODE`` header (first 4 KiB only)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        m = RANK_HEADER.match(line)
        if m:
            return m.group(2)
    return None


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


def triage_job(paths: LogPaths, job_id: str, world_size: int | None = None) -> TriageSummary:
    logs = job_logs(paths, job_id, world_size)
    findings: dict[int | None, list[Finding]] = {None: scan_file(logs.batch, None, None)}
    nodes: dict[int, str] = {}
    for rank, path in logs.ranks.items():
        path = Path(path)
        node = node_of(path)
        if node:
            nodes[rank] = node
        findings[rank] = scan_file(path, rank, node)
    return triage(findings, nodes_by_rank=nodes)


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
