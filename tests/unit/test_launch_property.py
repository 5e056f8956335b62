"""Property tests: hostile text anywhere in a preset never changes the script's structure.

The rendered script runs under bash with stub ``scontrol``/``srun``/``torchrun``/``accelerate``/
``python`` executables. The stub ``python`` records the argv and environment it receives; every
value must arrive verbatim, and nothing in the values may execute (a canary file stays absent).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.compose.yamlsrc import LoadedPreset
from tests.support.waits import WAIT_BOUND_S

STUB_LAUNCHER = r'''#!{python}
# Stub for {name}: skip the launcher's own options, then exec the program as "rank 0".
import os, sys
args = sys.argv[1:]
name = {name!r}
if name == "scontrol":
    assert args[:2] == ["show", "hostnames"], args
    print("nid001\nnid002")
    sys.exit(0)
if name == "accelerate":
    assert args[0] == "launch", args
    args = args[1:]
if name in ("accelerate", "torchrun"):
    conf = [a for a in args if a.startswith(("--rdzv-conf=", "--rdzv_conf="))]
    assert conf == [conf[0][:12] + "is_host=1"], conf  # node 0 hosts the store
marker = {{"srun": None, "torchrun": "--no-python", "accelerate": "--no_python"}}[name]
if marker is None:
    i = 0
    while args[i].startswith("--"):
        i += 1
    cmd = args[i:]
else:
    cmd = args[args.index(marker) + 1:]
env = dict(os.environ, SLURM_PROCID="0", SLURM_LOCALID="0", SLURM_NODEID="0", SLURM_NTASKS="4",
           RANK="0", LOCAL_RANK="0", WORLD_SIZE="4")
os.execvpe(cmd[0], cmd, env)
'''

STUB_PYTHON = r'''#!{python}
import json, os, sys
with open(os.environ["NTUI_STUB_OUT"], "w") as fh:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, fh)
'''


@pytest.fixture(scope="module")
def stub_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("stubbin")
    for name in ("scontrol", "srun", "torchrun", "accelerate"):
        p = d / name
        p.write_text(STUB_LAUNCHER.format(python=sys.executable, name=name))
        p.chmod(0o755)
    p = d / "python"
    p.write_text(STUB_PYTHON.format(python=sys.executable))
    p.chmod(0o755)
    return d


def run_script(script: str, stub_bin: Path, work: Path) -> dict[str, Any]:
    out = work / "stub-out.json"
    if out.exists():
        out.unlink()
    env = {
        "PATH": f"{stub_bin}:/usr/bin:/bin",
        "HOME": str(work),
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "nid[001-002]",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_CPUS_PER_TASK": "2",
        "NTUI_STUB_OUT": str(out),
    }
    path = work / "job.sbatch"
    path.write_text(script)
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=WAIT_BOUND_S)
    res = subprocess.run(["bash", str(path)], env=env, cwd=work, capture_output=True, text=True, timeout=WAIT_BOUND_S)
    assert res.returncode == 0, res.stderr
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def preset(launcher: str, log_dir: Path, **extra: Any) -> LoadedPreset:
    data: dict[str, Any] = {
        "name": "prop",
        "launcher": {"type": launcher, "nproc-per-node": 2},
        "sbatch": {"nodes": 2, "ntasks-per-node": 2 if launcher == "srun" else 1, "cpus-per-task": 2},
        "script": "/opt/train.py",
        "logs": {"dir": str(log_dir)},
    }
    if launcher == "srun":
        del data["launcher"]["nproc-per-node"]
    data.update(extra)
    return LoadedPreset("prop", None, data)


no_nul = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
HOSTILE = ["$(touch CANARY)", "`touch CANARY`", "a'b\"c", "x; touch CANARY", "  spaced  ", "line1\nline2",
           "$HOME", "${HOME}", "\\", "--flag=1", "-c", "'", '"', "*", "#comment", "%j%t", "", "\t"]
values = st.one_of(st.sampled_from(HOSTILE), no_nul)


@pytest.mark.parametrize("launcher", ["srun", "torchrun", "accelerate"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(values, max_size=5), env_value=values, job_name=values, script_name=values)
def test_values_arrive_verbatim(
    launcher: str, args: list[str], env_value: str, job_name: str, script_name: str,
    stub_bin: Path, tmp_path: Path,
) -> None:
    loaded = preset(
        launcher, tmp_path / "logs", args=args, env={"NTUI_PROP": env_value},
        sbatch={"nodes": 2, "ntasks-per-node": 2 if launcher == "srun" else 1, "cpus-per-task": 2,
                "job-name": job_name},
        script=f"/opt/x/{script_name}" if "\n" not in script_name else "/opt/train.py",
    )
    spec, problems = validate(loaded)
    if "\n" in job_name or "\r" in job_name or not job_name or "$" in job_name or "`" in job_name \
            or job_name.startswith(":"):
        assert spec is None and any(p.field == "sbatch.job-name" for p in problems)
        return
    assert spec is not None, [str(p) for p in problems]
    script = render(spec)
    # Structure: the directive block is unchanged in shape whatever the values.
    lines = script.split("\n")
    assert sum(ln.startswith("#SBATCH --job-name=") for ln in lines) == 1
    assert shlex.split(next(ln for ln in lines if ln.startswith("#SBATCH --job-name=")))[1] == \
        f"--job-name={job_name}"
    (tmp_path / "logs").mkdir(exist_ok=True)
    got = run_script(script, stub_bin, tmp_path)
    assert got["argv"] == [spec.script, *args]
    assert got["env"]["NTUI_PROP"] == env_value
    assert not (tmp_path / "CANARY").exists()
    if launcher != "srun":
        assert got["env"]["NTUI_RANK_LOG_PREFIX"].endswith("-4242-rank-")


def test_canary_example_explicitly(stub_bin: Path, tmp_path: Path) -> None:
    loaded = preset("torchrun", tmp_path, args=["$(touch CANARY)", "`touch CANARY`"], env={"X": "$(touch CANARY)"})
    spec, _ = validate(loaded)
    assert spec is not None
    got = run_script(render(spec), stub_bin, tmp_path)
    assert got["argv"][1:] == ["$(touch CANARY)", "`touch CANARY`"]
    assert got["env"]["X"] == "$(touch CANARY)"
    assert not (tmp_path / "CANARY").exists()
    assert os.environ.get("X") is None
