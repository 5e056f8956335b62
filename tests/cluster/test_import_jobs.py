"""Imported scripts run on the real dev cluster: ``ntui import`` of a hand-written script, then ``ntui submit`` of the
preset, and the job trains across both nodes with every rank its own.

The scripts (tests/data/scripts/dev-cluster/) are written the way users write them, mistakes included: the torchrun
one starts two torchruns per node with a rendezvous id in single quotes, a node count that is not the job's, a node
rank the batch shell expands and a fixed port (as written, it never forms one group); the accelerate one expands the
machine rank in the batch shell (every node rank 0); the srun one is right (a ``bash -c`` payload, ``srun -l``,
an argument with a space); the forms one builds its launch the ways real scripts do (:data:`FORMS`). Each import
is submitted as is (only its logs are put in the test's directory); each job must complete with 4 ranks, ranks 0-3
once each, on both nodes, the all-reduce right and the arguments exact.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui, rank_records

pytestmark = pytest.mark.cluster

SCRIPTS = REPO / "tests" / "data" / "scripts" / "dev-cluster"
CASES = {"torchrun-bugs": ["--from", "torchrun"], "srun-payload": ["--from", "srun", "two words"],
         "accelerate-rank": ["--from", "accelerate"], "forms-launch": ["--from", "forms"]}
#: The forms real scripts build their launch in (the corpus' s-006, s-015, s-025 among them), on this cluster: the
#: launch held in $LAUNCHER and $CMD over several lines, $CMD extended on one path, the program as `$(pwd)/...`
#: after a cd to a directory the environment names (CODE_ROOT, set where ntui runs), a here-document, a wrapper with
#: its options before the launcher, `clear;` on the launch's line and a tee after it, a setup line that bash's
#: defaults run and ntui's `set -euo pipefail` would not ([ "$RESUME" = true ] with RESUME unset).
FORMS = """#!/bin/bash
#SBATCH --job-name=imported-forms
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:05:00
export OMP_NUM_THREADS=1
cd $CODE_ROOT
GPUS_PER_NODE=2
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
MASTER_PORT=6333
cfg=${TMPDIR:-/tmp}/forms-$SLURM_JOB_ID.json
cat <<EOT > $cfg
{"stage": 0}
EOT
export LAUNCHER="python -u -m torch.distributed.run \\
    --nproc_per_node $GPUS_PER_NODE \\
    --nnodes $SLURM_NNODES \\
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \\
    --rdzv_backend c10d \\
    "
export CMD=" \\
    $(pwd)/ddp_check.py \\
    --from forms \\
    "
if [ "$RESUME" = true ]; then
    export CMD="$CMD --resume"
fi
clear; srun bash -c "timeout 10m $LAUNCHER --node_rank \\$SLURM_PROCID $CMD" 2>&1 | tee -a ${TMPDIR:-/tmp}/forms.log
"""


def _state(cluster: DevCluster, job_id: str) -> str:
    out = cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    return next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")


@pytest.fixture(scope="module")
def ran(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path, str]]:
    tmp = tmp_path_factory.mktemp("imported")
    env = {"XDG_STATE_HOME": str(tmp / "state"), "CODE_ROOT": str(REPO / "examples")}
    (tmp / "forms-launch.sh").write_text(FORMS)
    jobs: dict[str, tuple[str, Path]] = {}
    for name in CASES:
        preset = tmp / f"{name}.yaml"
        script = SCRIPTS / f"{name}.sh" if (SCRIPTS / f"{name}.sh").is_file() else tmp / f"{name}.sh"
        res = ntui(dev_cluster, "import", str(script), "-o", str(preset), env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        logs = tmp / name
        res = ntui(dev_cluster, "submit", str(preset), "--set", f"logs.dir={logs}", env=env, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        jobs[name] = (res.stdout.strip().splitlines()[-1], logs)
    out: dict[str, tuple[str, Path, str]] = {}
    deadline = time.monotonic() + 600  # a bound on the wait for every job, not a claim about its speed
    for name, (job_id, logs) in jobs.items():
        while (state := _state(dev_cluster, job_id)) in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING"):
            assert time.monotonic() < deadline, f"{name} ({job_id}) still {state}"
            time.sleep(2)
        out[name] = (job_id, logs, state)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_imported_script_trains_across_both_nodes(ran: dict[str, tuple[str, Path, str]], name: str) -> None:
    job_id, logs, state = ran[name]
    records = rank_records(logs, f"imported-{name.split('-')[0]}", job_id)
    assert state == "COMPLETED", (name, state, [p.name for p in logs.glob("*")])
    assert sorted(r["rank"] for r in records) == [0, 1, 2, 3], records
    assert all(r["ok"] and r["world_size"] == 4 for r in records), records
    assert {r["node"] for r in records} == {"nid001", "nid002"}
    assert all(r["argv"] == CASES[name] for r in records), json.dumps(records)[:500]
