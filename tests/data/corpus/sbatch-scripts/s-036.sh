#!/bin/sh
#SBATCH -C gpu
#SBATCH -q regular
#SBATCH -n 64
#SBATCH --ntasks-per-node 4
#SBATCH --gpus-per-task 1
#SBATCH -t 06:00:00
#SBATCH -A m0000
#SBATCH --gpu-bind=none
#SBATCH --image=someuser/tensorflow:24.03-tf2-v1
#SBATCH --module=gpu,nccl-plugin
#SBATCH --array=1-50

export TF_CPP_MIN_LOG_LEVEL=2

echo srun --mpi=pmi2 shifter python fit_unfold.py --replica ${SLURM_ARRAY_TASK_ID}
srun --mpi=pmi2 shifter python fit_unfold.py --replica ${SLURM_ARRAY_TASK_ID}
