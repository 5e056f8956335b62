"""Stub srun: starts every task of the step in turn with the per-task variables Slurm sets.

GPUs: with ``SLURM_GPUS_PER_TASK`` in the environment (sbatch --gpus-per-task) and no
``--gpu-bind=none``, each task sees only its own GPUs (renumbered from 0), as with Slurm's
per-task binding; otherwise every task sees all of the node's ``NTUI_STUB_GPUS_PER_NODE``.
Without ``--export=ALL`` under ``SLURM_EXPORT_ENV`` other than ALL, tasks get only SLURM_* variables.
"""

import os
import subprocess
import sys

args = sys.argv[1:]
opts: dict[str, str] = {}
i = 0
while i < len(args) and args[i].startswith("--"):
    key, _, value = args[i][2:].partition("=")
    opts[key] = value
    i += 1
cmd = args[i:]
assert "cpus-per-task" in opts, "C1: srun --cpus-per-task"
nodes = int(os.environ["SLURM_JOB_NUM_NODES"])
per_node = int(opts["ntasks-per-node"])
gpus = int(os.environ.get("NTUI_STUB_GPUS_PER_NODE", "0"))
per_task = os.environ.get("SLURM_GPUS_PER_TASK")
bound = per_task is not None and opts.get("gpu-bind") != "none"
export_all = opts.get("export") == "ALL" or os.environ.get("SLURM_EXPORT_ENV", "ALL") == "ALL"
rc = 0
for node in range(nodes):
    for local in range(per_node):
        env = dict(os.environ) if export_all else {k: v for k, v in os.environ.items() if k.startswith("SLURM_")}
        env.update(
            SLURM_PROCID=str(node * per_node + local), SLURM_LOCALID=str(local), SLURM_NODEID=str(node),
            SLURM_NTASKS=str(nodes * per_node), SLURM_STEP_NUM_TASKS=str(nodes * per_node),
            SLURMD_NODENAME=f"nid{node + 1:03d}",
        )
        if gpus:
            visible = int(per_task) if bound and per_task else gpus
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in range(visible))
        rc = rc or subprocess.run(cmd, env=env).returncode
sys.exit(rc)
