#!/usr/bin/env -S bash -e
#SBATCH --job-name=ddp_env_demo
#SBATCH --nodes=2
#SBATCH --tasks-per-node=8
#SBATCH --cpus-per-task=7
#SBATCH --gpus-per-node=8
#SBATCH --mem=480G
#SBATCH --output="out_%x_%j.txt"
#SBATCH --partition=standard-g
#SBATCH --time=00:20:00
#SBATCH --account=project_465009911

# rendezvous for the PyTorch process group
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=29617

# file systems visible in the container
export SINGULARITY_BINDPATH="/pfs,/scratch,/projappl,/project,/flash,/appl,$SINGULARITY_BINDPATH"

# "closest" CPU cores for each GCD
c=fe
bind_mask="0x${c}000000000000,0x${c}00000000000000,0x${c}0000,0x${c}000000,0x${c},0x${c}00,0x${c}00000000,0x${c}0000000000"

srun --cpu-bind=mask_cpu:$bind_mask singularity exec torch_rocm_min.sif python3 train_ddp_env.py --epochs 8
