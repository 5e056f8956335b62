#!/bin/bash
#SBATCH --job-name=seg-multi            # seg-multi in squeue and in the log name
#SBATCH --time=02:00:00                 # 30 epochs took 1h40 on the last run
#SBATCH --nodes=N                       # replace N before submitting
#SBATCH --gres=gpu:4                    # a full V100 node
#SBATCH --ntasks-per-node=4             # segment_train.py reads SLURM_PROCID
#SBATCH --cpus-per-task=10              # dataloader workers + main thread
#SBATCH --hint=nomultithread            # SMT siblings stay idle
#SBATCH --output=logs/seg-%j.log        # logs/ has to exist already
#SBATCH --error=logs/seg-%j.log         # tracebacks next to the loss lines

module purge
module load pytorch-gpu/py3/2.3.1

set -x

srun python -u segment_train.py --epochs 30 --batch-size 48
