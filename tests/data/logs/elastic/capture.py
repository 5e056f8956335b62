"""Regenerate the torch elastic captures beside this file: real ``torchrun`` runs on this machine (CPU, gloo,
``--standalone``, two workers), each worker's program below, torchrun's own stdout and stderr together in
``torch-<version>/<case>.out`` (as a batch log holds them) and, where ``--tee`` is asked, its ``[default<N>]:``
prefixes too.

    .venv/bin/python tests/data/logs/elastic/capture.py [CASE ...]
    /path/to/another/venv/bin/python tests/data/logs/elastic/capture.py    # another torch version, its own folder

The torch version is the interpreter's: one folder per version, each tested alike (tests/unit/test_triage_forms.py).
``scripts/torch-matrix venvs`` makes a venv per torch version (2.0.1, 2.2.2, 2.4.1, 2.6.0, 2.9.1: PyPI's builds, run on
the CPU); ``scripts/torch-matrix elastic`` runs this file with each. The kinds: an exception with and without
``@record`` (and with the workers' output redirected), a missing module, SIGKILL (as the OOM killer), SIGSEGV, SIGABRT,
a rank that never enters the barrier (the other's gloo collective times out after 8 s), a rendezvous that never
completes (two nodes asked, one comes), and a rendezvous port something else already listens on.
The forms of older torch versions that cannot be installed here are in ``older-forms/``, written from their source
(its README says which).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Each case: a worker program (rank 1 fails as named; rank 0 waits for it in a collective) and torchrun's options.
PROGRAM = '''
import os, signal, sys, time
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

HOW = sys.argv[1]


@record
def main() -> None:
    import datetime
    # a short collective timeout, so that the "hang" case ends in gloo's own timeout within seconds
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=8))
    rank = dist.get_rank()
    print(f"rank {rank} of {dist.get_world_size()} up", flush=True)
    if rank == 1:
        time.sleep(0.5)
        if HOW in ("raise", "plain"):
            raise ValueError("rank 1 fails on purpose")
        if HOW == "import":
            import a_module_this_environment_lacks  # noqa: F401
        if HOW == "kill":
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer sends it
        if HOW == "segv":
            import ctypes
            ctypes.string_at(0)
        if HOW == "abort":
            os.abort()  # as a C++ terminate or NCCL's abort
        if HOW == "hang":  # never enters the barrier: rank 0 hits the collective timeout
            time.sleep(60)
    dist.barrier()
    print(f"rank {rank} done", flush=True)


if HOW == "plain":  # no @record: the root cause has no traceback
    main = main.__wrapped__
main()
'''

CASES: dict[str, tuple[str, list[str]]] = {
    "record-raise": ("raise", []),  # the root cause's traceback : holds rank 1's exception
    # the workers' output goes to files (--redirects): the root cause's traceback is all the log has of the error
    "record-raise-redirects": ("raise", ["--redirects", "3"]),
    "plain-raise": ("plain", []),
    "record-import": ("import", []),  # ModuleNotFoundError on rank 1
    "kill-tee": ("kill", ["--tee", "3"]),  # [default0]: prefixes; rank 1 killed by SIGKILL
    "segv-tee": ("segv", ["--tee", "3"]),
    "abort-tee": ("abort", ["--tee", "3"]),
    "hang-tee": ("hang", ["--tee", "3"]),  # rank 0's barrier times out (gloo), the agent then stops rank 1
    # two nodes asked for, one ever comes: the rendezvous never completes (no worker starts)
    "rdzv-timeout": ("raise", ["--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=localhost:29531",
                               "--rdzv-conf=join_timeout=5"]),
    # the rendezvous port already listened on (another job's store, a service): the store cannot open (EADDRINUSE)
    # (is_host=1, as ntui says on node 0: without it the agent falls back to a client of the port's listener)
    "port-in-use": ("raise", ["--nnodes=1", "--rdzv-backend=c10d", "--rdzv-endpoint=localhost:29533",
                              "--rdzv-conf=is_host=1"]),
}
#: The cases run while this script itself listens on a port: the case's rendezvous port.
HELD_PORT = {"port-in-use": 29533}


def capture(case: str, into: Path) -> None:
    how, opts = CASES[case]
    with tempfile.TemporaryDirectory(prefix="ntui-elastic-") as tmp:
        prog = Path(tmp) / "worker.py"
        prog.write_text(PROGRAM)
        alone = [] if any(o.startswith("--nnodes") for o in opts) else ["--standalone"]
        argv = [sys.executable, "-m", "torch.distributed.run", *alone, "--nproc-per-node=2", *opts, str(prog), how]
        env = dict(os.environ, PYTHONFAULTHANDLER="1", LOGLEVEL="INFO")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
            if case in HELD_PORT:
                held.bind(("0.0.0.0", HELD_PORT[case]))
                held.listen()
            res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                                 env=env, cwd=tmp)
    text = res.stdout.replace(tmp, "/tmp/ntui-elastic")  # the same bytes whichever temporary dir ran it
    (into / f"{case}.out").write_text(text)
    print(f"{case}: torchrun exit {res.returncode}, {len(text.splitlines())} lines")


def main(argv: list[str]) -> int:
    import torch

    into = HERE / f"torch-{torch.__version__.split('+')[0]}"  # a CUDA or CPU build of one version: one folder
    into.mkdir(exist_ok=True)
    for case in argv or list(CASES):
        capture(case, into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
