# Not working yet: hangs on the first host.
# Adapted from a university cluster's PyTorch page.

#!/bin/bash
#SBATCH --job-name=mlm_two_node
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --hint=nomultithread
#SBATCH --gres=gpu:4
#SBATCH --time 00:30:00
#SBATCH --output=%x_%j.out
#SBATCH --output=%x-%j.out
#SBATCH --account=xyz@gpu

set -x -e
source $WORKDIR/env/start-prod
cd $WORKDIR/code/mlm

CKPT=$WORKDIR/models/mlm-350m/release/
DATA=$WORKDIR/data/web-10k/mlm_text_document
GPUS_PER_NODE=4
NNODES=2

MASTER_ADDR=`/bin/hostname -s`
OTHERS=`scontrol show hostnames $SLURM_JOB_NODELIST | grep -v $MASTER_ADDR`
HOSTLIST="$MASTER_ADDR $OTHERS"
MASTER_PORT=12399

MODEL_ARGS=" \
    --num-layers 24 \
    --hidden-size 1024 \
    --micro-batch-size 4 \
    --fp16 \
    "

NODE_RANK=0
for node in $HOSTLIST; do
    ssh -q $node \
        python -m torch.distributed.launch \
            --nproc_per_node $GPUS_PER_NODE \
            --nnodes $NNODES \
            --node_rank $NODE_RANK \
            --master_addr $MASTER_ADDR \
            --master_port $MASTER_PORT \
            `pwd`/pretrain_mlm.py \
            $MODEL_ARGS \
            --load $CKPT \
            --data-path $DATA
    NODE_RANK=$((NODE_RANK+1))
done
wait
