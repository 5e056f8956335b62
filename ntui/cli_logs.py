"""``ntui logs``: print a log's tail (never the whole file), optionally follow it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from ntui.core.joblogs import job_verdict
from ntui.core.lognames import LogPaths
from ntui.core.logtail import FdBudget, FileTail
from ntui.core.logwatch import JobLogWatcher, PoliteScheduler, watch_files
from ntui.core.textsafe import inert

FOLLOW_INTERVAL_S = 0.5  # polling: inotify does not fire on Lustre/NFS
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
    if not update.exists and not follow:
        print(f"ntui: {path}: no such file (yet)", file=sys.stderr)
        return 2
    if not update.exists:
        print(f"ntui: waiting for {path} to appear ...", file=sys.stderr)
    out = sys.stdout
    for line in tail.window:
        out.write(line + "\n")
    out.flush()
    end = EndWatch(job_over)
    try:
        while follow:
            time.sleep(FOLLOW_INTERVAL_S)
            update = tail.poll()
            if update.reset:
                out.write(f"--- ntui: {path} was {update.reset_reason}; reading from the start ---\n")
            for line in update.lines:
                out.write(line + "\n")
            if update.lines or update.reset:
                out.flush()
                continue  # more may follow: drained means a poll that found nothing new
            if end.ended is not None:  # over, and this poll found the file drained
                if update.partial:  # an unterminated last line: nothing will complete it now
                    out.write(update.partial + "\n")
                out.flush()
                _drained_note(end.ended, "its log is")
                break
            end.check()
    except KeyboardInterrupt:
        pass
    return 0


def print_triage(
    paths: LogPaths, job_id: str, world_size: int | None, *, launcher: str | None = None, follow: bool = False,
    job_over: JobOver | None = None,
) -> int:
    """The verdict (Slurm's job-level verdict first, else the rank that failed first); with ``follow`` the
    job's logs are watched and each new verdict printed as it changes, until Ctrl-C or, given ``job_over``
    (as for :func:`print_log`), until the job is over and every log is drained: then the final verdict (the
    last line printed) decides the exit code. Exit 1 when one failed."""
    if not follow:
        verdict = job_verdict(paths, job_id, world_size, launcher)
        print(inert(verdict.line))
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
            print(f"{time.strftime('%H:%M:%S')} {inert(line.text)}", flush=True)

    try:
        while True:
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
            time.sleep(watcher.scheduler.tick_s)
    except KeyboardInterrupt:
        pass
    finally:
        watcher.close()
    return 1 if failed else 0
