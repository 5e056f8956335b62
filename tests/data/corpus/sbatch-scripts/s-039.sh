# (submit.sh)
#!/bin/bash -l

# SLURM SUBMIT SCRIPT
#SBATCH --nodes=2             # must match Trainer(num_nodes=...)
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=4   # must match Trainer(devices=...)
#SBATCH --mem=0
#SBATCH --time=0-04:00:00
#SBATCH --signal=SIGUSR1@90

source activate $1

export NCCL_DEBUG=INFO
export PYTHONFAULTHANDLER=1

srun python3 fit_module.py
