#!/bin/bash



#SBATCH --account=lmlab
#SBATCH --constraint=h100
#SBATCH --job-name=lm_small
#SBATCH --nodes=2
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-gpu=12
#SBATCH --time=2-00:00:00
#SBATCH --partition=learn
#SBATCH --mem=0

#SBATCH --output=/checkpoint/lmlab/runs/lm_small/logs/%j/%j.stdout
#SBATCH --error=/checkpoint/lmlab/runs/lm_small/logs/%j/%j.stderr

#SBATCH --open-mode=append
#SBATCH --signal=USR2@120
#SBATCH --distribution=block

eval "$(/opt/conda/bin/conda shell.bash hook)"
source activate /checkpoint/lmlab/envs/lm

cd /checkpoint/lmlab/runs/lm_small/code

export OMP_NUM_THREADS=1
export LAUNCH_WITH="SBATCH"
export DUMP_DIR=/checkpoint/lmlab/runs/lm_small
srun  -n 16 -N 2 python -u -m apps.lm.train config=$DUMP_DIR/base_config.yaml
