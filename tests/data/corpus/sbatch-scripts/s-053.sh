#!/bin/sh
#SBATCH --job-name=dialog_dist
#SBATCH --output=/checkpoint/someuser/dialog/stdout.%j
#SBATCH --error=/checkpoint/someuser/dialog/stderr.%j
#SBATCH --partition=learnfair
#SBATCH --nodes=2
#SBATCH --time=1:00:00
#SBATCH --signal=SIGINT
#SBATCH --gres=gpu:8
#SBATCH --ntasks-per-node=8
#SBATCH --mem=64G
#SBATCH --cpus-per-task=10
srun python -u -m chatkit.scripts.dist_train \
  -m transformer/generator -t dailydialog --dict-file /checkpoint/someuser/dialog/dict --port 61444
