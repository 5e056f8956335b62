#!/bin/bash
#SBATCH --gpus-per-task=l40s:1
#SBATCH --cpus-per-task=6
#SBATCH --ntasks-per-node=4
#SBATCH --nodes=2
#SBATCH --mem=64G
#SBATCH --time=00:20:00

module --quiet purge
module load miniconda/3
conda activate torchenv

srun --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 bash -c \
   'mkdir -p $SLURM_TMPDIR/data && \
    cp -r --target-directory $SLURM_TMPDIR/data/ /datasets/cifar100/*'

export MASTER_PORT=$(expr 20000 + $(echo -n $SLURM_JOBID | tail -c 4))
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
unset CUDA_VISIBLE_DEVICES

srun python ddp_cifar.py
