#!/bin/bash
#SBATCH --job-name=gpt_7b_bench
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=32
#SBATCH --hint=nomultithread
#SBATCH --gres=gpu:4
#SBATCH --time=00:40:00
#SBATCH --output=%x-%j.out
#SBATCH --account=benchlab
#SBATCH --partition=booster

set -x -e
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK}

if [ "x$BENCH_ROOT" = "x" ]; then
    echo "BENCH_ROOT is not set" >&2
    exit 1
fi
source $BENCH_ROOT/env/vars.bash
source "$BENCH_ROOT"/env/activate.bash || exit 1

OUT="$RESULTS_DIR"/7B/"$SLURM_JOB_ID"
CKPT=$OUT/ckpt
LOGS=$OUT/logs
mkdir -p $LOGS
cd "$TRAINER_REPO"

MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
MASTER_ADDR="${MASTER_ADDR}i"
MASTER_ADDR="$(nslookup "$MASTER_ADDR" | grep -oP '(?<=Address: ).*')"
MASTER_PORT=6777

GPUS_PER_NODE=4
NNODES=$SLURM_JOB_NUM_NODES
MODEL_ARGS=" \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --seq-length 2048 --micro-batch-size 1 --global-batch-size 256 \
    --vocab-file $VOCAB_FILE --merge-file $MERGE_FILE --bf16 \
    "
export LAUNCHER="python -u -m torch.distributed.run \
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES \
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
    --rdzv_backend c10d \
    --max_restarts 0 \
    --tee 3 \
    "
export CMD=" \
    $(pwd)/pretrain_gpt.py \
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 \
    $MODEL_ARGS \
    --save $CKPT \
    --data-path $DATA_PATH \
    "
if [ "$RESUME" = true ] ; then
    export CMD="$CMD --load $CKPT"
fi

export NCCL_SOCKET_IFNAME=ib0
clear; srun --jobid $SLURM_JOBID bash -c '$LAUNCHER --node_rank $SLURM_PROCID $CMD' 2>&1 | tee -a "$LOGS"/main_log.txt
