#!/bin/bash
#SBATCH --partition=a100x
#SBATCH --job-name=clipish
#SBATCH --nodes 12
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=10
#SBATCH --output=%x_%j.out
#SBATCH --comment=vislab
#SBATCH --open-mode=append
#SBATCH --exclusive

module load openmpi
module load cuda/12.1

export PYTHONFAULTHANDLER=1
export HOSTNAMES=`scontrol show hostnames "$SLURM_JOB_NODELIST"`
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=12999
export COUNT_NODE=`scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`
echo nodes $COUNT_NODE

cd /home/vislab/clipish/src
export PYTHONPATH="$PYTHONPATH:/home/vislab/clipish/src"

RUN_NAME="vitb-shards-lr5e-4"

srun --comment vislab --cpu_bind=v --accel-bind=gn python -m clipish.main \
    --save-every 1 \
    --train-data="pipe:curl -s https://data.example.org/shards/{000000..004095}.tar" \
    --train-samples 40000000 \
    --dataset-type webdataset \
    --batch-size=256 \
    --epochs=32 \
    --lr 5e-4 \
    --workers=6 \
    --name ${RUN_NAME} \
    --logs /scratch/vislab/logs/ \
    --model vit-b-32 \
    --precision amp_bf16 \
    --resume "latest"
