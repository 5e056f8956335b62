#!/bin/bash
#SBATCH --job-name=mgpu2
#SBATCH --partition=batch
#SBATCh --nodes=1
#SBATCH --gpus=2
#SBATCH --mem=16gb


export MASTER_PORT=12377
export WORLD_SIZE=1
echo "NODELIST="${SLURM_NODELIST}
head_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$MASTER_ADDR
echo "MASTER_ADDR="$MASTER_ADDR
srun python3 spawn_train.py --gpu_devices 0 1 --batch_size 256
