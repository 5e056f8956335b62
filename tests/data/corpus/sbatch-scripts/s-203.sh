#!/bin/sh
#SBATCH -J t5tr          # job name
#SBATCH -o t5tr.o%j      # stdout (%j is the job id)
#SBATCH -e t5tr_err.o%j  # stderr
#SBATCH -N 1
#SBATCH --ntasks-per-node=1
#SBATCH --gpus=2
#SBATCH -c 32
#SBATCH --mem=16G
#SBATCH -t 00:45:00
#SBATCH -p short --qos=short


echo NTASKS: $SLURM_NTASKS
echo CPUS_PER_TASK: $SLURM_CPUS_PER_TASK
echo NNODES: $SLURM_NNODES

PS=1
WORKERS=$((SLURM_NTASKS-PS))

module purge
module load cesga/system miniconda3/22.11
eval "$(conda shell.bash hook)"
conda deactivate
source $STORE/envs/ds-translate/bin/activate

srun deepspeed --num_gpus 2 finetune_t5_translate.py --epochs 3
