#!/usr/bin/bash

#SBATCH --account=<your_account> 
#SBATCH --job-name=<creative_job_name>
#SBATCH --output=%x_%j.out
#SBATCH --error=%x_%j.err
#SBATCH --ntasks=1
#SBATCH --mem-per-cpu=12G
#SBATCH --partition=accel --gpus=4
#SBATCH --time=01:00:00

module reset
module load TensorFlow/2.13.0-foss-2023a
module list

srun python $SLURM_SUBMIT_DIR/mirrored_fit.py
