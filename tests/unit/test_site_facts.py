"""No site's facts without the site (issue 44): a script or preset that says nothing of Perlmutter hears nothing of
it (its 4 GPUs a node, its QOS), a node count the script does not write is not taken as 1 where its tasks say
otherwise, and a GPU count the job learns at run time is not taken as 1."""

from __future__ import annotations

import pytest

from ntui.core.compose.scriptcheck import check_script
from ntui.core.compose.scriptimport import import_script
from ntui.core.compose.scriptread import read_script
from ntui.core.compose.spec import validate
from tests.conftest import REPO


@pytest.fixture(autouse=True)
def _no_site(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NTUI_SITE_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(REPO / "nowhere"))


def _checked(text: str) -> list[str]:
    """What ``ntui check SCRIPT`` says: the H findings and the imported preset's problems, as ``RULE: words``."""
    imported = import_script(read_script(text, "/w/job.sh"))
    _, problems = validate(imported.loaded("/w/job.sh (imported)"))
    return [f"{f.rule}: {f.message}" for f in imported.findings] + [f"{p.rule}: {p.message}" for p in problems]


def test_no_corpus_script_hears_of_perlmutter_without_the_site() -> None:
    """Thirteen of the corpus' scripts (8 GPUs a node, none of them at NERSC) were told "Perlmutter nodes have 4"."""
    told = []
    scripts = sorted((REPO / "tests" / "data" / "corpus" / "sbatch-scripts").glob("*.sh"))
    for path in scripts:
        try:
            said = _checked(path.read_text())
        except ValueError:  # a refusal (ScriptError): its findings are the H rules', which know no machine
            continue
        told += [f"{path.name}: {s}" for s in said if "Perlmutter" in s or "NERSC" in s]
    assert len(scripts) >= 60 and not told, told


def test_a_node_of_eight_gpus_is_not_judged_without_the_site() -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:8\n"
            "#SBATCH --cpus-per-task=24\n#SBATCH --constraint=gpu\nsrun python fit.py\n")
    said = _checked(text)
    assert not [s for s in said if "Perlmutter" in s or "GPUs per node" in s or "qos" in s.lower()], said


@pytest.mark.parametrize(("directives", "nnodes", "h8"), [
    ("#SBATCH -n 16\n#SBATCH --ntasks-per-node=4\n", 4, ""),  # 16 tasks of 4 a node: 4 nodes, as told
    ("#SBATCH -n 16\n#SBATCH --ntasks-per-node=4\n", 2, "the job asks for 4 (the nodes its tasks fill"),
    ("#SBATCH --ntasks=16\n", 4, ""),  # 16 tasks, no count a node: Slurm decides the nodes, not judged
    ("#SBATCH --nodes=$NODES\n#SBATCH --ntasks-per-node=1\n", 4, ""),  # not a number: not judged
    ("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n", 4, "the job asks for 2 (#SBATCH --nodes)"),
    ("#SBATCH --ntasks-per-node=1\n", 4, "the job asks for 1"),  # one node is Slurm's default
])
def test_an_absent_nodes_is_not_taken_as_one_node_where_the_tasks_say_more(directives: str, nnodes: int,
                                                                          h8: str) -> None:
    text = (f"#!/bin/bash\n{directives}srun --ntasks-per-node=1 torchrun --nnodes={nnodes} --nproc_per_node=4 "
            "--rdzv_backend=c10d --rdzv_endpoint=\"$(hostname):$((15000 + SLURM_JOB_ID % 17000))\" "
            "--rdzv_id=\"$SLURM_JOB_ID\" fit.py\n")
    found = [f.message for f in check_script(read_script(text, "/w/job.sh")) if f.rule == "H8"]
    assert [h8 in m for m in found] == ([True] if h8 else []), found


@pytest.mark.parametrize("count", ["gpu", "$SLURM_GPUS_ON_NODE", "${SLURM_GPUS_PER_NODE}"])
def test_a_run_time_gpu_count_is_not_taken_as_one(count: str) -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:8\n"
            f"srun torchrun --nnodes=2 --nproc_per_node={count} --rdzv_backend=c10d "
            "--rdzv_endpoint=\"$(hostname):$((15000 + SLURM_JOB_ID % 17000))\" --rdzv_id=\"$SLURM_JOB_ID\" fit.py\n")
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["launcher"]["nproc-per-node"] == 8
    assert not [s for s in _checked(text) if s.startswith(("G2", "H13"))]
