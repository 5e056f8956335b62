#!/bin/bash
#SBATCH --account=project_100400500
#SBATCH --partition=gpu-standard
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=1    # one process; it uses every GPU of the node itself
#SBATCH --cpus-per-task=48   # 6 cores per GPU
#SBATCH --mem-per-gpu=48G
#SBATCH --time=0:10:00


srun singularity exec /opt/site/images/jax-rocm-0.4.sif bash -c "\$WITH_CONDA; source /projects/p100400500/venv/bin/activate; python3 /projects/p100400500/jaxdemo/scripts/pmap_demo.py"
