#!/usr/bin/bash

#SBATCH --account=<your_account>
#SBATCH --job-name=<your_job_name>
#SBATCH --output=%x_%j.out
#SBATCH --error=%x_%j.err
#SBATCH --partition=accel
#SBATCH --nodes=2
#SBATCH --ntasks=8
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-cpu=6G
#SBATCH --time=01:00:00

module reset
module load CMake/3.26.3-GCCcore-12.3.0
module load Horovod/0.28.1-foss-2023a-CUDA-12.1.1-PyTorch-2.1.2

export OMPI_MCA_btl="^openib"
export OMPI_MCA_pml="ob1"
export HOROVOD_MPI_THREADS_DISABLE=1

srun python $SLURM_SUBMIT_DIR/cifar_hvd.py
