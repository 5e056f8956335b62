#!/bin/bash
#SBATCH --qos students_low
#SBATCH -c 6
##SBATCH --gres=gpu:1
#SBATCH --mem=16GB

srun singularity exec --nv /mnt/shared/home/jdoe/images/agent_sim.sif python3 -u ./$1
