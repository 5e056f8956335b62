#!/bin/bash
#SBATCH -p dcunormal
#SBATCH -N 4
#SBATCH --cpus-per-task=8
#SBATCH --ntasks-per-node=4
#SBATCH --gres=dcu:4
#SBATCH -J rm-step2
#SBATCH -o ./log/rm-%j.out
#SBATCH -e ./log/rm-%j.out

source /public/home/lab042/envs/dtk-torch2.sh
rm -rf ./hostfile/*

echo "START TIME: $(date)"
hostfile=./hostfile/$SLURM_JOB_ID
scontrol show hostnames $SLURM_JOB_NODELIST > ${hostfile}

for i in `cat $hostfile`
do
    echo ${i} slots=4 >> `pwd`/hostfile/hosts-$SLURM_JOB_ID
done
np=$(cat $hostfile|sort|uniq |wc -l)
np=$(($np*4))

echo $np
first=$(cat $hostfile |sed -n "1p")
dist_url=`echo $first | awk '{print $1}'`

mpirun -np $np --allow-run-as-root --hostfile hostfile/hosts-$SLURM_JOB_ID --bind-to none `pwd`/rank_step2.sh $dist_url
