#!/bin/bash
#SBATCH --job-name=eval-ds
#SBATCH --constraint=a100-80g
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1          # one launcher
#SBATCH --cpus-per-task=32
#SBATCH --hint=nomultithread
#SBATCH --gres=gpu:4
#SBATCH --time 08:00:00
#SBATCH --output=%x-%j.out
#SBATCH --account=xyz@a100

set -x -e
source $WORKDIR/env/start-eval

RUN_TAG="lm-1b-eval"
CKPT=/store/xyz/checkpoints/lm-1b/global_step50000
TRAINER_REPO=/work/xyz/code/lm-trainer
export HF_DATASETS_OFFLINE=1
cd $TRAINER_REPO

ds_cfg="./ds_eval.json"
cat <<EOT > $ds_cfg
{
  "train_micro_batch_size_per_gpu": 1,
  "zero_optimization": { "stage": 0 },
  "bf16": { "enabled": true }
}
EOT

CMD="./tasks/eval/evaluate.py  \
    --load $CKPT \
    --results_path $RUN_TAG-results.json \
    --micro-batch-size 8 \
    --inference \
    --deepspeed \
    --deepspeed_config ds_eval.json \
    --task_list arc_easy,boolq,piqa \
    "

N_GPUS=4
LAUNCHER="deepspeed --num_gpus $N_GPUS"
echo $LAUNCHER $CMD

export PYTHONPATH=$TRAINER_REPO

$LAUNCHER $CMD 2>&1 | tee $RUN_TAG-eval.log
