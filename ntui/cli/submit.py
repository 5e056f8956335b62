"""``ntui submit``: the partition check, then sbatch; ``--wait`` follows the job to its end.

Exit codes: 0 submitted (with ``--wait``: the job COMPLETED); 2 bad preset, or a job this cluster's partitions
would refuse or never run (checked before sbatch: nothing is submitted); 3 Slurm refused or failed; 4 the job did
not COMPLETE (``--wait``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ntui.cli.check import site_refused, test_only, test_only_remote
from ntui.cli.common import (
    EXIT_JOB_FAILED,
    EXIT_PROBLEMS,
    EXIT_SLURM,
    close_cluster_files,
    print_problems,
    remote_cluster,
)
from ntui.cli.compose import add_preset_args, load_spec
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.compose.render import log_paths, render
from ntui.core.compose.rules import blocks_submit
from ntui.core.compose.sitecheck import (
    check_against_cluster,
    check_array_size,
    check_launcher,
    check_requeue,
    cluster_limits,
)
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.lognames import task_job_id
from ntui.core.jobfiles.manifest import format_indices
from ntui.core.jobs.submission import SubmittedJob, submit_job
from ntui.core.records.history import History
from ntui.core.remote.lostsubmit import new_tag
from ntui.core.slurm.runner import CommandRunner, SlurmError, SlurmTimeout
from ntui.core.slurm.sbatch import submit
from ntui.core.slurm.ssh import SshError

__all__ = ["configure", "lost_answer", "submit_checked", "wait_for"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    add_preset_args(p)
    p.add_argument("--test-only", action="store_true", help="only ask sbatch --test-only; submit nothing")
    p.add_argument("--wait", action="store_true", help="follow the job; exit 0 only if it COMPLETED")
    p.add_argument("--hold", action="store_true", help="submit held (release with `ntui release`)")
    p.set_defaults(func=cmd_submit)


def cmd_submit(args: argparse.Namespace) -> int:
    loaded, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems)
    if spec is None:
        return EXIT_PROBLEMS
    cluster = remote_cluster()
    if args.test_only and cluster is not None:
        try:
            return test_only_remote(spec, loaded, cli_runner(), cluster)
        finally:
            close_cluster_files()
    if args.test_only:
        return test_only(spec, loaded)
    if any(blocks_submit(p) for p in problems):  # e.g. a script that does not exist (F1)
        print("not submitted", file=sys.stderr)
        return EXIT_PROBLEMS
    runner = cli_runner()
    if cluster is not None:
        try:
            job = submit_remote(loaded, spec, runner, cluster, extra_args=["--hold"] if args.hold else [])
        finally:
            close_cluster_files()  # the agent's channel, when one was opened for the records
        if isinstance(job, int):
            return job
        return wait_for(runner, job.job_id) if args.wait else 0
    history = History()
    try:
        job = submit_checked(loaded, spec, runner, history, extra_args=["--hold"] if args.hold else [])
    finally:
        history.close()
    if isinstance(job, int):
        return job
    if not args.wait:
        return 0
    return wait_for(runner, job.job_id)


def submit_checked(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, history: History,
                   **submit_args: Any) -> SubmittedJob | int:
    """The partition check, then sbatch (``submit_job``); prints the warnings and the new job id. Returns the
    job, or the exit code when the cluster's partitions or Slurm refused it."""
    problems = check_against_cluster(spec, cluster_limits(runner), loaded=loaded)
    problems += check_array_size(spec, runner, loaded=loaded)  # a sweep: W7, MaxArraySize
    problems += check_requeue(spec, runner, loaded=loaded)  # a run that requeues: T7, JobRequeue
    problems += check_launcher(spec, loaded=loaded)  # E4: torchrun/accelerate/python on the PATH the job inherits
    if site_refused(problems, "not submitted"):
        return EXIT_PROBLEMS
    try:
        job = submit_job(loaded, spec, runner, history, **submit_args)
    except SlurmError as exc:
        return slurm_failed(exc)
    for w in job.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(job.job_id, flush=True)
    return job


