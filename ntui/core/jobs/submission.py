"""Submit a validated job: the one workflow the CLI and the app share.

``submit_job`` creates the log directory (Slurm does not), writes the script next to the
logs (user-only permissions), records an intent in the history, runs ``sbatch --parsable``
with a scrubbed environment, then completes the history row with the job id.
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
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.paths import atomic_write
from ntui.core.records.history import History
from ntui.core.slurm.common import SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandRunner, slurm_env
from ntui.core.slurm.sbatch import submit


@dataclass(frozen=True)
class SubmittedJob:
    job_id: str
    cluster: str | None
    script_path: str
    batch_log: str
    rank_logs: tuple[str, ...]
    warnings: tuple[str, ...] = ()


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
) -> SubmittedJob:
    """Submit; raises the typed Slurm errors (``SlurmRejected`` carries Slurm's reason). ``resubmit_of``: the
    job this one repeats (``ntui resubmit``), linked in the history."""
    paths = log_paths(spec)
    script = render(spec)
    Path(spec.log_dir).mkdir(parents=True, exist_ok=True)
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
    if history is not None:
        history.record_submitted(token, sub.job_id, sub.cluster, str(final))
    return SubmittedJob(
        job_id=sub.job_id,
        cluster=sub.cluster,
        script_path=str(final),
        batch_log=paths.batch(sub.job_id),
        rank_logs=tuple(paths.rank(sub.job_id, r) for r in range(spec.world_size)),
        warnings=warnings,
    )


def paths_for(job_id: str, history: History) -> LogPaths | None:
    """Log paths of a job ntui submitted, from the history alone."""
    entry = history.get(job_id)
    if entry is None or not entry.log_stem:
        return None
    return LogPaths(entry.log_dir, entry.log_stem)
