#!/bin/bash

#SBATCH --job-name=twonode-ddp
#SBATCH --exclusive --nodes=2 --ntasks-per-node=1 --gpus=2
#SBATCH --chdir=/home/jdoe/src/ddp-course

nodes=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
nodes_array=($nodes)
first=${nodes_array[0]}
first_ips=$(srun --nodes=1 --ntasks=1 -w "$first" hostname --all-ip-addresses)
first_ips_array=($first_ips)
first_ip=${first_ips_array[0]}

srun -l --ntasks-per-node=1 "launch/node_torchrun.sh $first_ip"
