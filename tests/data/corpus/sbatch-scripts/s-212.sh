#!/bin/bash

#SBATCH -p {PARTITION}
#SBATCH -A {ACCOUNT}
#SBATCH -J {ACCOUNT}-ppo
#SBATCH -N 2                       # nodes
#SBATCH -t {LIMIT_TIME}            # wall time
#SBATCH --ntasks-per-node=1        # tasks per node
#SBATCH --exclusive                # whole nodes
#SBATCH --mem=0                    # all memory
#SBATCH --overcommit
#SBATCH --output=ppo.log


REPO=$(cd ../../; realpath .)
IMAGE="nvcr.io/nvidia/pytorch:24.05-py3"
MOUNT="$REPO:/rlhf,$HOME/.cache:/root/.cache,/dev/null:/root/.bashrc"

RUNLOG="$(realpath .)/logs/ppo_ray-$SLURM_JOB_ID.log"
mkdir -p logs
echo "$(date '+%F %T') job ${SLURM_JOB_ID} begins" &>> ${RUNLOG}

nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
nodes_array=( $nodes )
node_1=${nodes_array[0]}
ip=$node_1

port=6411
ip_head=$ip:$port
export ip_head

srun --nodes=1 --ntasks=1 -w "$node_1" --container-image="$IMAGE" --container-mounts="$MOUNT" bash -c \
  && pip install ray[default]==2.30.0 \
  && /root/.local/bin/ray start --head --node-ip-address=$ip --port=$port --block" &>> ${RUNLOG} &
sleep 10s

worker_num=$((SLURM_JOB_NUM_NODES))
for ((i = 1; i < worker_num; i++)); do
  node_i=${nodes_array[$i]}
  srun --nodes=1 --ntasks=1 -w "$node_i" --container-image="$IMAGE" --container-mounts="$MOUNT" bash -c \
    && pip install ray[default]==2.30.0 \
    && /root/.local/bin/ray start --address "$ip_head" --block" &>> ${RUNLOG} &
  sleep 1s;
done

sleep 30s

srun --overlap --nodes=1 --ntasks=1 -w "$node_1" --container-image="$IMAGE" --container-mounts="$MOUNT" bash -c \
  "pip install ray[default] \
  && /root/.local/bin/ray job submit --address=http://localhost:8265 \
    --runtime-env-json='{\"working_dir\": \"/rlhf\", \"pip\": \"/rlhf/requirements.txt\"}' \
    -- python3 examples/train_ppo_ray.py \
    --actor_num_nodes 1 \
    --actor_num_gpus_per_node 8 \
    --critic_num_nodes 1 \
    --critic_num_gpus_per_node 4 \
    --pretrain some-org/llama-7b-sft \
    --save_path /rlhf/ckpt/7b_ppo \
    --zero_stage 2 \
    --bf16" &>> ${RUNLOG}

echo "$(date '+%F %T') job ${SLURM_JOB_ID} ends" &>> ${RUNLOG}
