#!/bin/bash

#SBATCH --job-name=multinode-cls
#SBATCH -D .
#SBATCH --output=O-%x.%j
#SBATCH --error=E-%x.%j
#SBATCH --nodes=4                   # nodes
#SBATCH --ntasks-per-node=1         # one launcher per node
#SBATCH --gres=gpu:4                # GPUs per node
#SBATCH --cpus-per-task=72
#SBATCH --time=01:30:00

source setup_env.sh
export GPUS_PER_NODE=4

head_node_ip=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)

export LAUNCHER="accelerate launch \
    --num_processes $((SLURM_NNODES * GPUS_PER_NODE)) \
    --num_machines $SLURM_NNODES \
    --rdzv_backend c10d \
    --main_process_ip $head_node_ip \
    --main_process_port 29500 \
    "
export SCRIPT="/work/cls/train_classifier.py"
export SCRIPT_ARGS=" \
    --mixed_precision bf16 \
    --output_dir /work/cls/out \
    "

export CMD="$LAUNCHER $TRAIN_FILE $EXTRA_ARGS"
srun $CMD
