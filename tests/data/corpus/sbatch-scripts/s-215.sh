#!/bin/bash
#SBATCH --account=<project_number>
#SBATCH --job-name=vit_multinode
#SBATCH --output=vit_multinode_%j.out
#SBATCH --error=vit_multinode_%j.err
#SBATCH --time=02:00:00
#SBATCH --partition=accel
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=64
#SBATCH --mem=400G

set -euo pipefail

WORK_DIR="/cluster/work/projects/<project_number>/<username>/vit_olivia"

ml reset
ml load NRIS/GPU
ml load NCCL/2.26.6-GCCcore-14.2.0-CUDA-12.8.0
ml use /cluster/work/support/pytorch_module
ml load PyTorch/2.8.0

cd "${WORK_DIR}"

mapfile -t nodes < <(scontrol show hostnames "${SLURM_JOB_NODELIST}")
head_node="${nodes[0]}"
export RDZV_ENDPOINT="${head_node}:29611"

echo "head node: ${head_node}, endpoint: ${RDZV_ENDPOINT}"

srun torchrun \
  --nnodes="${SLURM_JOB_NUM_NODES}" \
  --nproc_per_node="${SLURM_GPUS_ON_NODE}" \
  --rdzv_id="${SLURM_JOB_ID}" \
  --rdzv_backend=c10d \
  --rdzv_endpoint="${RDZV_ENDPOINT}" \
  train_vit_ddp.py --epochs 60 --batch-size 1024 --base-lr 0.02
