#!/bin/bash
#SBATCH --job-name=cgpt-multinode                                # job name
#SBATCH --output=/home/someuser/cgpt/runs/%x_%j_%t.log           # output file
#SBATCH --error=/home/someuser/cgpt/runs/%x_%j_%t.err            # error file
#SBATCH --partition=gpu8                                         # GPU partition
#SBATCH --ntasks=16                                              # processes on all nodes
#SBATCH --nodes=2                                                # nodes
#SBATCH --ntasks-per-node=8                                      # one per GPU
#SBATCH --gres=gpu:8                                             # GPUs per node

make train_cgpt USE_CUDNN=1 NO_USE_MPI=1

binary_path="/home/someuser/cgpt/train_cgpt"
out_dir="/scratch/someuser/cgpt/log_small"
train_glob='/scratch/someuser/data/shards/train_*.bin'
val_glob='/scratch/someuser/data/shards/val_*.bin'
server_ip="10.10.0.21"

hosts=$(scontrol show hostnames $SLURM_JOB_NODELIST)
current_host=$(hostname)
for host in $hosts; do
    if [ $host == $current_host ]; then
        continue
    fi
    scp -r $binary_path $USER@$host:$binary_path
done

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_DISABLE=0

srun -l -u bash -c "
    $binary_path \
    -i '$train_glob' \
    -j '$val_glob' \
    -o $out_dir \
    -b 32 -t 1024 \
    -n 2000 \
    -pn \$SLURM_NTASKS \
    -pr \$SLURM_PROCID \
    -pg \$SLURM_NTASKS_PER_NODE \
    -ps $server_ip \
    -pi "tcp" \
"
