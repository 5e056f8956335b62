"""Golden scripts for every shipped preset, structural rules, and launch-line behaviour."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from ntui.core.compose.presets import list_presets, load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from tests.conftest import REPO
from tests.support.waits import WAIT_BOUND_S

GOLDEN = REPO / "tests" / "data" / "golden"
SHIPPED = sorted(p.stem for p in (REPO / "presets").glob("*.yaml"))


def render_preset(name: str, *overrides: str) -> str:
    spec, problems = validate(load_preset(name, overrides))
    assert spec is not None, [str(p) for p in problems]
    return render(spec)


def normalised(script: str) -> str:
    return script.replace(str(REPO), "<REPO>")


def test_six_shipped_presets() -> None:
    names = {p.name for p in list_presets()}
    assert {
        "perlmutter-srun", "perlmutter-torchrun", "perlmutter-accelerate",
        "local-srun", "local-torchrun", "local-accelerate",
    } <= names


@pytest.mark.parametrize("name", SHIPPED)
def test_golden(name: str) -> None:
    script = normalised(render_preset(name, "logs.dir=/logs"))
    golden = GOLDEN / f"{name}.sbatch"
    if os.environ.get("NTUI_UPDATE_GOLDEN"):
        golden.write_text(script)
    assert script == golden.read_text(), f"golden differs; NTUI_UPDATE_GOLDEN=1 to accept: {golden}"


@pytest.mark.parametrize("name", SHIPPED)
def test_bash_syntax(name: str) -> None:
    subprocess.run(["bash", "-n"], input=render_preset(name), text=True, check=True, timeout=WAIT_BOUND_S)


@pytest.mark.parametrize("name", SHIPPED)
def test_directives_first_and_well_formed(name: str) -> None:
    lines = render_preset(name).splitlines()
    assert lines[0] == "#!/bin/bash"
    first_cmd = next(i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#"))
    assert lines[first_cmd] == "set -euo pipefail"
    # P1/P2: every directive above the first command, spelled exactly, in column 0.
    for i, ln in enumerate(lines):
        if re.match(r"\s*#\s*sbatch", ln, re.IGNORECASE):
            assert ln.startswith("#SBATCH --"), ln
            assert i < first_cmd, ln
    directives = [ln for ln in lines if ln.startswith("#SBATCH")]
    assert not any("$" in d for d in directives), "P3: no shell expansion in directives"
    assert sum(d.startswith("#SBATCH --output=") for d in directives) == 1


def test_per_task_values_never_expand_in_batch_shell() -> None:
    for name in SHIPPED:
        for ln in render_preset(name).splitlines():
            for var in ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "$RANK"):
                if var in ln:
                    # Only inside a single-quoted payload.
                    inside = re.findall(r"'[^']*'", ln)
                    assert any(var in s for s in inside), (name, ln)


def test_torchrun_rules() -> None:
    s = render_preset("perlmutter-torchrun")
    assert "--ntasks-per-node=1" in s
    assert "--nproc-per-node=4" in s
    assert '--rdzv-id="$SLURM_JOB_ID"' in s
    assert "--rdzv-backend=c10d" in s
    assert '--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"' in s
    assert "--rdzv-conf=is_host=$(( SLURM_NODEID == 0 ))" in s  # R8, expanded per task
    assert "export MASTER_PORT=$(( 15000 + SLURM_JOB_ID % 17000 ))" in s  # R4: below 32768
    assert "shifter" in s and "#SBATCH --image=nersc/pytorch:25.02.01" in s
    assert "#SBATCH --module=gpu,nccl-plugin" in s


@pytest.mark.parametrize(("preset", "launcher"), [("local-torchrun", "torchrun"), ("local-accelerate", "accelerate")])
def test_user_rdzv_conf_joins_is_host_per_node(preset: str, launcher: str, tmp_path: Path) -> None:
    """R13: the user's keys (verbatim, never expanded) and ntui's per-node is_host in ONE option (R8)."""
    hostile = "note=$(touch canary) *"
    s = render_preset(preset, f'launcher.extra-args=["--rdzv_conf", "join_timeout=600,{hostile}", "--max-restarts=2"]')
    export = next(ln for ln in s.splitlines() if ln.startswith("export NTUI_RDZV_CONF="))
    m = re.search(rf"bash -c ('[^']*') {launcher}", s)
    assert m, s
    launch = s.split("# Launch:")[1]
    assert "--max-restarts=2" in launch and launch.count("rdzv_conf") + launch.count("rdzv-conf") == 1, launch
    for node in (0, 1):
        res = subprocess.run(
            ["bash", "-c", f"{export}\nbash -c {m.group(1)} echo"], env={"PATH": "/usr/bin:/bin",
            "SLURM_NODEID": str(node), "NTUI_ACCELERATE_CONFIG": "c.yaml"},
            cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_BOUND_S,
        )
        option = "--rdzv-conf" if launcher == "torchrun" else "--rdzv_conf"
        assert f"{option}=join_timeout=600,{hostile},is_host={int(node == 0)}" in res.stdout, res
    assert not (tmp_path / "canary").exists()


def test_scripts_without_user_rdzv_conf_are_unchanged() -> None:
    s = render_preset("local-torchrun")
    assert "NTUI_RDZV_CONF" not in s and "--rdzv-conf=is_host=$(( SLURM_NODEID == 0 )) " in s


def test_torchrun_single_node_is_standalone() -> None:
    s = render_preset("local-torchrun", "sbatch.nodes=1")
    assert "--standalone" in s and "--rdzv-endpoint" not in s


def test_accelerate_rules() -> None:
    s = render_preset("perlmutter-accelerate")
    assert '--num_processes="$(( SLURM_JOB_NUM_NODES * 4 ))"' in s
    assert '--num_machines="$SLURM_JOB_NUM_NODES"' in s
    assert "--machine_rank=\"$SLURM_NODEID\"" in s
    assert "--multi_gpu" in s and " --cpu " not in s
    assert "--mixed_precision=bf16" in s
    assert "--rdzv_backend=c10d" in s


def test_srun_rules() -> None:
    s = render_preset("perlmutter-srun")
    assert "#SBATCH --ntasks-per-node=4" in s and "#SBATCH --gpus-per-node=4" in s
    assert '--cpus-per-task="$SLURM_CPUS_PER_TASK"' in s
    assert "--gres" not in s
    assert "-rank-%t.out" in s


def test_fixed_port() -> None:
    s = render_preset("local-torchrun", "launcher.master-port=29555")
    assert "export MASTER_PORT=29555" in s


def test_hostile_values_are_single_words() -> None:
    s = render_preset(
        "local-srun",
        "args=[\"$(touch /tmp/ntui-pwned)\", \"a'b\", \"`id`\", \"x; rm -rf /\"]",
        "env.EVIL=$(reboot)",
        "sbatch.job-name=my job #1",
    )
    assert "#SBATCH --job-name='my job #1'" in s
    assert "export EVIL='$(reboot)'" in s
    assert "'$(touch /tmp/ntui-pwned)'" in s
    assert "'a'\"'\"'b'" in s


def test_log_paths_under_log_dir(tmp_path: Path) -> None:
    s = render_preset("local-torchrun", f"logs.dir={tmp_path}")
    assert f"#SBATCH --output={tmp_path}/local-torchrun-%j.out" in s
    assert f"export NTUI_RANK_LOG_PREFIX={tmp_path}/local-torchrun-\"$SLURM_JOB_ID\"-rank-" in s


# ------------------------------------------------------------------ the in-job GPU sampler (monitor:, M1, M2)

SAMPLER_COMMENT = "# [ntui] GPU usage for `ntui report`: one nvidia-smi -l"


def _sampler_block(script: str) -> list[str]:
    lines = script.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(SAMPLER_COMMENT))
    end = lines.index("trap ntui_gpu_sampler_stop EXIT")
    return lines[start : end + 1]


@pytest.mark.parametrize("gpus", [("sbatch.gpus-per-node=2",), ("sbatch.gres=gpu:a100:2",),
                                  ("sbatch.gpus-per-task=1", "sbatch.ntasks=4"),
                                  ("sbatch.nodes=1", "sbatch.gpus=2")])
def test_gpu_job_samples_by_default_with_its_comment(gpus: tuple[str, ...]) -> None:
    from ntui.core.compose.sampler import sampler_lines

    script = render_preset("local-srun", "logs.dir=/logs", *gpus)
    block = _sampler_block(script)
    assert block == sampler_lines("/logs", "local-srun", interval_s=10)
    assert "`monitor: {gpu: false}` in the preset removes these lines." in "\n".join(block)


def test_sampler_sits_after_the_exports_and_before_the_setup() -> None:
    script = render_preset("local-torchrun", "sbatch.gpus-per-node=2", "launcher.nproc-per-node=2",
                           'setup=["trap \\"echo mine\\" EXIT"]', "env.PATH=/opt/sim/bin:/usr/bin")
    lines = script.splitlines()
    start = lines.index(_sampler_block(script)[0])
    assert lines.index("export PATH=/opt/sim/bin:/usr/bin") < start
    assert max(i for i, ln in enumerate(lines) if ln.startswith("export ")) < start
    assert lines.index("trap ntui_gpu_sampler_stop EXIT") < lines.index('trap "echo mine" EXIT')
    assert lines.index('trap "echo mine" EXIT') < next(i for i, ln in enumerate(lines) if ln.startswith("# Launch:"))


def test_monitor_gpu_false_removes_the_sampler_entirely() -> None:
    with_gpus = render_preset("local-srun", "sbatch.gpus-per-node=2")
    assert "ntui_gpu_sampler" in with_gpus
    off = render_preset("local-srun", "sbatch.gpus-per-node=2", "monitor.gpu=false")
    for word in ("ntui_gpu_sampler", "NTUI_GPU_SAMPLES", "nvidia-smi", "trap ntui_gpu", "GPU usage"):
        assert word not in off, word
    # Exactly the lines of the block, the journal's line that takes its EXIT trap (J2) and the blank line before
    # it are gone; the rest is unchanged.
    lines = with_gpus.splitlines()
    block = _sampler_block(with_gpus)
    start = lines.index(block[0])
    end = start + len(block)
    assert lines[start:end] == block and lines[end] == "ntui_journal_traps"
    kept = lines[:start] + lines[end + 1 :]
    assert "\n".join(kept).replace("\n\n\n", "\n\n") == off.rstrip("\n").replace("\n\n\n", "\n\n")


def test_cpu_job_has_no_sampler_unless_asked() -> None:
    for name in ("local-srun", "local-torchrun", "local-accelerate"):
        assert "ntui_gpu_sampler" not in render_preset(name), name
    spec, problems = validate(load_preset("local-srun", ["monitor.gpu=true"]))
    assert spec is not None and [p.rule for p in problems] == ["M2"]
    assert SAMPLER_COMMENT in render(spec)  # asked for: kept, with the warning


def test_monitor_interval_reaches_nvidia_smi() -> None:
    block = "\n".join(_sampler_block(render_preset("local-srun", "sbatch.gpus-per-node=2", "monitor.interval=30")))
    assert "nvidia-smi -l 30 per node" in block and '"$NTUI_GPU_SAMPLES" 30 ' in block


@pytest.mark.parametrize(("text", "message"), [
    ("interval: 010", 'expected whole seconds in plain decimal (e.g. 10), got "010"'),
    ("interval: 1.5", "expected whole seconds in plain decimal (e.g. 10), got 1.5"),
    ("interval: 7200", "7200 s: the GPU sampling interval is whole seconds from 1 to 3600"),
    ("gpu: maybe", 'expected true or false, got "maybe"'),
    ("sample: 3", "unknown key"),
])
def test_monitor_problems_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    preset = tmp_path / "mon.yaml"
    preset.write_text(f"extends: local-srun\nsbatch: {{gpus-per-node: 2}}\nmonitor:\n  {text}\n")
    spec, problems = validate(load_preset(str(preset)))
    assert spec is None
    key = text.split(":")[0]
    assert [str(p).split(": ", 2)[:2] for p in problems] == [[f"{preset}:4", f"monitor.{key}"]]
    assert message in str(problems[0])
