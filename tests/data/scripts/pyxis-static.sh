#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH -t 12:00:00
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$(( 15000 + SLURM_JOB_ID % 17000 ))
srun --container-image=nvcr.io/nvidia/pytorch:24.01-py3 --container-mounts=/data:/data \
    bash -c 'torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 --node_rank=$SLURM_NODEID \
        --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT ../../../examples/ddp_check.py --lr 3e-4'
