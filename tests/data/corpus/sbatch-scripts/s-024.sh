#!/bin/bash
# Sizes, image and command all come from the environment of the sbatch call.
# Generic pyxis job: runs $job_cmd in the $image container with $binds mounted.
# Extra srun options come from $extra_srun. Submit e.g.:
#   job_cmd='python -u train_rec.py --amp --data /data/clicks' extra_srun='--mpi=pmix' \
#   image=nvcr.io/nvidia/pytorch:24.05-py3 binds=/lustre/clicks:/data/clicks \
#   sbatch -n 16 -N 2 -t 00:30:00 this_script.sh

srun --mpi=none ${extra_srun} --ntasks-per-node=1 \
     --container-image="${image}"  --container-mounts=${binds} /bin/bash -c "$job_cmd"
