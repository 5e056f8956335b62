#!/bin/bash
#SBATCH --job-name=ddp-mnist     # short name
#SBATCH --nodes=2                # nodes
#SBATCH --ntasks-per-node=4      # tasks per node
#SBATCH --cpus-per-task=6        # cores per task
#SBATCH --mem=64G                # memory per node
#SBATCH --gres=gpu:4             # GPUs per node
#SBATCH --time=00:10:00          # limit

export MASTER_PORT=$(expr 20000 + $(echo -n $SLURM_JOBID | tail -c 4))
export WORLD_SIZE=$(($SLURM_NNODES * $SLURM_NTASKS_PER_NODE))
echo "WORLD_SIZE="$WORLD_SIZE

first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$first
echo "MASTER_ADDR="$MASTER_ADDR

module purge
module load anaconda3/2024.2
conda activate ddp-env

srun python classify_ddp.py --epochs=3
