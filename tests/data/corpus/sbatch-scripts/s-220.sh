#!/bin/bash
#SBATCH -A <account>
#SBATCH -q regular
#SBATCH -C gpu
#SBATCH -t 00:30:00
#SBATCH --nodes= <num_nodes>
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=4
#SBATCH -c 32
#SBATCH --image=nersc/pytorch:25.06.01
#SBATCH --module=gpu,nccl-plugin

cd $SCRATCH/unet3d
export MASTER_PORT=29544
export MASTER_ADDR=$(scontrol show hostname "$SLURM_NODELIST" | sed q)

srun shifter bash -c "
export WORLD_SIZE=\$SLURM_NTASKS RANK=\$SLURM_PROCID LOCAL_RANK=\$SLURM_LOCALID
python train_unet3d.py --config cfg/unet3d.yaml
"
