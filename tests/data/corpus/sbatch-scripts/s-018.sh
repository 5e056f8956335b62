#!/bin/bash
#SBATCH --account=<ACCOUNT>
#SBATCH --job-name=pretrain-tiny      # short name
#SBATCH --time=00:30:00
#SBATCH --nodes=2                # nodes
#SBATCH --ntasks-per-node=1      # one launcher per node
#SBATCH --gpus-per-task=4
#SBATCH --output=logs/slurm-%x-%j.log

set -x
cat $0
export HF_HOME=$SCRATCH/hfcache
export CUDA_DEVICE_MAX_CONNECTIONS=1
export WANDB_MODE=offline

srun -ul --environment=./ngc-tinylm-24.10.toml bash -c "
  source venv-24.10/bin/activate
  cd tinylm/

  LAUNCH_ARGS=\"
   --master-addr=\$(scontrol show hostnames \$SLURM_JOB_NODELIST | head -n 1) \
   --master-port=29522 \
   --node-rank=\${SLURM_PROCID} \
   --nnodes=\${SLURM_NNODES} \
   --nproc-per-node=\${SLURM_GPUS_ON_NODE} \
  \"

  python -m torch.distributed.run \${LAUNCH_ARGS} \
    train_tiny.py --config-file configs/tiny_wiki.yaml
"
