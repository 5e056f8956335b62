#!/bin/bash
#SBATCH --job-name=accel_mn
#SBATCH --nodes 2
#SBATCH --ntasks-per-node 1
#SBATCH -c 32
#SBATCH --gres=gpu:a100:1
#SBATCH --time=00:50:00
#SBATCH --mem=48G
#SBATCH --output=%x_%j.out
# SBATCH --exclusive


#export NCCL_PROTO=simple
#export NCCL_ALGO=ring
export NCCL_DEBUG=info
#export NCCL_DEBUG_SUBSYS=INIT,ENV

export PYTHONFAULTHANDLER=1
export CUDA_LAUNCH_BLOCKING=0
export NCCL_TREE_THRESHOLD=0

#export NCCL_SOCKET_IFNAME="ib0,eth0"

# read by the per-node script
export HOSTNAMES=`scontrol show hostnames "$SLURM_JOB_NODELIST"`
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=13871
export COUNT_NODE=`scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`

echo nodes: $COUNT_NODE
echo $HOSTNAMES

srun ./accel_node.sh
