export OMP_NUM_THREADS=2
export NCCL_ASYNC_ERROR_HANDLING=1
export MASTER_PORT=$(( RANDOM % 25000 + 21000 ))

part=robot_a
n_gpu=8
per_node=8
cpus=10

srun --partition=$part \
    --ntasks=$n_gpu \
    --ntasks-per-node=$per_node \
    --gres=gpu:$per_node \
    --cpus-per-task=$cpus \
    --kill-on-bad-exit=1 \
    python -u train_traj.py --cfg configs/traj_fold.yaml
