#!/bin/bash
#SBATCH --job-name=mt5-ft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --mem=96gb
#SBATCH --gres=gpu:4
export MASTER_PORT=12471
export WORLD_SIZE=8

echo "NODELIST="${SLURM_NODELIST}
master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$master_addr
echo "MASTER_ADDR="$MASTER_ADDR

srun finetune_mt5.py \
--model_name_or_path ./mt5_xl_base \
--data_path ./qa_train.json \
--bf16 True \
--output_dir ./mt5_qa_run/ \
--num_train_epochs 3 \
--per_device_train_batch_size 4 \
--gradient_accumulation_steps 8 \
--save_strategy "steps" \
--save_steps 500 \
--learning_rate 3e-5 \
--logging_steps 5 \
--fsdp "full_shard auto_wrap offload" \
--fsdp_transformer_layer_cls_to_wrap 'MT5Block' \
--tf32 True
