#!/bin/bash -l
#SBATCH --job-name=cellfm-debug
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:20:00

SEQ=1024
MB=32
DEPTH=4
RUN="debug"

export GPUS_PER_NODE=4
head_node_ip=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)

srun --environment=cellstack accelerate launch \
    --num_processes $((SLURM_NNODES * GPUS_PER_NODE)) \
    --num_machines $SLURM_NNODES \
    --machine_rank $SLURM_PROCID \
    --rdzv_backend c10d \
    --main_process_ip $head_node_ip \
    --main_process_port 29777 \
    --mixed_precision bf16 \
    ./pretrain_cells.py \
    --save-dir ./out/$RUN-$(date +%b%d-%H-%M-%Y) \
    --max-seq-len $SEQ \
    --batch-size $MB \
    --nlayers $DEPTH \
    --loss "mse" \
    --train-path "./cells_debug/" \
    --wandb "debug"
