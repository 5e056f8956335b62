#!/bin/bash

#SBATCH --nodes=8 # nodes
#SBATCH --job-name=mlm_gpt # job name
#SBATCH --gpus-per-node=8 # GPUs per node
#SBATCH --gres=gpu:8 # reserved GPUs
#SBATCH --exclusive
#SBATCH --wait-all-nodes=1

set -ex;

: "${TP:=4}"
: "${PP:=2}"
: "${LAYERS:=24}"
: "${HIDDEN:=2048}"
: "${HEADS:=16}"
: "${SEQ:=2048}"
: "${MBS:=2}"
: "${GBS:=256}"
: "${DATA_DIR:=/lustre/gpt}"
: "${IMAGE:=$(pwd)/mlm-train.sqsh}"
: "${DATA_MOUNT:=$DATA_DIR:$DATA_DIR}"

export FI_PROVIDER=efa
export CUDA_DEVICE_MAX_CONNECTIONS=1

declare -a ARGS=(
    --container-image $IMAGE
    --container-mounts $DATA_MOUNT
)

declare -a TORCHRUN_ARGS=(
    --nproc_per_node=$SLURM_GPUS_PER_NODE \
    --nnodes=$SLURM_JOB_NUM_NODES \
    --rdzv_id=$SLURM_JOB_ID \
    --rdzv_backend=c10d \
    --rdzv_endpoint=$(hostname):29601 \
)

declare -a MODEL_ARGS=(
        --num-layers $LAYERS \
        --hidden-size $HIDDEN \
        --num-attention-heads $HEADS \
        --seq-length $SEQ \
        --micro-batch-size $MBS \
        --global-batch-size $GBS \
)

srun -l "${ARGS[@]}" python -m torch.distributed.run "${TORCHRUN_ARGS[@]}" /workspace/mlm/pretrain_gpt.py \
        --tensor-model-parallel-size $TP \
        --pipeline-model-parallel-size $PP \
        "${MODEL_ARGS[@]}" \
        --train-samples 5000000 \
        --lr 3.0e-4 \
        --data-path "${DATA_DIR}/corpus_text_document" \
        --vocab-file "${DATA_DIR}/vocab.json" \
        --merge-file "${DATA_DIR}/merges.txt" \
        --bf16
