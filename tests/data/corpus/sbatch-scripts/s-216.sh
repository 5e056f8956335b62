#!/usr/bin/env -S bash -e
#SBATCH --account=project_465009911
#SBATCH --partition=standard-g
#SBATCH --job-name=ddp_env_demo
#SBATCH --time=00:20:00
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --tasks-per-node=8
#SBATCH --cpus-per-task=7
#SBATCH --mem=480G
#SBATCH --output=logs/%x.%j.txt

export MASTER_PORT=29617
export MASTER_ADDR=$(scontrol show hostname "$SLURM_NODELIST" | head -1)

export SINGULARITY_BINDPATH="/scratch/project_465009911,/flash/project_465009911,$SINGULARITY_BINDPATH"

# train_ddp_env.py turns SLURM_PROCID/SLURM_LOCALID into RANK/LOCAL_RANK itself
m=fe
gcd_cpus="0x${m}000000000000,0x${m}00000000000000,0x${m}0000,0x${m}000000,0x${m},0x${m}00,0x${m}00000000,0x${m}0000000000"

srun --cpu-bind=mask_cpu:$gcd_cpus singularity exec torch_rocm_min.sif python3 train_ddp_env.py --epochs 8
