#!/bin/bash -l

# SLURM SUBMIT SCRIPT
#SBATCH --nodes=3               # must match Fabric(num_nodes=...)
#SBATCH --ntasks-per-node=4     # must match Fabric(devices=...)
#SBATCH --gres=gpu:4            # GPUs per machine
#SBATCH --mem=0
#SBATCH --time=0-03:00:00

source activate $1

export NCCL_DEBUG=INFO
export PYTHONFAULTHANDLER=1
# export NCCL_SOCKET_IFNAME=^docker0,lo

srun python fabric_train.py
