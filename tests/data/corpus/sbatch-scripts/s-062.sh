#!/bin/bash
#SBATCH --job-name=nt_smol
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=48
#SBATCH --exclusive
#SBATCH --gpus-per-node=8
#SBATCH --partition=h100-main
#SBATCH --output=logs/20250101-%x-%j.out
#SBATCH --qos=normal
#SBATCH --wait-all-nodes=1

set -x -e

echo "Slurm script path: $(scontrol show job $SLURM_JOB_ID | grep -oP 'Command=\K[^ ]+')"

export HOSTNAMES=`scontrol show hostnames "$SLURM_JOB_NODELIST"`
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=6111
export COUNT_NODE=`scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`
export CUDA_DEVICE_MAX_CONNECTIONS=1
export WANDB_MODE=disabled

CMD="run_pretrain.py --config-file configs/smol-360m.yaml"

echo "PyTorch version: $(python -c 'import torch; print(torch.__version__)')"
echo "CUDA build: $(python -c 'import torch; print(torch.version.cuda)')"

LAUNCHER="torchrun \
    --nproc_per_node 8 \
    --nnodes $COUNT_NODE \
    --rdzv_backend c10d \
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
    --max_restarts 0 \
    --tee 3 \
    "

srun -u bash -c "$LAUNCHER $CMD"
