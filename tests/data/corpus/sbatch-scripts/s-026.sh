#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:2
#SBATCH --partition=gpu
#SBATCH --time=0:45:00
#SBATCH --exclusive
#SBATCH --output=%j.out
#SBATCH --error=%j.err
#SBATCH --reservation=WORKSHOP

time srun --container-image=/home/apps/enroot/pytorch+24.08-py3.sqsh \
        --container-name=torchws \
--container-mounts=$$HOME/ws-dist/05_containers/:/workspace,/etc/slurm/task.prolog:/etc/slurm/task.prolog \
        sh -c 'cd /workspace && python 02_cifar_dp.py --epochs=5'
