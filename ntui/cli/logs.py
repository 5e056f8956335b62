"""``ntui logs``: print a log's tail (never the whole file), optionally follow it; ``--triage`` names the rank
that failed first.

Exit codes: 0 ok; 1 ``--triage``: a rank (or the job) failed; 2 not an ntui job (for rank logs and triage), a rank
out of range, a log not there yet; 3 Slurm refused or failed.

Over ``--cluster NAME`` the logs are read on the cluster through :func:`ntui.cli.common.cluster_files` (the agent
on one channel of the ssh master; plain commands where ntui is not installed there), the job's entry from the
history kept there: the tail and the follow by byte offsets (:class:`~ntui.core.remote.logs.RemoteTail`: a follow
that lost its link resumes where it was), ``--triage`` on local copies of the job's logs
(:class:`~ntui.core.remote.logs.Mirror`), synced as they grow.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from ntui.cli.common import (
    EXIT_PROBLEMS,
    add_cluster_option,
    close_cluster_files,
    cluster_files,
    history_entry,
    open_history,
    remote_cluster,
    remote_history_entry,
)
from ntui.cli.ctrlc import CtrlC
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.jobfiles.lognames import LogPaths, log_problem, parse_rank_file, split_task_id
from ntui.core.jobfiles.manifest import format_indices, is_sweep_script
from ntui.core.jobs.submission import paths_for
from ntui.core.logs.fdbudget import FdBudget
from ntui.core.logs.joblogs import job_verdict
from ntui.core.logs.schedule import PoliteScheduler
from ntui.core.logs.tail import FileTail
from ntui.core.logs.watch import JobLogWatcher, watch_files
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import job_outcome
from ntui.core.records.sweeps import sweep_of
from ntui.core.remote.files import ClusterFiles
from ntui.core.remote.logs import Mirror, RemoteTail
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.scontrol import show_job
from ntui.core.textsafe import inert

FOLLOW_INTERVAL_S = 0.5  # polling: inotify does not fire on Lustre/NFS
REMOTE_WAIT_S = 2.0  # over --cluster: a follow waits this long on the cluster for new lines (one request)
REMOTE_POLL_S = 5.0  # ... where plain commands read the cluster's files: one ssh channel per poll, this often
REMOTE_DISCOVER_S = 10.0  # --triage --follow over --cluster: new rank logs are looked for this often
JOB_CHECK_S = 5.0  # --follow asks Slurm whether the job is over at most this often (one squeue)

#: The job's final state once it is over, else None (also when Slurm does not answer: following goes on).
JobOver = Callable[[], "str | None"]


class EndWatch:
    """When ``--follow`` stops: ``job_over`` is asked at most every :data:`JOB_CHECK_S` (the first time one
    interval after the start); :attr:`ended` holds the final state once it said the job is over. Without
    ``job_over`` the job never ends here (Ctrl-C does)."""

    def __init__(self, job_over: JobOver | None) -> None:
        self.job_over = job_over
        self.ended: str | None = None
        self._checked = time.monotonic()

    def check(self) -> str | None:
        if self.ended is None and self.job_over is not None and time.monotonic() - self._checked >= JOB_CHECK_S:
            self._checked = time.monotonic()
            self.ended = self.job_over()
        return self.ended


def _drained_note(ended: str, what: str) -> None:
    print(f"ntui: job ended ({ended}); {what} drained", file=sys.stderr)


def print_log(path: str, *, lines: int = 100, follow: bool = False, job_over: JobOver | None = None) -> int:
    """Print the tail; with ``follow``, appended lines until Ctrl-C or, given ``job_over`` (the job's final
    state once it ended, else None), until the job is over and the file is drained (read to its end)."""
    tail = FileTail(path, window=max(1, lines))
    update = tail.poll()
    if not _print_start(path, update.exists, tail.window, follow=follow):
        return 2
    end = EndWatch(job_over)
    with CtrlC() as ctrl_c:
        while follow and not ctrl_c.sleep(FOLLOW_INTERVAL_S, time.sleep):
            update = tail.poll()
            if _print_update(path, update.lines, f"{update.reset_reason}" if update.reset else None, update.partial,
                             end):
                break
    return 0


def _print_start(path: str, exists: bool, window: Iterable[str], *, follow: bool, where: str = "") -> bool:
    """A log's first lines (``where``: " on the cluster" for a cluster's file); False when it is not there and
    not followed (said on stderr: exit 2)."""
    if not exists and not follow:
        print(f"ntui: {path}: no such file (yet){where}", file=sys.stderr)
        return False
    if not exists:
        print(f"ntui: waiting for {path} to appear{where} ...", file=sys.stderr)
    for line in window:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return True


def _print_update(path: str, lines: Sequence[str], reset: str | None, partial: str, end: EndWatch) -> bool:
    """One poll of a followed log printed (``reset``: why it is read from its start again); True once the job is
    over and this poll found the file drained (its unterminated last line printed: nothing will complete it)."""
    out = sys.stdout
    if reset:
        out.write(f"--- ntui: {path} was {reset}; reading from the start ---\n")
    for line in lines:
        out.write(line + "\n")
    if lines or reset:
        out.flush()
        return False  # more may follow: drained means a poll that found nothing new
    if end.ended is not None:
        if partial:
            out.write(partial + "\n")
        out.flush()
        _drained_note(end.ended, "its log is")
        return True
    end.check()
    return False


def print_triage(
    paths: LogPaths, job_id: str, world_size: int | None, *, launcher: str | None = None, follow: bool = False,
    job_over: JobOver | None = None, sync: Callable[[], object] | None = None,
    shown_as: Callable[[str], str] = lambda text: text,
) -> int:
    """The verdict (Slurm's job-level verdict first, else the rank that failed first); with ``follow`` the
    job's logs are watched and each new verdict printed as it changes, until Ctrl-C or, given ``job_over``
    (as for :func:`print_log`), until the job is over and every log is drained: then the final verdict (the
    last line printed) decides the exit code. Exit 1 when one failed. ``sync``: called before each poll (local
    copies of a cluster's logs brought up to date); ``shown_as``: the printed verdict's paths as the user knows
    them."""
    if not follow:
        verdict = job_verdict(paths, job_id, world_size, launcher)
        print(inert(shown_as(verdict.line)))
        return 1 if verdict.failed else 0
    files, discover = watch_files(paths, job_id, world_size)
    # Held descriptors (as in the app's log pane): a poll of a held rank file is a read, not an open + stat.
    watcher = JobLogWatcher(job_id, files, paths=paths, discover=discover, launcher=launcher,
                            scheduler=PoliteScheduler(fast_s=FOLLOW_INTERVAL_S), budget=FdBudget())
    end = EndWatch(job_over)
    shown = ""
    failed = False

    def show(active: bool) -> None:
        nonlocal shown, failed
        line = watcher.triage_line(job_active=active)
        failed = line.failed
        if line.text != shown:
            shown = line.text
            print(f"{time.strftime('%H:%M:%S')} {inert(shown_as(line.text))}", flush=True)

    with CtrlC() as ctrl_c:
        try:
            while not ctrl_c.pressed:
                if sync is not None:
                    sync()
                if end.ended is not None:  # over: read every file (not only the due ones) until one pass finds nothing
                    if not any(up.lines or up.reset for up in watcher.poll_all().values()):
                        watcher.finish()  # tracebacks cut short by the end count now
                        show(False)
                        _drained_note(end.ended, "its logs are")
                        break
                else:
                    watcher.poll()
                    show(True)
                    end.check()
                ctrl_c.sleep(watcher.scheduler.tick_s, time.sleep)
        finally:
            watcher.close()
    return 1 if failed else 0


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id")
    p.add_argument("--rank", type=int, help="global rank (default: the batch log)")
    p.add_argument("--follow", "-f", action="store_true",
                   help="keep printing appended lines (with --triage: each new verdict) until the job is over "
                        "and its logs are drained, or Ctrl-C")
    p.add_argument("--lines", "-n", type=int, default=100, help="lines of the tail to print first")
    p.add_argument("--triage", action="store_true", help="which rank failed first, where, and why")
    add_cluster_option(p)
    p.set_defaults(func=cmd_logs)


def sweep_task_needed(entry: HistoryEntry | None, job_id: str, what: str) -> bool:
    """A sweep's JOBID where one task's files are meant: say so, naming its tasks (True: stop, exit 2)."""
    if entry is None or split_task_id(job_id)[1] is not None or entry.job_id != job_id:
        return False
    ref = sweep_of(entry)
    if ref is None:
        return False
    tasks = format_indices(ref.job.indices)
    print(f"ntui: job {job_id} is a sweep of {len(ref.job.indices)} task(s) ({tasks}); each has its own {what}: "
          f"name one, e.g. {job_id}_{ref.job.indices[0] if ref.job.indices else 0} (ntui sweep {job_id} lists them)",
          file=sys.stderr)
    return True


def cmd_logs(args: argparse.Namespace) -> int:
    if remote_cluster() is not None:
        try:
            return cmd_logs_remote(args)
        except SlurmError as exc:  # the link or the login failed for good (said in words), or the cluster refused
            return slurm_failed(exc)
        finally:
            close_cluster_files()
    history = open_history(args)
    entry = history_entry(history, args)
    if sweep_task_needed(entry, args.job_id, "logs"):
        return EXIT_PROBLEMS
    paths = paths_for(args.job_id, history, entry.cluster) if entry is not None else None
    job_over = partial(_ended_state, cli_runner(), args.job_id) if args.follow else None
    # An entry without a log dir: the record of its submission (the intent, which holds it) was lost.
    lost = (f"ntui: job {args.job_id}: the history lacks the record of its submission, so where its logs are "
            f"is unknown") if entry is not None and paths is None else None
    if args.triage:
        if paths is None:
            print(lost or f"ntui: job {args.job_id} was not submitted by ntui; no per-rank logs known",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        problem = log_problem(paths.batch(args.job_id))
        if problem:
            print(f"ntui: job {args.job_id}: {problem}", file=sys.stderr)
            return EXIT_PROBLEMS
        return print_triage(paths, args.job_id, entry.world_size if entry else None,
                                     launcher=entry.launcher if entry else None, follow=args.follow,
                                     job_over=job_over)
    if paths is None:
        try:
            d = show_job(cli_runner(), args.job_id)
        except SlurmError as exc:
            if lost:
                print(f"{lost}; Slurm was asked for its batch log:", file=sys.stderr)
            return slurm_failed(exc)
        if args.rank is not None or not d.std_out:
            print(lost or f"ntui: job {args.job_id} was not submitted by ntui; only its batch log is known",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        path = d.std_out
    else:
        world = entry.world_size if entry is not None and entry.world_size > 0 else None
        if args.rank is not None and (args.rank < 0 or (world is not None and args.rank >= world)):
            known = f"world size {world}: ranks 0-{world - 1}" if world is not None else "ranks start at 0"
            print(f"ntui: job {args.job_id}: rank {args.rank} is out of range ({known})", file=sys.stderr)
            return EXIT_PROBLEMS
        path = paths.batch(args.job_id) if args.rank is None else paths.rank(args.job_id, args.rank)
    problem = log_problem(path)
    if problem:
        print(f"ntui: job {args.job_id}: {problem}", file=sys.stderr)
        return EXIT_PROBLEMS
    return print_log(path, lines=args.lines, follow=args.follow, job_over=job_over)


def _ended_state(runner: CommandRunner, job_id: str) -> str | None:
    """The job's final state once it is over (``logs --follow``, with or without ``--triage``, stops then),
    else None (also when Slurm does not answer: following goes on)."""
    try:
        out = job_outcome(runner, job_id)
    except SlurmError:
        return None
    return out.state if out.finished else None


# ---------------------------------------------------------------- over --cluster: the logs on the cluster


def cmd_logs_remote(args: argparse.Namespace) -> int:
    """``ntui --cluster NAME logs``: as :func:`cmd_logs`, every file read on the cluster (see the module's
    docstring)."""
    runner = cli_runner()
    files = cluster_files()
    entry = remote_history_entry(args)
    if entry is not None and entry.job_id == args.job_id and split_task_id(args.job_id)[1] is None and \
            is_sweep_script(entry.script):
        print(f"ntui: job {args.job_id} is a sweep; each task has its own logs: name one, e.g. {args.job_id}_0",
              file=sys.stderr)
        return EXIT_PROBLEMS
    paths = LogPaths(entry.log_dir, entry.log_stem) if entry is not None and entry.log_stem else None
    job_over = partial(_ended_state, runner, args.job_id) if args.follow else None
    if args.triage:
        if paths is None:
            print(f"ntui: job {args.job_id}: not in the history on the cluster"
                  f"{' (no ntui there to read it)' if not files.live else ''}; no per-rank logs known",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        return remote_triage(files, paths, args.job_id, entry.world_size if entry else None,
                             launcher=entry.launcher if entry else None, follow=args.follow, job_over=job_over)
    if paths is None:
        try:
            d = show_job(runner, args.job_id)
        except SlurmError as exc:
            return slurm_failed(exc)
        if args.rank is not None or not d.std_out:
            print(f"ntui: job {args.job_id} is not in the history on the cluster; only its batch log is known",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        path = d.std_out
    else:
        world = entry.world_size if entry is not None and entry.world_size > 0 else None
        if args.rank is not None and (args.rank < 0 or (world is not None and args.rank >= world)):
            known = f"world size {world}: ranks 0-{world - 1}" if world is not None else "ranks start at 0"
            print(f"ntui: job {args.job_id}: rank {args.rank} is out of range ({known})", file=sys.stderr)
            return EXIT_PROBLEMS
        path = paths.batch(args.job_id) if args.rank is None else paths.rank(args.job_id, args.rank)
    folder = files.stat(os.path.dirname(path) or ".")
    if not folder.exists or not folder.is_dir:
        print(f"ntui: job {args.job_id}: its log directory {os.path.dirname(path)} is not there on the cluster",
              file=sys.stderr)
        return EXIT_PROBLEMS
    return print_remote_log(files, path, lines=args.lines, follow=args.follow, job_over=job_over)


def print_remote_log(files: ClusterFiles, path: str, *, lines: int = 100, follow: bool = False,
                     job_over: JobOver | None = None) -> int:
    """:func:`print_log` of a file on the cluster: its tail, then (``follow``) its new lines, read by offsets
    (the agent waits on the cluster for them; plain commands are polled every :data:`REMOTE_POLL_S`)."""
    tail = RemoteTail(files, path, lines=max(1, lines))
    first = tail.start()
    if not _print_start(path, first.exists, first.lines, follow=follow, where=" on the cluster"):
        return 2
    end = EndWatch(job_over)
    with CtrlC() as ctrl_c:
        while follow and not ctrl_c.pressed:
            update = tail.poll(wait=REMOTE_WAIT_S if files.live else 0.0)
            if _print_update(path, update.lines, update.reset or None, tail.partial or "", end):
                break
            if not files.live and ctrl_c.sleep(REMOTE_POLL_S, time.sleep):
                break
    return 0


def _rank_files(files: ClusterFiles, paths: LogPaths, job_id: str) -> list[str]:
    try:
        entries = files.listdir(paths.log_dir)
    except SlurmError:
        return []
    return [f"{paths.log_dir}/{e.name}" for e in entries if parse_rank_file(e.name, paths.stem, job_id) is not None]


def remote_triage(files: ClusterFiles, paths: LogPaths, job_id: str, world_size: int | None, *,
                  launcher: str | None, follow: bool, job_over: JobOver | None) -> int:
    """:func:`print_triage` on local copies of the job's logs on the cluster (the batch log and every rank's), kept
    up to date while following; the verdict names the cluster's paths."""
    with tempfile.TemporaryDirectory(prefix="ntui-triage-") as d:
        mirror = Mirror(files, Path(d))
        known = [paths.batch(job_id), *(paths.rank(job_id, r) for r in range(world_size or 0))]
        mirror.add([*known, *_rank_files(files, paths, job_id)])
        mirror.sync()
        local = LogPaths(d, paths.stem, paths.array)
        looked = time.monotonic()

        def sync() -> None:
            nonlocal looked
            if world_size is None and time.monotonic() - looked >= REMOTE_DISCOVER_S:
                looked = time.monotonic()
                mirror.add(_rank_files(files, paths, job_id))
            mirror.sync()

        return print_triage(local, job_id, world_size, launcher=launcher, follow=follow, job_over=job_over,
                            sync=sync, shown_as=lambda text: text.replace(d, paths.log_dir))
