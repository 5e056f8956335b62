"""The in-job GPU sampler: the bash lines a generated sbatch script contains to record its own GPU usage.

One sampler per node runs ``nvidia-smi --query-gpu=<SAMPLE_FIELDS> --format=csv,noheader,nounits -l N`` and
appends to one file per node next to the rank logs (:mod:`ntui.core.jobfiles.samplefiles`);
:mod:`ntui.core.gpu.usage` reads them.

**How it reaches the job's GPUs (device cgroups).** The sampler is its own job step, started in the background
from the batch shell before the launch, with ``srun --overlap`` and *no* GPU request:

* a step that asks for no GRES is given all of the job's GRES on its nodes (srun(1) of 22.05: "By default, a job
  step is allocated all of the generic resources that have been requested by the job"), so under
  ``ConstrainDevices`` its cgroup holds exactly the job's GPUs on that node and nvidia-smi shows those;
* ``--overlap`` (22.05+) "allows steps to share all resources (CPUs, memory, and GRES) with all other steps", so
  the training step that starts next is not held back by the sampler's CPU, memory or GPUs (before 22.05 it
  shared only CPUs: the launch step would pend behind it, so on older Slurm (``srun --version``) the script
  starts no sampler and says why in ``...-gpu-srun.log``);
* the job's ``SLURM_*``/``SRUN_*`` input variables are removed first (``SLURM_CONF`` kept) and the step is
  addressed with ``--jobid``: srun reads ``SLURM_GPUS_PER_TASK``, ``SLURM_NTASKS_PER_NODE``, ``SLURM_MEM_PER_CPU``
  ... from its environment, and with ``--gpus-per-task=1`` in the job a one-task sampler would see one GPU.

Running it inside the launch step on local rank 0 instead would need the launcher's payload to fork it, would run
it inside the container, and would die with rank 0 of a failing launch before the last samples; a separate step
keeps the sampler out of the launch line entirely. Verified on the Slurm 22.05 dev cluster
(tests/cluster/test_sampler.py):
the step gets the job's GPU count per node, and a launch step asking for every CPU and GPU starts beside it.

**It never changes the job's outcome.** It runs in the background (its status is never tested under
``set -e``), its task always exits 0, ``--kill-on-bad-exit=0``, no input, its output goes straight to the
node's file (srun relays nothing: ``--output``/``--error`` are ``/dev/null`` on the node, srun's own stderr goes
to a small ``...-gpu-srun.log``). Without nvidia-smi the task writes one header line saying so and exits 0.

**It stops when the work ends.** An ``EXIT`` trap in the batch shell (it keeps the script's exit status, and runs
also when ``set -e`` ends the script) sends SIGUSR1 to the sampler's srun, which forwards it to the task; the task
kills nvidia-smi, writes an end line and exits 0, so the step ends COMPLETED with no srun message. After 5 s the
trap gives up and SIGKILLs srun; a cancelled, requeued or timed-out job kills the step with the job (then the batch
log has slurmstepd's "STEP <job>.<n> ... CANCELLED" line for it too, as for every step, and the end line may be
missing). The header's ``visible=`` is the step's ``CUDA_VISIBLE_DEVICES``: without a device cgroup nvidia-smi
shows the node's other GPUs as well, and the report leaves those out.

**Cost and size.** nvidia-smi wakes every N seconds (``nice -n 19``); nothing else polls. Files grow by one line
per GPU per interval: a 24 h job with 4 GPUs at 10 s is 34,560 lines (about 3.5 MB) per node.
"""

from __future__ import annotations

import shlex

from ntui.core.jobfiles.machinery import MARK
from ntui.core.jobfiles.samplefiles import (
    DEFAULT_INTERVAL_S,
    GPU_PART,
    SAMPLE_FIELDS,
    SAMPLER_NAME,
    SAMPLER_PAYLOAD,
    SRUN_LOG,
)

__all__ = ["STOP_WAIT_TICKS", "sampler_lines"]

STOP_WAIT_TICKS = 10  # x 0.5 s: how long the EXIT trap waits for the step to end before SIGKILLing srun


def _q(value: str) -> str:
    return shlex.quote(value)


