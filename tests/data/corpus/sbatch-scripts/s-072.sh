#!/bin/bash

set -euxo pipefail

LEAD_HOST=$1
shift

NODE_COUNT=$1
shift

source ~/envs/lmkit/bin/activate

cd ~/lmkit
NET_PLUGIN_DIR=/opt/netplugin/lib64 source /opt/netplugin/lib64/net-env.sh
export NCCL_NET=VendorNet
RDZV_ADDR=$LEAD_HOST:12377
export OMP_NUM_THREADS=12

# every line of this node's output carries its name
export NODE_TAG=$(hostname -s)
exec 1> >(awk -v tag="$NODE_TAG" '{ print tag "> " $0; fflush() }')
exec 2> >(awk -v tag="$NODE_TAG" '{ print tag "! " $0; fflush() }' >&2)

# a worker a previous job left behind still holds a GPU
pkill -u "$USER" -f lm_worker || true

torchrun --nproc_per_node=8 --nnodes=$NODE_COUNT --rdzv-backend=c10d --rdzv-endpoint=$RDZV_ADDR tools/train_lm.py "$@"
