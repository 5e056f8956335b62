#!/bin/bash
#SBATCH -N 1
#SBATCH --gpus-per-node=4
#SBATCH -c 32
#SBATCH -t 2:00:00
cd "$SLURM_SUBMIT_DIR"
python -m torch.distributed.launch --nproc_per_node=4 --use_env ../../../examples/ddp_check.py --fp16
