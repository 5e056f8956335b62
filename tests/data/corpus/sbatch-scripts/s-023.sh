#!/bin/bash
#SBATCH --account=project_0000000
#SBATCH --partition=gputest
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=40
#SBATCH --mem=0
#SBATCH --time=15
#SBATCH --gres=gpu:v100:4

module purge
module load pytorch

MAIN_IP=$(ip -4 -brief addr show | grep -E 'hsn0|ib0' | grep -oP '([\d]+.[\d.]+)')
MAIN_PORT=29444

srun accel_wrap.sh --multi_gpu --num_processes=8 --num_machines=2 \
     --mixed_precision=no --dynamo_backend=no \
     --main_process_ip=$MAIN_IP --main_process_port=$MAIN_PORT \
     cifar_accelerate.py --epochs=40
