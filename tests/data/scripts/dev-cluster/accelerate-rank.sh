#!/bin/bash
#SBATCH --job-name=imported-accelerate
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:05:00
export OMP_NUM_THREADS=1
export ACCELERATE_USE_CPU=true
head=$(hostname)
srun python -m accelerate.commands.launch --multi_gpu --num_processes 4 --num_machines 2 --machine_rank $SLURM_NODEID \
    --main_process_ip $head --main_process_port 29500 ../../../../examples/ddp_check.py --from accelerate
