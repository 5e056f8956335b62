#!/bin/bash

#SBATCH --job-name=srun-2n
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=16
#SBATCH --gres=gpu:4
#SBATCH --time=0:20:00
#SBATCH --exclusive
#SBATCH --partition=<PARTITION>
#SBATCH --output=%x-%j.out

echo "START: $(date)"
set -eo pipefail
set -x

LOG_FILE="run_log.txt"
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=6666
export WORLD_SIZE=$SLURM_NPROCS

LAUNCHER="python -u"
PROGRAM="nccl_probe.py --iters 20"
export CMD="$LAUNCHER $PROGRAM"
echo $CMD

SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    --jobid $SLURM_JOB_ID \
    "
srun $SRUN_ARGS bash -c "RANK=\$SLURM_PROCID LOCAL_RANK=\$SLURM_LOCALID $CMD" 2>&1 | tee -a $LOG_FILE
