#!/bin/bash
#SBATCH --exclusive
#SBATCH --job-name=lm-ds-finetune
#SBATCH --output=logs/%x_%j.out
#SBATCH --nodes 1

: "${APPS:=/lustre/apps}"
: "${IMAGE:=$APPS/ds-train.sqsh}"
: "${SHARED:=/lustre}"
: "${CORPUS:=web_subset}"
: "${DATA_PATH:=$SHARED/$CORPUS}"
: "${MODEL_DIR:=$SHARED/models}"

MBS=8
GBS=128
TP=2
PP=2

declare -a ARGS=(
    --container-image ${IMAGE}
    --container-mounts /lustre
)
declare -a DIST_ARGS=(
    --num_nodes ${NUM_NODES} \
    --num_gpus ${NUM_GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR}
)
declare -a CONVERT_ARGS=(
    --num-shards 2
    --src ${MODEL_DIR}/base-7b-hf
    --save ${MODEL_DIR}/base-7b-ds-T${TP}P${PP}
)
declare -a COMMON_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --data-path $DATASET_PATH
    --deepspeed_config ./ds_cfg/finetune.json
    --deepspeed
    --bf16
)

if [ "$1" = "convert" ]; then
    TASK_ARGS=${PWD}/../ds-trainer/tools/convert_hf.py ${CONVERT_ARGS}
else
    TASK_ARGS=${PWD}/../ds-trainer/finetune_lm.py --load ${DS_CKPT_PATH}
fi

srun -l "${ARGS[@]}" deepspeed "${DIST_ARGS[@]}" "${TASK_ARGS}" "${COMMON_ARGS[@]}"
