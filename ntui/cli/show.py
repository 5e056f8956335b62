"""``ntui show JOBID``: details of one job (``scontrol show job -d``), with what ntui's history knows of it,
the Slurm version it talks to (``sinfo --version``, local) and, for a pending job, why it waits; a job the
controller has forgotten is looked up in accounting.

Exit codes: 0 ok; 3 Slurm refused or failed, or nobody knows the job.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from ntui.cli.common import EXIT_SLURM, add_cluster_option, history_entry, open_history, remote_cluster
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.jobfiles.lognames import shown_command
from ntui.core.jobs.details import flight_recorder_words
from ntui.core.records.history import History
from ntui.core.records.outcome import job_outcome
from ntui.core.slurm.common import StateCategory, exit_signal
from ntui.core.slurm.runner import JobNotFound, SlurmError
from ntui.core.slurm.scontrol import show_job
from ntui.core.slurm.version import installed_version
from ntui.core.textsafe import inert

__all__ = ["configure"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id")
    p.add_argument("--json", action="store_true")
    add_cluster_option(p)
    p.set_defaults(func=cmd_show)


def _print_run(job_id: str) -> None:
    """A long run's allocations in words, when ``job_id`` is one of them (T10)."""
    from ntui.core.records.runs import find_run_in

    if remote_cluster() is not None:  # the records are on the cluster
        return
    history = History()
    try:
        run = find_run_in(history, job_id)
    finally:
        history.close()
    if run is None:
        return
    print(f"{'Run':>12}: {inert(run.summary())}")
    for line in run.allocation_lines():
        print(f"{'':>12}  {inert(line)}")


def cmd_show(args: argparse.Namespace) -> int:
    runner = cli_runner()
    try:
        d = show_job(runner, args.job_id)
    except JobNotFound:
        try:
            out = job_outcome(runner, args.job_id)
        except SlurmError as exc:
            return slurm_failed(exc)
        entry = None
        if out.source == "none" and remote_cluster() is None:  # Slurm has forgotten it: the history's record
            history = open_history(args)
            try:
                entry = history_entry(history, args, args.job_id)
            finally:
                history.close()
            if entry is not None and entry.final_state:
                print(f"JobId={inert(args.job_id)} State={inert(entry.final_state)} "
                      f"ExitCode={inert(entry.exit_code or '?')} (source: ntui's record, from "
                      f"{inert(entry.record_source or '?')})")
                _print_run(args.job_id)
                return 0
        print(f"JobId={args.job_id} State={out.state} ExitCode={out.exit_code or '?'} (source: {out.source})")
        _print_run(args.job_id)
        if out.source != "none":
            return 0
        print(f"ntui: job {inert(args.job_id)}: neither the controller nor accounting knows it"
              f"{'' if entry is None else ', and the history has no record of its end'}", file=sys.stderr)
        return EXIT_SLURM
    except SlurmError as exc:
        return slurm_failed(exc)
    version = installed_version(runner)  # local, asked once
    if args.json:
        shown = {**asdict(d), "slurm_version": str(version) if version else None}
        print(json.dumps(shown, indent=1))
        return 0
    meaning = exit_signal(d.exit_code)
    rows = [
        ("JobId", d.job_id), ("Name", d.name), ("User", d.user), ("State", d.state), ("Reason", d.reason),
        ("ExitCode", f"{d.exit_code} ({meaning})" if meaning else d.exit_code),
        ("Partition", d.partition), ("QOS", d.qos or ""),
        ("Nodes", f"{d.num_nodes} {d.nodelist}"), ("TimeLimit", d.time_limit), ("RunTime", d.run_time),
        ("Submit", d.submit_time or ""), ("Start", d.start_time or ""), ("End", d.end_time or ""),
    ]
    entry = None
    if remote_cluster() is None:  # a cluster over ssh: its records are there, not in this machine's history
        history = open_history(args)
        try:
            entry = history_entry(history, args, d.job_id)
        finally:
            history.close()
    script = entry.script_path if entry is not None else None
    rows += [("Command", shown_command(d.command, script) or ""), ("WorkDir", d.work_dir),
             ("StdOut", d.std_out or "")]
    # CPU jobs have no GPU indices: no empty "GPUs nid001:" lines
    rows += [(f"GPUs {node}", ",".join(map(str, idx))) for node, idx in d.gres_by_node.items() if idx]
    if entry is not None:
        rows.append(("Preset", f"{entry.preset} {' '.join(entry.overrides)}".strip()))
        if script and shown_command(d.command, script) != script:
            rows.append(("Script", script))
        recorder = flight_recorder_words(entry, d.job_id)
        if recorder and d.category.finished and d.state != "COMPLETED":
            rows.append(("FlightRec", recorder))
    rows.append(("Slurm", str(version) if version else "version unknown"))
    if d.category is StateCategory.RUNNING and entry is not None:
        from ntui.cli.progress import quiet_words

        silent = quiet_words(args, d.job_id)
        if silent is not None:
            rows.append(("Quiet", silent))
    for key, value in rows:
        print(f"{inert(key):>12}: {inert(str(value))}")
    _print_run(d.job_id)
    if d.category is StateCategory.PENDING:  # why it waits (the same words as ntui why and the app)
        from datetime import datetime

        from ntui.cli.waiting import why_lines

        lines, _ = why_lines(runner, d, datetime.now())
        print(f"{'Why':>12}: {lines[0]}")
        for line in lines[1:]:
            print(f"{'':>12}  {line.strip()}")
    return 0
