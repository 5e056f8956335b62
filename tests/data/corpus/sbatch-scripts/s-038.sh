#!/bin/bash

#SBATCH -t 0:45:00 --exclusive --mem=0 --overcommit --ntasks-per-node=8


HERE=`pwd`
STAMP=`date +'date_%y-%m-%d_time_%H-%M-%S'`
mkdir -p ${HERE}/logs


CMD="python -u ${TRAINER_CODE_DIR}/examples/gpt/pretrain_gpt.py ${TRAINER_PARAMS}"


srun -l \
     --container-image "nvcr.io#nvidia/pytorch:24.03-py3" \
     --container-mounts "${HERE}:${HERE},${TRAINER_CODE_DIR}:${TRAINER_CODE_DIR},${DATA_MOUNT_DIR}:${DATA_MOUNT_DIR}" \
     --output=${HERE}/logs/%x_%j_$STAMP.log sh -c "${CMD}"
