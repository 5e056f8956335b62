#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=64
#SBATCH --time=06:00:00
head=$(hostname)
srun python -m accelerate.commands.launch --config_file fsdp.yaml --num_processes 8 --num_machines 2 \
    --machine_rank $SLURM_NODEID --main_process_ip $head --main_process_port 29500 \
    ../../../examples/ddp_check.py --model llama
