# run inside an allocation made with:
#   salloc --gpus-per-node 4 -N 2 --mem 40Gb --no-shell
#   sh two_step.sh --jobid $JOBID
head_host=`srun "$@" sh -xeuc 'if test $SLURM_PROCID -eq 0; then hostname; fi'`
srun "$@" sh -xeuc '
     torchrun \
       --master-addr '$head_host' \
       --nnodes $SLURM_NNODES \
       --node-rank $SLURM_NODEID \
       --nproc-per-node gpu \
       fit_moe.py'
