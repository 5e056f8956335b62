#!/bin/bash
# Export HF_TOKEN, NUM_NODES, NUM_TRAINERS, PRIMARY_ADDR and PRIMARY_PORT before submitting.
#

# ---------- SBATCH ---------- #
#SBATCH --job-name=ft-multinode
#SBATCH --ntasks-per-node=1
#SBATCH --nodes=$NUM_NODES
#SBATCH --gpus-per-task=4
#SBATCH --cpus-per-task=64

export TORCH_DIST_INIT_BARRIER=0

srun tunekit preprocess recipe.yaml

srun tunekit train recipe.yaml --launcher torchrun -- \
    --nproc_per_node=$NUM_TRAINERS --nnodes=$NUM_NODES \
    --rdzv_id tunekit-cli --rdzv_backend c10d --rdzv_endpoint "${PRIMARY_ADDR}:${PRIMARY_PORT}" --rdzv-conf="join_timeout=1800"
