# SLURM SUBMIT SCRIPT
#SBATCH --nodes=2
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=1
#SBATCH --time=04:00:00

conda activate litenv
export NCCL_DEBUG=WARN

srun python fit_cli.py --trainer.num_nodes 2 --trainer.devices 4
