#!/bin/bash

#SBATCH --job-name=multinode-fsdp
#SBATCH -D .
#SBATCH --output=O-%x.%j
#SBATCH --error=E-%x.%j
#SBATCH --nodes=2                   # nodes
#SBATCH --ntasks-per-node=1         # one launcher per node
#SBATCH --gres=gpu:4                # GPUs per node
#SBATCH --cpus-per-task=64
#SBATCH --time=00:45:00

source setup_env.sh
export GPUS_PER_NODE=4

head_node_ip=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export PROJ_DIR="${PROJ_DIR:-/work/seg}"

export LAUNCHER="accelerate launch \
    --config_file ${PROJ_DIR}/cfg/fsdp_shard.yaml \
    --num_processes $((SLURM_NNODES * GPUS_PER_NODE)) \
    --num_machines $SLURM_NNODES \
    --rdzv_backend c10d \
    --main_process_ip $head_node_ip \
    --main_process_port 29555 \
    "
export SCRIPT="${PROJ_DIR}/train_seg.py"
export SCRIPT_ARGS=" \
    --mixed_precision bf16 \
    --output_dir ${PROJ_DIR}/out \
    "

export CMD="$LAUNCHER $SCRIPT $SCRIPT_ARGS" 
srun $CMD
