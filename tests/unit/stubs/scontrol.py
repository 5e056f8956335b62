"""Stub scontrol: ``show hostnames`` of nid[001-00N] for SLURM_JOB_NUM_NODES nodes."""

import os
import sys

assert sys.argv[1:3] == ["show", "hostnames"], sys.argv
for n in range(int(os.environ["SLURM_JOB_NUM_NODES"])):
    print(f"nid{n + 1:03d}")
