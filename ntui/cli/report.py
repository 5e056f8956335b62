"""``ntui report JOBID [--json]``: how a job of ntui's used its GPUs (and CPUs, where accounting exists).

Reads the in-job sampler's files (:mod:`ntui.core.compose.sampler`) found through the history (log dir and stem), so it
works while the job runs (over the samples so far) and after it ended, with no step and no RPC per sample.
Slurm is asked twice at most: ``scontrol show job`` (state, elapsed, time limit, nodes; while the controller
remembers the job) and one ``sacct`` (steps; only where accounting exists). The report of an ended job whose
record is resolved also stores its GPU summary in the history (:func:`ntui.core.records.record.refresh_gpu_summary`).

A long run's job (rule T10) also gets the run: its allocations, which of them this report covers (a requeued job's
files hold every allocation it ran; a chain's link only its own) and the command for each other link's report;
``ntui report LINK`` of a chain's later link finds its run in the history.

Exit codes (as the other commands): 0 report printed (also when it says why there is no GPU data); 2 the job
was not submitted by ntui (no history entry: its sample files are unknown); 3 Slurm failed (the report from the
samples is still printed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict
from typing import Any

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, EXIT_SLURM, add_cluster_option, history_entry, open_history
from ntui.cli.slurm import cli_runner
from ntui.core.gpu.usage import UsageReport
from ntui.core.jobs.report import fix_command, job_usage, report_notes, usage_lines
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import refresh_gpu_summary
from ntui.core.slurm.common import validate_job_id
from ntui.core.slurm.sacct import StepAccounting
from ntui.core.textsafe import inert


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("job_id")
    p.add_argument("--json", action="store_true", help="everything, structured")
    p.add_argument("--width", type=int, help="columns to fit the table into (default: the terminal width)")
    add_cluster_option(p)
    p.set_defaults(func=cmd_report)


def report_json(report: UsageReport, cpu: StepAccounting | None, entry: HistoryEntry,
                slurm_error: str | None) -> dict[str, Any]:
    data = asdict(report)
    for node_data, node in zip(data["nodes"], report.nodes, strict=True):
        node_data.update(util_mean=node.util_mean, power_mean_w=node.power_mean_w, energy_wh=node.energy_wh,
                         why_no_data=node.why_no_data())
        for gpu_data, gpu in zip(node_data["gpus"], node.gpus, strict=True):
            gpu_data["mem_peak_fraction"] = gpu.mem_peak_fraction
    for f_data, f in zip(data["findings"], report.findings, strict=True):
        f_data["fix_command"] = fix_command(entry, f.fix) if f.fix else None
    data["no_data_reasons"] = list(report.no_data_reasons)
    data["notes"] = report_notes(report)
    if cpu is None:
        data["cpu"] = None
    else:
        data["cpu"] = asdict(cpu) | {
            "cpu_efficiency": cpu.cpu_efficiency,
            "total_cpu_s": cpu.total_cpu_s,
            "max_rss_kib": cpu.max_rss_kib,
            "steps": [asdict(s) | {"cpu_efficiency": s.cpu_efficiency, "node_rss_bound_kib": s.node_rss_bound_kib}
                      for s in cpu.steps],
        }
    data["slurm_error"] = slurm_error
    data["preset"] = entry.preset
    return data


def _cluster_report(args: argparse.Namespace) -> int:
    """``ntui --cluster NAME report JOBID``: the job's entry from the cluster's history and its GPU sample files
    read there (by its agent; local copies of this job's files only), Slurm asked over ssh. The record's GPU summary
    is left to ntui on the cluster (the records have one writer); a long run's other links are not looked up."""
    from ntui.cli.common import cluster_log_dir, remote_history_entry
    from ntui.cli.slurm import slurm_failed
    from ntui.core.slurm.runner import SlurmError

    try:
        validate_job_id(args.job_id)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    try:
        entry = remote_history_entry(args)
        if entry is None or not entry.log_stem:
            print(f"ntui: job {args.job_id} is not in the history on the cluster (not submitted by ntui, or ntui is "
                  "not installed there): its GPU samples are unknown", file=sys.stderr)
            return EXIT_PROBLEMS
        from ntui.cli.logs import sweep_task_needed

        if sweep_task_needed(entry, args.job_id, "GPU samples and report"):
            return EXIT_PROBLEMS
        prefix = f"{entry.log_stem}-{args.job_id}-gpu-"
        with cluster_log_dir(entry, lambda name: name.startswith(prefix)) as (local, said):
            got = job_usage(cli_runner(), args.job_id, local)
            if args.json:
                print(said(json.dumps(report_json(got.report, got.cpu, entry, got.slurm_error)
                                      | {"sampler_log": list(got.sampler_said), "run": None}, indent=1)))
            else:
                width = args.width or shutil.get_terminal_size((120, 24)).columns
                if got.slurm_error:
                    print(f"ntui: Slurm: {got.slurm_error} (report from the samples alone)", file=sys.stderr)
                print(said("\n".join(usage_lines(got, entry, width))))
    except SlurmError as exc:
        return slurm_failed(exc)
    return EXIT_SLURM if got.slurm_error else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from ntui.cli.common import remote_cluster
    from ntui.core.records.runs import find_run_in, run_of

    if remote_cluster() is not None:
        return _cluster_report(args)
    history = open_history(args)
    entry = history_entry(history, args)
    run = run_of(entry) if entry is not None else find_run_in(history, args.job_id)
    if entry is None and run is not None:  # a later link of a long run's chain: the run's preset and logs
        entry = run.entry
    if entry is None or not entry.log_stem:
        print(f"ntui: job {args.job_id} was not submitted by ntui (not in the history): its GPU samples are "
              "unknown", file=sys.stderr)
        return EXIT_PROBLEMS
    try:
        validate_job_id(args.job_id)
    except ValueError as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    from ntui.cli.logs import sweep_task_needed

    if sweep_task_needed(entry, args.job_id, "GPU samples and report"):
        return EXIT_PROBLEMS
    got = job_usage(cli_runner(), args.job_id, entry)
    if args.job_id == entry.job_id:  # a sweep's task has no record of its own: its sweep's is the array's
        refresh_gpu_summary(history, entry, got.report)  # the record's summary, from this full report
    history.close()
    if args.json:
        print(json.dumps(report_json(got.report, got.cpu, entry, got.slurm_error)
                         | {"sampler_log": list(got.sampler_said),
                            "run": None if run is None else run.as_json() | {
                                "this_report_allocations": list(run.allocations_of(args.job_id))}}, indent=1))
    else:
        width = args.width or shutil.get_terminal_size((120, 24)).columns
        if got.slurm_error:
            print(f"ntui: Slurm: {got.slurm_error} (report from the samples alone)", file=sys.stderr)
        print("\n".join(usage_lines(got, entry, width)))
        if run is not None:
            print("\n" + "\n".join(inert(line) for line in run.report_lines(args.job_id)))
    return EXIT_SLURM if got.slurm_error else EXIT_OK


