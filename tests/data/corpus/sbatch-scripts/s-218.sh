#!/bin/bash
#SBATCH --job-name=mt5-ft
#SBATCH --gres=gpu:4
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --mem=96gb
#SBATCH --time=12:00:00

export WORLD_SIZE=8
export MASTER_PORT=12471
export MASTER_ADDR=$(scontrol show hostname $SLURM_NODELIST | sed -n 1p)
echo "rendezvous $MASTER_ADDR:$MASTER_PORT, $WORLD_SIZE ranks on $SLURM_NODELIST"

srun finetune_mt5.py \
--model_name_or_path ./mt5_xl_base \
--data_path ./qa_train.json \
--output_dir ./mt5_qa_run/ \
--fsdp "full_shard auto_wrap offload" \
--fsdp_transformer_layer_cls_to_wrap 'MT5Block' \
--bf16 True --tf32 True \
--num_train_epochs 3 \
--learning_rate 3e-5 \
--per_device_train_batch_size 4 \
--gradient_accumulation_steps 8 \
--logging_steps 5 \
--save_strategy "steps" \
--save_steps 500
