#!/bin/bash 
#SBATCH -C gpu 
#SBATCH -q regular
#SBATCH -A m0000
#SBATCH --cpus-per-task 32
#SBATCH --gpus-per-task 1
#SBATCH --gpu-bind none
#SBATCH --time=00:45:00
#SBATCH --image=nersc/pytorch:24.06.01
#SBATCH --module=gpu,nccl-plugin
#SBATCH -J unet-weather
#SBATCH -o %x-%j.out

DATA=/pscratch/sd/u/someuser/weather/h5
LOGS=${SCRATCH}/unet-weather/logs
mkdir -p ${LOGS}
args="${@}"

export HDF5_USE_FILE_LOCKING=FALSE

if [ "${WITH_NSYS:-0}" -eq 1 ]; then
    NSYS_OPTS="--trace=cuda,nvtx -c cudaProfilerApi -f true"
    export PROF_CMD="nsys profile $NSYS_OPTS -o ${LOGS}/${PROF_NAME:-"prof"}"
fi

export MASTER_ADDR=$(hostname)
export CUDA_VISIBLE_DEVICES=3,2,1,0

set -x
srun -u shifter -V ${DATA}:/data -V ${LOGS}:/logs \
    bash -c "
    source set_ddp_env.sh
    ${PROF_CMD} python train_unet.py ${args}
    "
