export MASTER_ADDR=$(scontrol show hostname ${SLURM_NODELIST} | head -n 1)
export OMP_NUM_THREADS=2

torchrun --nnodes=1 --nproc_per_node=4 --rdzv_id=42 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29433 fit_layers.py
