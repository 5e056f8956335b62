#!/bin/bash -l

#SBATCH --account=s1142
#SBATCH --partition=normal
#SBATCH --constraint=gpu
#SBATCH --time=00:10:00
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=4
#SBATCH --output=pp_out.txt
#SBATCH --error=pp_err.txt

export MASTER_ADDR=$(hostname)
export MASTER_PORT=4455

srun python pipe_demo.py --deepspeed_config pipe_ds.json --steps 40
