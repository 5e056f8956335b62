#!/bin/bash
#SBATCH --job-name=llm-pretrain
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=16
#SBATCH --output=logs/%x-%j.out

module load cudatoolkit
source $HOME/venvs/llm/bin/activate
#SBATCH --time=02:00:00

export MASTER_PORT=29500
export NCCL_DEBUG=WARN
nodes=( $(scontrol show hostnames $SLURM_JOB_NODELIST) )
head_node=${nodes[0]}

srun torchrun --nnodes 4 --nproc_per_node 4 --node_rank $SLURM_PROCID \
    --rdzv_id '$SLURM_JOB_ID' --rdzv_backend c10d --rdzv_endpoint $head_node:$MASTER_PORT \
    --tee 3 --role trainer \
    ../../../examples/ddp_check.py --data $DATA_DIR/shards --steps 1000

echo "finished at $(date)"
