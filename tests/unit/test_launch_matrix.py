"""Launcher x GPU request style x nodes x container: every cell is refused with its rule id, or its
script, run under stub srun/shifter/torchrun/accelerate/python (``tests/unit/stubs``) with the per-task
SLURM_* variables Slurm sets, gives each task the right rank, local rank, world size, rendezvous
endpoint, GPUs and log file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.render import render
from ntui.core.compose.rules import PORT_BASE, PORT_SPAN
from ntui.core.compose.spec import validate
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.journal import journal_path, read_journal

STUBS = Path(__file__).parent / "stubs"
JOB_ID = 4242
PORT = PORT_BASE + JOB_ID % PORT_SPAN
GPUS = 4  # per node

LAUNCHERS = ("srun", "torchrun", "accelerate")
STYLES = ("cpu", "gpus-per-node", "gpus-per-node-typed", "gpus-per-task", "gpus", "gres", "gres-typed")
NODES = (1, 2, 8)
CONTAINERS = ("none", "shifter")


def refused(launcher: str, style: str, nodes: int) -> str | None:
    """The rule that refuses a cell, or None when it must run."""
    if style == "gpus" and nodes > 1:
        return "G10"  # a job total may be spread unevenly over nodes
    return None


def cell_preset(launcher: str, style: str, nodes: int, container: str, log_dir: Path) -> LoadedPreset:
    per_node = GPUS if launcher == "srun" else 1
    sbatch: dict[str, Any] = {"nodes": nodes, "ntasks-per-node": per_node, "cpus-per-task": 2}
    launcher_map: dict[str, Any] = {"type": launcher}
    if launcher != "srun":
        launcher_map["nproc-per-node"] = GPUS
    if style == "gpus-per-node":
        sbatch["gpus-per-node"] = GPUS
    elif style == "gpus-per-node-typed":
        sbatch["gpus-per-node"] = f"a100:{GPUS}"
    elif style == "gpus-per-task":
        sbatch["gpus-per-task"] = GPUS // per_node
        sbatch["ntasks"] = nodes * per_node
    elif style == "gpus":
        sbatch["gpus"] = GPUS * nodes
    elif style == "gres":
        sbatch["gres"] = f"gpu:{GPUS}"
    elif style == "gres-typed":
        sbatch["gres"] = f"gpu:a100:{GPUS}"
    data: dict[str, Any] = {"name": "cell", "launcher": launcher_map, "sbatch": sbatch, "script": "/opt/train.py",
                            "args": ["--lr", "0.1"], "logs": {"dir": str(log_dir)}}
    if container == "shifter":
        sbatch["image"] = "nersc/pytorch:25.02.01"
        data["container"] = {"runtime": "shifter"}
    return LoadedPreset("cell", None, data)


@pytest.fixture(scope="module")
def stub_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("matrixbin")
    for name in ("srun", "torchrun", "accelerate", "shifter", "scontrol"):
        p = d / name
        p.write_text(f'#!/bin/sh\nexec {sys.executable} {STUBS / (name + ".py")} "$@"\n')
        p.chmod(0o755)
    p = d / "python"
    p.write_text((STUBS / "python.sh").read_text())
    p.chmod(0o755)
    return d


def run_cell(script: str, stub_bin: Path, work: Path, nodes: int, env_extra: dict[str, str]) -> list[list[str]]:
    out = work / "ranks.txt"
    path = work / "job.sbatch"
    path.write_text(script)
    env = {
        "PATH": f"{stub_bin}:/usr/bin:/bin", "HOME": str(work), "SLURM_JOB_ID": str(JOB_ID),
        "SLURM_JOB_NODELIST": f"nid[001-{nodes:03d}]", "SLURM_JOB_NUM_NODES": str(nodes),
        "SLURM_CPUS_PER_TASK": "2", "NTUI_STUB_OUT": str(out), **env_extra,
    }
    res = subprocess.run(["bash", str(path)], env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return [line.split("|") for line in out.read_text().splitlines()]


def expected_rdzv_conf(launcher: str, nodes: int, node: int, user: str = "") -> str:
    """The rendezvous configuration the launcher on ``node`` reads, as the stubs show it (sorted keys):
    the user's keys and, where ntui passes one (every accelerate launch, torchrun on several nodes),
    is_host=1 on node 0 only (R8, R13)."""
    keys = dict(item.split("=", 1) for item in user.split(",") if item)
    if launcher == "accelerate" or (launcher == "torchrun" and nodes > 1):
        keys["is_host"] = str(int(node == 0))
    return ",".join(f"{k}={v}" for k, v in sorted(keys.items())) if launcher != "srun" else ""


CELLS = [(la, st, n, c) for la in LAUNCHERS for st in STYLES for n in NODES for c in CONTAINERS]


@pytest.mark.parametrize(("launcher", "style", "nodes", "container"), CELLS)
def test_cell(launcher: str, style: str, nodes: int, container: str, stub_bin: Path, tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    spec, problems = validate(cell_preset(launcher, style, nodes, container, log_dir))
    rule = refused(launcher, style, nodes)
    if rule is not None:
        assert spec is None and any(p.rule == rule and str(p).endswith(f"({rule})") for p in problems)
        return
    assert spec is not None, [str(p) for p in problems]
    gpus = 0 if style == "cpu" else GPUS
    assert spec.gpus_per_node == gpus
    env_extra = {"NTUI_STUB_GPUS_PER_NODE": str(gpus)}
    if style == "gpus-per-task":
        env_extra["SLURM_GPUS_PER_TASK"] = str(GPUS // (GPUS if launcher == "srun" else 1))
    records = run_cell(render(spec), stub_bin, tmp_path, nodes, env_extra)
    # the journal around the unchanged launch line (J2): the allocation, the launch step and its end, status 0
    journal = read_journal(journal_path(str(log_dir), "cell", str(JOB_ID)), str(JOB_ID))
    assert journal is not None and journal.launch_rc == 0 and journal.rc == 0 and journal.nodes == (
        f"nid[001-{nodes:03d}]"), journal

    per_node = GPUS  # srun: 4 tasks per node; torchrun/accelerate: 4 workers per node
    world = nodes * per_node
    assert sorted(int(r[0]) for r in records) == list(range(world)), records
    for rank_s, local_s, world_s, endpoint, master, cvd, node, shifter, rdzv_conf, log, argv in records:
        rank, local = int(rank_s), int(local_s)
        assert int(world_s) == world
        assert local == rank % per_node
        assert node == f"nid{rank // per_node + 1:03d}"
        assert rdzv_conf == expected_rdzv_conf(launcher, nodes, rank // per_node)
        assert argv == "/opt/train.py --lr 0.1"
        assert shifter == ("1" if container == "shifter" else "")
        assert master == f"nid001:{PORT}"
        if launcher == "torchrun":
            assert endpoint == ("localhost:0" if nodes == 1 else f"nid001:{PORT}")
        elif launcher == "accelerate":
            assert endpoint == (f"127.0.0.1:{PORT}" if nodes == 1 else f"nid001:{PORT}")
        if launcher != "srun":
            assert log == f"{log_dir}/cell-{JOB_ID}-rank-{rank}.out"
        if gpus:
            visible = cvd.split(",")
            assert local < len(visible), f"cuda:{local} with CUDA_VISIBLE_DEVICES={cvd}"
            assert len(visible) == gpus
        else:
            assert cvd == ""


def test_export_none_still_launches(stub_bin: Path, tmp_path: Path) -> None:
    """E3: with sbatch --export=NONE srun would drop MASTER_* and PATH; ntui's srun passes --export=ALL."""
    loaded = cell_preset("torchrun", "gpus-per-node", 2, "none", tmp_path)
    loaded.data["sbatch"]["export"] = "NONE"
    spec, _ = validate(loaded)
    assert spec is not None
    env = {"NTUI_STUB_GPUS_PER_NODE": "4", "SLURM_EXPORT_ENV": "NONE"}
    records = run_cell(render(spec), stub_bin, tmp_path, 2, env)
    assert sorted(int(r[0]) for r in records) == list(range(8))
    assert {r[4] for r in records} == {f"nid001:{PORT}"}


