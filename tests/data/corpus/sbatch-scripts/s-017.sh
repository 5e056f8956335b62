#!/bin/bash
#SBATCH --account=<ACCOUNT>
#SBATCH --job-name=ddp-alps
#SBATCH --time=00:40:00
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --output=logs/slurm-%x-%j.log

set -x
ulimit -c 0

srun -ul --environment=./ngc-torch-app-25.01.toml bash -c "
    . venv-ngc-25.01/bin/activate

    export MASTER_ADDR=\$(scontrol show hostnames \$SLURM_JOB_NODELIST | head -n 1)
    export MASTER_PORT=29511
    export RANK=\$SLURM_PROCID
    export LOCAL_RANK=\$SLURM_LOCALID
    export WORLD_SIZE=\$SLURM_NTASKS
    python train_ddp.py --epochs 5 --bucket-mb 50
"
