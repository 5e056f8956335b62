#!/bin/bash

#SBATCH --job-name=accel-2n
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
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
ACCEL_CFG=accel.yaml
GPUS_PER_NODE=8
NNODES=$SLURM_NNODES
NPROCS=$(($NNODES * $GPUS_PER_NODE))

MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6555

LAUNCHER="python -u -m accelerate.commands.launch \
    --rdzv_conf "rdzv_backend=c10d,rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT" \
    --config_file $ACCEL_CFG \
    --num_processes $NPROCS \
    --num_machines $NNODES \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --machine_rank \$SLURM_PROCID \
    --role \$(hostname -s|tr -dc '0-9'): --tee 3 \
    "
PROGRAM="allreduce_probe.py"
export CMD="$LAUNCHER $PROGRAM"
echo $CMD

SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    --jobid $SLURM_JOB_ID \
    "
srun $SRUN_ARGS bash -c "$CMD" 2>&1 | tee -a $LOG_FILE
