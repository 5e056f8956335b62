#!/bin/bash
# 4 nodes, one torchrun per node, c10d rendezvous on the first node's address.

#SBATCH --job-name=lumen_pretrain

#SBATCH --ntasks=4

#SBATCH --nodes=4

#SBATCH --gpus-per-task=8

#SBATCH --cpus-per-task=64

#SBATCH --partition=gpu-big

hosts=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
host_list=($hosts)
first_host=${host_list[0]}
first_host_ip=$(srun --nodes=1 --ntasks=1 -w "$first_host" hostname --ip-address)

echo "rendezvous host: $first_host_ip"
export LOGLEVEL=INFO
export NCCL_DEBUG=WARN
export PYTHONFAULTHANDLER=1
export LD_LIBRARY_PATH=/opt/fabric/lib:$LD_LIBRARY_PATH
export NCCL_SOCKET_IFNAME="ib0,eth0"

RECIPE=${RECIPE:-"lumen.recipes.gpt_small"}
PROFILE=${PROFILE:-"gpt_debug"}

srun torchrun --nnodes 4 --nproc_per_node 8 --rdzv_id 77 --rdzv_backend c10d --rdzv_endpoint "$first_host_ip:29500" -m lumen.train --recipe ${RECIPE} --profile ${PROFILE} "$@"
