"""ntui: compose, submit and watch distributed training jobs on Slurm."""

__version__ = "0.1.0"
