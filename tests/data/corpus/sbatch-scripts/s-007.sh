#!/bin/bash
#SBATCH --job-name=nt-bench
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --cpus-per-task=88
#SBATCH --gres=gpu:8
#SBATCH --mem-per-cpu=10G
#SBATCH --exclusive
#SBATCH --account=abc@h100
#SBATCH --output=logs/%x_%j.out
#SBATCH --qos=normal
#SBATCx --exclude node-17,node-23
#SBATCx --array 1-4%1

set -x -e
source ~/.bashrc
source activate /projects/abc/shared-env
module load cuda/12.2.0

GPUS_PER_NODE=8
NNODES=$SLURM_NNODES
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6444

if [ -z ${RUN_CONFIG+x} ]; then
    echo "RUN_CONFIG is unset, using default"
else
    STASH=/projects/abc/run-configs
    base=${RUN_CONFIG##*/}
    base=${base%.yaml}
    COPY=$STASH/${base}_${SLURM_JOB_ID}.yaml
    mkdir -p $(dirname $COPY)
    cp $RUN_CONFIG $COPY
    RUN_CONFIG=$COPY
fi

export CUDA_DEVICE_MAX_CONNECTIONS=1

CMD=" \
    run_pretrain.py \
    --config-file $RUN_CONFIG
    "

export LAUNCHER="torchrun \
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES \
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
    --rdzv_backend c10d \
    --max_restarts 0 \
    --tee 3 \
    "

export NCCL_DEBUG=WARN
srun $SRUN_ARGS -u bash -c "$LAUNCHER --node_rank \$SLURM_PROCID --role \$SLURMD_NODENAME: $CMD"
