#!/bin/bash
sbatch --exclusive \
--nodes 8 \
--cpus-per-task 64 \
--wrap="srun bash $(pwd)/neuron_pp_llama7b.sh"
