#!/bin/bash
#SBATCH --job-name=imported-torchrun
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
#SBATCH --time=00:05:00
# A dev-cluster torchrun script with the usual mistakes: two torchruns per node, the rendezvous id in single
# quotes, a node count that is not the job's, a node rank the batch shell expands, a fixed port.
export OMP_NUM_THREADS=1
export MASTER_PORT=29500
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
srun torchrun --nnodes 4 --nproc_per_node 2 --node_rank $SLURM_PROCID --rdzv_id '$SLURM_JOB_ID' \
    --rdzv_backend c10d --rdzv_endpoint $head:$MASTER_PORT \
    ../../../../examples/ddp_check.py --from torchrun
