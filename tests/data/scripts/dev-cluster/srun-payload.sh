#!/bin/bash
#SBATCH --job-name=imported-srun
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
#SBATCH -c 1
#SBATCH -t 5
export OMP_NUM_THREADS=1
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$(( 15000 + SLURM_JOB_ID % 17000 ))
srun -l bash -c 'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS
    exec python ../../../../examples/ddp_check.py --from srun "two words"'
