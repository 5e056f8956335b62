#!/bin/bash
#SBATCH --time=01:00:00  # wall clock, D-HH:MM:SS also accepted
#SBATCH --output=/lab/work/jdoe/runs/%j.out
#SBATCH --error=/lab/work/jdoe/runs/%j.err
#SBATCH --open-mode=append
#SBATCH --job-name=lmtrain
#SBATCH --partition=gpu-a100
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gres=gpu:2

scontrol show job ${SLURM_JOB_ID}
nvidia-smi
export NCCL_TIMEOUT=1200000
export WANDB_INIT_TIMEOUT=300

cd $WORK/lmkit
source activate lmkit-env

torchrun --nproc_per_node=2 --master_port=29577 tools/train_lm.py configs/lm-300m.yaml --resume_from="/lab/work/jdoe/ckpt/step12000/"
