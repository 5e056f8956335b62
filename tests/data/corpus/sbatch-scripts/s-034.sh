#!/bin/bash

#SBATCH --job-name="neo"
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8 # GPUs per node
#SBATCH --gres=gpu:8
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err
#SBATCH --wait-all-nodes=1
#SBATCH --exclusive
set -uxo pipefail

: "${APPS:=/lustre/apps}"
: "${IMAGE:=$APPS/neo-train.sqsh}"
: "${SHARED:=/lustre}"
: "${MOUNT:=$SHARED:$SHARED}"
export FI_PROVIDER=efa
export NCCL_ASYNC_ERROR_HANDLING=1

export MODEL_CONFIG=${PWD}/configs/neo/1-3B.json
export HOSTNAMES=`scontrol show hostnames "$SLURM_JOB_NODELIST"`
export NODES=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
export MASTER_ADDR=$(hostname --ip-address)
export MASTER_PORT=$RANDOM
export NNODES=$SLURM_JOB_NUM_NODES
export NPROC=$SLURM_GPUS_PER_NODE
export WORLD_SIZE=$(( $NNODES * $NPROC ))

declare -a ARGS=(
    --container-image $IMAGE
    --container-mounts $MOUNT
)

declare -a TORCHRUN_ARGS=(
    # set to the GPUs per node:
    --master_addr $MASTER_ADDR \
    --master_port $RANDOM \
    --nproc_per_node=8 \
    --nnodes=$SLURM_JOB_NUM_NODES \
    --rdzv_backend=c10d \
    --rdzv_endpoint=$(hostname) \
)

srun -l "${ARGS[@]}" python launch_ds.py train.py ${MODEL_CONFIG} 