def submit_remote(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, cluster: str,
                  extra_args: list[str], *, resubmit_of: str | None = None,
                  indices: tuple[int, ...] | None = None) -> SubmittedJob | int:
    """Submit to a cluster over ssh: its partitions checked (a sweep: its size against the cluster's
    MaxArraySize too), then the script on sbatch's standard input (:func:`ntui.core.jobs.submission.
    submit_elsewhere`); prints the job id. The submission's facts go to the cluster's history through its agent
    (:func:`record_there`: the intent before sbatch, then submitted or failed), as ``ntui submit`` writes them on
    the login node; nothing is kept on this machine. A sweep's manifest is written there by the agent before
    sbatch (its tasks read it), its job file after (:func:`_submit_sweep`); ``indices``: the sweep's tasks to run
    (``resubmit --failed``)."""
    from ntui.core.jobs.submission import submit_elsewhere

    problems = check_against_cluster(spec, cluster_limits(runner), loaded=loaded)
    problems += check_array_size(spec, runner, loaded=loaded)  # a sweep: W7, the cluster's MaxArraySize
    problems += check_requeue(spec, runner, loaded=loaded)
    if site_refused(problems, "not submitted"):
        return EXIT_PROBLEMS
    tag = new_tag()  # the job's comment: a submit whose answer is lost is looked for by it (never sent twice)
    token = tag.rpartition(":")[2]
    tasks: tuple[int, ...] = ()
    manifest = ""
    if spec.sweep is not None:
        sent = _send_manifest(spec, cluster, indices)
        if isinstance(sent, int):
            return sent
        manifest, tasks = sent
        if indices is not None:  # the command line's --array overrides the script's directive
            cap = f"%{spec.sweep.parallel}" if spec.sweep.parallel else ""
            extra_args = [*extra_args, f"--array={format_indices(tasks)}{cap}"]
    kept = record_there(cluster, "intent", token, preset=loaded.name,
                        preset_path=str(loaded.path) if loaded.path else None, overrides=list(loaded.overrides),
                        job_name=spec.job_name, launcher=spec.launcher, nodes=spec.nodes,
                        world_size=spec.world_size, log_dir=spec.log_dir, log_stem=log_paths(spec).stem,
                        script=render(spec), **({"resubmit_of": resubmit_of} if resubmit_of else {}))
    try:
        if spec.sweep is None:
            job = submit_elsewhere(spec, runner, extra_args=[*extra_args, f"--comment={tag}"])
        else:  # its log dir was made there with its manifest
            sub = submit(runner, None, script=render(spec), extra_args=[*extra_args, f"--comment={tag}"])
            job = _submitted(spec, sub.job_id, sub.cluster, tasks)
    except (SshError, SlurmTimeout) as exc:
        if isinstance(exc, SshError) and not exc.link_down:
            if kept:
                record_there(cluster, "failed", token)
            return slurm_failed(exc)  # the login itself failed: sbatch never ran
        found = lost_answer(runner, cluster, spec, tag, exc, tasks=tasks)
        if isinstance(found, int):
            return found  # the intent stays: whether the job was submitted is not known for sure
        job = found
    except SlurmError as exc:
        if kept:
            record_there(cluster, "failed", token)
        return slurm_failed(exc)
    if kept:
        kept = record_there(cluster, "submitted", token, job_id=job.job_id, cluster=job.cluster)
    if spec.sweep is not None:
        _write_job_file(spec, cluster, job.job_id, manifest, tasks, resubmit_of)
    where = "kept in its history there" if kept else "not kept in any history"
    print(f"ntui: submitted to {cluster}; its logs: {job.batch_log} there ({where})", file=sys.stderr)
    print(job.job_id, flush=True)
    return job


def _submitted(spec: JobSpec, job_id: str, cluster: str | None, tasks: tuple[int, ...]) -> SubmittedJob:
    """The job as ``ntui submit`` says it: its logs (a sweep's: its first task's) on the cluster."""
    paths = log_paths(spec)
    first = task_job_id(job_id, tasks[0]) if tasks else job_id
    return SubmittedJob(job_id=job_id, cluster=cluster, script_path="", batch_log=paths.batch(first),
                        rank_logs=tuple(paths.rank(first, r) for r in range(spec.world_size)), tasks=tasks)


