#!/bin/bash
#SBATCH --account=your_project_number
#SBATCH --partition=gpu-small
#SBATCH --gpus-per-node=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=7
#SBATCH --mem-per-gpu=48G
#SBATCH --time=0:10:00


module purge
module use /opt/site/training/modules/ai-2024/
module load singularity-userfs singularity-bits

CONTAINER=/opt/site/containers/images/torch-rocm-2.6.sif

srun singularity exec $CONTAINER  python ./profile_one_gpu.py --num_workers=4
