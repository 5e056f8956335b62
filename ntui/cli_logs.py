"""``ntui logs``: print a log's tail (never the whole file), optionally follow it."""

from __future__ import annotations

import sys
import time

from ntui.core.joblogs import job_verdict
from ntui.core.lognames import LogPaths
from ntui.core.logtail import FileTail
from ntui.core.logwatch import JobLogWatcher, PoliteScheduler, watch_files
from ntui.core.textsafe import inert

FOLLOW_INTERVAL_S = 0.5  # polling: inotify does not fire on Lustre/NFS


def print_log(path: str, *, lines: int = 100, follow: bool = False) -> int:
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
    except KeyboardInterrupt:
        pass
    return 0


def print_triage(
    paths: LogPaths, job_id: str, world_size: int | None, *, launcher: str | None = None, follow: bool = False
) -> int:
    """The verdict (Slurm's job-level verdict first, else the rank that failed first); with ``follow`` the
    job's logs are watched and each new verdict printed as it changes (Ctrl-C ends). Exit 1 when one failed."""
    if not follow:
        verdict = job_verdict(paths, job_id, world_size, launcher)
        print(inert(verdict.line))
        return 1 if verdict.failed else 0
    files, discover = watch_files(paths, job_id, world_size)
    watcher = JobLogWatcher(job_id, files, paths=paths, discover=discover, launcher=launcher,
                            scheduler=PoliteScheduler(fast_s=FOLLOW_INTERVAL_S))
    shown = ""
    failed = False
    try:
        while True:
            watcher.poll()
            line = watcher.triage_line()
            failed = line.failed
            if line.text != shown:
                shown = line.text
                print(f"{time.strftime('%H:%M:%S')} {inert(line.text)}", flush=True)
            time.sleep(watcher.scheduler.tick_s)
    except KeyboardInterrupt:
        pass
    return 1 if failed else 0
