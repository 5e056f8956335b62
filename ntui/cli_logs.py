"""``ntui logs``: print a log's tail (never the whole file), optionally follow it."""

from __future__ import annotations

import sys
import time

from ntui.core.joblogs import triage_job
from ntui.core.logtail import FileTail
from ntui.core.render import LogPaths

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


def print_triage(paths: LogPaths, job_id: str, world_size: int | None) -> int:
    summary = triage_job(paths, job_id, world_size)
    print(summary.summary())
    return 1 if summary.first is not None else 0
