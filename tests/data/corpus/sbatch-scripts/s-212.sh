#!/bin/bash
#SBATCH -J {JOB_NAME}
#SBATCH -A {ACCOUNT}
#SBATCH -p {PARTITION}
#SBATCH -t {TIME_LIMIT}
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --mem=0
#SBATCH --output=ppo-%j.out

code=$(realpath ../..)
img="nvcr.io/nvidia/pytorch:24.07-py3"
mounts="$code:/workspace/rlhf,/scratch/$USER/hf:/workspace/hf"
out="$PWD/runs/ppo.$SLURM_JOB_ID.txt"
mkdir -p runs

hosts=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
head_host=${hosts[0]}
gcs_port=6411
export RAY_HEAD=$head_host:$gcs_port

srun -N1 -n1 -w "$head_host" --container-image="$img" --container-mounts="$mounts" bash -c \
    && pip install -q 'ray[default]==2.35.0' \
    && ray start --head --port=$gcs_port --dashboard-host=0.0.0.0 --block" &>> $out &
sleep 15

for w in "${hosts[@]:1}"; do
    srun -N1 -n1 -w "$w" --container-image="$img" --container-mounts="$mounts" bash -c \
        && pip install -q 'ray[default]==2.35.0' \
        && ray start --address=$RAY_HEAD --block" &>> $out &
done
sleep 40

srun --overlap -N1 -n1 -w "$head_host" --container-image="$img" --container-mounts="$mounts" bash -c \
    "ray job submit --address=http://127.0.0.1:8265 \
    --runtime-env-json='{\"working_dir\": \"/workspace/rlhf\"}' \
    -- python3 recipes/ppo_ray.py \
    --base-model some-org/llama-7b-sft \
    --policy-nodes 1 --policy-gpus 8 \
    --value-nodes 1 --value-gpus 4 \
    --zero 2 --bf16 \
    --out /workspace/rlhf/ckpt/ppo7b" &>> $out