def sampler_lines(
    log_dir: str, stem: str, *, interval_s: int = DEFAULT_INTERVAL_S, gres: str | None = None,
    job_id_shell: str = '"$SLURM_JOB_ID"',
) -> list[str]:
    """The sbatch-script lines that start one GPU sampler per node and stop it when the script exits.

    Place them after the environment exports (PATH decides which nvidia-smi runs) and before the preset's setup
    lines. The script's journal (:mod:`ntui.core.jobfiles.journal`, rule J2) then takes this ``EXIT`` trap into the
    chain its own EXIT trap runs, so a setup that sets an ``EXIT`` trap of its own no longer replaces it: both run.

    ``gres`` (e.g. ``"gpu:4"``) only for ``--exclusive`` jobs
    whose GPUs came implicitly: their steps get no GPUs by default. ``job_id_shell``: the job id in the file
    names as the batch shell expands it (a sweep's task: ``<array id>_<task>``,
    :attr:`~ntui.core.jobfiles.lognames.LogPaths.job_id_shell`). Raises ValueError for an interval below 1.
    """
    if interval_s < 1:
        raise ValueError("the GPU sampling interval must be >= 1 s")
    prefix = f'{_q(f"{log_dir}/{stem}-")}{job_id_shell}{GPU_PART}'
    srun = [
        "srun",
        '--jobid="$j"',
        "--overlap",
        '--nodes="$n"',
        '--ntasks="$n"',
        "--ntasks-per-node=1",
        "--mem=100M",
        "--kill-on-bad-exit=0",
        "--input=none",
        "--output=/dev/null",
        "--error=/dev/null",
        "--quiet",
        f"--job-name={SAMPLER_NAME}",
    ]
    if gres:
        srun.append(f"--gres={_q(gres)}")
    srun += [
        "bash",
        "-c",
        _q(SAMPLER_PAYLOAD),
        SAMPLER_NAME,
        '"$NTUI_GPU_SAMPLES"',
        str(int(interval_s)),
        ",".join(SAMPLE_FIELDS),
    ]
    return [
        f"{MARK}GPU usage for `ntui report`: one nvidia-smi -l {int(interval_s)} per node into "
        f"{log_dir}/{stem}-<jobid>-gpu-<node>.csv.",
        "# Its own step (--overlap, no GPU request: it gets and shares the job's GPUs on each node, so it sees",
        "# exactly those), in the background with the job's SLURM_* inputs removed; always exits 0; stopped by",
        "# the EXIT trap (keeps the exit status). `monitor: {gpu: false}` in the preset removes these lines.",
        f"NTUI_GPU_SAMPLES={prefix}",
        "ntui_gpu_sampler_run() {",
        '    local j="$SLURM_JOB_ID" n="$SLURM_JOB_NUM_NODES" v',
        '    v=$(srun --version 2>/dev/null || true); v=${v##* }',
        '    case "$v" in [0-9].*|1[0-9].*|2[01].*|22.0[0-4].*)',
        '        echo "ntui: Slurm $v: --overlap shares GPUs only from 22.05; no GPU sampling" >&2; return 0 ;;',
        "    esac",
        "    for v in $(compgen -e); do",
        '        case "$v" in SLURM_CONF) ;; SLURM_*|SRUN_*|SBATCH_*|SALLOC_*) unset "$v" ;; esac',
        "    done",
        "    exec " + " ".join(srun),
        "}",
        "ntui_gpu_sampler_stop() {",
        '    kill -USR1 "$NTUI_GPU_SAMPLER" 2>/dev/null || return 0',
        f"    for _ in $(seq {STOP_WAIT_TICKS}); do",
        '        kill -0 "$NTUI_GPU_SAMPLER" 2>/dev/null || break',
        "        sleep 0.5",
        "    done",
        '    kill -KILL "$NTUI_GPU_SAMPLER" 2>/dev/null || true',
        '    wait "$NTUI_GPU_SAMPLER" 2>/dev/null || true',
        "}",
        f'( ntui_gpu_sampler_run ) </dev/null >/dev/null 2>>"${{NTUI_GPU_SAMPLES}}{SRUN_LOG}" &',
        "NTUI_GPU_SAMPLER=$!",
        "trap ntui_gpu_sampler_stop EXIT",
    ]
