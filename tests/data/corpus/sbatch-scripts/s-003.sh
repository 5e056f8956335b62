#!/bin/bash
#SBATCH --job-name=orbit-sft
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --gres=gpu:8
#SBATCH --partition=h100-main
#SBATCH --output=./logs/%x-%j.out
#SBATCH --err=./logs/%x-%j.err
#SBATCH --requeue

module load cuda/12.2
set -x -e
source orbitenv/bin/activate

MODEL=$1
STAGE=$2
VARIANT=$3
ACCEL_CFG=$4
MORE_ARGS=$5

N_NODES=$SLURM_NNODES
GPUS_PER_NODE=8
WORLD=$(($N_NODES*$GPUS_PER_NODE))
CFG=recipes/$MODEL/$STAGE/cfg_$VARIANT.yaml
ACCUM=$(grep 'grad_accum' $CFG | awk '{print $2}')

IFS=' ' read -ra EXTRA <<< "$MORE_ARGS"
for a in "${EXTRA[@]}"; do
    if [[ "$a" == "--grad_accum="* ]]; then
        ACCUM="${a#*=}"
        break
    fi
done

MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6111

export CMD=" \
    src/orbit/$STAGE.py $CFG $MORE_ARGS
    "

export LAUNCHER="HF_HUB_OFFLINE=1 ACCELERATE_LOG_LEVEL=info accelerate launch \
    --config_file recipes/accel/$ACCEL_CFG.yaml  \
    --gradient_accumulation_steps $ACCUM \
    --num_machines $N_NODES \
    --num_processes $WORLD \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --machine_rank \$SLURM_PROCID \
    --rdzv_conf "rdzv_backend=c10d,rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT" \
    --max_restarts 1 \
    --tee 3 \
    "

export NCCL_ASYNC_ERROR_HANDLING=1
SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    "

clear; srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c "$LAUNCHER --role \$SLURMD_NODENAME: $CMD" 2>&1
