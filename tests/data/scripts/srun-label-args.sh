#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH -c 8
#SBATCH -t 1:00:00
# usage: sbatch srun-label-args.sh CONFIG
set -x
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$(( 15000 + SLURM_JOB_ID % 17000 ))
CKPT=$SCRATCH/ckpt
mkdir -p "$CKPT"
srun -l -u --cpu-bind=cores podman-hpc run --rm --gpu --nccl -v "$CKPT":/ckpt nersc/pytorch:25.02.01 \
    python -u ../../../examples/ddp_check.py --config "$1" --out /ckpt "$@"
