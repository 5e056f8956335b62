"""Stub ``accelerate launch`` (accelerate 1.15 semantics, commands/launch.py and utils/launch.py).

Reads only the --config_file it is given (the real one reads $HF_HOME/accelerate/default_config.yaml
when none is given, which this stub refuses). --multi_gpu runs torch.distributed's launcher: several
machines rendezvous at main_process_ip:port with c10d; ONE machine passes no endpoint, so c10d would
use 29400 and only static binds main_process_port. Without --multi_gpu: one process, no RANK.
"""

import os
import subprocess
import sys

import yaml
from stubargs import parse_options, rdzv_conf, shown

CLUSTER_CONFIG_KEYS = {
    "compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes",
    "machine_rank", "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
    "same_network", "main_training_function", "enable_cpu_affinity", "downcast_bf16", "dynamo_config",
}
args = sys.argv[1:]
assert args[0] == "launch", args
cut = args.index("--no_python")
opts = parse_options(args[1:cut])
cmd = args[cut + 1:]
conf = rdzv_conf(opts.get("rdzv-conf", ""))  # handed on to torch.distributed.run as it is
assert opts.get("config-file"), "A1: no --config_file, the default config would be read"
with open(opts["config-file"]) as fh:
    config = yaml.safe_load(fh)
assert set(config) <= CLUSTER_CONFIG_KEYS, set(config) - CLUSTER_CONFIG_KEYS
assert config["gpu_ids"] == "all" and config.get("debug", False) is False, config
machines, processes = int(opts["num-machines"]), int(opts["num-processes"])
node = int(opts["machine-rank"])
assert node == int(os.environ["SLURM_NODEID"])
multi = "multi-gpu" in opts or config["distributed_type"] == "MULTI_GPU"
if not multi:
    sys.exit(subprocess.run(cmd).returncode)  # simple launcher: each machine alone, no RANK
assert processes >= 2 and processes % machines == 0
nproc = processes // machines
port = opts["main-process-port"]
if machines > 1:
    assert conf.get("is_host") == str(int(node == 0)), opts  # node 0 hosts the store (R8)
    endpoint = f"{opts['main-process-ip']}:{port}" if opts["rdzv-backend"] == "c10d" else f"static:{port}"
else:
    endpoint = f"127.0.0.1:{port}" if opts["rdzv-backend"] == "static" else "127.0.0.1:29400"
rc = 0
for local in range(nproc):
    env = dict(os.environ, RANK=str(node * nproc + local), LOCAL_RANK=str(local), WORLD_SIZE=str(processes),
               NTUI_STUB_ENDPOINT=endpoint, NTUI_STUB_RDZV_CONF=shown(conf))
    rc = rc or subprocess.run(cmd, env=env).returncode
sys.exit(rc)
