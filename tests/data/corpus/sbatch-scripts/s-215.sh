#!/bin/bash
#SBATCH --job-name=vit_3n
#SBATCH --account=<project_number>
#SBATCH --partition=accel
#SBATCH --time=02:00:00
#SBATCH --nodes=3
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=64
#SBATCH --mem=400G
#SBATCH --output=vit_3n_%j.log

set -euo pipefail

ml purge
ml load CUDA/12.6.0 NCCL/2.23.4-GCCcore-13.3.0-CUDA-12.6.0
ml use /cluster/projects/<project_number>/easybuild/modules
ml load torch-ddp/2.7.1

cd /cluster/work/projects/<project_number>/<username>/vit_runs

mapfile -t hosts < <(scontrol show hostnames "${SLURM_JOB_NODELIST}")
export TORCH_RDZV="${hosts[0]}:29611"
echo "${#hosts[@]} hosts, rendezvous on ${TORCH_RDZV}"

srun torchrun \
  --rdzv_backend=c10d --rdzv_endpoint="${TORCH_RDZV}" --rdzv_id="vit-${SLURM_JOB_ID}" \
  --nnodes="${SLURM_JOB_NUM_NODES}" --nproc_per_node="${SLURM_GPUS_ON_NODE}" \
  train_vit_ddp.py --epochs 60 --global-batch 1024 --lr 0.02
