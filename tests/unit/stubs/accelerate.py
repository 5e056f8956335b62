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

CLUSTER_CONFIG_KEYS = {
    "compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes",
    "machine_rank", "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
    "same_network", "main_training_function", "enable_cpu_affinity", "downcast_bf16", "dynamo_config",
}
args = sys.argv[1:]
assert args[0] == "launch", args
cut = args.index("--no_python")
opts = dict((a[2:].partition("=")[0], a[2:].partition("=")[2]) for a in args[1:cut])
cmd = args[cut + 1:]
assert opts.get("config_file"), "A1: no --config_file, the default config would be read"
with open(opts["config_file"]) as fh:
    config = yaml.safe_load(fh)
assert set(config) <= CLUSTER_CONFIG_KEYS, set(config) - CLUSTER_CONFIG_KEYS
assert config["gpu_ids"] == "all" and config["debug"] is False, config
machines, processes = int(opts["num_machines"]), int(opts["num_processes"])
node = int(opts["machine_rank"])
assert node == int(os.environ["SLURM_NODEID"])
multi = "multi_gpu" in opts or config["distributed_type"] == "MULTI_GPU"
if not multi:
    sys.exit(subprocess.run(cmd).returncode)  # simple launcher: each machine alone, no RANK
assert processes >= 2 and processes % machines == 0
nproc = processes // machines
port = opts["main_process_port"]
if machines > 1:
    assert opts["rdzv_conf"] == f"is_host={int(node == 0)}", opts
    endpoint = f"{opts['main_process_ip']}:{port}" if opts["rdzv_backend"] == "c10d" else f"static:{port}"
else:
    endpoint = f"127.0.0.1:{port}" if opts["rdzv_backend"] == "static" else "127.0.0.1:29400"
rc = 0
for local in range(nproc):
    env = dict(os.environ, RANK=str(node * nproc + local), LOCAL_RANK=str(local), WORLD_SIZE=str(processes),
               NTUI_STUB_ENDPOINT=endpoint)
    rc = rc or subprocess.run(cmd, env=env).returncode
sys.exit(rc)
