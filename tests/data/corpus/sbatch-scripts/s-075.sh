#!/bin/bash
#SBATCH --job-name=%RUN_NAME%
#SBATCH --output=%RUN_DIR%/logs/out.log
#SBATCH --error=%RUN_DIR%/logs/err.log
#SBATCH --time=00-2:00:00
#SBATCH --gres=gpu:1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=16
#SBATCH --qos=acc_lab
#SBATCH --partition=acc

echo "starting the job's program"
singularity exec --nv --no-home --pwd /src --bind $RUN_DIR:/src --bind /gpfs:/gpfs $IMAGE_REGISTRY/py-torch.sif python code/run_task.py > $RUN_LOGS/task.log 2>&1

