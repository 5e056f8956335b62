#!/bin/bash
#SBATCH --job-name=mds-gpt
#SBATCH -o %x-%j_%N.out
#SBATCH -e %x-%j_%N.err
#SBATCH --partition=PARTITION_NAME
#SBATCH --nodes=NUM_NODES
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --gpus-per-node=8
#SBATCH --time=23:59:59
#SBATCH --exclusive

srun -N NUM_NODES $@
