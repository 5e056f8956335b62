#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=16
#SBATCH --gpus-per-task=a100:4
#SBATCH --mem=480G
#SBATCH --time=02:00:00
#SBATCH --job-name=lm_finetune
#SBATCH --output=logs/slurm-%j.out

set -e
module --quiet purge

ACCEL_CFG=${ACCEL_CFG:="configs/zero2.yaml"}
BASE_MODEL=${BASE_MODEL:="org/base-3b"}
PER_GPU_BS=${PER_GPU_BS:="2"}
OUT_DIR=${OUT_DIR:=$SCRATCH/runs/lm_finetune/$SLURM_JOB_ID}

source make_env.sh
set -x

export MASTER_PORT=${MASTER_PORT:=$(expr 20000 + $(echo -n $SLURM_JOBID | tail -c 4))}
export MASTER_ADDR=${MASTER_ADDR:=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)}
export WORLD_SIZE=${WORLD_SIZE:=$(($SLURM_JOB_NUM_NODES * $SLURM_GPUS_ON_NODE))}
NUM_NODES=${NUM_NODES:=$SLURM_JOB_NUM_NODES}

export HF_CACHE_SRC=$SCRATCH/cache/hf
srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 bash -c '\
    mkdir -p $SLURM_TMPDIR/cache && \
    cp -r '$HF_CACHE_SRC' $SLURM_TMPDIR/cache/hf'

export HF_HUB_OFFLINE=1
srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 --output=logs/slurm-%j_%t.out \
    bash -c 'accelerate launch \
    --machine_rank=$SLURM_NODEID \
    --config_file='$ACCEL_CFG' \
    --main_process_ip='$MASTER_ADDR' \
    --main_process_port='$MASTER_PORT' \
    --num_processes='$WORLD_SIZE' \
    --num_machines='$NUM_NODES' \
    finetune_lm.py \
    --output_dir='$OUT_DIR' \
    --model_name='$BASE_MODEL' \
    --per_device_batch_size='$PER_GPU_BS' \
    --max_train_steps=200'
