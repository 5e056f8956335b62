#!/bin/bash
#SBATCH --job-name=orbit_train
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --gres=gpu:8
#SBATCH --partition=h100-main  # site partition
#SBATCH --output=./logs/%x-%j.out
#SBATCH --error=./logs/%x-%j.err
#SBATCH --requeue

set -x -e
source orbitenv/bin/activate

STAGE=sft
CFG=recipes/orbit-7b/sft/cfg_v01.yaml
ACCEL_CFG=zero3
MORE_ARGS=""
ACCUM=$(grep 'grad_accum' $CFG | awk '{print $2}')
BASE=$(grep 'model_name_or_path:' $CFG | awk '{print $2}')

N_NODES=$SLURM_NNODES
GPUS_PER_NODE=8
WORLD=$(($N_NODES*$GPUS_PER_NODE))
HOSTS=($(scontrol show hostnames $SLURM_JOB_NODELIST))
MASTER_ADDR=${HOSTS[0]}
MASTER_PORT=6999
TRAIN_HOSTS=("${HOSTS[@]}")

if grep -qE '^\s*use_vllm:\s*true' "$CFG"; then
     TRAIN_HOSTS=("${HOSTS[@]:0:$((N_NODES - 1))}")
     GEN_HOST=${HOSTS[-1]}
     WORLD=$((WORLD - GPUS_PER_NODE))
     N_NODES=$((N_NODES - 1))
     srun --nodes=1 --ntasks=1 --nodelist=$GEN_HOST genserve --model $BASE &
     MORE_ARGS="$MORE_ARGS --gen_server_host=$GEN_HOST"
fi

export CMD=" \
    src/orbit/$STAGE.py --config $CFG $MORE_ARGS
    "
export LAUNCHER="ACCELERATE_LOG_LEVEL=info accelerate launch \
    --config_file recipes/accel/$ACCEL_CFG.yaml  \
    --gradient_accumulation_steps $ACCUM \
    --num_machines $N_NODES \
    --num_processes $WORLD \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --machine_rank $SLURM_PROCID \
    --rdzv_backend=c10d \
    --max_restarts 1 \
    --tee 3 \
    "
HOSTLIST=$(IFS=,; echo "${TRAIN_HOSTS[*]}")
SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    --nodes=$N_NODES \
    --ntasks=$N_NODES \
    --nodelist=$HOSTLIST
    "
srun $SRUN_ARGS bash -c "$LAUNCHER $CMD" 2>&1
