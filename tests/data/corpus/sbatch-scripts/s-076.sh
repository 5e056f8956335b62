#!/usr/bin/env bash
#
# A batch script for the container's multi-GPU torchrun demo on an AMD GPU partition.
#
#SBATCH --job-name=torchrun_demo
#SBATCH --nodes=1
#SBATCH --tasks-per-node=1
#SBATCH --gpus-per-task=8
#SBATCH --output="out_%x_%j.txt"
#SBATCH --partition=gpu-small
#SBATCH --time=00:20:00
#SBATCH --account=project_<your_project_id>

export MIOPEN_USER_DB_PATH=/tmp/${USER}-miopen-${SLURM_JOB_ID}
export MIOPEN_CUSTOM_CACHE_DIR=${MIOPEN_USER_DB_PATH}

srun singularity exec torch_rocm_demo.sif torchrun --standalone --nnodes=1 --nproc_per_node=gpu multigpu_demo.py --total_epochs=8 --save_every=4
