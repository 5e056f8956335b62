#!/bin/bash
#SBATCH --nodes=2                    # nodes
#SBATCH --ntasks-per-node=8          # one task per GPU <required>
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --output slurm-protlm-train-%j.out

export FI_PROVIDER=efa
export NCCL_DEBUG=WARN
export WORK_DIR=/lustre/protlm

: "${IMAGE:=${WORK_DIR}/protlm.sqsh}"
: "${DATA_ROOT:=/lustre}"

declare -a ARGS=(
    --container-image $IMAGE
    --container-mount-home
    --container-mounts ${WORK_DIR}:${WORK_DIR}
)

DATA_DIR=$(find $WORK_DIR -type d -name "*extracted*" -print -quit)

srun -l "${ARGS[@]}"  python3 /workspace/protlm/src/protlm/scripts/train_protlm.py \
    --train-cluster-path ${DATA_DIR}/sample/train_clusters.parquet \
    --valid-cluster-path ${DATA_DIR}/sample/valid_clusters.parquet \
    --precision="bf16-mixed" \
    --num-gpus 8 \
    --num-nodes 2 \
    --num-steps 200 \
    --micro-batch-size 4 \
    --result-dir ${WORK_DIR}
