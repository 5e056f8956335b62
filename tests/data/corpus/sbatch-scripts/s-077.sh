#!/bin/bash
#SBATCH --job-name=ddp_cifar
#SBATCH --account=project_100200300
#SBATCH --partition=gpu-small
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=14
#SBATCH --gpus-per-node=2
#SBATCH --mem=64G
#SBATCH --time=0:20:00
#SBATCH --output=ddp_cifar-%j.out

module use  /opt/site/containers/ai-modules
module load singularity-bindings

SIF=/scratch/project_100200300/images/torch-rocm-2.5.sif
export SINGULARITYENV_PREPEND_PATH=/user-software/bin

srun singularity exec $SIF bash -c \
    '$WITH_CONDA; \
     source /scratch/project_100200300/venvs/course/bin/activate; \
     python -m torch.distributed.run --standalone --nnodes=1 --nproc_per_node=2 ddp_cifar.py'
