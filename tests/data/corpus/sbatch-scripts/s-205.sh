#!/bin/bash
#SBATCH -J { jobname }
#SBATCH -A { account }
#SBATCH -p { partition }
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --mem=0
#SBATCH -t 0-02:00:00
#SBATCH --output=dpo-%j.out

readonly recipe=recipe_dpo.sh
readonly gpus=8
readonly code_dir=$(realpath ../..)
readonly image=nvcr.io/nvidia/pytorch:24.07-py3
readonly log_file=$PWD/runs/${recipe%.sh}.$SLURM_JOB_ID.txt
mkdir -p runs

source ./${recipe} slurm
printf 'launch: %s\n' "$training_commands" &>> $log_file

export MASTER_PORT=24513
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)

srun --container-image="$image" \
    --container-mounts="$code_dir:/workspace/rlhf,$HOME/.cache/huggingface:/workspace/hf,\
/scratch/$USER:/workspace/scratch" \
    bash -c "cd /workspace/rlhf && pip install -q -e . && torchrun \
    --nnodes $SLURM_NNODES --node_rank $SLURM_PROCID --nproc_per_node $gpus \
    --master_addr $MASTER_ADDR --master_port $MASTER_PORT \
    ${training_commands}" &>> $log_file

echo "finished at $(date +%s)" &>> $log_file
