"""Stub torchrun (torch 2.x semantics): this node's workers with RANK, LOCAL_RANK, WORLD_SIZE."""

import os
import subprocess
import sys

from stubargs import parse_options, rdzv_conf, shown

args = sys.argv[1:]
cut = args.index("--no-python")
opts = parse_options(args[:cut])
cmd = args[cut + 1:]
conf = rdzv_conf(opts.get("rdzv-conf", ""))  # only the last --rdzv-conf/--rdzv_conf counts
nnodes, nproc = int(opts["nnodes"]), int(opts["nproc-per-node"])
node = int(os.environ["SLURM_NODEID"])
if "standalone" in opts:
    assert nnodes == 1
    endpoint = "localhost:0"
else:
    assert opts["rdzv-backend"] == "c10d", opts
    assert opts["rdzv-id"] == os.environ["SLURM_JOB_ID"], opts
    assert conf.get("is_host") == str(int(node == 0)), opts  # node 0 hosts the store (R8)
    endpoint = opts["rdzv-endpoint"]
    if ":" not in endpoint:
        endpoint += ":29400"  # torch's default port
rc = 0
for local in range(nproc):
    env = dict(os.environ, RANK=str(node * nproc + local), LOCAL_RANK=str(local), WORLD_SIZE=str(nnodes * nproc),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(node), NTUI_STUB_ENDPOINT=endpoint,
               NTUI_STUB_RDZV_CONF=shown(conf))
    rc = rc or subprocess.run(cmd, env=env).returncode
sys.exit(rc)
