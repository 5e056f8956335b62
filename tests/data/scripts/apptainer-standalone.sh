#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --time=04:00:00
export OMP_NUM_THREADS=8
srun apptainer exec --nv --bind /scratch:/scratch pytorch_24.sif \
    torchrun --standalone --nproc_per_node=4 ../../../examples/ddp_check.py --epochs 10
