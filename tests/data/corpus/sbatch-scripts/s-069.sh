#!/bin/bash
#SBATCH --time=2-00:00:00  # wall clock, D-HH:MM:SS
#SBATCH --output=/store/jdoe/runs/%j.out
#SBATCH --error=/store/jdoe/runs/%j.err
#SBATCH --open-mode=append
#SBATCH --job-name=lmtrain-7b
#SBATCH --partition=h100-big
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=48
#SBATCH --mem=400G
#SBATCH --gres=gpu:4

scontrol show job ${SLURM_JOB_ID}
nvidia-smi
export NCCL_TIMEOUT=1200000
export WANDB_INIT_TIMEOUT=300

cd /store/jdoe/lmkit
source activate lmkit-env

torchrun --nproc_per_node=4 --master_port=29588 tools/train_lm.py configs/lm-7b.yaml --resume_from="/store/jdoe/ckpt/latest/"
