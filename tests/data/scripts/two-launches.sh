#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=4
srun python ../../../examples/ddp_check.py --stage 1
srun python ../../../examples/ddp_check.py --stage 2
