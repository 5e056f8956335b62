#!/bin/bash
srun --account MST114099 --partition gp2d \
--nodes 2 --ntasks-per-node 1 \
--gpus-per-node 8 --cpus-per-task 32 \
--job-name qwen-ft --quit-on-interrupt \
-o logs/qwen_ft.%j.out -e logs/qwen_ft.%j.err \
bash -c "./ft_node_zero3.sh" &
