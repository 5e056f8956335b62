#!/bin/bash
#SBATCH --job-name=orbit-rl
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --gres=gpu:8
#SBATCH --partition=h100-main 
#SBATCH --output=./logs/%x-%j.out
#SBATCH --err=./logs/%x-%j.err

set -x -e

source ~/.bashrc
conda activate orbit
module load cuda/12.2

POLICY=$1
PROMPTS=$2
ACCEL_CFG=$3

N_NODES=$SLURM_NNODES
GPUS_PER_NODE=8
WORLD=$(($N_NODES*$GPUS_PER_NODE))
TRAIN_PROCS = $(($WORLD-1))

MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6222

export CMD=" \
    src/orbit/rl_train.py \
    --policy $POLICY \
    --prompts $PROMPTS \
    --lr 1.0e-6 \
    --epochs 1 \
    --batch 8 \
    --bf16 \
    --out runs/orbit-rl
    "

export LAUNCHER="HF_HUB_OFFLINE=1 accelerate launch \
    --config_file cfg/$ACCEL_CFG.yaml  \
    --num_machines $N_NODES \
    --num_processes $TRAIN_PROCS \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --machine_rank \$SLURM_PROCID \
    --rdzv_conf "rdzv_backend=c10d,rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT" \
    --max_restarts 1 \
    --tee 3 \
    "

export NCCL_ASYNC_ERROR_HANDLING=1
module load cuda/12.2

SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    "

clear; srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c "$LAUNCHER --role \$SLURMD_NODENAME: $CMD" 2>&1
