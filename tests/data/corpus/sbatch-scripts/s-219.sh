#!/bin/bash -l
#SBATCH --job-name Sweep
#SBATCH --chdir=/work/lab/sweeps
#SBATCH --partition=gpu
#SBATCH --time=08:00:00
#SBATCH --no-requeue
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=6
#SBATCH --mem=0
#SBATCH --output=%j.out
#SBATCH --error=%j.err

conda activate /work/lab/envs/plsweep

srun python sweep_member.py
