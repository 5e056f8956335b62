#!/bin/bash

#SBATCH -p { partition }
#SBATCH -A { account }
#SBATCH -J { jobname }
#SBATCH -N 2                      # nodes
#SBATCH -t 0-02:00:00             # wall time
#SBATCH --ntasks-per-node=1       # tasks per node
#SBATCH --exclusive                # whole nodes
#SBATCH --mem=0                    # all memory
#SBATCH --mail-type=FAIL           # mail on failure only
#SBATCH --overcommit
#SBATCH --output=run.log

# pick one of train_sft.sh, train_rm.sh, train_dpo.sh ...
readonly train_recipe="train_dpo.sh"
readonly GPUS_PER_NODE=8

readonly REPO_ROOT=$(cd ../../; pwd)
readonly IMAGE="nvcr.io/nvidia/pytorch:24.05-py3"
readonly RUNLOG="$(pwd)/logs/$train_recipe-$SLURM_JOB_ID.log"
mkdir -p logs

echo "$(date '+%F %T') job ${SLURM_JOB_ID} begins" &>> ${RUNLOG}

# defines $training_commands
source ./${train_recipe} slurm
echo $training_commands &>> ${RUNLOG}

export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=9377

srun --container-image="$IMAGE" \
    --container-mounts="$REPO_ROOT:/root/rlhf,$HOME/.cache:/root/.cache,\
$HOME/.triton:/root/.triton,/dev/null:/root/.bashrc" \
    bash -c "cd /root/rlhf/examples/scripts; ./install_rlhf.sh; torchrun \
--nproc_per_node $GPUS_PER_NODE --nnodes $SLURM_NNODES --node_rank $SLURM_PROCID \
--master_addr $MASTER_ADDR --master_port $MASTER_PORT ${training_commands}" &>> ${RUNLOG}

echo "$(date '+%F %T') job ${SLURM_JOB_ID} ends" &>> ${RUNLOG}
