#!/bin/bash

#SBATCH --nodes=4 # nodes
#SBATCH --job-name=fsdp-vit # job name
#SBATCH --exclusive # whole nodes

set -ex;

GPUS_PER_NODE=8 # per instance type

export FI_PROVIDER=efa
export FI_EFA_USE_DEVICE_RDMA=1
export NCCL_DEBUG=WARN

declare -a TORCHRUN_ARGS=(
    --nproc_per_node=$GPUS_PER_NODE
    --nnodes=$SLURM_JOB_NUM_NODES
    --rdzv_id=$SLURM_JOB_ID
    --rdzv_backend=c10d
    --rdzv_endpoint=$(hostname)
)

export TORCHRUN=./venv_fsdp/bin/torchrun
export TRAIN_SCRIPT=./train_vit.py

declare -a TRAINING_ARGS=(
    --image_size=384
    --patch_size=16 # 14 for the large model
    --depth=24 # 32 for the large model
    --width=1024
    --dataset='imagenet'
    --split='train'
    --checkpoint_dir=./ckpt
    --resume_from_checkpoint=./ckpt
    --sharding_strategy="hybrid"
    --max_steps=20000
)

AUTO_RESUME=""
if [ -d "/opt/cluster_agent" ]; then
    echo "managed cluster: enabling --auto-resume=1"
    AUTO_RESUME="--auto-resume=1"
fi

srun ${AUTO_RESUME} -l ${TORCHRUN} "${TORCHRUN_ARGS[@]}" $TRAIN_SCRIPT "${TRAINING_ARGS[@]}"
