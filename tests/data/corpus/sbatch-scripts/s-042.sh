#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=0

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$(expr 20000 + $(echo -n $SLURM_JOBID | tail -c 4))

srun ./accel_exec.sh --main_process_ip   $MASTER_ADDR --main_process_port $MASTER_PORT \
    uv run python fit_accel.py "$@"
