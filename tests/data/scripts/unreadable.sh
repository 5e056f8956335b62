#!/bin/bash
#SBATCH -N 1
export NOTE="an unfinished quote
srun python ../../../examples/ddp_check.py
