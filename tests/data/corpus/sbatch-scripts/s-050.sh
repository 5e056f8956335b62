#!/bin/bash -x
#SBATCH --job-name=dit-weather
#SBATCH --time=0-01:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=16
#SBATCH --gres=gpu:1
#SBATCH --partition=standard

ml GCCcore/13.3.0 Python/3.12.3-GCCcore-13.3.0

export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}
export SRUN_CPUS_PER_TASK="${SLURM_CPUS_PER_TASK}"

source $HOME/venvs/dit/bin/activate

export CUDA_VISIBLE_DEVICES="0,1,2,3"
export MASTER_PORT=12399
head_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=${head_addr}

torchrun train_dit.py --global-batch-size 64 --epochs 40
