#!/bin/bash
#SBATCH --output=slurm-%x-%j.out
#SBATCH --exclusive
#SBATCH --nodes=2

# Usage: $1 = the node's training script, $2 = where its artifacts go
# e.g.   this.sh node_trainer.sh run_017
srun  --kill-on-bad-exit=1 "$@"
