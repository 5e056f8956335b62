#!/bin/bash
#SBATCH --account=project_462009911
#SBATCH --partition=standard-g
#SBATCH --time=2:00:00
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=56
#SBATCH --gpus-per-node=8
#SBATCH --mem=480G


# bind mounts and CPE bits for the container
module use /appl/local/training/modules/AI-20250212
module load singularity-userfilesystems singularity-CPEbits

CONTAINER=/appl/local/containers/sif-images/lumi-pytorch-rocm-6.2.4-python-3.12-pytorch-v2.7.0.sif

srun singularity exec $CONTAINER bash -c '$WITH_CONDA && source venv_vit/bin/activate && python -m torch.distributed.run --standalone --nnodes=1 --nproc_per_node=8 vit_train_ddp.py --data /flash/project_462009911/imgs'
