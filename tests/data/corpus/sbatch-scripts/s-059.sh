#!/bin/bash
#SBATCH --job-name=allreduce-h100-n4
#SBATCH --partition=gpu_h100
#SBATCH --constraint=h100
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=48
#SBATCH --hint=nomultithread
#SBATCH --gres=gpu:4
#SBATCH --time 0:10:00
#SBATCH --output=%x-%j.out
#SBATCH --account=xyz@h100

source $WORKDIR/env/start-bench

export NNODES=$SLURM_NNODES
export GPUS_PER_NODE=4
export NCCL_DEBUG=info
export LOG_FILE=allreduce-h100-$NNODES.txt
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)

srun --jobid $SLURM_JOBID bash -c 'python -m torch.distributed.launch --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE --node_rank $SLURM_PROCID --master_addr $MASTER_ADDR --master_port 12399 allreduce_bench.py'  2>&1 | tee $LOG_FILE
