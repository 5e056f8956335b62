"""What every ``ntui`` subcommand shares: the exit codes and printing problems. Light: ``ntui --help`` and
``ntui render`` import it (the Slurm runner of the subcommands that talk to Slurm is in :mod:`ntui.cli.slurm`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ntui.core.problems import Problem

if TYPE_CHECKING:
    from ntui.core.records.history import History, HistoryEntry
    from ntui.core.remote.files import ClusterFiles

__all__ = [
    "EXIT_CODES",
    "EXIT_JOB_FAILED",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_SLURM",
    "add_cluster_option",
    "cluster_copies",
    "cluster_files",
    "cluster_log_dir",
    "close_cluster_files",
    "job_log_file",
    "local_copies",
    "remote_history_entry",
    "exit_codes_help",
    "history_entry",
    "open_history",
    "print_problems",
    "remote_cluster",
    "select_cluster",
]

EXIT_OK = 0
EXIT_PROBLEMS = 2
EXIT_SLURM = 3
EXIT_JOB_FAILED = 4

#: Every exit code ``ntui`` uses (``--help`` and the README list them from here).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "ok"),
    (1, "logs --triage: a rank (or the job) failed; stacks: some rank or node could not be sampled"),
    (EXIT_PROBLEMS, "problems before Slurm was asked: the preset, this cluster's partitions, a rank out of "
                    "range, a log not there yet, hold on a job that is not pending, stacks of a job that is not "
                    "running"),
    (EXIT_SLURM, "Slurm refused or failed, or cannot be used (no client, no configuration, no answer); "
                 "its own reason is printed"),
    (EXIT_JOB_FAILED, "submit --wait, wait: a job did not complete"),
    (130, "interrupted (Ctrl-C)"),
)


class _Target:
    """The cluster this run of ``ntui`` talks to: ``ntui --cluster NAME`` (a cluster of the settings, reached
    over ssh), else None (Slurm here). Set once per run, before the subcommand; ``files``: its files, once asked
    for (:func:`cluster_files`)."""

    cluster: str | None = None
    files: ClusterFiles | None = None


_TARGET = _Target()

def select_cluster(name: str | None) -> None:
    close_cluster_files()
    _TARGET.cluster = name


def remote_cluster() -> str | None:
    """The cluster ``--cluster`` named for this run (its Slurm is on another machine), or None."""
    return _TARGET.cluster


def cluster_files() -> ClusterFiles:
    """The files of the cluster this run talks to: over ssh (``--cluster``) the agent on one channel of the master,
    or plain commands where ntui is not installed there (what they cannot do is said once on stderr); else this
    machine's. Opened on first use, closed by :func:`close_cluster_files` (or the next :func:`select_cluster`).
    Raises :class:`~ntui.core.slurm.ssh.SshError` (in words) when the cluster cannot be reached."""
    if _TARGET.files is None:
        from ntui.core.config import cluster_runner, load_settings
        from ntui.core.remote.files import agent_command, connect

        def said(words: str) -> None:
            print(f"ntui: {words}", file=sys.stderr, flush=True)

        settings, _ = load_settings()  # its problems are said where the subcommand reads the settings
        name = remote_cluster()
        cluster = settings.cluster(name) if name is not None else None
        configured = cluster.agent if cluster is not None else None
        files = connect(cluster_runner(settings, name), command=agent_command(configured),
                        on_link=said)
        if files.note:
            said(files.note)
        _TARGET.files = files
    return _TARGET.files


def close_cluster_files() -> None:
    files, _TARGET.files = _TARGET.files, None
    if files is not None:
        files.close()


def remote_history_entry(args: argparse.Namespace, job_id: str | None = None) -> HistoryEntry | None:
    """The cluster's history entry of the command's job (``job_id``, default ``args.job_id``), read on the cluster
    by its agent (the records stay in the cluster's home); ``--cluster`` of the subcommand picks among clusters
    there as :func:`history_entry` does. None: no such entry, or no agent there (plain commands read no records)."""
    from ntui.core.remote.logs import entry_from_dict

    job = job_id or args.job_id
    found = cluster_files().job(job, getattr(args, "cluster", None))
    if not found or not isinstance(found.get("entry"), dict):
        return None
    entry = entry_from_dict(found["entry"])
    others = found.get("others") or []
    if entry is not None and others:
        print(f"ntui: job {job} of cluster {entry.cluster or '(unknown)'}; the history there also has a job {job} "
              f"of {', '.join(map(str, others))} (--cluster NAME after the subcommand picks)", file=sys.stderr)
    return entry


@contextlib.contextmanager
def cluster_copies(paths: Sequence[str]) -> Iterator[list[Path]]:
    """Local copies of files of the cluster (a job's logs), for the readers that work on files: the whole file,
    or its last :data:`~ntui.core.remote.logs.MIRROR_MAX` bytes, each under its own name in a temporary
    directory removed on exit; a file that is not there has no copy (its path does not exist). Without
    ``--cluster`` the paths themselves."""
    if remote_cluster() is None:
        yield [Path(p) for p in paths]
        return
    import tempfile

    from ntui.core.remote.logs import Mirror

    with tempfile.TemporaryDirectory(prefix="ntui-remote-") as d:
        mirror = Mirror(cluster_files(), Path(d))
        local = mirror.add(paths)
        mirror.sync()
        yield local


@contextlib.contextmanager
def cluster_log_dir(entry: HistoryEntry, wanted: Callable[[str], bool], *, tail_bytes: int | None = None
                    ) -> Iterator[tuple[HistoryEntry, Callable[[str], str]]]:
    """``entry`` with a log directory the readers that work on files can read, and how to say a path of it: over
    ``--cluster``, a temporary directory holding local copies of the files of the entry's log directory on the
    cluster whose names ``wanted`` takes (one listing, then the files through :func:`cluster_files`; GPU sample
    files whole up to :data:`~ntui.core.remote.logs.MIRROR_MAX`, the others their last ``tail_bytes``), removed on
    exit, and the cluster's path of each copy; without ``--cluster`` the entry itself."""
    if remote_cluster() is None:
        yield entry, _same
        return
    import tempfile

    from ntui.core.remote.logs import copy_log_dir

    files = cluster_files()
    with tempfile.TemporaryDirectory(prefix="ntui-remote-") as d:
        local = copy_log_dir(files, entry, wanted, Path(d), tail_bytes=tail_bytes)

        def said(text: str) -> str:
            return text.replace(d, entry.log_dir.rstrip("/"))

        yield local, said


def _same(text: str) -> str:
    return text


def local_copies(paths: Sequence[str]) -> list[Path]:
    """:func:`cluster_copies` for a command's whole run: the copies' directory is removed when the process ends.
    ``-`` (standard input) stays itself. Without ``--cluster`` the paths themselves."""
    if remote_cluster() is None:
        return [Path(p) for p in paths]
    import atexit
    import shutil
    import tempfile

    from ntui.core.remote.logs import Mirror

    d = tempfile.mkdtemp(prefix="ntui-remote-")
    atexit.register(shutil.rmtree, d, True)
    mirror = Mirror(cluster_files(), Path(d))
    remote = [p for p in paths if p != "-"]
    copies = iter(mirror.add(remote))
    mirror.sync()
    return [Path(p) if p == "-" else next(copies) for p in paths]


def job_log_file(args: argparse.Namespace, job_id: str, rank: int) -> tuple[HistoryEntry | None, Path | None]:
    """An ntui job's history entry and the path of its rank's log to read: here, from this machine's history, the
    log itself; over ``--cluster``, from the cluster's history (read by its agent), a local copy of the log (its
    modification time kept; see :func:`local_copies`). ``(entry, None)``: no log known for it (not an ntui job
    there, or its submission's record lost)."""
    from ntui.core.jobfiles.lognames import LogPaths

    if remote_cluster() is None:
        history = open_history(args)
        try:
            entry = history_entry(history, args, job_id)
        finally:
            history.close()
    else:
        entry = remote_history_entry(args, job_id)
    if entry is None or not entry.log_stem:
        return entry, None
    (path,) = local_copies([LogPaths(entry.log_dir, entry.log_stem).rank(job_id, rank)])
    return entry, path


def exit_codes_help() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


def print_problems(problems: Sequence[Problem], *, warnings: bool = True) -> None:
    for p in problems:
        if p.is_error or warnings:
            print(str(p), file=sys.stderr)


# ---------------------------------------------------------------- one job of the history, on the right cluster


def add_cluster_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", metavar="NAME",
                   help="the cluster whose job this is, where the history holds jobs of several clusters with "
                        "this id (default: the cluster Slurm's configuration here names)")


def open_history(args: argparse.Namespace | None = None) -> History:
    """The history, knowing which cluster this command talks to: ``--cluster``, else the ClusterName of the
    slurm.conf the clients read (read only when a job id is recorded on several clusters)."""
    from ntui.core.records.history import History
    from ntui.core.slurm.scontrol import cluster_name

    explicit = getattr(args, "cluster", None) if args is not None else None
    return History(cluster=explicit or (lambda: cluster_name()))


def history_entry(history: History, args: argparse.Namespace, job_id: str | None = None) -> HistoryEntry | None:
    """The history's entry for the command's job (``job_id``, default ``args.job_id``): the given ``--cluster``'s
    only, else this cluster's first. Says on stderr when another cluster has a job with the same id."""
    job = job_id or args.job_id
    explicit = getattr(args, "cluster", None)
    entry = history.get(job, explicit)
    if entry is None:
        if explicit and history.matches(job):
            print(f"ntui: no job {job} of cluster {explicit} in the history (clusters with one: "
                  f"{', '.join(sorted({e.cluster or '?' for e in history.matches(job)}))})", file=sys.stderr)
        return None
    others = history.others(entry)
    if others:
        print(f"ntui: job {job} of cluster {entry.cluster or '(unknown)'}; the history also has a job {job} of "
              f"{', '.join(others)} (--cluster NAME picks)", file=sys.stderr)
    return entry
