srun torchrun \
--rdzv_backend c10d \
--rdzv_endpoint $RDZV_HOST:$RDZV_PORT \
--rdzv_id $RANDOM \
--nproc_per_node 1 \
--nnodes 1 \
train_small_lm.py $@
