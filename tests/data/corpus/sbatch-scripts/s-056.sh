#!/bin/bash
#SBATCH --mem=64g
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=16     # match OMP_NUM_THREADS
#SBATCH --partition=gpuH100x4 # one of the GPU partitions
#SBATCH --account=abcd-site-gpu
#SBATCH --job-name=torchNGC
### GPU options ###
#SBATCH --gpus-per-node=1
#SBATCH --gpus-per-task=1
#SBATCH --gpu-bind=verbose,per_task:1

module reset
module list

echo "job is starting on `hostname`"

apptainer run --nv \
 /sw/external/NGC/pytorch:24.05-py3 python3 tensor_bench.py
