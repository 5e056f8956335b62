#!/bin/bash

#SBATCH -N 2 # nodes
#SBATCH --job-name=nccl-check
#SBATCH --ntasks-per-node 8 # one task per GPU
#SBATCH --gres=gpu:8
#SBATCH --exclusive
#SBATCH --wait-all-nodes=1

#SBATCH --ntasks-per-core=1

: "${APPS:=/apps}"
: "${TESTS_BIN:=/opt/nccl-tests/build}"
: "${IMAGE:=$APPS/nccl-tests.sqsh}"

export FI_PROVIDER=efa
export NCCL_DEBUG=INFO

declare -a ARGS=(
    --container-image $IMAGE
)

srun -l "${ARGS[@]}" --mpi=pmix $TESTS_BIN/all_reduce_perf -b 8 -e 4G -f 2 -g 1 -c 1 -n 50
