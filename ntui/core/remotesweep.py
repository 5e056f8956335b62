"""A sweep of a cluster reached over ssh, read there (Textual-free): the one home of what ``ntui --cluster NAME
sweep``, ``ntui --cluster NAME resubmit --failed`` and the jobs view's Sweep tab read of it.

A sweep's files (its manifest, its job file, each task's logs and GPU samples) stay in its log directory on the
cluster. :func:`sweep_files` says which names of that directory are the sweep's own; :func:`sweep_copies` copies
them through the cluster's files (its agent: one listing, then each file by offset; a task's log its last
:data:`LOG_TAIL_BYTES`, the metric's and the progress's lines being read from the end) into a temporary directory,
removed when done, and says a path of a copy as the cluster's; :func:`remote_sweep_table` is
:func:`~ntui.core.jobs.sweep.sweep_table` over those copies, Slurm asked through the cluster's runner, every path
in its words the cluster's.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from ntui.core.jobs.sweep import SweepTable, sweep_table
from ntui.core.records.history import HistoryEntry
from ntui.core.remote.files import ClusterFiles
from ntui.core.remote.logs import copy_log_dir
from ntui.core.slurm.common import DEFAULT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner

__all__ = ["LOG_TAIL_BYTES", "remote_sweep_table", "said_as_cluster", "sweep_copies", "sweep_files"]

#: The bytes of each task's log copied from the cluster (its tail: the metric's and the progress's lines are read
#: from the end); GPU sample files are copied whole.
LOG_TAIL_BYTES = 4 * 1024 * 1024


def sweep_files(stem: str, base: str) -> Callable[[str], bool]:
    """Which names of a sweep's log directory are its own: the tasks' logs and samples, the sweep's job file and
    its manifests (their names carry their digest)."""
    from ntui.core.jobfiles.manifest import job_file_path, manifest_name

    tasks = f"{stem}-{base}_"
    job_file = job_file_path("", stem, base)[1:]
    manifests = manifest_name(stem, "")

    def wanted(name: str) -> bool:
        return name.startswith((tasks, manifests.rsplit(".", 1)[0])) or name == job_file

    return wanted


@contextlib.contextmanager
def sweep_copies(files: ClusterFiles, entry: HistoryEntry) -> Iterator[tuple[HistoryEntry, Callable[[str], str]]]:
    """``entry`` (a sweep's, on the cluster ``files`` reach) with a temporary directory holding copies of its files
    as its log directory, removed on exit, and how to say a path of a copy as the cluster's. Raises what the files
    raise when the cluster cannot be asked (a dropped link, in words)."""
    wanted = sweep_files(entry.log_stem, entry.job_id or "")
    with tempfile.TemporaryDirectory(prefix="ntui-remote-") as directory:
        local = copy_log_dir(files, entry, wanted, Path(directory), tail_bytes=LOG_TAIL_BYTES)
        there = entry.log_dir.rstrip("/")

        def said(text: str) -> str:
            return text.replace(directory, there)

        yield local, said


def said_as_cluster(table: SweepTable, said: Callable[[str], str]) -> SweepTable:
    """``table`` with every path of its words (warnings, the manifest's problem, the tasks' verdicts) said by
    ``said`` (a copy's path as the cluster's)."""
    rows = tuple(replace(r, verdict=said(r.verdict)) for r in table.rows)
    groups = tuple((said(verdict), tasks) for verdict, tasks in table.groups)
    return replace(table, rows=rows, groups=groups, problem=said(table.problem),
                   warnings=tuple(said(w) for w in table.warnings))


def remote_sweep_table(files: ClusterFiles, runner: CommandRunner, entry: HistoryEntry, *,
                       env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> SweepTable | None:
    """*Thread-side*: the table of the sweep ``entry`` submitted on the cluster ``files`` and ``runner`` reach (None:
    not a sweep), read from copies of its files there (:func:`sweep_copies`), its tasks' states asked of that
    cluster's Slurm; its paths the cluster's. Raises what the files and the runner raise when the cluster cannot be
    asked."""
    with sweep_copies(files, entry) as (local, said):
        table = sweep_table(local, runner, env=env, timeout=timeout)
        return said_as_cluster(table, said) if table is not None else None
