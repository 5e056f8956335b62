"""A submission to a cluster reached over ssh (Textual-free): the one home of the protocol that
``ntui --cluster NAME submit`` (and ``resubmit``) and the app's compose view both follow.

The job is checked against that cluster's partitions (a sweep: its size against the cluster's MaxArraySize too, W7;
a run that requeues: its requeue setting), its intent written to that cluster's history through its files (the
agent: records stay on the cluster, one history for the login node's ntui and the laptop's), then the script
rendered here goes to sbatch's standard input there with a comment that tags it
(:func:`~ntui.core.remote.lostsubmit.new_tag`). An answer lost to a dropped link or a timeout is looked for by that
comment before anything else (:func:`~ntui.core.remote.lostsubmit.find_lost_submit`): found, it is the job; not
found, nothing is sent again, and what is known is said (:class:`SubmitUnknown`). The history then gets
``submitted`` or ``failed``. A sweep's manifest is written there by the agent before sbatch (a task may start at
once, W10), its job file after (which manifest, which tasks ran).

What is said to the user along the way comes back in :attr:`ClusterSubmitted.notes`, each note also given to
``say`` as it happens; the words are a :class:`Wording`'s (the CLI's own say them as it always has). Refusals are
raised in words: :class:`SubmitRefused` (the cluster's partitions, a sweep's manifest that cannot be written:
nothing was sent to sbatch), :class:`SubmitUnknown` (whether sbatch ran is not known), or Slurm's and ssh's own
errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ntui.core.compose.render import log_paths, render
from ntui.core.compose.sitecheck import check_against_cluster, check_array_size, check_requeue, cluster_limits
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.manifest import format_indices
from ntui.core.jobs.submission import SubmittedJob, submit_elsewhere, submitted_there
from ntui.core.problems import Problem
from ntui.core.remote.files import ClusterFiles, FileRefused, send_manifest
from ntui.core.remote.lostsubmit import find_lost_submit, new_tag
from ntui.core.slurm.common import SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner, ControllerUnreachable, SlurmError, SlurmTimeout, classify
from ntui.core.slurm.sbatch import TestOnlyResult, parse_sbatch_test_only
from ntui.core.slurm.scontrol import Partition
from ntui.core.slurm.ssh import SshError

__all__ = ["ClusterSubmitted", "SubmitRefused", "SubmitUnknown", "Wording", "check_there", "submit_to_cluster",
           "test_only_there"]


class SubmitRefused(SlurmError):
    """Nothing was sent to sbatch: the cluster's partitions would not run the job, or a sweep's manifest cannot be
    written there; ``problems`` say why (the partitions')."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class SubmitUnknown(SlurmError):
    """sbatch's answer was lost and the job was not found by its comment: whether it was submitted is not known for
    sure (nothing is sent again; the words say what to look for)."""


@dataclass(frozen=True)
class Wording:
    """The words of what a submission says along the way (the app's; the CLI says its own): templates for
    :meth:`str.format`, given ``cluster``, ``why``, ``fact``, ``what`` (how the answer was lost), ``tag`` (the job's
    comment), ``job_id``, ``job_name`` and ``jobs`` (accounting's jobs of that name). ``looking``: said before a
    lost answer is looked for (empty: nothing)."""

    not_kept: str = ("the submission is not kept in {cluster}'s history ({why}): its logs are known by the batch log "
                     "only")
    not_recorded: str = "the submission's {fact} record was not written to {cluster}'s history ({why})"
    looking: str = ""
    found: str = ("{what} while submitting to {cluster}; job {job_id} was found in its queue by its comment: not "
                  "submitted again")
    cannot_ask: str = ("{what} while submitting to {cluster}, and {cluster} cannot be asked whether the job was "
                       "submitted: before submitting again, look for a job named {job_name} with comment {tag}")
    maybe: str = ("{what} while submitting to {cluster}: no job with comment {tag} there, but accounting lists "
                  "job(s) {jobs} named {job_name} without a comment to tell: check them before submitting again")
    not_found: str = ("{what}: not submitted, {cluster} has no job with comment {tag} (submit again when the link is "
                      "back)")
    no_job_file: str = "the sweep's job file was not written on {cluster} ({why}); its tasks run"


@dataclass(frozen=True)
class ClusterSubmitted:
    """A job submitted to a cluster reached over ssh: the job (its id there), whether its records are kept in that
    cluster's history, and what to tell the user."""

    job: SubmittedJob
    cluster: str
    kept: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


def check_there(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner) -> list[Problem]:
    """The job against the cluster's partitions, a sweep's size against its MaxArraySize (W7), a run that requeues
    against its JobRequeue (T7)."""
    problems = check_against_cluster(spec, cluster_limits(runner), loaded=loaded)
    problems += check_array_size(spec, runner, loaded=loaded)
    problems += check_requeue(spec, runner, loaded=loaded)
    return problems


class _Said:
    """The notes of one submission: kept, and each given to ``say`` as it is said."""

    def __init__(self, say: Callable[[str], None] | None) -> None:
        self.notes: list[str] = []
        self._say = say

    def __call__(self, note: str) -> None:
        self.notes.append(note)
        if self._say is not None:
            self._say(note)


def submit_to_cluster(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, cluster: str,
                      files: Callable[[], ClusterFiles] | None, *, extra_args: Sequence[str] = (),
                      resubmit_of: str | None = None, indices: Sequence[int] | None = None,
                      checked: Sequence[Problem] | None = None, wording: Wording | None = None,
                      say: Callable[[str], None] | None = None) -> ClusterSubmitted:
    """Submit ``spec`` to ``cluster`` through its ``runner`` (see the module docstring); ``files``: that cluster's
    files, for its history and a sweep's manifest (opened on first use). ``indices``: a sweep's tasks to run
    (``resubmit --failed``); ``checked``: the problems of :func:`check_there` where the caller has said them
    already (then not checked again, nor noted). Raises :class:`SubmitRefused`, :class:`SubmitUnknown` or Slurm's
    and ssh's errors."""
    words = wording or Wording()
    said = _Said(say)
    if checked is None:
        problems = check_there(loaded, spec, runner)
        errors = [p for p in problems if p.is_error]
        if errors:
            first = errors[0]
            raise SubmitRefused(f"{cluster} would not run it: {first.field + ': ' if first.field else ''}"
                                f"{first.message}", errors)
        for p in problems:
            said(f"{p.field}: {p.message}" if p.field else p.message)
    tag = new_tag()  # the job's comment: a submit whose answer is lost is looked for by it (never sent twice)
    token = tag.rpartition(":")[2]
    tasks: tuple[int, ...] = ()
    manifest = ""
    args = list(extra_args)
    if spec.sweep is not None:
        manifest, tasks = _send_manifest(spec, cluster, files, indices)
        if indices is not None:  # the command line's --array overrides the script's directive
            cap = f"%{spec.sweep.parallel}" if spec.sweep.parallel else ""
            args.append(f"--array={format_indices(tasks)}{cap}")
    kept = _record(files, "intent", token, said, words, cluster, preset=loaded.name,
                   preset_path=str(loaded.path) if loaded.path else None, overrides=list(loaded.overrides),
                   job_name=spec.job_name, launcher=spec.launcher, nodes=spec.nodes, world_size=spec.world_size,
                   log_dir=spec.log_dir, log_stem=log_paths(spec).stem, script=render(spec),
                   **({"resubmit_of": resubmit_of} if resubmit_of else {}))
    try:
        job = submit_elsewhere(spec, runner, extra_args=[*args, f"--comment={tag}"], tasks=tasks)
    except (SshError, SlurmTimeout) as exc:
        if isinstance(exc, SshError) and not exc.link_down:  # the login failed: sbatch never ran
            if kept:
                _record(files, "failed", token, said, words, cluster)
            raise
        job = _lost_answer(runner, cluster, spec, tag, exc, said, words, tasks)  # the intent stays until known
    except SlurmError:
        if kept:
            _record(files, "failed", token, said, words, cluster)
        raise
    if kept:
        kept = _record(files, "submitted", token, said, words, cluster, job_id=job.job_id, cluster=job.cluster)
    if spec.sweep is not None:
        _write_job_file(spec, cluster, files, job.job_id, manifest, tasks, resubmit_of, said, words)
    return ClusterSubmitted(job, cluster, kept, tuple(said.notes))


def _record(files: Callable[[], ClusterFiles] | None, fact: str, token: str, said: _Said, words: Wording,
            where: str, **fields: Any) -> bool:
    """One fact of the submission to the cluster's history; False (said) where none is kept: no ntui there, an
    older agent, or the history there cannot be written. The submit goes on either way (a record is never a reason
    to refuse one)."""
    if files is None:
        why = "its files are not reachable from here"
    else:
        try:
            if files().record(fact, token, **fields):
                return True
            why = "no ntui agent there"
        except (FileRefused, SlurmError) as exc:
            why = str(exc)
    said((words.not_kept if fact == "intent" else words.not_recorded).format(cluster=where, fact=fact, why=why))
    return False


def _send_manifest(spec: JobSpec, cluster: str, files: Callable[[], ClusterFiles] | None,
                   indices: Sequence[int] | None) -> tuple[str, tuple[int, ...]]:
    """A sweep's manifest written on the cluster by its agent, before sbatch (a task may start at once, W10): its
    file name there and the task indices to run. :class:`SubmitRefused` where it cannot be written (nothing is
    submitted: the tasks would find no values); Slurm's and ssh's errors as they come."""
    sweep = spec.sweep
    assert sweep is not None
    tasks = tuple(sorted(set(indices))) if indices is not None else tuple(range(sweep.size))
    if not tasks or tasks[0] < 0 or tasks[-1] >= sweep.size:
        raise SubmitRefused(f"task indices {format_indices(tasks) or '(none)'} are not in 0-{sweep.size - 1}")
    stem = log_paths(spec).stem
    expected = sweep.manifest_path(spec.log_dir, stem)
    try:
        path = send_manifest(files(), spec.log_dir, stem, sweep.manifest_bytes()) if files is not None else None
    except FileRefused as exc:
        raise SubmitRefused(f"the sweep's manifest cannot be written on {cluster}: {exc}") from exc
    if path is None:
        raise SubmitRefused(f"a sweep's manifest is written on {cluster} by ntui's agent there, and none answers "
                            f"for it (install this ntui version on {cluster}, or submit the sweep on its login node)")
    if os.path.basename(path) != os.path.basename(expected):  # the script names the manifest it reads
        raise SubmitRefused(f"the agent on {cluster} wrote the manifest as {path}, the script reads {expected}")
    return os.path.basename(path), tasks


def _write_job_file(spec: JobSpec, cluster: str, files: Callable[[], ClusterFiles] | None, job_id: str,
                    manifest: str, tasks: tuple[int, ...], resubmit_of: str | None, said: _Said,
                    words: Wording) -> None:
    """The sweep's job file written beside its logs on the cluster (which manifest, which tasks ran): the tasks
    run without it; ``ntui sweep`` then reads the script's (said once when it cannot be written)."""
    sweep = spec.sweep
    assert sweep is not None
    if files is None:
        said(words.no_job_file.format(cluster=cluster, why="its files are not reachable from here"))
        return
    try:
        done = files().sweep("job", log_dir=spec.log_dir, log_stem=log_paths(spec).stem, job_id=job_id,
                             manifest=manifest, tasks=sweep.size, indices=format_indices(tasks),
                             parallel=sweep.parallel, resubmit_of=resubmit_of)
    except (FileRefused, SlurmError) as exc:
        said(words.no_job_file.format(cluster=cluster, why=exc))
        return
    if done is None:
        said(words.no_job_file.format(cluster=cluster, why="no agent answers for it"))


def test_only_there(spec: JobSpec, runner: CommandRunner, partitions: Sequence[Partition], *,
                    loaded: LoadedPreset | None = None) -> tuple[TestOnlyResult, list[Problem]]:
    """``sbatch --test-only`` on a cluster reached over ssh, the script rendered here on its standard input (nothing
    is submitted, nothing written there), as ``ntui --cluster NAME submit --test-only`` asks it; then, when Slurm
    accepted it, the problems of the partition it chose (as :func:`~ntui.core.compose.sitecheck.check_test_only`)."""
    res = runner.run(["sbatch", "--test-only"], timeout=SUBMIT_TIMEOUT, input=render(spec))
    err = classify(res)
    if isinstance(err, ControllerUnreachable):
        raise err
    result = parse_sbatch_test_only(res)
    if not result.ok:
        return result, []
    return result, check_against_cluster(spec, partitions, partition=result.partition, loaded=loaded)


def _lost_answer(runner: CommandRunner, cluster: str, spec: JobSpec, tag: str, exc: SlurmError, said: _Said,
                 words: Wording, tasks: tuple[int, ...]) -> SubmittedJob:
    """sbatch's answer was lost (the link dropped under it, or it was killed at its timeout): the job looked for on
    the cluster by its comment (found: the job, as if sbatch had answered; else :class:`SubmitUnknown` with what is
    known). Nothing is submitted again here (sbatch may still be running there). ``tasks``: a sweep's (its array is
    found by any of its tasks)."""
    what = exc.words if isinstance(exc, SshError) else "sbatch did not answer in time"
    known = {"cluster": cluster, "what": what, "tag": tag, "job_name": spec.job_name}
    if words.looking:
        said(words.looking.format(**known))
    found = find_lost_submit(runner, spec.job_name, tag)
    if found.job_id is not None:
        said(words.found.format(job_id=found.job_id, **known))
        return submitted_there(spec, found.job_id, None, tasks)
    if not found.asked:
        raise SubmitUnknown(words.cannot_ask.format(**known))
    if found.maybe:
        raise SubmitUnknown(words.maybe.format(jobs=", ".join(found.maybe), **known))
    raise SubmitUnknown(words.not_found.format(**known))
