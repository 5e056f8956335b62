#!/bin/bash

#SBATCH --nodes=2 # nodes
#SBATCH --job-name=fsdp-prof # job name
#SBATCH --exclusive

set -ex;

GPUS_PER_NODE=8

export FI_PROVIDER=efa
export NCCL_DEBUG=WARN

declare -a TORCHRUN_ARGS=(
    --nproc_per_node=$GPUS_PER_NODE \
    --nnodes=$SLURM_JOB_NUM_NODES \
    --rdzv_id=$SLURM_JOB_ID \
    --rdzv_backend=c10d \
    --rdzv_endpoint=$(hostname) \
)

export TRAIN_SCRIPT=train_nvtx.py

declare -a MODEL_ARGS=(
    --model_name=lm_7b
    --ckpt_dir=/lustre/lm/ckpt
    --data_path=/lustre/data/
    --sharding_strategy=hsdp
    --batch_size=2
    --use_torch_compile=False
)

export TORCH_DIST_INIT_BARRIER=1

srun -l /opt/nsight/target-linux-x64/nsys profile \
        --sample none --delay 30 --duration 900 --force-overwrite true \
        --output /lustre/profiles/report_job%q{SLURM_JOB_ID}_rank%q{SLURM_PROCID}_on_%q{HOSTNAME}.nsys-rep torchrun \
        "${TORCHRUN_ARGS[@]}" $TRAIN_SCRIPT "${MODEL_ARGS[@]}"
