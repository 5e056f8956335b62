srun -p big_gpu -n 4 -N 4 --ntasks-per-node=1 --gpus-per-task=8 -w "gpu-node-[11-14]" \
torchrun --nproc_per_node 8 --rdzv_backend c10d --rdzv_id 55 --rdzv_endpoint "10.20.30.11:29555" \
--local-ranks-filter 0 ./train.py --job.config_file ./configs/llm_13b.toml
