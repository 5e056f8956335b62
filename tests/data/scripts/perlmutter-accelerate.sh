#!/bin/bash
#SBATCH -A m4242_g
#SBATCH -C gpu
#SBATCH -q regular
#SBATCH -t 00:30:00
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH -c 128
#SBATCH --image=nersc/pytorch:25.02.01
#SBATCH --module=gpu,nccl-plugin

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
export OMP_NUM_THREADS=8

srun shifter bash -c "accelerate launch --multi_gpu --mixed_precision=bf16 \
    --num_processes=$((SLURM_JOB_NUM_NODES * 4)) --num_machines=$SLURM_JOB_NUM_NODES \
    --machine_rank=\$SLURM_NODEID --main_process_ip=$MASTER_ADDR --main_process_port=$MASTER_PORT \
    ../../../examples/ddp_check.py"
