#!/bin/bash

#SBATCH --job-name=fseq-fsdp

#SBATCH --open-mode=append

#SBATCH --nodes=4

#SBATCH --gpus=32

#SBATCH --cpus-per-task=64

#SBATCH --partition=train

#SBATCH--time=12:00:00

srun --label fseq_fsdp_node.sh
