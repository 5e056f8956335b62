#!/bin/bash -l
#SBATCH --job-name=ray_mnist
#SBATCH --time=00:20:00
#SBATCH --nodes 2
#SBATCH --ntasks-per-node 2
#SBATCH --gres=gpu:a100:2
#SBATCH -c 16
#SBATCH --mem=64G
#SBATCH --output=%x_%j.out
set -x

hosts=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
leader=${hosts[0]}
leader_addr=$(srun --nodes=1 --ntasks=1 -w "$leader" hostname --ip-address)

# some nodes answer with an IPv6 address before the IPv4 one
if [[ $leader_addr == *" "* ]]; then
    IFS=' ' read -ra parts <<< "$leader_addr"
    if (( ${#parts[0]} > 16 )); then leader_addr=${parts[1]}; else leader_addr=${parts[0]}; fi
fi

gcs_port=6388
export RAY_ADDRESS=$leader_addr:$gcs_port

./start_head.sh "$leader" "$leader_addr" $gcs_port
sleep 15
for w in "${hosts[@]:1}"; do
    ./start_worker.sh "$w" "$RAY_ADDRESS"
    sleep 4
done

module load anaconda3/2023.09
eval "$(conda shell.bash hook)"
conda activate $STORE/envs/raytrain

python -u ray_mnist_train.py "$SLURM_CPUS_PER_TASK"
