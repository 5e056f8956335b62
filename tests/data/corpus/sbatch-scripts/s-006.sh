#!/bin/bash
#SBATCH --job-name=poly-13B
#SBATCH --partition=gpu_big
#SBATCH --constraint=h100
#SBATCH --qos=qos_long
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=48
#SBATCH --hint=nomultithread
#SBATCH --gres=gpu:8
#SBATCH --time 20:00:00
#SBATCH --output=%x-%j.out
#SBATCH --account=poly@h100

set -x -e
source $WORKDIR/poly/env/start-poly

RUN=main
OUT_ROOT=$SCRATCHDIR/poly-13B
CKPT=$OUT_ROOT/ckpt/$RUN
LOGDIR=$OUT_ROOT/logs/$RUN
mkdir -p $LOGDIR
CODE=$WORKDIR/poly/Trainer
cd $CODE

MIX_JSON=$WORKDIR/poly/data/mix.json
TRAIN_LIST=$CODE/data/train-list.txt
python tools/make_split_list.py --mix $MIX_JSON --split train --out $TRAIN_LIST

MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6333
GPUS_PER_NODE=8
NNODES=$SLURM_NNODES

MODEL_ARGS=" \
    --partition-method 'type:block|embed' \
    --layers 40 \
    --hidden 5120 \
    --micro-batch 2 \
    --global-batch 1024 \
    --bf16 \
    "
ds_cfg="./ds.$SLURM_JOB_ID.json"
cat <<EOT > $ds_cfg
{
  "train_micro_batch_size_per_gpu": 2,
  "zero_optimization": {"stage": 0},
  "bf16": {"enabled": true}
}
EOT

export LAUNCHER="python -u -m torch.distributed.run \
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES \
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
    --rdzv_backend c10d \
    --max_restarts 0 \
    --tee 3 \
    "
export CMD=" \
    `pwd`/pretrain_poly.py \
    --tp 4 --pp 4 \
    $MODEL_ARGS \
    --save $CKPT --load $CKPT \
    --train-list $TRAIN_LIST \
    --deepspeed --deepspeed_config ${ds_cfg} \
    "
export NCCL_ASYNC_ERROR_HANDLING=1
SRUN_ARGS=" \
    --wait=60 \
    --kill-on-bad-exit=1 \
    "

clear; srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c "$LAUNCHER --node_rank \$SLURM_PROCID $CMD" 2>&1 | tee -a $LOGDIR/main_log.txt
