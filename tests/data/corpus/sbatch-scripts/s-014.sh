#!/bin/bash
#SBATCH --job-name=pl-cifar       # short name
#SBATCH --nodes=1                # nodes
#SBATCH --ntasks-per-node=4      # one task per GPU
#SBATCH --cpus-per-task=8        # cores per task
#SBATCH --mem-per-cpu=4G         # memory per core
#SBATCH --time=00:15:00          # limit
#SBATCH --gres=gpu:4             # GPUs per node
#SBATCH --constraint=h100
#SBATCH --reservation=gpuclass   # workshop only

module purge
module load anaconda3/2024.2
conda activate /scratch/network/someuser/envs/lit

export PL_TORCH_DISTRIBUTED_BACKEND=nccl

srun python fit_cifar.py
