"""``ntui progress JOBID|FILE``: how far a training run is, its rate and ETA, and whether it finishes before its time
limit, read from what its program prints (every framework's form: :mod:`ntui.core.progress.lines`).

A job id: an ntui job's rank log (rank 0, or ``--rank``), the time left from ``scontrol show job`` (one call), and
for a running job whether it has gone quiet (:mod:`ntui.core.progress.quiet`: said first); a file: any log, with
``--time-left`` when known. Exit codes: 0 a verdict; 1 the run will be cut at its limit; 2 no such job
log or file, or a bad ``--pattern``; 3 Slurm failed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from ntui.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    add_cluster_option,
    history_entry,
    job_log_file,
    local_copies,
    open_history,
)
from ntui.cli.slurm import cli_runner, cli_settings, slurm_failed
from ntui.core.gpu.quiet import read_evidence
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobfiles.samplefiles import find_sample_files
from ntui.core.progress.chart import chart_lines, summary_lines
from ntui.core.progress.lines import Pattern, pattern_problem
from ntui.core.progress.preset import pattern_of_script
from ntui.core.progress.quiet import log_quiet, quiet
from ntui.core.progress.read import read_progress
from ntui.core.progress.series import estimate
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.durations import parse_time_limit
from ntui.core.slurm.runner import JobNotFound, SlurmError
from ntui.core.slurm.scontrol import show_job
from ntui.core.textsafe import inert


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="JOBID|FILE", help="an ntui job's id, or any log file")
    p.add_argument("--rank", type=int, default=0, help="the rank whose log reports progress (default 0)")
    p.add_argument("--pattern", help="a regular expression with a (?P<step>...) group (and total, any metric) for "
                                     "plain prints (default: the job's preset's progress: pattern)")
    p.add_argument("--time-left", help="for a file: the time left in its allocation (Slurm's formats, 1:30:00)")
    p.add_argument("--json", action="store_true", help="the numbers as JSON")
    p.add_argument("--chart", nargs="?", const="", metavar="METRIC",
                   help="draw a metric over the steps, its evaluation beside it and the restarts marked, as plain "
                        "text (default: the loss, else the first metric printed)")
    p.add_argument("--width", type=int, default=80, help="the chart's width in columns (default 80)")
    p.add_argument("--height", type=int, default=16, help="the chart's height in rows, its axes included (default 16)")
    add_cluster_option(p)
    p.set_defaults(func=cmd_progress)


def _time_left(job_id: str) -> tuple[float | None, str | None]:
    """The seconds left in a running job's allocation (None: no limit, or not running) and its state."""
    details = show_job(cli_runner(), job_id)
    if details.category is not StateCategory.RUNNING:
        return None, details.state
    try:
        limit = parse_time_limit(details.time_limit)
        used = parse_time_limit(details.run_time)
    except ValueError:
        return None, details.state
    return (float(limit - used) if limit else None), details.state


def quiet_words(args: argparse.Namespace, job_id: str) -> str | None:
    """A running ntui job gone quiet, in words with what to do next (``ntui show`` and ``ntui why``); None while it
    shows signs of life, or for a job ntui did not submit."""
    history = open_history(args)
    try:
        entry = history_entry(history, args, job_id)
    finally:
        history.close()
    if entry is None or not entry.log_stem:
        return None
    silent = log_quiet(Path(LogPaths(entry.log_dir, entry.log_stem).rank(job_id, 0)), pattern_of_script(entry.script),
                       time.time(), floor_s=cli_settings().progress.quiet_after)
    if silent is None:
        return None
    files = find_sample_files(entry.log_dir, entry.log_stem, job_id)
    evidence = read_evidence(files, silent.last) if files else None
    return f"{silent.words}{f'; {evidence}' if evidence else ''}; `ntui stacks {job_id}` shows where each rank waits"


def _no_log_yet(args: argparse.Namespace, path: Path) -> int:
    """A job of the history whose rank's log is not there: a job still waiting has not started (said so, exit 0,
    with ``ntui why``); else the log is missing (exit 2)."""
    try:
        pending = show_job(cli_runner(), args.target).category is StateCategory.PENDING
    except (JobNotFound, SlurmError):
        pending = False
    if pending:
        if args.json:
            print(json.dumps({"step": None, "total": None, "state": "PENDING", "at": time.time(),
                              "words": "pending: not started"}, indent=2))
        else:
            print(f"job {args.target} is pending: it has not started, so there is no progress yet "
                  f"(`ntui why {args.target}` says why it waits)")
        return EXIT_OK
    print(f"ntui: job {args.target}: rank {args.rank}'s log is not there ({path})", file=sys.stderr)
    return EXIT_PROBLEMS


def cmd_progress(args: argparse.Namespace) -> int:
    pattern: Pattern | None = None
    if args.pattern:
        problem = pattern_problem(args.pattern)
        if problem is not None:
            print(f"ntui: --pattern: {problem}", file=sys.stderr)
            return EXIT_PROBLEMS
        pattern = Pattern(re.compile(args.pattern))
    target = local_copies([args.target])[0]
    state: str | None = None
    time_left: float | None = None
    if target.is_file():
        path = target
        if args.time_left:
            try:
                time_left = float(parse_time_limit(args.time_left))
            except ValueError as exc:
                print(f"ntui: --time-left: {exc}", file=sys.stderr)
                return EXIT_PROBLEMS
    else:
        entry, found = job_log_file(args, args.target, args.rank)
        if found is None:
            print(f"ntui: {args.target}: neither a file nor a job submitted by ntui", file=sys.stderr)
            return EXIT_PROBLEMS
        path = found
        if pattern is None and entry is not None:
            pattern = pattern_of_script(entry.script)  # the preset's progress: pattern, as its script carries it
        if not path.is_file():
            return _no_log_yet(args, path)
        try:
            time_left, state = _time_left(args.target)
        except JobNotFound:
            pass  # over and forgotten by the controller: its log says how far it went
        except SlurmError as exc:
            return slurm_failed(exc)
    try:
        series = read_progress(path, pattern=pattern)
    except OSError as exc:
        print(f"ntui: {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    now = time.time()
    guess = estimate(series, now=now, time_left_s=time_left)
    silent = None
    if state == "RUNNING":  # a running job that stopped moving: said before any ETA
        try:
            silent = quiet(series, path.stat().st_mtime, now, floor_s=cli_settings().progress.quiet_after)
        except OSError:
            silent = None
    if args.json:
        print(json.dumps({
            "step": guess.step, "total": guess.total, "epoch": series.epoch, "rate": guess.rate,
            "eta_s": guess.eta_s, "time_left_s": time_left, "margin_s": guess.margin_s, "cut_at": guess.cut_at,
            "metrics": series.metrics, "restarts": len(series.restarts), "state": state, "words": guess.words,
            "at": now, "quiet": silent.words if silent is not None else None,
        }, indent=2, allow_nan=True))
    else:
        if silent is not None:
            print(inert(silent.words))
        for line in summary_lines(series, guess, time_left_s=time_left):
            print(inert(line))
        if args.chart is not None:
            drawn = chart_lines(series, width=max(20, args.width), height=max(8, args.height),
                                metric=args.chart or None)
            if not drawn:
                what = f"no {args.chart!r} values" if args.chart else "no metric printed with the steps"
                print(f"ntui: no chart: {inert(what)} in {inert(str(path))}", file=sys.stderr)
            for line in drawn:
                print(inert(line))
    return 1 if guess.cut_at is not None else EXIT_OK
