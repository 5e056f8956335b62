#!/bin/sh
#SBATCH --job-name=t5-enfr
#SBATCH --time=00:45:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --gpus=2
#SBATCH --mem=16G
#SBATCH --partition=gpu-short --qos=gpu_short
#SBATCH --output=t5-enfr-%j.log

echo "job $SLURM_JOB_ID: $SLURM_NNODES node(s), $SLURM_NTASKS task(s), $SLURM_CPUS_PER_TASK cpus each"

loader_threads=$((SLURM_CPUS_PER_TASK / 4))

module load anaconda3/2023.09
eval "$(conda shell.bash hook)"
conda activate $STORE/envs/ds-translate

srun deepspeed --num_gpus=2 finetune_t5_translate.py --epochs 3
