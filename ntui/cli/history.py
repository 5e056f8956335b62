"""``ntui history`` (with each job's record) and ``ntui resubmit``.

Exit codes: 0 ok; 2 bad arguments, unknown job, preset gone or site check refused;
3 Slurm refused or failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict

from ntui.cli.check import test_only, test_only_remote
from ntui.cli.common import EXIT_PROBLEMS, add_cluster_option, history_entry, open_history, print_problems
from ntui.cli.compose import load_spec
from ntui.cli.jobs import resolve_quietly
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.cli.submit import submit_checked
from ntui.core.compose.spec import JobSpec
from ntui.core.jobfiles.manifest import format_indices, is_sweep_script
from ntui.core.jobs.recent import gpu_text
from ntui.core.jobs.resubmit import preset_ref, script_diff, without_preset
from ntui.core.records.history import HistoryEntry
from ntui.core.records.record import (
    RECENT_ORDERS,
    recent_order,
    record_job,
    sort_recent,
)
from ntui.core.records.runs import run_of
from ntui.core.slurm.durations import format_elapsed
from ntui.core.slurm.runner import CommandRunner, SlurmError, slurm_env
from ntui.core.textsafe import inert


def configure(name: str, p: argparse.ArgumentParser) -> None:
    if name == "history":
        p.description = ("Jobs submitted by ntui, newest first (--sort: another order), with what became of them: "
                         "final state, elapsed, mean GPU utilisation (from the in-job samples; - without them), "
                         "triage verdict (resolved from sacct, scontrol or the batch log). --json has the whole GPU "
                         "summary under \"gpu\".")
        p.add_argument("-n", type=int, default=20, help="how many (default 20)")
        p.add_argument("--json", action="store_true")
        p.add_argument("--reconcile", action="store_true",
                       help="first record own jobs in the queue that the history lacks (one squeue call)")
        p.add_argument("--no-resolve", action="store_true",
                       help="print the history as stored; do not ask Slurm what became of ended jobs")
        # the orders of the app's recent-jobs list (one list: ntui.core.records.record)
        p.add_argument("--sort", choices=[o.name for o in RECENT_ORDERS], default=RECENT_ORDERS[0].name,
                       help="; ".join(f"{o.name}: {o.label}" for o in RECENT_ORDERS)
                       + " (the -n shown are the first n in this order; default: %(default)s)")
        p.set_defaults(func=cmd_history)
    elif name == "resubmit":
        p.add_argument("job_id")
        p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="an extra override on top of the recorded ones (repeatable)")
        p.add_argument("--test-only", action="store_true", help="only ask sbatch --test-only; submit nothing")
        add_cluster_option(p)
        p.add_argument("--failed", action="store_true",
                       help="a sweep: only its failed or cancelled tasks (--array=1,4), with the same task index -> "
                            "values")
        p.set_defaults(func=cmd_resubmit)


def said_text(e: HistoryEntry, counts: str | None = None) -> str:
    """The VERDICT column: a sweep's task counts first (its record's reason, or ``counts`` while it runs)."""
    if is_sweep_script(e.script):
        head = e.reason if e.final_state is not None and e.reason else counts or ""
        return " · ".join(x for x in (head, e.verdict or "") if x)
    return e.verdict or ""


def state_text(e: HistoryEntry) -> str:
    """The final state (``TIMEOUT``, ``FAILED 3:0``; ``~`` marks an inferred one), else the submission status."""
    if e.final_state is None:
        return e.status
    code = f" {e.exit_code}" if e.exit_code and e.exit_code != "0:0" else ""
    return ("~" if e.record_source == "inferred" else "") + e.final_state + code


def _cluster_entries(args: argparse.Namespace) -> list[HistoryEntry] | int:
    """``ntui --cluster NAME history``: the history kept in the cluster's home, read by its agent, as stored there
    (what became of ended jobs is resolved and recorded by ntui on the cluster: the records have one writer); an
    exit code when it cannot be read."""
    from ntui.cli.common import cluster_files, remote_cluster
    from ntui.core.remote.files import FileRefused
    from ntui.core.remote.logs import entry_from_dict

    if args.reconcile:
        print("ntui: history --reconcile records jobs in the cluster's history: run it on the cluster's login node",
              file=sys.stderr)
        return EXIT_PROBLEMS
    order = recent_order(getattr(args, "sort", RECENT_ORDERS[0].name))
    try:
        found = cluster_files().history(args.n if order is RECENT_ORDERS[0] else None)
    except FileRefused as exc:
        print(f"ntui: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SlurmError as exc:
        return slurm_failed(exc)
    entries = [e for e in map(entry_from_dict, found) if e is not None]
    if order is not RECENT_ORDERS[0]:
        entries = [j.entry for j in sort_recent(map(record_job, entries), order) if j.entry][:args.n]
    if not args.no_resolve:
        print(f"ntui: the history of cluster {remote_cluster()} as stored there (ntui on the cluster resolves what "
              "became of ended jobs)", file=sys.stderr)
    return entries


def cmd_history(args: argparse.Namespace) -> int:
    from ntui.cli.common import remote_cluster

    if remote_cluster() is not None:
        got = _cluster_entries(args)
        if isinstance(got, int):
            return got
        return _print_history(args, got, {}, 0)
    history = open_history(args)
    rc = 0
    try:
        runner = None
        if args.reconcile:
            from ntui.core.records.reconcile import reconcile
            from ntui.core.slurm.runner import slurm_env

            env, _ = slurm_env()
            runner = cli_runner()
            try:
                for line in reconcile(history, runner, env=env).lines():
                    print(f"reconcile: {line}", file=sys.stderr)
            except SlurmError as exc:
                rc = slurm_failed(exc)
        counts: Mapping[str, str] = {}
        if not args.no_resolve:
            counts = resolve_quietly(history, runner)
        order = recent_order(getattr(args, "sort", RECENT_ORDERS[0].name))
        if order is RECENT_ORDERS[0]:  # newest first is the stored order: only the newest n are read
            entries = history.entries(limit=args.n)
        else:  # the first n of the whole history in this order (e.g. the n jobs that used their GPUs least)
            entries = [j.entry for j in sort_recent(map(record_job, history.entries()), order) if j.entry][:args.n]
    finally:
        history.close()
    return _print_history(args, entries, counts, rc)


def _print_history(args: argparse.Namespace, entries: list[HistoryEntry], counts: Mapping[str, str], rc: int) -> int:
    if args.json:
        print(json.dumps([asdict(e) | {"script": None, "sweep": _sweep_json(e, counts), "run": _run_json(e)}
                          for e in entries], indent=1))
        return rc
    print(f"{'JOBID':<10} {'SUBMITTED':<16}  {'STATE':<16} {'ELAPSED':>9} {'GPU':>4}  {'PRESET':<22} VERDICT")
    twice = {j for j, n in Counter(e.job_id for e in entries if e.job_id).items() if n > 1}
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.submitted_at or e.created_at))
        tail = said_text(e, counts.get(e.job_id or ""))
        link = f" (resubmit of {e.resubmit_of})" if e.resubmit_of else ""
        # an id listed twice (two clusters' job 4, ids that restarted) is told apart by its cluster
        job = f"{e.job_id}@{e.cluster or '?'}" if e.job_id in twice else e.job_id or "-"
        print(f"{job:<10} {when:<16}  {inert(state_text(e)):<16} {format_elapsed(e.elapsed_s):>9} "
              f"{gpu_text(e.gpu.util_mean if e.gpu else None):>4}  {inert(e.preset):<22} {inert(tail)}{link}")
        run = run_of(e)
        if run is not None:  # a long run: its allocations under its first job, in words (T10)
            print(f"{'':<10} {inert(run.summary())}")
            for line in run.allocation_lines():
                print(f"{'':<12} {inert(line)}")
    return rc


def _run_json(e: HistoryEntry) -> dict[str, object] | None:
    run = run_of(e)
    if run is None:
        return None
    return {"run_id": run.run_id, "allocations": [asdict(a) | {"ended_by": a.ended_by} for a in
                                                  run.state.allocations],
            "jobs": list(run.state.job_ids), "stopped": run.state.stopped, "status": run.status,
            "training_s": run.training_s, "max_allocations": run.most}


def _sweep_json(e: HistoryEntry, counts: Mapping[str, str]) -> dict[str, object] | None:
    if not is_sweep_script(e.script):
        return None
    return {"counts": e.reason if e.final_state is not None else counts.get(e.job_id or "")}


def _cluster_resubmit(args: argparse.Namespace, cluster: str) -> int:
    """``ntui --cluster NAME resubmit JOB``: the job's record read from the cluster's history by its agent, its
    preset loaded here (the file the record names, else the preset of that name) with its recorded overrides, and
    submitted there as ``ntui --cluster NAME submit`` does (the new record, in the cluster's history, says which job
    it resubmits)."""
    from ntui.cli.common import close_cluster_files, remote_history_entry
    from ntui.cli.submit import submit_remote
    from ntui.core.compose.render import render

    indices: tuple[int, ...] | None = None
    try:
        entry = remote_history_entry(args)
        if entry is None or (refused := without_preset(entry, args.job_id, f" on {cluster}")):
            why = f"job {args.job_id} is not in the history on {cluster}" if entry is None else refused
            print(f"ntui: {why}", file=sys.stderr)
            return EXIT_PROBLEMS
        ref = preset_ref(entry)
        loaded, spec, problems = load_spec(ref, [*entry.overrides, *args.overrides])
        print_problems(problems, warnings=bool(args.overrides))
        if spec is None:
            print(f"ntui: the preset of job {args.job_id} ({ref}) does not render here with its overrides (a preset "
                  f"of {cluster}'s own is resubmitted on its login node)", file=sys.stderr)
            return EXIT_PROBLEMS
        now = render(spec)
        if now != entry.script:
            print(f"ntui: the script now differs from job {entry.job_id}'s:", file=sys.stderr)
            sys.stderr.write(script_diff(entry.script, now, f"job {entry.job_id}", "now"))
        if args.failed:  # the sweep's job file, manifest and task logs read from copies of the cluster's
            from ntui.cli.common import cluster_files
            from ntui.core.remotesweep import sweep_copies

            with sweep_copies(cluster_files(), entry) as (local, said):
                failed = _failed_tasks(local, cli_runner(), spec, said=said)
            if isinstance(failed, int):
                return failed
            indices = failed
        if args.test_only:
            return test_only_remote(spec, loaded, cli_runner(), cluster)
        job = submit_remote(loaded, spec, cli_runner(), cluster, [], resubmit_of=entry.job_id, indices=indices)
    except SlurmError as exc:
        return slurm_failed(exc)
    finally:
        close_cluster_files()
    if isinstance(job, int):
        return job
    what = f"tasks {format_indices(job.tasks)} of sweep {entry.job_id}" if indices is not None else \
        f"job {entry.job_id}"
    print(f"resubmitted {what} as {job.job_id} on {cluster}", file=sys.stderr)
    return 0


def cmd_resubmit(args: argparse.Namespace) -> int:
    from ntui.cli.common import remote_cluster
    from ntui.core.compose.render import render

    cluster = remote_cluster()
    if cluster is not None:
        return _cluster_resubmit(args, cluster)
    history = open_history(args)
    try:
        entry = history_entry(history, args)
        if entry is None:  # a later link of a long run's chain: resubmit the run (its first job's preset)
            from ntui.core.records.runs import find_run_in

            run = find_run_in(history, args.job_id)
            if run is not None:
                print(f"ntui: job {args.job_id} is an allocation of run {run.run_id}: resubmitting the run",
                      file=sys.stderr)
                entry = run.entry
        if entry is None or (refused := without_preset(entry, args.job_id)):
            why = f"job {args.job_id} is not in ntui's history" if entry is None else refused
            print(f"ntui: {why}", file=sys.stderr)
            return EXIT_PROBLEMS
        ref = preset_ref(entry)
        loaded, spec, problems = load_spec(ref, entry.overrides)
        print_problems(problems, warnings=False)
        if spec is None:
            print(f"ntui: the preset of job {args.job_id} ({ref}) no longer renders with its overrides",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        same = render(spec)
        if same != entry.script:
            print(f"ntui: preset {ref} changed since job {entry.job_id} was submitted; the script differs:",
                  file=sys.stderr)
            sys.stderr.write(script_diff(entry.script, same, f"job {entry.job_id}", "now"))
        if args.overrides:
            loaded, spec, problems = load_spec(ref, [*entry.overrides, *args.overrides])
            print_problems(problems)
            if spec is None:
                return EXIT_PROBLEMS
            sys.stderr.write(script_diff(same, render(spec), "recorded overrides", "with --set"))
        indices = None
        runner = cli_runner()
        if args.failed:
            failed = _failed_tasks(entry, runner, spec)
            if isinstance(failed, int):
                return failed
            indices = failed
        if args.test_only:
            return test_only(spec, loaded)
        job = submit_checked(loaded, spec, runner, history, resubmit_of=entry.job_id, indices=indices)
    finally:
        history.close()
    if isinstance(job, int):
        return job
    what = f"tasks {format_indices(job.tasks)} of sweep {entry.job_id}" if indices is not None else \
        f"job {entry.job_id}"
    print(f"resubmitted {what} as {job.job_id}", file=sys.stderr)
    return 0


def _failed_tasks(entry: HistoryEntry, runner: CommandRunner, spec: JobSpec, *,
                  said: Callable[[str], str] = str) -> tuple[int, ...] | int:
    """The failed tasks of ``entry``'s sweep, printed with their values; an exit code when there is nothing to
    resubmit or the preset now gives other values. ``said``: a path of the copies as the cluster's (over
    ``--cluster``)."""
    from ntui.core.jobs.sweep import plan_failed, same_manifest

    env, _ = slurm_env()
    plan = plan_failed(entry, runner, env=env)
    if plan.problem:
        print(f"ntui: {said(plan.problem)}", file=sys.stderr)
        return EXIT_PROBLEMS
    changed = same_manifest(plan, spec.sweep.manifest_bytes()) if spec.sweep is not None else "it is no sweep now"
    if changed:
        print(f"ntui: not resubmitted: {changed}", file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"ntui: sweep {entry.job_id} ({plan.counts}): resubmitting tasks {plan.array}", file=sys.stderr)
    for index, values in plan.values:
        shown = "  ".join(f"{k}={v!r}" if not v.isprintable() or " " in v else f"{k}={v}" for k, v in values.items())
        print(f"  task {index}: {inert(shown)}", file=sys.stderr)
    return plan.indices

