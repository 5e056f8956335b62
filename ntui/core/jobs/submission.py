"""Submit a validated job: the one workflow the CLI and the app share.

``submit_job`` creates the log directory (Slurm does not), writes the script next to the
logs (user-only permissions), records an intent in the history, runs ``sbatch --parsable``
with a scrubbed environment, then completes the history row with the job id.

A sweep (a job array) also gets its manifest, written atomically before ``sbatch`` so that a task starting at once
finds it (its name carries its digest: the same sweep, the same file), and its job file ``<stem>-<jobid>.sweep``
next to the script (:mod:`ntui.core.jobfiles.manifest`). ``indices`` submits some tasks only (a resubmission of
the failed ones: ``sbatch --array=1,4%P``, which overrides the script's directive) with the same manifest.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ntui.core.compose.render import log_paths, render
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.lognames import LogPaths, task_job_id
from ntui.core.jobfiles.manifest import SweepJob, format_indices, job_file_path, write_job_file, write_manifest
from ntui.core.paths import atomic_write
from ntui.core.records.history import History
from ntui.core.slurm.common import SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner, SlurmError, slurm_env
from ntui.core.slurm.sbatch import submit
from ntui.core.slurm.scontrol import cluster_name


@dataclass(frozen=True)
class SubmittedJob:
    job_id: str
    cluster: str | None
    script_path: str  # "" when submitted to a cluster elsewhere (the script went on sbatch's standard input)
    batch_log: str
    rank_logs: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    tasks: tuple[int, ...] = ()  # a sweep's task indices (the logs above are the first task's)
    via: str | None = None  # the cluster reached over ssh it was submitted to (None: Slurm here)


def submit_job(
    loaded: LoadedPreset,
    spec: JobSpec,
    runner: CommandRunner,
    history: History | None = None,
    *,
    extra_args: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
    resubmit_of: str | None = None,
    indices: Sequence[int] | None = None,
) -> SubmittedJob:
    """Submit; raises the typed Slurm errors (``SlurmRejected`` carries Slurm's reason). ``resubmit_of``: the
    job this one repeats (``ntui resubmit``), linked in the history. ``indices``: for a sweep, the tasks to run
    (default: all of them)."""
    paths = log_paths(spec)
    script = render(spec)
    Path(spec.log_dir).mkdir(parents=True, exist_ok=True)
    sweep = spec.sweep
    tasks: tuple[int, ...] = ()
    if sweep is not None:
        tasks = tuple(sorted(set(indices))) if indices is not None else tuple(range(sweep.size))
        if not tasks or tasks[0] < 0 or tasks[-1] >= sweep.size:
            raise ValueError(f"task indices {format_indices(tasks) or '(none)'} are not in 0-{sweep.size - 1}")
        data = sweep.manifest_bytes()
        manifest = sweep.manifest_path(spec.log_dir, spec.log_stem)
        write_manifest(manifest, data)  # before sbatch: a task may start at once (W10)
        if indices is not None:  # the command line's --array overrides the script's directive
            cap = f"%{sweep.parallel}" if sweep.parallel else ""
            extra_args = [*extra_args, f"--array={format_indices(tasks)}{cap}"]
    token = uuid.uuid4().hex
    staging = Path(spec.log_dir) / f".{paths.stem}-{token}.sbatch"
    atomic_write(staging, script, mode=0o600)
    env, warnings = slurm_env(environ)
    if history is not None:
        history.record_intent(
            token=token, preset=loaded.name, preset_path=str(loaded.path) if loaded.path else None,
            overrides=loaded.overrides, job_name=spec.job_name, launcher=spec.launcher, nodes=spec.nodes,
            world_size=spec.world_size, log_dir=spec.log_dir, log_stem=paths.stem, script=script,
            resubmit_of=resubmit_of,
        )
    try:
        sub = submit(runner, str(staging), extra_args=extra_args, env=env, timeout=timeout)
    except BaseException:
        if history is not None:
            history.record_failed(token)
        staging.unlink(missing_ok=True)
        raise
    final = Path(paths.script(sub.job_id))
    os.replace(staging, final)
    # The cluster keeps two clusters' same-numbered jobs apart in one history (a home shared by two machines, job
    # ids that restarted): sbatch names it for a federation, else the slurm.conf the clients read says it.
    cluster = sub.cluster or cluster_name(env=env)
    if history is not None:
        history.record_submitted(token, sub.job_id, cluster, str(final))
    if sweep is not None:
        try:  # the job runs without it (its script names the manifest); readers fall back to the script
            write_job_file(job_file_path(spec.log_dir, paths.stem, sub.job_id),
                           SweepJob(os.path.basename(manifest), sweep.size, tasks, sweep.parallel, resubmit_of))
        except OSError as exc:
            warnings = (*warnings, f"the sweep's job file was not written ({exc}); its tasks run")
    first = task_job_id(sub.job_id, tasks[0]) if tasks else sub.job_id
    return SubmittedJob(
        job_id=sub.job_id,
        cluster=cluster,
        script_path=str(final),
        batch_log=paths.batch(first),
        rank_logs=tuple(paths.rank(first, r) for r in range(spec.world_size)),
        warnings=warnings,
        tasks=tasks,
    )


def build_mkdir_argv(directory: str) -> list[str]:
    """``mkdir -p -- DIR``: a job's log directory where the job runs (Slurm does not create it, and a job whose
    output file cannot be opened fails without a log)."""
    return ["mkdir", "-p", "--", directory]


def submit_elsewhere(
    spec: JobSpec,
    runner: CommandRunner,
    *,
    extra_args: Sequence[str] = (),
    timeout: float = SUBMIT_TIMEOUT,
    tasks: Sequence[int] = (),
) -> SubmittedJob:
    """Submit to a cluster whose files are not here (``runner`` runs Slurm on its login node): the script
    rendered here is given to sbatch on its standard input, after the log directory is made there; nothing is
    written on this machine, and no history entry is kept (the records live on the cluster). A sweep's manifest is
    a file its tasks read on the cluster: it is written there first (which makes its log directory), and
    ``tasks`` are the indices that run. Raises the typed Slurm errors."""
    if spec.sweep is None:
        made = runner.run(build_mkdir_argv(spec.log_dir), timeout=timeout)
        if not made.ok:
            said = made.stderr.strip().splitlines()[-1:] or [f"exit {made.returncode}"]
            raise SlurmError(f"the log directory {spec.log_dir} cannot be made there: {said[0]} (paths in a preset "
                             "are resolved on this machine: write the cluster's own path in logs.dir)",
                             argv=made.argv, stderr=made.stderr, returncode=made.returncode)
    sub = submit(runner, None, script=render(spec), extra_args=extra_args, timeout=timeout)
    return submitted_there(spec, sub.job_id, sub.cluster, tasks)


def submitted_there(spec: JobSpec, job_id: str, cluster: str | None, tasks: Sequence[int] = ()) -> SubmittedJob:
    """A job submitted to a cluster elsewhere as ``ntui submit`` says it: its logs there (a sweep's: its first
    task's)."""
    paths = log_paths(spec)
    first = task_job_id(job_id, tasks[0]) if tasks else job_id
    return SubmittedJob(job_id=job_id, cluster=cluster, script_path="", batch_log=paths.batch(first),
                        rank_logs=tuple(paths.rank(first, r) for r in range(spec.world_size)), tasks=tuple(tasks))


def paths_for(job_id: str, history: History, cluster: str | None = None) -> LogPaths | None:
    """Log paths of a job ntui submitted, from the history alone (``cluster``: see :meth:`History.get`)."""
    entry = history.get(job_id, cluster)
    if entry is None or not entry.log_stem:
        return None
    return LogPaths(entry.log_dir, entry.log_stem)
