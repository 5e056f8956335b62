#!/bin/bash -l

#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=4
#SBATCH --output=pp_out.txt
#SBATCH --error=pp_err.txt
#SBATCH --constraint=gpu
#SBATCH --partition=normal
#SBATCH --time=00:10:00
#SBATCH --account=s1142

export MASTER_ADDR=$(hostname)
export MASTER_PORT=4455

srun python pipe_demo.py --deepspeed_config pipe_ds.json --steps 40
