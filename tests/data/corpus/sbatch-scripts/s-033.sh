#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --job-name=train-lm
#SBATCH --output=logs/%x_%j.out
#SBATCH --ntasks-per-node 1
#SBATCH --gpus-per-node=8
#SBATCH --gpus-per-task=8
#SBATCH --gres=gpu:8
#SBATCH --exclusive
set -euxo pipefail

RECIPE=${1:-lm-1b}
: "${APPS:=/apps}"
: "${IMAGE:=$APPS/foundry.sqsh}"
: "${DATA:=/lustre}"

declare -a ARGS=(
    --container-image $IMAGE
    --container-mounts ${DATA}:${DATA},${APPS}:${APPS}
)

NODES=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
HEAD=${NODES[0]}
MASTER_ADDR=$(hostname --ip-address)
MASTER_PORT=$RANDOM
NNODES=$SLURM_JOB_NUM_NODES
NPROC=$SLURM_GPUS_PER_NODE
WORLD_SIZE=$(( $NNODES * $NPROC ))
srun -l "${ARGS[@]}" python -c "import shardio; shardio.cleanup_shm()"

function run_node() {
    srun --nodelist=${NODE} --ntasks=1 -l "${ARGS[@]}" composer \
        --world_size ${WORLD_SIZE} \
        --nproc ${NPROC} \
        --node_rank ${NODE_RANK} \
        --master_addr ${MASTER_ADDR} \
        --master_port ${MASTER_PORT} \
        /foundry/train/train.py \
        /foundry/train/yamls/${RECIPE}.yaml \
        data_local=/lustre/shards \
        max_duration=10ba
}
for (( NODE_RANK=1; NODE_RANK<${NNODES}; NODE_RANK++ ))
do
    NODE=${NODES[$NODE_RANK]}
    run_node &
done
NODE_RANK=0
NODE=${HEAD}
run_node
wait
