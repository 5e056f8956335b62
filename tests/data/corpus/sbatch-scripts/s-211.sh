export MASTER_PORT=$((15000 + $RANDOM % 20000))
export OMP_NUM_THREADS=1
export CUDA_LAUNCH_BLOCKING=1


PARTITION='robot3'
GPUS=8
GPUS_PER_NODE=8
CPUS_PER_TASK=12

srun -p $PARTITION \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK} \
    --kill-on-bad-exit=1 \
    python -u train_traj.py --cfg configs/traj_fold.yaml
