#!/bin/bash
#SBATCH --job-name=seg-multi            # job name
#SBATCH --nodes=N                       # number of nodes (N to be chosen)
#SBATCH --ntasks-per-node=4             # one task per GPU
#SBATCH --gres=gpu:4                    # GPUs per node
#SBATCH --cpus-per-task=10              # cores per task (4 x 10 = the whole node)
#SBATCH --hint=nomultithread            # physical cores only
#SBATCH --time=02:00:00                 # maximum run time
#SBATCH --output=seg-multi%j.out        # output file
#SBATCH --error=seg-multi%j.out         # error file, same as the output

# start from a clean environment
module purge

# the site's PyTorch module
module load pytorch-gpu/py3/2.3.1

# echo the commands
set -x

# one process per GPU; ranks come from the SLURM_* variables
srun python -u segment_train.py --epochs 30 --batch-size 48
