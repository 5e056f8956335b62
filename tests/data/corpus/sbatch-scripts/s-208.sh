#!/bin/bash
srun --job-name sft-demo \
--quit-on-interrupt \
--nodes 2 \
--gpus-per-node 8 \
--cpus-per-task 32 \
--ntasks-per-node 1 \
--account GOV113027 \
--partition gp2d \
-o logs/sft_06.out -e logs/sft_06.err \
bash -c "./sft_06_node_full_ds.sh" &
