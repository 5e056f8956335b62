#!/bin/bash
#SBATCH --job-name=forge-mn
#SBATCH --account=<account-name>
#SBATCH --partition=<partition-name>
#SBATCH --nodes=2
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=16
#SBATCH --mem=0
#SBATCH --time=1-00:00:00
#SBATCH --signal=B:SIGTERM@120
#SBATCH --output=logs/%x-%j.out

set -euo pipefail

CONFIG=${1:?give a config: sbatch train_2n.sh <config.toml> [key=value ...]}

IB_IF=$(ip -br addr | awk '/^ib/ && $2 == "UP" {print $1; exit}')
export NCCL_SOCKET_IFNAME=${IB_IF:-ib0}
export GLOO_SOCKET_IFNAME=${IB_IF:-ib0}

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
export OMP_NUM_THREADS=8

source .venv/bin/activate

srun --kill-on-bad-exit=1 python -u scripts/train.py "$CONFIG" "${@:2}"
