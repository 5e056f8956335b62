#!/bin/bash -l
#SBATCH --job-name=cellfm-scale
#SBATCH --time=06:00:00
#SBATCH --cpus-per-task=64
#SBATCH --nodes=8
#SBATCH --ntasks-per-node=1          # one launcher per node
#SBATCH --gpus-per-task=4
#SBATCH --cpus-per-task=72
#SBATCH --gres=gpu:4
#SBATCH --exclusive

set -x -e

GPUS_PER_NODE=4
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=$(shuf -i 40000-65000 -n 1)

SEQ=1024
MB=64
DEPTH=8
OUT="./out/scale_${SLURM_NNODES}"
export GPUS_PER_NODE=4

srun --environment=cellstack bash -c "${REPORTER} -o report -- accelerate launch \
    --num_processes $((SLURM_NNODES * GPUS_PER_NODE)) \
    --num_machines $SLURM_NNODES \
    --machine_rank \$SLURM_PROCID \
    --rdzv_backend c10d \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --mixed_precision bf16 \
    ./pretrain_cells.py \
    --save-dir $OUT \
    --max-seq-len $SEQ \
    --batch-size $MB \
    --eval-batch-size $(($MB)) \
    --nlayers $DEPTH \
    --loss \"mse\" \
    --train-path \"./cells_train\" \
    --mask-ratios 0.25 0.5 0.75 \
    --wandb \"scaling\""

${REPORTER} print report