def _send_manifest(spec: JobSpec, cluster: str, indices: tuple[int, ...] | None
                   ) -> tuple[str, tuple[int, ...]] | int:
    """A sweep's manifest written on the cluster by its agent, before sbatch (a task may start at once, W10):
    (its file name there, the task indices to run); the exit code where it cannot be written (nothing is
    submitted: the tasks would find no values)."""
    from ntui.cli.common import cluster_files
    from ntui.core.remote.files import FileRefused, send_manifest

    sweep = spec.sweep
    assert sweep is not None
    tasks = tuple(sorted(set(indices))) if indices is not None else tuple(range(sweep.size))
    if not tasks or tasks[0] < 0 or tasks[-1] >= sweep.size:
        print(f"ntui: not submitted: task indices {format_indices(tasks) or '(none)'} are not in "
              f"0-{sweep.size - 1}", file=sys.stderr)
        return EXIT_PROBLEMS
    data = sweep.manifest_bytes()
    expected = sweep.manifest_path(spec.log_dir, log_paths(spec).stem)
    try:
        path = send_manifest(cluster_files(), spec.log_dir, log_paths(spec).stem, data)
    except FileRefused as exc:
        print(f"ntui: not submitted: the sweep's manifest cannot be written on {cluster}: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SlurmError as exc:
        return slurm_failed(exc)
    if path is None:
        print(f"ntui: not submitted: a sweep's manifest is written on {cluster} by ntui's agent there, and none "
              f"answers for it (install this ntui version on {cluster}, or submit the sweep on its login node)",
              file=sys.stderr)
        return EXIT_PROBLEMS
    if os.path.basename(path) != os.path.basename(expected):  # the script names the manifest it reads
        print(f"ntui: not submitted: the agent on {cluster} wrote the manifest as {path}, the script reads "
              f"{expected}", file=sys.stderr)
        return EXIT_PROBLEMS
    return os.path.basename(path), tasks


def _write_job_file(spec: JobSpec, cluster: str, job_id: str, manifest: str, tasks: tuple[int, ...],
                    resubmit_of: str | None) -> None:
    """The sweep's job file written beside its logs on the cluster (which manifest, which tasks ran): the tasks
    run without it; ``ntui sweep`` then reads the script's (said once when it cannot be written)."""
    from ntui.cli.common import cluster_files
    from ntui.core.remote.files import FileRefused

    sweep = spec.sweep
    assert sweep is not None
    try:
        done = cluster_files().sweep("job", log_dir=spec.log_dir, log_stem=log_paths(spec).stem, job_id=job_id,
                                     manifest=manifest, tasks=sweep.size, indices=format_indices(tasks),
                                     parallel=sweep.parallel, resubmit_of=resubmit_of)
    except (FileRefused, SlurmError) as exc:
        print(f"warning: the sweep's job file was not written on {cluster} ({exc}); its tasks run",
              file=sys.stderr)
        return
    if done is None:
        print(f"warning: the sweep's job file was not written on {cluster} (no agent answers for it); its tasks "
              "run", file=sys.stderr)


def record_there(where: str, fact: str, token: str, **fields: Any) -> bool:
    """Write one fact of this submission to the cluster's history through its agent; False (said once on stderr)
    where none is kept: no ntui there, an older agent, or the history there cannot be written. The submit goes
    on either way (a record is never a reason to refuse one)."""
    from ntui.cli.common import cluster_files
    from ntui.core.remote.files import FileRefused

    try:
        if cluster_files().record(fact, token, **fields):
            return True
        why = "no ntui agent there"
    except (FileRefused, SlurmError) as exc:
        why = str(exc)
    if fact == "intent":
        print(f"ntui: the submission is not kept in {where}'s history ({why}): `ntui --cluster {where} logs` "
              "will know its batch log only", file=sys.stderr)
    else:
        print(f"ntui: the submission's {fact} record was not written to {where}'s history ({why})",
              file=sys.stderr)
    return False


def lost_answer(runner: CommandRunner, cluster: str, spec: JobSpec, tag: str, exc: SlurmError, *,
                tasks: tuple[int, ...] = ()) -> SubmittedJob | int:
    """sbatch's answer was lost (the link dropped under it, or it was killed at its timeout): the job is looked
    for on the cluster by its comment before anything else (:func:`~ntui.core.remote.lostsubmit.find_lost_submit`).
    Found: the job, as if sbatch had answered. Otherwise the exit code, having said what is known; nothing is
    submitted again here (sbatch may still be running there). ``tasks``: a sweep's (its array is found by any of
    its tasks)."""
    from ntui.core.remote.lostsubmit import find_lost_submit

    what = exc.words if isinstance(exc, SshError) else "sbatch did not answer in time"
    print(f"ntui: {what} while submitting to {cluster}; looking for the job there by its comment {tag} ...",
          file=sys.stderr, flush=True)
    found = find_lost_submit(runner, spec.job_name, tag)
    if found.job_id is not None:
        print(f"ntui: job {found.job_id} was submitted (found in {cluster}'s queue by its comment): not submitted "
              "again", file=sys.stderr)
        return _submitted(spec, found.job_id, None, tasks)
    if not found.asked:
        print(f"ntui: {cluster} cannot be asked whether the job was submitted: before submitting again, look for "
              f"a job named {spec.job_name} with comment {tag} (ntui --cluster {cluster} jobs)", file=sys.stderr)
        return EXIT_SLURM
    if found.maybe:
        print(f"ntui: no job with comment {tag} on {cluster}, but accounting lists job(s) {', '.join(found.maybe)} "
              f"named {spec.job_name} without a comment to tell: check them before submitting again",
              file=sys.stderr)
        return EXIT_SLURM
    print(f"ntui: not submitted: {cluster} has no job with comment {tag} (submit again when the link is back)",
          file=sys.stderr)
    return EXIT_SLURM


def wait_for(runner: CommandRunner, job_id: str, *, poll_s: float = 2.0, max_poll_s: float = 10.0) -> int:
    """Follow a job until it ends, printing state changes to stderr (:func:`ntui.core.waiting.follow.follow`: one
    squeue per poll, the interval growing from ``poll_s`` to ``max_poll_s`` while nothing changes)."""
    from ntui.core.waiting.follow import Change, all_completed, follow, outcome_words

    def changed(change: Change) -> None:
        if change.error:
            print(f"ntui: {change.error} (retrying)", file=sys.stderr, flush=True)
        else:
            print(f"{time.strftime('%H:%M:%S')} job {job_id}: {change.state}", file=sys.stderr, flush=True)

    try:
        outcomes = follow(runner, [job_id], on_change=changed, poll_s=poll_s, max_poll_s=max_poll_s)
    except SlurmError:
        return EXIT_SLURM
    print(f"job {job_id} ended: {outcome_words(outcomes[job_id])}", file=sys.stderr)
    return 0 if all_completed(outcomes) else EXIT_JOB_FAILED
