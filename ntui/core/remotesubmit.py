"""A submission to a cluster reached over ssh, as the app makes it (Textual-free): the same protocol as
``ntui --cluster NAME submit``.

The job is checked against that cluster's partitions (and its requeue setting), its intent written to that cluster's
history through its files (the agent: records stay on the cluster, one history for the login node's ntui and the
laptop's), then the script rendered here goes to sbatch's standard input there with a comment that tags it
(:func:`~ntui.core.remote.lostsubmit.new_tag`). An answer lost to a dropped link or a timeout is looked for by that
comment before anything else (:func:`~ntui.core.remote.lostsubmit.find_lost_submit`): found, it is the job; not
found, nothing is sent again, and what is known is said (:class:`SubmitUnknown`). The history then gets
``submitted`` or ``failed``.

What is said to the user along the way (no history kept there, the lost answer found) comes back in
:attr:`ClusterSubmitted.notes`; refusals are raised in words: :class:`SubmitRefused` (the cluster's partitions),
:class:`SubmitUnknown` (whether sbatch ran is not known), or Slurm's and ssh's own errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ntui.core.compose.render import log_paths, render
from ntui.core.compose.sitecheck import check_against_cluster, check_requeue, cluster_limits
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobs.submission import SubmittedJob, submit_elsewhere
from ntui.core.problems import Problem
from ntui.core.remote.files import ClusterFiles, FileRefused
from ntui.core.remote.lostsubmit import find_lost_submit, new_tag
from ntui.core.slurm.common import SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner, ControllerUnreachable, SlurmError, SlurmTimeout, classify
from ntui.core.slurm.sbatch import TestOnlyResult, parse_sbatch_test_only
from ntui.core.slurm.scontrol import Partition
from ntui.core.slurm.ssh import SshError

__all__ = ["ClusterSubmitted", "SubmitRefused", "SubmitUnknown", "submit_to_cluster", "test_only_there"]


class SubmitRefused(SlurmError):
    """The cluster's partitions would not run the job (nothing was sent to sbatch); ``problems`` say why."""

    def __init__(self, message: str, problems: Sequence[Problem]) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class SubmitUnknown(SlurmError):
    """sbatch's answer was lost and the job was not found by its comment: whether it was submitted is not known for
    sure (nothing is sent again; the words say what to look for)."""


@dataclass(frozen=True)
class ClusterSubmitted:
    """A job submitted to a cluster reached over ssh: the job (its id there), whether its records are kept in that
    cluster's history, and what to tell the user."""

    job: SubmittedJob
    cluster: str
    kept: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


def _record(files: Callable[[], ClusterFiles] | None, fact: str, token: str, notes: list[str], where: str,
            **fields: Any) -> bool:
    """One fact of the submission to the cluster's history; False (said in ``notes``) where none is kept: the
    submit goes on either way."""
    if files is None:
        why = "its files are not reachable from here"
    else:
        try:
            if files().record(fact, token, **fields):
                return True
            why = "no ntui agent there"
        except (FileRefused, SlurmError) as exc:
            why = str(exc)
    if fact == "intent":
        notes.append(f"the submission is not kept in {where}'s history ({why}): its logs are known by the batch "
                     "log only")
    else:
        notes.append(f"the submission's {fact} record was not written to {where}'s history ({why})")
    return False


def submit_to_cluster(loaded: LoadedPreset, spec: JobSpec, runner: CommandRunner, cluster: str,
                      files: Callable[[], ClusterFiles] | None, *, extra_args: Sequence[str] = ()
                      ) -> ClusterSubmitted:
    """Submit ``spec`` to ``cluster`` through its ``runner`` (see the module docstring); ``files``: that cluster's
    files, for its history (opened on first use). Raises :class:`SubmitRefused`, :class:`SubmitUnknown`,
    ``ValueError`` (a sweep: not over ssh yet) or Slurm's and ssh's errors."""
    problems = check_against_cluster(spec, cluster_limits(runner), loaded=loaded)
    problems += check_requeue(spec, runner, loaded=loaded)
    errors = [p for p in problems if p.is_error]
    if errors:
        first = errors[0]
        raise SubmitRefused(f"{cluster} would not run it: {first.field + ': ' if first.field else ''}{first.message}",
                            errors)
    notes = [f"{p.field}: {p.message}" if p.field else p.message for p in problems]
    tag = new_tag()
    token = tag.rpartition(":")[2]
    kept = False
    if spec.sweep is None:  # a sweep is refused by submit_elsewhere, before sbatch
        kept = _record(files, "intent", token, notes, cluster, preset=loaded.name,
                       preset_path=str(loaded.path) if loaded.path else None, overrides=list(loaded.overrides),
                       job_name=spec.job_name, launcher=spec.launcher, nodes=spec.nodes,
                       world_size=spec.world_size, log_dir=spec.log_dir, log_stem=log_paths(spec).stem,
                       script=render(spec))
    try:
        job = submit_elsewhere(spec, runner, extra_args=[*extra_args, f"--comment={tag}"])
    except (SshError, SlurmTimeout) as exc:
        if isinstance(exc, SshError) and not exc.link_down:  # the login failed: sbatch never ran
            if kept:
                _record(files, "failed", token, notes, cluster)
            raise
        job = _lost_answer(runner, cluster, spec, tag, exc, notes)  # the intent stays until it is known
    except SlurmError:
        if kept:
            _record(files, "failed", token, notes, cluster)
        raise
    if kept:
        kept = _record(files, "submitted", token, notes, cluster, job_id=job.job_id, cluster=job.cluster)
    return ClusterSubmitted(job, cluster, kept, tuple(notes))


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


def _lost_answer(runner: CommandRunner, cluster: str, spec: JobSpec, tag: str, exc: SlurmError,
                 notes: list[str]) -> SubmittedJob:
    """sbatch's answer was lost: the job looked for on the cluster by its comment (found: the job, as if sbatch had
    answered; else :class:`SubmitUnknown` with what is known). Nothing is submitted again here."""
    what = exc.words if isinstance(exc, SshError) else "sbatch did not answer in time"
    found = find_lost_submit(runner, spec.job_name, tag)
    if found.job_id is not None:
        notes.append(f"{what} while submitting to {cluster}; job {found.job_id} was found in its queue by its "
                     f"comment: not submitted again")
        paths = log_paths(spec)
        return SubmittedJob(job_id=found.job_id, cluster=None, script_path="", batch_log=paths.batch(found.job_id),
                            rank_logs=tuple(paths.rank(found.job_id, r) for r in range(spec.world_size)))
    if not found.asked:
        raise SubmitUnknown(f"{what} while submitting to {cluster}, and {cluster} cannot be asked whether the job "
                            f"was submitted: before submitting again, look for a job named {spec.job_name} with "
                            f"comment {tag}")
    if found.maybe:
        raise SubmitUnknown(f"{what} while submitting to {cluster}: no job with comment {tag} there, but "
                            f"accounting lists job(s) {', '.join(found.maybe)} named {spec.job_name} without a "
                            "comment to tell: check them before submitting again")
    raise SubmitUnknown(f"{what}: not submitted, {cluster} has no job with comment {tag} (submit again when the "
                        "link is back)")
