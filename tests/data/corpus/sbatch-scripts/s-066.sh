#!/bin/bash

#SBATCH -N 2 # nodes
#SBATCH --job-name=env-screen
#SBATCH --ntasks-per-node 1 # one task per node
#SBATCH --gres=gpu:8
#SBATCH --exclusive
#SBATCH --wait-all-nodes=1

#SBATCH --ntasks-per-core=1

set -ex

: "${APPS:=/apps}"
: "${IMAGE:=$APPS/torch-screen.sqsh}"
: "${SHARED_MOUNT:=/lustre:/lustre}"
: "${SCREEN_DIR:=$PWD}"

declare -a ARGS=(
    --container-image $IMAGE
    --container-mount-home
    --container-mounts $SHARED_MOUNT
)

echo "
Hostname: $(hostname)
"

/usr/bin/time srun -l "${ARGS[@]}" --mpi=pmix bash -c "
which nvidia-smi
nvidia-smi
which python
python --version
python ${SCREEN_DIR}/torch_screen.py
"
