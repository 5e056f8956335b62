"""``ntui submit``: the partition check, then sbatch; ``--wait`` follows the job to its end.

Exit codes: 0 submitted (with ``--wait``: the job COMPLETED); 2 bad preset, or a job this cluster's partitions
would refuse or never run (checked before sbatch: nothing is submitted); 3 Slurm refused or failed; 4 the job did
not COMPLETE (``--wait``).
"""

from __future__ import annotations

import argparse
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
from ntui.core.jobs.submission import SubmittedJob, submit_job
from ntui.core.records.history import History
from ntui.core.remotesubmit import SubmitRefused, SubmitUnknown, Wording, check_there, submit_to_cluster
from ntui.core.slurm.runner import CommandRunner, SlurmError

__all__ = ["configure", "submit_checked", "submit_remote", "wait_for"]


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


_CLI_WORDING = Wording(  # what ``ntui --cluster NAME submit`` says on stderr along the way
    not_kept="ntui: the submission is not kept in {cluster}'s history ({why}): `ntui --cluster {cluster} logs` will "
             "know its batch log only",
    not_recorded="ntui: the submission's {fact} record was not written to {cluster}'s history ({why})",
    looking="ntui: {what} while submitting to {cluster}; looking for the job there by its comment {tag} ...",
    found="ntui: job {job_id} was submitted (found in {cluster}'s queue by its comment): not submitted again",
    cannot_ask="ntui: {cluster} cannot be asked whether the job was submitted: before submitting again, look for a "
               "job named {job_name} with comment {tag} (ntui --cluster {cluster} jobs)",
    maybe="ntui: no job with comment {tag} on {cluster}, but accounting lists job(s) {jobs} named {job_name} "
          "without a comment to tell: check them before submitting again",
    not_found="ntui: not submitted: {cluster} has no job with comment {tag} (submit again when the link is back)",
    no_job_file="warning: the sweep's job file was not written on {cluster} ({why}); its tasks run",
)


def _said(note: str) -> None:
    print(note, file=sys.stderr, flush=True)


def submit_remote(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, cluster: str,
                  extra_args: list[str], *, resubmit_of: str | None = None,
                  indices: tuple[int, ...] | None = None) -> SubmittedJob | int:
    """Submit to a cluster over ssh as :func:`ntui.core.remotesubmit.submit_to_cluster` does (its partitions
    checked, a sweep's size against the cluster's MaxArraySize too; the facts in the cluster's history through
    its agent; a sweep's manifest there before sbatch, its job file after; a lost answer looked for by the job's
    comment), saying on stderr what it says; prints the job id. Returns the job, or the exit code.
    ``indices``: the sweep's tasks to run (``resubmit --failed``)."""
    from ntui.cli.common import cluster_files

    problems = check_there(loaded, spec, runner)
    if site_refused(problems, "not submitted"):
        return EXIT_PROBLEMS
    try:
        got = submit_to_cluster(loaded, spec, runner, cluster, cluster_files, extra_args=extra_args,
                                resubmit_of=resubmit_of, indices=indices, checked=problems, wording=_CLI_WORDING,
                                say=_said)
    except SubmitRefused as exc:
        print(f"ntui: not submitted: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except SubmitUnknown as exc:
        print(exc, file=sys.stderr)
        return EXIT_SLURM
    except SlurmError as exc:
        return slurm_failed(exc)
    job = got.job
    where = "kept in its history there" if got.kept else "not kept in any history"
    print(f"ntui: submitted to {cluster}; its logs: {job.batch_log} there ({where})", file=sys.stderr)
    print(job.job_id, flush=True)
    return job


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
