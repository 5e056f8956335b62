#!/bin/bash -l
#SBATCH --job-name=ray_mnist
#SBATCH --nodes 2
#SBATCH --ntasks-per-node 2
#SBATCH -c 16
#SBATCH --gres=gpu:a100:2
#SBATCH --time=00:20:00
#SBATCH --mem=64G
#SBATCH --output=%x_%j.out

set -x

nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
nodes_array=($nodes)
head_node=${nodes_array[0]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)
if [[ "$head_node_ip" == *" "* ]]; then
  IFS=' ' read -ra ADDR <<<"$head_node_ip"
  if [[ ${#ADDR[0]} -gt 16 ]]; then
    head_node_ip=${ADDR[1]}
  else
    head_node_ip=${ADDR[0]}
  fi
  echo "IPv6 address found, using IPv4 $head_node_ip"
fi

port=6390
ip_head=$head_node_ip:$port
export ip_head
echo "head at: $ip_head"

ray disable-usage-stats

echo "starting head on $head_node"
./start_head.sh $head_node $head_node_ip $port
sleep 12

worker_num=$((SLURM_JOB_NUM_NODES - 1))
for ((i = 1; i <= worker_num; i++)); do
    node_i=${nodes_array[$i]}
    echo "starting worker $i on $node_i"
    ./start_worker.sh $node_i $ip_head
    sleep 5
done

module purge
module load cesga/system miniconda3/22.11
eval "$(conda shell.bash hook)"
source $STORE/envs/raytrain/bin/activate

python -u ray_mnist_train.py "$SLURM_CPUS_PER_TASK"
