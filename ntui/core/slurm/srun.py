"""``srun`` steps ntui starts for the user: a shell inside a running job's allocation (``ntui attach``, the jobs
view's shell key), and the environment every step ntui starts in a job gets (:func:`step_env`). The GPU pane's
step is :mod:`ntui.core.gpu.stream`, the stacks' :mod:`ntui.core.stacks.take`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from ntui.core.slurm.common import _safe_token, validate_job_id
from ntui.core.slurm.runner import SubprocessRunner, scrubbed_env

__all__ = ["build_shell_argv", "run_interactive", "step_env"]


def build_shell_argv(job_id: str, *, node: str | None = None, shell: str = "bash") -> list[str]:
    """``srun --jobid=ID --overlap --pty -N 1 -n 1 [-w NODE] SHELL``: one task on one node of the job (``-n 1``:
    no interconnect set-up for the other nodes; ``-N 1`` also spares srun's "can't run 1 processes on 2 nodes"
    warning), in the job's cgroup with its GPUs (``--overlap``: beside the running steps, never waiting for
    them), on a terminal of its own (``--pty``). Without ``node`` srun picks the job's first node."""
    argv = ["srun", f"--jobid={validate_job_id(job_id)}", "--overlap", "--pty", "-N", "1", "-n", "1"]
    if node:
        argv += ["-w", _safe_token(node, "node name")]
    return argv + [_safe_token(shell, "shell")]


def step_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without inherited Slurm job/step variables (``SLURM_CONF`` kept), for a step ntui starts in
    another job: srun reads ``SLURM_STEP_GRES``, ``SLURM_GPUS_PER_TASK``, ``SLURM_CPUS_PER_TASK`` ... from its
    environment, and an outer job's would shape this step."""
    drop = ("SLURM_", "SRUN_", "SALLOC_", "SBATCH_")
    return {k: v for k, v in base.items() if k == "SLURM_CONF" or not k.startswith(drop)}


def run_interactive(argv: Sequence[str], *, bin_dir: str | None = None,
                    environ: Mapping[str, str] | None = None) -> int:
    """Run an interactive step on the caller's terminal and wait for it; its exit status (127: srun not found).

    The one Slurm command ntui runs outside the :class:`~ntui.core.slurm.runner.CommandRunner`: it needs the
    terminal (no captured output) and lasts as long as the person in it wants (no timeout). Still an argv, never a
    shell; ``bin_dir`` as the runner resolves it; the environment scrubbed as for sbatch (inside an allocation the
    outer job's ``SLURM_*`` would steer this srun)."""
    env, _ = scrubbed_env(os.environ if environ is None else environ)
    args = [SubprocessRunner(bin_dir).resolve(argv[0]), *argv[1:]]
    try:
        return subprocess.call(args, env=env)
    except FileNotFoundError:
        return 127