def test_accelerate_one_process_logs_as_rank_0(stub_bin: Path, tmp_path: Path) -> None:
    loaded = cell_preset("accelerate", "cpu", 1, "none", tmp_path)
    loaded.data["launcher"]["nproc-per-node"] = 1
    spec, _ = validate(loaded)
    assert spec is not None and spec.accelerate_device == "single"
    records = run_cell(render(spec), stub_bin, tmp_path, 1, {})
    assert len(records) == 1 and records[0][9] == f"{tmp_path}/cell-{JOB_ID}-rank-0.out"


@pytest.mark.parametrize("nodes", [1, 2, 8])
@pytest.mark.parametrize(
    ("launcher", "extra", "user"),
    [
        ("torchrun", ["--rdzv-conf=timeout=900"], "timeout=900"),
        ("torchrun", ["--rdzv_conf", "join_timeout=600,read_timeout=120", "--max-restarts=0"],
         "join_timeout=600,read_timeout=120"),
        ("accelerate", ["--rdzv_conf", "join_timeout=600,read_timeout=120"], "join_timeout=600,read_timeout=120"),
        ("accelerate", ["--rdzv-conf=timeout=900", "--rdzv_conf= read_timeout = 30 "], "read_timeout=30,timeout=900"),
    ],
)
def test_user_rdzv_conf_is_merged(launcher: str, extra: list[str], user: str, nodes: int, stub_bin: Path,
                                  tmp_path: Path) -> None:
    """R13: the launcher on each node reads the user's keys AND ntui's per-node is_host (R8) from its
    one rendezvous configuration (the stubs keep only the last option given, as the real ones do)."""
    loaded = cell_preset(launcher, "gpus-per-node", nodes, "none", tmp_path)
    loaded.data["launcher"]["extra-args"] = extra
    spec, problems = validate(loaded)
    assert spec is not None, [str(p) for p in problems]
    script = render(spec)
    launch = script.split("# Launch:")[1]
    assert len(re.findall(r"--rdzv[-_]conf", launch)) == 1, launch  # one option, the user's not separate
    assert all(a in launch for a in extra if a.startswith("--max-restarts")), launch  # other args stay
    records = run_cell(script, stub_bin, tmp_path, nodes, {"NTUI_STUB_GPUS_PER_NODE": str(GPUS)})
    assert sorted(int(r[0]) for r in records) == list(range(nodes * GPUS))
    for r in records:
        assert r[8] == expected_rdzv_conf(launcher, nodes, int(r[0]) // GPUS, user), r
    if nodes > 1:
        assert {r[8].split("is_host=")[1][0] for r in records if r[6] == "nid001"} == {"1"}
        assert {r[8].split("is_host=")[1][0] for r in records if r[6] != "nid001"} == {"0"}
