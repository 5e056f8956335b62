#!/bin/bash
#SBATCH --job-name=acc2n
#SBATCH --time=00:50:00
#SBATCH --nodes 2
#SBATCH --ntasks-per-node 1
#SBATCH --gres=gpu:a100:1
#SBATCH -c 32
#SBATCH --mem=48G
# SBATCH --exclusive
#SBATCH --output=%x_%j.out

# switched off after the first runs
#export TORCH_DISTRIBUTED_DEBUG=DETAIL
#export NCCL_P2P_DISABLE=1
#export NCCL_IB_DISABLE=1
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

# accel_node.sh finds its machine rank in HOSTNAMES
export HOSTNAMES=`scontrol show hostnames $SLURM_JOB_NODELIST | tr '\n' ' '`
export COUNT_NODE=`echo $HOSTNAMES | wc -w`
export MASTER_ADDR=`echo $HOSTNAMES | cut -d' ' -f1`
export MASTER_PORT=27144

echo "$COUNT_NODE nodes: $HOSTNAMES (main process on $MASTER_ADDR)"

srun ./accel_node.sh
