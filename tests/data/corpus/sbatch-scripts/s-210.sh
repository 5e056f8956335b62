#!/bin/bash
#SBATCH -J glm-rw
#SBATCH -p dcu_batch
#SBATCH -N 4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --gres=dcu:4
#SBATCH -o logs/glm-rw.%j.log
#SBATCH -e logs/glm-rw.%j.log

source ~/env/rocm-dtk-23.10.sh

mkdir -p mpi_hosts
nodes_txt=mpi_hosts/nodes.$SLURM_JOB_ID
slots_txt=mpi_hosts/slots.$SLURM_JOB_ID
scontrol show hostnames $SLURM_JOB_NODELIST > $nodes_txt

for h in `cat $nodes_txt`; do
  echo "$h slots=4" >> `pwd`/$slots_txt
done

n_hosts=$(cat $nodes_txt | sort | uniq | wc -l)
nranks=$(($n_hosts*4))
main_host=$(head -n 1 $nodes_txt)

mpirun -np $nranks --hostfile $slots_txt --bind-to none --allow-run-as-root `pwd`/rank_reward.sh $main_host
