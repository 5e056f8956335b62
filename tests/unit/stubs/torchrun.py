"""Stub torchrun (torch 2.x semantics): this node's workers with RANK, LOCAL_RANK, WORLD_SIZE."""

import os
import subprocess
import sys

args = sys.argv[1:]
cut = args.index("--no-python")
opts = dict((a[2:].partition("=")[0], a[2:].partition("=")[2]) for a in args[:cut])
cmd = args[cut + 1:]
nnodes, nproc = int(opts["nnodes"]), int(opts["nproc-per-node"])
node = int(os.environ["SLURM_NODEID"])
if "standalone" in opts:
    assert nnodes == 1
    endpoint = "localhost:0"
else:
    assert opts["rdzv-backend"] == "c10d", opts
    assert opts["rdzv-id"] == os.environ["SLURM_JOB_ID"], opts
    assert opts["rdzv-conf"] == f"is_host={int(node == 0)}", opts
    endpoint = opts["rdzv-endpoint"]
    if ":" not in endpoint:
        endpoint += ":29400"  # torch's default port
rc = 0
for local in range(nproc):
    env = dict(os.environ, RANK=str(node * nproc + local), LOCAL_RANK=str(local), WORLD_SIZE=str(nnodes * nproc),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(node), NTUI_STUB_ENDPOINT=endpoint)
    rc = rc or subprocess.run(cmd, env=env).returncode
sys.exit(rc)
