#!/usr/bin/env bash

NODES=1
GPUS=8

srun \
    --mpi pmi2 -p v100-32g \
    --ntasks $(($NODES * $GPUS)) \
    --gres gpu:$GPUS \
    --ntasks-per-node $GPUS \
    python -u search.py --train --eval 2>&1 | tee log
