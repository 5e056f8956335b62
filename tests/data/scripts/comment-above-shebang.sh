# train the baseline (submitted with: sbatch comment-above-shebang.sh)
#!/bin/bash
#SBATCH -N 1
#SBATCH --gpus-per-node=4
#SBATCH -t 30
python ../../../examples/ddp_check.py
