#!/bin/bash

#SBATCH --job-name=pl-2n
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --gres=gpu:8
#SBATCH --time=0:20:00
#SBATCH --exclusive
#SBATCH --partition=<PARTITION>
#SBATCH --output=%x-%j.out

echo "START: $(date)"
set -eo pipefail
set -x

LOG_FILE="run_log.txt"

LAUNCHER="python -u"
PROGRAM="fit_lit.py --trainer.num_nodes 2 --trainer.devices 8"
export CMD="$LAUNCHER $PROGRAM"
echo $CMD

SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    --jobid $SLURM_JOB_ID \
    "
srun $SRUN_ARGS bash -c "$CMD" 2>&1 | tee -a $LOG_FILE
