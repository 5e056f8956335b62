#!/bin/bash

deepspeed \
    --num_gpus 8 \
    --num_nodes 2 \
    --hostfile hosts.txt \
    --master_addr 10.40.1.17 \
    lm/finetune.py "$@"
