#!/bin/bash

#SBATCH --job-name=torchrun-2n
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=64
#SBATCH --gres=gpu:8
#SBATCH --time=0:20:00
#SBATCH --exclusive
#SBATCH --partition=<PARTITION>
#SBATCH --output=%x-%j.out

echo "START: $(date)"
set -eo pipefail
set -x

LOG_FILE="run_log.txt"
GPUS_PER_NODE=8
NNODES=$SLURM_NNODES
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6888

LAUNCHER="python -u -m torch.distributed.run \
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES \
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
    --rdzv_backend c10d \
    --max_restarts 0 \
    --role `hostname -s`: \
    --tee 3 \
    "

PROGRAM="\
pretrain_small.py --steps 500 \
"

export CMD="$LAUNCHER $PROGRAM"
echo $CMD

SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    "
srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c "$CMD" 2>&1 | tee -a $LOG_FILE
