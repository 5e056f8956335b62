#!/bin/bash -l

#SBATCH --job-name=cpu-multi
#SBATCH --nodes=4                       # nodes
#SBATCH --ntasks-per-node=1             # one launcher per node
#SBATCH --exclusive
#SBATCH --output=O-%x.%j
#SBATCH --error=E-%x.%j

source setup_env.sh

head_node_ip=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)

export MASTER_PORT="${MASTER_PORT:-29666 }"
echo "MASTER_PORT=${MASTER_PORT}"

PER_NODE="${PER_NODE:-2}"

if [[ $SLURM_NNODES == 1 ]] && [[ $PER_NODE == 1 ]]; then
  export CCL_WORKER_COUNT=0
  LAUNCHER=""
else
  export CCL_WORKER_COUNT="${CCL_WORKER_COUNT:-2}"
  HOSTS_FILE=hostfile
  scontrol show hostname $SLURM_JOB_NODELIST | perl -ne 'chomb; print "$_"x1'> ${HOSTS_FILE}

  export LAUNCHER="accelerate launch \
    --num_processes $((SLURM_NNODES * ${PER_NODE})) \
    --num_machines $SLURM_NNODES \
    --rdzv_backend c10d \
    --main_process_ip $head_node_ip \
    --main_process_port $MASTER_PORT \
    --mpirun_hostfile $HOSTS_FILE \
    --mpirun_ccl $CCL_WORKER_COUNT"
fi

export PROJ="${PROJ:-/work/txtcls}"
export SCRIPT="${PROJ}/train_txtcls.py"
export SCRIPT_ARGS=" \
    --cpu \
    --output_dir ${PROJ}/out \
    "

export CMD="$LAUNCHER $SCRIPT $SCRIPT_ARGS" 
echo $CMD

eval $CMD
