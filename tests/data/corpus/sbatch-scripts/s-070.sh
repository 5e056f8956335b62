#!/bin/bash
#SBATCH --time=00:20:00
#SBATCH --job-name=vitprobe
#SBATCH --output=%x_%A.out
#SBATCH --error=%x_%A.err
#SBATCH --partition=gpu
#SBATCH --gres=gpu:2
##SBATCH --ntasks=2
##SBATCH --mem-per-cpu=8000

torchrun --nnodes=1:1 --nproc_per_node=2 --rdzv_id=77 --rdzv_backend=c10d --rdzv_endpoint=localhost:6100 probe_vit.py


