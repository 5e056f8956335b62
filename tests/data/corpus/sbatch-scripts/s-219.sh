#!/bin/bash -l
#SBATCH --job-name Sweep
#SBATCH --output=%j.out
#SBATCH --error=%j.err
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=6
#SBATCH --mem=0
#SBATCH --no-requeue
#SBATCH --time=08:00:00
#SBATCH --chdir=/work/lab/sweeps

conda activate /work/lab/envs/plsweep

srun python sweep_member.py
