#!/bin/bash
#SBATCH --account=project_100600700
#SBATCH --partition=gpu-test
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --mem=0
#SBATCH --time=15
#SBATCH --gres=gpu:v100:4

module purge
module load pytorch/2.1  # older modules had launcher issues

export RDZV_HOST=$(hostname)
export RDZV_PORT=29411

srun python3 -m torch.distributed.run \
    --nnodes=$SLURM_JOB_NUM_NODES \
    --nproc_per_node=4 \
    --rdzv_id=$SLURM_JOB_ID \
    --rdzv_backend=c10d \
    --rdzv_endpoint="$RDZV_HOST:$RDZV_PORT" \
    lit_mnist.py --gpus=4 --nodes=2 --epochs=50
