#!/bin/bash

#SBATCH --partition=GpuMain
#SBATCH --account=ab-cde
#SBATCH --time=00:30:00
#SBATCH --job-name=ddp.twonode
#SBATCH --comment="two-node DDP check"
#SBATCH --gres=gpu:4
##SBATCH --ntasks=2

#SBATCH --wait-all-nodes=1
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --exclusive
#SBATCH --output=%x-%j.out

readonly MASTER_ADDR_JOB=$SLURMD_NODENAME
readonly MASTER_PORT_JOB="12399"
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK

readonly srun='srun --output=%x-%j.%t.out'

env

$srun bash \
   node_task.sh \
      $MASTER_ADDR_JOB \
      $MASTER_PORT_JOB &

wait
