#!/bin/bash

#SBATCH --nodes=2 # nodes
#SBATCH --job-name=picollm # job name
#SBATCH --output=logs/%x_%j.out # stdout
#SBATCH --exclusive

set -ex;

GPUS_PER_NODE=1

declare -a SRUN_ARGS=(
    --container-image  $PWD/picollm.sqsh
    --container-mounts "$PWD"
    --container-workdir ${PWD}
)

declare -a TORCHRUN_ARGS=(
    --nproc_per_node=$GPUS_PER_NODE
    --nnodes=$SLURM_JOB_NUM_NODES
    --rdzv_id=$SLURM_JOB_ID
    --rdzv_backend=c10d
    --rdzv_endpoint=$(hostname)
)

AUTO_RESUME=""
if [ -d "/opt/cluster_agent" ]; then
    AUTO_RESUME="--auto-resume=1"
fi

srun ${AUTO_RESUME} -l "${SRUN_ARGS[@]}" torchrun "${TORCHRUN_ARGS[@]}" \
    /picollm/train.py --config ${PWD}/conf/tiny-tp2/config.json
